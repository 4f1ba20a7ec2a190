// node-agent --capture: a capture of each fixture host is itself a host the
// collectors read the same way (same devices, ports, GIDs, PCI functions and
// paths), with the kernel's relative symlinks, nothing outside the
// allow-list, and the tools' outputs in the files the capture readers expect.
#include "agent/capture/host_capture.h"

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "agent/inventory/captured_port_attribute_source.h"
#include "agent/inventory/dcb_capture_source.h"
#include "agent/inventory/inventory_collector.h"
#include "common/sysfs_view.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/unit/agent/inventory/sysfs_test_support.h"

namespace clustercert::agent {
namespace {

namespace fs = std::filesystem;
using inventory::testing::FixtureRoot;
using inventory::testing::TempSysfsTree;

// A fresh directory name under the test's temp dir (not created).
fs::path NewDir(const std::string& tag) {
  static std::atomic<int> counter{0};
  return fs::temp_directory_path() / ("host_capture_" + tag + "_" + std::to_string(::getpid()) +
                                      "_" + std::to_string(counter++));
}

class ScopedDir {
 public:
  explicit ScopedDir(const std::string& tag) : path_(NewDir(tag)) {}
  ~ScopedDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class NoCommands final : public process::CommandRunner {
 public:
  absl::StatusOr<process::CommandResult> Run(const std::vector<std::string>& argv,
                                             absl::Duration) override {
    return absl::NotFoundError(argv[0] + " must not run on a fixture");
  }
};

// What the agent would report for a tree: the production collector with the
// capture-reading probes and nothing of this machine.
v1::Inventory Collect(const fs::path& root) {
  SysfsView view(root);
  inventory::CapturedPortAttributeSource ports(view);
  inventory::DcbCaptureSource dcb(view);
  NoCommands commands;
  inventory::InventoryCollector collector(
      view, inventory::InventoryProbes{&ports, &dcb, nullptr, nullptr, nullptr, nullptr, &commands},
      "127.0.0.1");
  auto inventory = collector.Collect("");
  EXPECT_TRUE(inventory.ok()) << inventory.status();
  if (!inventory.ok()) return {};
  inventory->clear_sysfs_root();
  return *inventory;
}

absl::StatusOr<CaptureReport> CaptureTree(const fs::path& root, const fs::path& out,
                                          process::CommandRunner* runner = nullptr,
                                          inventory::DcbSource* dcb = nullptr,
                                          bool run_tools = false) {
  SysfsView view(root);
  CaptureOptions options;
  options.run_tools = run_tools;
  return HostCapture(view, runner, dcb, options).Write(out);
}

class FixtureRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(FixtureRoundTrip, TheCaptureCollectsTheSameInventory) {
  ScopedDir out("roundtrip");
  auto report = CaptureTree(FixtureRoot(GetParam()), out.path());
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_GT(report->files, 0u);
  EXPECT_TRUE(report->left_out.empty()) << report->left_out.front();

  const v1::Inventory original = Collect(FixtureRoot(GetParam()));
  const v1::Inventory captured = Collect(out.path());
  // The parts a reader looks at first, so a failure says where it differs.
  ASSERT_EQ(captured.rdma_devices_size(), original.rdma_devices_size());
  for (int i = 0; i < original.rdma_devices_size(); ++i) {
    const auto& o = original.rdma_devices(i);
    const auto& c = captured.rdma_devices(i);
    EXPECT_EQ(c.name(), o.name());
    EXPECT_EQ(c.pci_address(), o.pci_address());
    ASSERT_EQ(c.ports_size(), o.ports_size()) << o.name();
    for (int p = 0; p < o.ports_size(); ++p) {
      EXPECT_EQ(c.ports(p).gids_size(), o.ports(p).gids_size()) << o.name();
      EXPECT_EQ(c.ports(p).rate_text(), o.ports(p).rate_text());
      EXPECT_EQ(c.ports(p).active_mtu(), o.ports(p).active_mtu());
    }
  }
  ASSERT_EQ(captured.pci_size(), original.pci_size());
  for (int i = 0; i < original.pci_size(); ++i) {
    EXPECT_EQ(captured.pci(i).address(), original.pci(i).address());
    EXPECT_EQ(captured.pci(i).sysfs_path(), original.pci(i).sysfs_path());
  }
  EXPECT_EQ(captured.gpu_nic_paths_size(), original.gpu_nic_paths_size());
  // And then everything, unknowns included.
  std::string differences;
  google::protobuf::util::MessageDifferencer differ;
  differ.ReportDifferencesToString(&differences);
  EXPECT_TRUE(differ.Compare(original, captured)) << differences;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, FixtureRoundTrip,
                         ::testing::Values("roce-healthy", "roce-broken", "ib-hdr-healthy",
                                           "rxe-vm", "no-rdma", "acs-clean", "acs-redirect",
                                           "acs-nonroot"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

TEST(HostCaptureTest, LinksAreRelativeAndTheKernelsOwn) {
  ScopedDir out("links");
  const fs::path fixture = FixtureRoot("roce-healthy");
  ASSERT_TRUE(CaptureTree(fixture, out.path()).ok());
  int links = 0;
  for (const auto& entry : fs::recursive_directory_iterator(out.path())) {
    if (!entry.is_symlink()) continue;
    ++links;
    const fs::path relative = entry.path().lexically_relative(out.path());
    const fs::path text = fs::read_symlink(entry.path());
    EXPECT_TRUE(text.is_relative()) << relative << " -> " << text;
    std::error_code ec;
    EXPECT_EQ(text, fs::read_symlink(fixture / relative, ec)) << relative;
    EXPECT_TRUE(fs::exists(entry.path())) << relative << " dangles";
  }
  // 2 infiniband + 4 net + 18 PCI class links, each RDMA device's and netdev's `device`.
  EXPECT_GE(links, 2 + 4 + 18 + 2 + 3);
}

TEST(HostCaptureTest, OnlyTheAllowListIsCopied) {
  TempSysfsTree tree("roce-healthy");
  fs::create_directories(tree.root() / "etc");
  tree.Write("/etc/shadow", "root:$6$secret:19000:0:99999:7:::\n");
  fs::create_directories(tree.root() / "proc/1");
  tree.Write("/proc/1/environ", "AWS_SECRET_ACCESS_KEY=abc");
  tree.Write("/proc/cmdline",
             "BOOT_IMAGE=/vmlinuz-6.8.0 root=UUID=1234 ro intel_iommu=on iommu=pt "
             "rd.luks.key=/keyfile ipmi_password=hunter2\n");
  tree.Write("/sys/class/net/enp65s0f0np0/address", "0c:42:a1:65:f2:c0\n");
  tree.Write("/sys/class/infiniband/mlx5_0/ports/1/counters/port_rcv_data",
             std::string(70 * 1024, '7'));
  ScopedDir out("allow");
  auto report = CaptureTree(tree.root(), out.path());
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(fs::exists(out.path() / "etc"));
  EXPECT_FALSE(fs::exists(out.path() / "proc/1"));
  EXPECT_FALSE(fs::exists(out.path() / "sys/module/igb")) << "not an RDMA or GPU module";
  EXPECT_TRUE(fs::exists(out.path() / "sys/module/mlx5_core/refcnt"));
  EXPECT_FALSE(fs::exists(out.path() / "sys/class/net/enp65s0f0np0/address"));
  EXPECT_EQ(ReadFile(out.path() / "proc/cmdline"),
            "BOOT_IMAGE=/vmlinuz-6.8.0 root=UUID=1234 ro intel_iommu=on iommu=pt\n");
  EXPECT_FALSE(
      fs::exists(out.path() / "sys/class/infiniband/mlx5_0/ports/1/counters/port_rcv_data"));
  ASSERT_EQ(report->left_out.size(), 1u);
  EXPECT_NE(report->left_out[0].find("port_rcv_data: larger than 65536 bytes"), std::string::npos)
      << report->left_out[0];
  const std::string readme = ReadFile(out.path() / "clustercert-capture/README.txt");
  EXPECT_NE(readme.find("2 word(s) naming a password"), std::string::npos) << readme;
  EXPECT_NE(readme.find("port_rcv_data"), std::string::npos) << readme;
}

TEST(HostCaptureTest, BinaryFilesAndLibraryNamesSurviveTheRoundTrip) {
  TempSysfsTree tree("roce-healthy");
  // A small VPD (identifier, VPD-R with SN, VPD-W padded with NULs, end tag).
  const std::string vpd(
      "\x82\x04\x00"
      "Card"
      "\x90\x07\x00"
      "SN\x04"
      "MT22"
      "\x91\x05\x00"
      "RW\x02\x00\x00"
      "\x78",
      26);
  tree.Write("/sys/bus/pci/devices/0000:41:00.0/vpd", vpd);
  const fs::path lib = tree.root() / "usr/lib/x86_64-linux-gnu";
  fs::create_directories(lib);
  std::ofstream(lib / "libnccl.so.2.21.5") << std::string(4096, 'E');
  fs::create_symlink("libnccl.so.2.21.5", lib / "libnccl.so.2");
  std::ofstream(lib / "libc.so.6") << "not NCCL";
  ScopedDir out("binary");
  ASSERT_TRUE(CaptureTree(tree.root(), out.path()).ok());

  EXPECT_EQ(ReadFile(out.path() / "sys/devices/pci0000:40/0000:40:01.1/0000:41:00.0/vpd"), vpd);
  const fs::path captured_lib = out.path() / "usr/lib/x86_64-linux-gnu";
  EXPECT_EQ(fs::read_symlink(captured_lib / "libnccl.so.2"), "libnccl.so.2.21.5");
  EXPECT_EQ(fs::file_size(captured_lib / "libnccl.so.2.21.5"), 0u) << "a name, never the library";
  EXPECT_FALSE(fs::exists(captured_lib / "libc.so.6"));

  const v1::Inventory original = Collect(tree.root());
  const v1::Inventory captured = Collect(out.path());
  ASSERT_GE(captured.pci_size(), 1);
  EXPECT_EQ(captured.pci(0).serial_number(), "MT22");
  EXPECT_EQ(captured.stack().nccl_version(), original.stack().nccl_version());
  std::string differences;
  google::protobuf::util::MessageDifferencer differ;
  differ.ReportDifferencesToString(&differences);
  EXPECT_TRUE(differ.Compare(original, captured)) << differences;
}

TEST(HostCaptureTest, RefusesANonEmptyDirectory) {
  ScopedDir out("nonempty");
  fs::create_directories(out.path());
  std::ofstream(out.path() / "other-host.txt") << "x";
  auto report = CaptureTree(FixtureRoot("no-rdma"), out.path());
  EXPECT_TRUE(absl::IsFailedPrecondition(report.status())) << report.status();
  EXPECT_NE(report.status().message().find("is not empty"), std::string::npos);
  EXPECT_FALSE(fs::exists(out.path() / "sys"));

  ScopedDir empty("empty");
  fs::create_directories(empty.path());
  EXPECT_TRUE(CaptureTree(FixtureRoot("no-rdma"), empty.path()).ok());
}

// Answers by argv; anything not listed does not exist on the "host".
class ScriptedRunner final : public process::CommandRunner {
 public:
  absl::StatusOr<process::CommandResult> Run(const std::vector<std::string>& argv,
                                             absl::Duration timeout) override {
    std::string key;
    for (const auto& arg : argv) key += (key.empty() ? "" : " ") + arg;
    calls.push_back(key);
    EXPECT_GT(timeout, absl::ZeroDuration());
    auto it = outputs.find(key);
    if (it == outputs.end()) return absl::NotFoundError(argv[0] + ": not found in $PATH");
    return it->second;
  }
  std::map<std::string, process::CommandResult> outputs;
  std::vector<std::string> calls;
};

class FixedDcb final : public inventory::DcbSource {
 public:
  absl::StatusOr<inventory::DcbSettings> Read(const std::string& netdev) override {
    asked.push_back(netdev);
    inventory::DcbSettings settings;
    settings.pfc_enabled_mask = 0x18;  // priorities 3 and 4
    settings.dscp_priorities = std::vector<inventory::DcbDscpPriority>{{26, 3}, {48, 6}};
    return settings;
  }
  std::vector<std::string> asked;
};

TEST(HostCaptureTest, ToolOutputsLandWhereTheReadersLook) {
  ScriptedRunner runner;
  // `ibv_devinfo -v`, port part, as rdma-core prints it (see shared/samples).
  runner.outputs["ibv_devinfo -v"] = {
      0,
      "hca_id:\tmlx5_0\n\tport:\t1\n\t\tstate:\t\t\tPORT_ACTIVE (4)\n"
      "\t\tmax_mtu:\t\t4096 (5)\n\t\tactive_mtu:\t\t2048 (4)\n"
      "hca_id:\tmlx5_1\n\tport:\t1\n\t\tactive_mtu:\t\t4096 (5)\n",
      ""};
  runner.outputs["ofed_info -s"] = {0, "MLNX_OFED_LINUX-24.01-0.3.3.1:\n", ""};
  runner.outputs["mstconfig -d 0000:41:00.0 q"] = {
      3, "", "-E- Failed to open the device"};  // a failure is a note, the loop goes on
  runner.outputs["mstconfig -d 0000:41:00.1 q"] = {
      0, "Device #1:\n----------\n\nConfigurations:      Next Boot\n  LINK_TYPE_P1   ETH(2)\n", ""};
  FixedDcb dcb;
  ScopedDir out("tools");
  auto report = CaptureTree(FixtureRoot("roce-healthy"), out.path(), &runner, &dcb, true);
  ASSERT_TRUE(report.ok()) << report.status();

  const fs::path capture = out.path() / "clustercert-capture";
  EXPECT_EQ(ReadFile(capture / "ofed_info"), "MLNX_OFED_LINUX-24.01-0.3.3.1:\n");
  EXPECT_NE(ReadFile(capture / "mstconfig/0000:41:00.1.txt").find("LINK_TYPE_P1"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(capture / "mstconfig/0000:41:00.0.txt"));
  EXPECT_EQ(ReadFile(capture / "dcb/enp65s0f0np0/pfc_enabled_priorities"), "3 4\n");
  EXPECT_EQ(ReadFile(capture / "dcb/enp65s0f1np1/dscp_priorities"), "26 3\n48 6\n");
  EXPECT_EQ(dcb.asked, (std::vector<std::string>{"enp65s0f0np0", "enp65s0f1np1"}));
  EXPECT_EQ(runner.calls, (std::vector<std::string>{
                              "ibv_devinfo -v", "ofed_info -s", "mstconfig -d 0000:41:00.0 q",
                              "mstconfig -d 0000:41:00.1 q", "nvidia-smi -q"}))
      << "nvidia-smi missing: topo -m is not asked";

  const std::string readme = ReadFile(capture / "README.txt");
  EXPECT_NE(readme.find("nvidia-smi -q: not found on this host"), std::string::npos) << readme;
  EXPECT_NE(readme.find("mstconfig -d 0000:41:00.0 q: exited with status 3"), std::string::npos)
      << readme;
  EXPECT_NE(CaptureSummary(*report, out.path()).find("clustercert-capture/ibv_devinfo"),
            std::string::npos);

  // The captured outputs are what the inventory reads back.
  const v1::Inventory inventory = Collect(out.path());
  EXPECT_EQ(inventory.stack().ofed_version(), "MLNX_OFED_LINUX-24.01-0.3.3.1");
  ASSERT_EQ(inventory.rdma_devices_size(), 2);
  EXPECT_EQ(inventory.rdma_devices(0).ports(0).active_mtu(), 2048u);
  EXPECT_EQ(inventory.rdma_devices(0).ports(0).active_mtu_source(), "captured ibv_devinfo -v");
  ASSERT_EQ(inventory.qos_size(), 2);
  EXPECT_EQ(inventory.qos(0).pfc_enabled_mask(), 0x18u);
}

TEST(HostCaptureTest, FirmwareQueriesFallBackToMlxconfig) {
  ScriptedRunner runner;
  const std::string table = "Device #1:\n\nConfigurations:      Next Boot\n  SRIOV_EN   False(0)\n";
  runner.outputs["mlxconfig -d 0000:41:00.0 q"] = {0, table, ""};
  runner.outputs["mlxconfig -d 0000:41:00.1 q"] = {0, table, ""};
  ScopedDir out("mlxconfig");
  auto report = CaptureTree(FixtureRoot("roce-healthy"), out.path(), &runner, nullptr, true);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(ReadFile(out.path() / "clustercert-capture/mstconfig/0000:41:00.1.txt"), table);
  int mstconfig_calls = 0;
  for (const auto& call : runner.calls) mstconfig_calls += call.rfind("mstconfig", 0) == 0;
  EXPECT_EQ(mstconfig_calls, 1) << "a missing tool is asked once";
}

TEST(HostCaptureTest, AHostileNetdevNameNeverBecomesAPath) {
  TempSysfsTree tree("rxe-vm");
  tree.Write("/sys/class/infiniband/rxe0/parent", "../../../escape\n");
  ScriptedRunner runner;
  FixedDcb dcb;
  ScopedDir out("hostile");
  auto report = CaptureTree(tree.root(), out.path(), &runner, &dcb, true);
  ASSERT_TRUE(report.ok()) << report.status();
  for (const auto& netdev : dcb.asked) EXPECT_EQ(netdev.find('/'), std::string::npos) << netdev;
  EXPECT_FALSE(fs::exists(out.path().parent_path() / "escape"));
  EXPECT_FALSE(fs::exists(out.path() / "escape"));
  // The rest of the host is still captured.
  EXPECT_TRUE(fs::exists(out.path() / "sys/class/infiniband/rxe0/ports/1/gids/1"));
}

}  // namespace
}  // namespace clustercert::agent
