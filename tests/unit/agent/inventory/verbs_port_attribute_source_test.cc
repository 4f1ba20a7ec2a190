#include "agent/inventory/verbs_port_attribute_source.h"

#include <filesystem>
#include <system_error>

#include "absl/status/status.h"
#include "common/ib_mtu.h"
#include "gtest/gtest.h"
#include "tests/support/environment_skip.h"

namespace clustercert::agent::inventory {
namespace {

bool HostHasRdmaDevices() {
  std::error_code ec;
  std::filesystem::directory_iterator it("/sys/class/infiniband", ec);
  return !ec && it != std::filesystem::directory_iterator();
}

TEST(IbvMtuToBytesTest, MapsTheVerbsEnum) {
  EXPECT_EQ(*clustercert::IbMtuToBytes(1), 256u);
  EXPECT_EQ(*clustercert::IbMtuToBytes(2), 512u);
  EXPECT_EQ(*clustercert::IbMtuToBytes(3), 1024u);
  EXPECT_EQ(*clustercert::IbMtuToBytes(4), 2048u);
  EXPECT_EQ(*clustercert::IbMtuToBytes(5), 4096u);
  EXPECT_TRUE(absl::IsInvalidArgument(clustercert::IbMtuToBytes(0).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(clustercert::IbMtuToBytes(6).status()));
}

TEST(VerbsPortAttributeSourceTest, UnknownDeviceIsNotFoundNotACrash) {
  VerbsPortAttributeSource source;
  auto attributes = source.Query("clustercert_no_such_dev0", 1);
  ASSERT_FALSE(attributes.ok());
  EXPECT_TRUE(absl::IsNotFound(attributes.status())) << attributes.status();
  EXPECT_NE(attributes.status().message().find("no RDMA device named clustercert_no_such_dev0"),
            absl::string_view::npos)
      << attributes.status();
}

TEST(VerbsPortAttributeSourceTest, PortZeroIsRejectedBeforeTouchingVerbs) {
  VerbsPortAttributeSource source;
  auto attributes = source.Query("mlx5_0", 0);
  ASSERT_FALSE(attributes.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(attributes.status()));
}

TEST(VerbsPortAttributeSourceTest, Mlx5OnAHostWithoutRdmaIsNotFound) {
  if (HostHasRdmaDevices())
    SKIP_FOR_ENVIRONMENT("host-has-rdma-device") << "this host has RDMA devices";
  VerbsPortAttributeSource source;
  auto attributes = source.Query("mlx5_0", 1);
  ASSERT_FALSE(attributes.ok());
  EXPECT_TRUE(absl::IsNotFound(attributes.status())) << attributes.status();
}

TEST(VerbsPortAttributeSourceTest, FirstLiveDevicePortOneAnswers) {
  if (!HostHasRdmaDevices())
    SKIP_FOR_ENVIRONMENT("no-rdma-device") << "no RDMA device on this host";
  std::string first;
  for (const auto& entry : std::filesystem::directory_iterator("/sys/class/infiniband")) {
    if (first.empty() || entry.path().filename().string() < first) {
      first = entry.path().filename().string();
    }
  }
  VerbsPortAttributeSource source;
  auto attributes = source.Query(first, 1);
  ASSERT_TRUE(attributes.ok()) << attributes.status();
  EXPECT_GE(attributes->active_mtu_bytes, 256u);
  EXPECT_LE(attributes->active_mtu_bytes, attributes->max_mtu_bytes);
}

}  // namespace
}  // namespace clustercert::agent::inventory
