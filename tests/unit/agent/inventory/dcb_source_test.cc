#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "agent/inventory/dcb_capture_source.h"
#include "agent/inventory/dcb_netlink_source.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/temp_tree.h"

namespace clustercert::agent::inventory {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

using ::clustercert::testing::TempTree;

TEST(ParsePfcPrioritiesTest, CommaSeparatedPrioritiesBecomeAMask) {
  EXPECT_EQ(*ParsePfcPriorities("3"), 0x08);
  EXPECT_EQ(*ParsePfcPriorities("3,4"), 0x18);
  EXPECT_EQ(*ParsePfcPriorities(" 0, 7 \n"), 0x81);
  EXPECT_EQ(*ParsePfcPriorities(""), 0x00);
  EXPECT_FALSE(ParsePfcPriorities("8").ok());
  EXPECT_FALSE(ParsePfcPriorities("three").ok());
}

TEST(ParseDscpPrioritiesTest, LinesOfDscpAndPriority) {
  auto table = ParseDscpPriorities("26 3\n48 6\n");
  ASSERT_TRUE(table.ok()) << table.status();
  ASSERT_EQ(table->size(), 2u);
  EXPECT_EQ((*table)[0].dscp, 26);
  EXPECT_EQ((*table)[0].priority, 3);
  EXPECT_EQ((*table)[1].dscp, 48);
  EXPECT_EQ((*table)[1].priority, 6);
  EXPECT_TRUE(ParseDscpPriorities("")->empty());
  EXPECT_FALSE(ParseDscpPriorities("26").ok());
  EXPECT_FALSE(ParseDscpPriorities("64 3").ok());
  EXPECT_FALSE(ParseDscpPriorities("26 8").ok());
  EXPECT_THAT(std::string(ParseDscpPriorities("26 3\nx y\n").status().message()),
              HasSubstr("line 2"));
}

TEST(DcbCaptureSourceTest, ReadsBothFiles) {
  TempTree tree;
  tree.Write("clustercert-capture/dcb/enp65s0f0np0/pfc_enabled_priorities", "3\n");
  tree.Write("clustercert-capture/dcb/enp65s0f0np0/dscp_priorities", "26 3\n");
  SysfsView view(tree.root());
  DcbCaptureSource source(view);
  auto settings = source.Read("enp65s0f0np0");
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_EQ(settings->pfc_enabled_mask, 0x08);
  ASSERT_TRUE(settings->dscp_priorities.has_value());
  ASSERT_EQ(settings->dscp_priorities->size(), 1u);
  EXPECT_EQ((*settings->dscp_priorities)[0].dscp, 26);
  EXPECT_EQ(settings->source, "/clustercert-capture/dcb/enp65s0f0np0");
}

TEST(DcbCaptureSourceTest, EmptyPfcFileMeansNoPriority) {
  TempTree tree;
  tree.Write("clustercert-capture/dcb/eth2/pfc_enabled_priorities", "");
  tree.Write("clustercert-capture/dcb/eth2/dscp_priorities", "");
  SysfsView view(tree.root());
  auto settings = DcbCaptureSource(view).Read("eth2");
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_EQ(settings->pfc_enabled_mask, 0x00);
  EXPECT_TRUE(settings->dscp_priorities->empty());
}

TEST(DcbCaptureSourceTest, MissingNetdevIsNotFound) {
  TempTree tree;
  SysfsView view(tree.root());
  auto settings = DcbCaptureSource(view).Read("enp65s0f0np0");
  EXPECT_TRUE(absl::IsNotFound(settings.status())) << settings.status();
  EXPECT_THAT(std::string(settings.status().message()), HasSubstr("enp65s0f0np0"));
}

TEST(DcbCaptureSourceTest, GarbledPfcLeavesOnlyPfcUnset) {
  TempTree tree;
  tree.Write("clustercert-capture/dcb/eth2/pfc_enabled_priorities", "on\n");
  tree.Write("clustercert-capture/dcb/eth2/dscp_priorities", "26 3\n");
  SysfsView view(tree.root());
  auto settings = DcbCaptureSource(view).Read("eth2");
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_FALSE(settings->pfc_enabled_mask.has_value());
  EXPECT_THAT(settings->pfc_reason, HasSubstr("unparsable"));
  EXPECT_EQ(settings->dscp_priorities->size(), 1u);
}

TEST(DcbCaptureSourceTest, MissingDscpFileLeavesTableUnset) {
  TempTree tree;
  tree.Write("clustercert-capture/dcb/eth2/pfc_enabled_priorities", "3");
  SysfsView view(tree.root());
  auto settings = DcbCaptureSource(view).Read("eth2");
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_EQ(settings->pfc_enabled_mask, 0x08);
  EXPECT_FALSE(settings->dscp_priorities.has_value());
  EXPECT_THAT(settings->dscp_reason, HasSubstr("No such file or directory"));
}

// lo and virtio netdevs have no DCB ops; the sandbox may also deny netlink.
// Either way the answer is an error Status naming the netdev, never a crash.
TEST(DcbNetlinkSourceTest, NetdevsWithoutDcbAreAnError) {
  DcbNetlinkSource source(absl::Seconds(2));
  for (const char* netdev : {"lo", "eth0"}) {
    auto settings = source.Read(netdev);
    EXPECT_FALSE(settings.ok()) << netdev << " unexpectedly has DCB";
    if (!settings.ok()) {
      EXPECT_THAT(std::string(settings.status().message()), HasSubstr(netdev));
      std::cout << "[ info     ] " << settings.status() << "\n";
    }
  }
}

TEST(DcbNetlinkSourceTest, UnknownNetdevIsAnError) {
  DcbNetlinkSource source(absl::Seconds(2));
  auto settings = source.Read("nosuchdev0");
  ASSERT_FALSE(settings.ok());
  std::cout << "[ info     ] " << settings.status() << "\n";
  EXPECT_FALSE(absl::IsInternal(settings.status())) << settings.status();
  EXPECT_TRUE(absl::IsInvalidArgument(source.Read("").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(source.Read("a-name-longer-than-ifnamsiz").status()));
}

}  // namespace
}  // namespace clustercert::agent::inventory
