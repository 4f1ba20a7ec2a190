// The HGX-class twin: four 8-GPU, 8-rail RoCE hosts (tests/fixtures/sysfs/
// hgx-h200-node1..4, made by gen_fixtures.py) collected with the real
// InventoryCollector (captured port attributes and DCB, fake clock and
// addresses, as fixture_checks_test.cc does) and judged as a cluster by
// EvaluateInventoryChecks with a 4-node RoCE plan. The healthy twin passes
// every meaningful check; each fault variant, put in node3's place, fails
// exactly its planted finding(s) and nothing else.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "agent/inventory/captured_port_attribute_source.h"
#include "agent/inventory/dcb_capture_source.h"
#include "agent/inventory/inventory_collector.h"
#include "controller/checks/inventory_evaluation.h"
#include "controller/checks/node_checks.h"
#include "gtest/gtest.h"
#include "tests/unit/controller/checks/fixture_collection.h"

namespace clustercert::controller::checks {
namespace {

namespace fs = std::filesystem;
using agent::inventory::InventoryProbes;

constexpr int kNodes = 4;
constexpr int kRails = 8;
constexpr int kGpus = 8;

std::string Fixture(const std::string& name) {
  return std::string(CLUSTERCERT_FIXTURES) + "/sysfs/" + name;
}

std::string ManagementIp(int node) { return absl::StrCat("192.168.100.", 10 + node); }

v1::Inventory CollectTree(const std::string& root, int node) {
  return testing::CollectFixtureHost(root, ManagementIp(node));
}

std::vector<std::string> Rails() {
  std::vector<std::string> rails;
  for (int i = 0; i < kRails; ++i) rails.push_back(absl::StrCat("mlx5_", i));
  return rails;
}

// What plans/4node-roce.yaml says about the inventory, on the twin's nodes.
plan::Plan TwinPlan() {
  plan::Plan plan;
  plan.cluster = "hgx-twin";
  plan.fabric.type = plan::FabricType::kRoce;
  plan.fabric.link_rate_gbps = 400;
  for (int n = 1; n <= kNodes; ++n) {
    plan::Node node;
    node.name = absl::StrCat("node", n);
    node.agent = absl::StrCat(ManagementIp(n), ":7070");
    node.rails = Rails();
    node.gpus = kGpus;
    plan.nodes.push_back(node);
  }
  plan.expect.nvidia_peermem = true;
  plan.expect.pcie = {5, 16};
  return plan;
}

// The twin with `node3_tree` in node3's place, collected and judged.
struct Twin {
  plan::Plan plan = TwinPlan();
  std::vector<v1::Inventory> inventories;
  std::vector<v1::Finding> findings;
};

Twin Judge(const std::string& node3_root) {
  Twin twin;
  for (int n = 1; n <= kNodes; ++n) {
    twin.inventories.push_back(
        CollectTree(n == 3 ? node3_root : Fixture(absl::StrCat("hgx-h200-node", n)), n));
  }
  std::vector<NodeEvidence> evidence;
  for (int i = 0; i < kNodes; ++i) {
    NodeClockOffset clock{twin.plan.nodes[i].name, absl::Microseconds(300 * i),
                          absl::Microseconds(200)};
    evidence.push_back({&twin.plan.nodes[i], true, "", &twin.inventories[i], clock});
  }
  twin.findings = EvaluateInventoryChecks(twin.plan, evidence);
  return twin;
}

bool NotPassing(const v1::Finding& f) {
  return f.status() == v1::Finding::fail || f.status() == v1::Finding::unknown;
}

// "id node device" of every failing or unknown finding, whatever its severity.
std::multiset<std::string> Failing(const std::vector<v1::Finding>& findings) {
  std::multiset<std::string> failing;
  for (const auto& f : findings) {
    if (NotPassing(f)) failing.insert(absl::StrCat(f.id(), " ", f.node(), " ", f.device()));
  }
  return failing;
}

std::string Describe(const std::vector<v1::Finding>& findings) {
  std::string out;
  for (const auto& f : findings) {
    if (NotPassing(f)) absl::StrAppend(&out, f.node(), ": ", FindingSentence(f), "\n");
  }
  return out;
}

// Passing findings by id, for one node ("" for the cluster-wide ones).
std::map<std::string, int> PassesOn(const std::vector<v1::Finding>& findings,
                                    const std::string& node) {
  std::map<std::string, int> passes;
  for (const auto& f : findings) {
    if (f.node() == node && f.status() == v1::Finding::pass) ++passes[f.id()];
  }
  return passes;
}

const v1::PciFunction* FindPci(const v1::Inventory& inventory, const std::string& address) {
  for (const auto& function : inventory.pci()) {
    if (function.address() == address) return &function;
  }
  return nullptr;
}

const v1::GpuNicPath* FindPath(const v1::Inventory& inventory, const std::string& gpu,
                               const std::string& nic) {
  for (const auto& path : inventory.gpu_nic_paths()) {
    if (path.gpu() == gpu && path.nic() == nic) return &path;
  }
  return nullptr;
}

class HgxTwinTest : public ::testing::Test {
 protected:
  // Collected once: every test substitutes node3 on the same three healthy nodes.
  static const Twin& Healthy() {
    static const Twin* twin = new Twin(Judge(Fixture("hgx-h200-node3")));
    return *twin;
  }
};

TEST_F(HgxTwinTest, HealthyTwinHasNoFailingOrUnknownFinding) {
  const Twin& twin = Healthy();
  EXPECT_TRUE(Failing(twin.findings).empty()) << Describe(twin.findings);
}

TEST_F(HgxTwinTest, HealthyTwinPassesTheMeaningfulChecksRatherThanSkippingThem) {
  const Twin& twin = Healthy();
  // Per rail, per GPU and per node: what each node must pass, not skip.
  const std::map<std::string, int> per_node = {{"connect.reachable", 1},
                                               {"inventory.collected", 1},
                                               {"stack.modules", 1},
                                               {"stack.ofed", 1},
                                               {"rail.present", kRails},
                                               {"port.state", kRails},
                                               {"port.phys_state", kRails},
                                               {"port.rate", kRails},
                                               {"port.link_layer", kRails},
                                               {"roce.gid", kRails},
                                               {"mtu.netdev", kRails},
                                               {"mtu.active", kRails},
                                               {"gpudirect.peermem", 1},
                                               {"gpu.count", 1},
                                               {"pcie.nic", kRails},
                                               {"pcie.gpu", kGpus},
                                               {"pcie.acs", 1},
                                               {"host.iommu", 1},
                                               {"nic.ats", 1},
                                               {"nic.link_type", kRails},
                                               {"topology.gpu_nic", kGpus},
                                               {"mgmt.separate", 1},
                                               {"mgmt.subnet", 1},
                                               {"clock.ntp", 1}};
  for (const auto& node : twin.plan.nodes) {
    const std::map<std::string, int> passes = PassesOn(twin.findings, node.name);
    for (const auto& [id, count] : per_node) {
      auto it = passes.find(id);
      EXPECT_EQ(it == passes.end() ? 0 : it->second, count) << node.name << " " << id;
    }
    for (const char* qos : {"qos.trust", "qos.pfc", "qos.dscp", "qos.ecn", "qos.traffic_class"}) {
      EXPECT_GE(passes.count(qos), 1u) << node.name << " " << qos;
    }
  }
  for (const auto& f : twin.findings) {
    // 4 switches x (upstream + 4 downstream ports) carry the switched pairs.
    if (f.id() == "pcie.acs") {
      EXPECT_EQ(f.observed(), "ACS redirect off on 20 bridges");
    }
  }
  const std::map<std::string, int> cluster = PassesOn(twin.findings, "");
  for (const char* id : {"consistency.nic_firmware", "consistency.kernel", "consistency.ofed",
                         "consistency.gpu_driver", "consistency.nccl", "clock.offset"}) {
    EXPECT_EQ(cluster.count(id), 1u) << id;
  }
}

TEST_F(HgxTwinTest, HealthyTwinSkipsOnlyWhatAFixtureCannotShow) {
  std::set<std::string> skipped;
  for (const auto& f : Healthy().findings) {
    if (f.status() == v1::Finding::skipped) skipped.insert(f.id());
  }
  // No CUDA runtime is queried on a fixture tree (gpu_runtime says why), so
  // there is no runtime version to compare; nor is FRR (bgp.reason says why),
  // so the bgp.* checks skip under the default fabric.routing: auto; the
  // capture copied no /lib/modules, so stack.srcversion has no file to compare;
  // its plan asks for no cabling, so the cabling and cable checks skip.
  EXPECT_EQ(skipped, (std::set<std::string>{"consistency.cuda", "bgp.neighbor", "bgp.prefixes",
                                            "bgp.announced", "bgp.router_id", "stack.srcversion",
                                            "cable.present", "cable.dom", "cable.consistency",
                                            "cabling.neighbor", "cabling.rail_alignment"}))
      << Describe(Healthy().findings);
}

TEST_F(HgxTwinTest, TheTreesLookLikeAnHgxH200) {
  const v1::Inventory& node1 = Healthy().inventories[0];
  int gpus = 0;
  for (const auto& function : node1.pci()) gpus += function.role() == "gpu" ? 1 : 0;
  EXPECT_EQ(gpus, kGpus) << "the four NVSwitches (class 0x068000) are not GPUs";
  ASSERT_EQ(node1.rdma_devices_size(), kRails);
  for (const auto& device : node1.rdma_devices()) {
    EXPECT_EQ(device.hca_type(), "MT4129") << device.name();
    EXPECT_EQ(device.fw_ver(), "28.39.1002") << device.name();
    ASSERT_EQ(device.ports_size(), 1);
    EXPECT_EQ(device.ports(0).rate_gbps(), 400) << device.name();
  }
  // GPU i shares a PCIe switch with NIC i; the other switch on the socket is
  // NODE, the other socket SYS (nvidia-smi topo -m on HGX H100/H200).
  for (int i = 0; i < kGpus; ++i) {
    const std::string gpu = absl::StrCat("gpu", i);
    const v1::GpuNicPath* own = FindPath(node1, gpu, absl::StrCat("mlx5_", i));
    ASSERT_NE(own, nullptr) << gpu;
    EXPECT_EQ(own->relation(), "PIX") << gpu;
    const v1::GpuNicPath* other_socket = FindPath(node1, gpu, absl::StrCat("mlx5_", (i + 4) % 8));
    ASSERT_NE(other_socket, nullptr) << gpu;
    EXPECT_EQ(other_socket->relation(), "SYS") << gpu;
    const v1::GpuNicPath* other_switch = FindPath(node1, gpu, absl::StrCat("mlx5_", i ^ 2));
    ASSERT_NE(other_switch, nullptr) << gpu;
    EXPECT_EQ(other_switch->relation(), "NODE") << gpu;
  }
  EXPECT_EQ(node1.iommu().mode(), "passthrough");
  EXPECT_EQ(node1.stack().kernel_release(), "6.8.0-45-generic");
  EXPECT_EQ(node1.stack().nvidia_driver_version(), "550.54.15");
  EXPECT_EQ(node1.stack().nvidia_driver_flavour(), "open");
  EXPECT_EQ(node1.stack().gpudirect_mechanism(), "nvidia_peermem");
  EXPECT_EQ(node1.stack().nccl_version(), "2.21.5");
  EXPECT_EQ(node1.stack().ofed_version(), "MLNX_OFED_LINUX-24.07-0.6.1.0");
  EXPECT_EQ(node1.nic_firmware_size(), kRails);
  EXPECT_EQ(node1.management_netdev(), "eno1");
}

TEST_F(HgxTwinTest, NodesAreToldApartByTheirSerialsAndGids) {
  std::set<std::string> serials;
  std::set<std::string> gids;
  size_t expected = 0;
  for (const v1::Inventory& inventory : Healthy().inventories) {
    for (const auto& function : inventory.pci()) {
      EXPECT_FALSE(function.serial_number().empty())
          << function.name() << ": " << function.identity_source();
      serials.insert(function.serial_number());
      ++expected;
    }
    const v1::PciFunction* nic0 = FindPci(inventory, "0000:19:00.0");
    ASSERT_NE(nic0, nullptr);
    EXPECT_EQ(nic0->part_number(), "MCX75310AAS-NEAT");
    EXPECT_EQ(nic0->identity_source(), "vpd");
    const v1::PciFunction* gpu0 = FindPci(inventory, "0000:18:00.0");
    ASSERT_NE(gpu0, nullptr);
    EXPECT_EQ(gpu0->product_name(), "NVIDIA H200");
    for (const auto& device : inventory.rdma_devices()) {
      for (const auto& gid : device.ports(0).gids()) {
        if (!gid.ipv4().empty() && gid.index() == 3) gids.insert(gid.ipv4());
      }
    }
  }
  EXPECT_EQ(serials.size(), expected) << "every GPU and NIC serial is distinct";
  EXPECT_EQ(gids.size(), static_cast<size_t>(kNodes * kRails));
  EXPECT_EQ(gids.count("10.10.6.13"), 1u) << "node3's mlx5_5 on rail 6's subnet";
}

void ExpectRemedies(const std::vector<v1::Finding>& findings) {
  for (const auto& f : findings) {
    if (f.status() == v1::Finding::fail) {
      EXPECT_FALSE(f.remedy().empty()) << f.id() << " " << f.device();
    }
  }
}

TEST_F(HgxTwinTest, HalfRateNicFailsOnlyItsPortRate) {
  const Twin twin = Judge(Fixture("hgx-h200-half-rate"));
  // The netdev's speed (200000) follows the rate, but no inventory check
  // judges netdev speed, so the one fault is one finding.
  EXPECT_EQ(Failing(twin.findings), (std::multiset<std::string>{"port.rate node3 mlx5_5"}))
      << Describe(twin.findings);
  ExpectRemedies(twin.findings);
  for (const auto& f : twin.findings) {
    if (!NotPassing(f)) continue;
    EXPECT_EQ(f.severity(), v1::Finding::error);
    EXPECT_EQ(f.observed(), "200 Gb/s (2X NDR)");
    EXPECT_EQ(f.expected(), "400 Gb/s");
    EXPECT_NE(f.remedy().find("cable"), std::string::npos) << f.remedy();
  }
}

TEST_F(HgxTwinTest, AcsRedirectOnOneSwitchFailsEachOfItsDownstreamPorts) {
  const Twin twin = Judge(Fixture("hgx-h200-acs-on"));
  std::multiset<std::string> expected;
  for (const char* port : {"00", "01", "02", "03"}) {
    expected.insert(absl::StrCat("pcie.acs node3 0000:39:", port, ".0"));
  }
  EXPECT_EQ(Failing(twin.findings), expected) << Describe(twin.findings);
  ExpectRemedies(twin.findings);
  // Each downstream port carries the switched pairs of the GPU or NIC below it.
  const std::map<std::string, std::string> pairs = {
      {"0000:39:00.0", "gpu2<->mlx5_2, gpu2<->mlx5_3"},
      {"0000:39:01.0", "gpu2<->mlx5_2, gpu3<->mlx5_2"},
      {"0000:39:02.0", "gpu3<->mlx5_2, gpu3<->mlx5_3"},
      {"0000:39:03.0", "gpu2<->mlx5_3, gpu3<->mlx5_3"}};
  for (const auto& f : twin.findings) {
    if (!NotPassing(f)) continue;
    EXPECT_EQ(f.observed(), "ACSCtl 0x000c: ReqRedir+ CmpltRedir+");
    ASSERT_EQ(pairs.count(f.device()), 1u) << f.device();
    EXPECT_NE(f.message().find(pairs.at(f.device())), std::string::npos) << f.message();
    EXPECT_NE(f.remedy().find(absl::StrCat("setpci -s ", f.device())), std::string::npos);
  }
  // ATS is on in the firmware, so the redirected rails warn of nothing more.
  int ats_passes = 0;
  for (const auto& f : twin.findings) {
    ats_passes += f.id() == "nic.ats" && f.node() == "node3" && f.status() == v1::Finding::pass;
  }
  EXPECT_EQ(ats_passes, 2) << "mlx5_2 and mlx5_3 sit behind the redirecting ports";
}

TEST_F(HgxTwinTest, OldFirmwareOnOneNodeFailsConsistencyForEachOfItsRails) {
  const Twin twin = Judge(Fixture("hgx-h200-old-firmware"));
  std::multiset<std::string> expected;
  for (const std::string& rail : Rails()) {
    expected.insert(absl::StrCat("consistency.nic_firmware node3 ", rail));
  }
  EXPECT_EQ(Failing(twin.findings), expected) << Describe(twin.findings);
  ExpectRemedies(twin.findings);
  for (const auto& f : twin.findings) {
    if (!NotPassing(f)) continue;
    EXPECT_EQ(f.observed(), "28.36.1010");
    EXPECT_EQ(f.expected(), "28.39.1002");
    EXPECT_NE(f.message().find("24 of the 32 MT4129 rail NICs"), std::string::npos) << f.message();
    EXPECT_NE(f.remedy().find("node3"), std::string::npos);
  }
}

TEST_F(HgxTwinTest, GpuOnTheOtherSocketFailsItsNearestNicCheck) {
  const Twin twin = Judge(Fixture("hgx-h200-far-gpu"));
  // The card that was GPU 7 now sits on socket 0's spare root port; the
  // kernel and nvidia-smi number GPUs in bus order, so it is gpu4 there.
  const v1::PciFunction* moved = FindPci(twin.inventories[2], "0000:5a:00.0");
  ASSERT_NE(moved, nullptr);
  EXPECT_EQ(moved->role(), "gpu");
  EXPECT_EQ(moved->serial_number(), "1652024003007") << "GPU 7's serial moved with the card";
  EXPECT_EQ(Failing(twin.findings),
            (std::multiset<std::string>{absl::StrCat("topology.gpu_nic node3 ", moved->name())}))
      << Describe(twin.findings);
  ExpectRemedies(twin.findings);
  for (const auto& f : twin.findings) {
    if (!NotPassing(f)) continue;
    EXPECT_EQ(f.observed(), "NODE to mlx5_0") << "same socket, no shared switch";
  }
  for (const auto& path : twin.inventories[2].gpu_nic_paths()) {
    if (path.gpu() != moved->name()) continue;
    EXPECT_TRUE(path.relation() == "NODE" || path.relation() == "SYS") << path.nic();
  }
}

// A capture cut short on the way (a bridge's config space, a NIC's VPD,
// nvidia-smi's output) is an unknown or a missing identity, never a pass.
TEST_F(HgxTwinTest, TruncatedCapturesAreUnknownsNotPasses) {
  const fs::path root = fs::temp_directory_path() / ("hgx_twin_cut_" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::copy(Fixture("hgx-h200-node3"), root,
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  const fs::path bridge =
      root / "sys/devices/pci0000:37/0000:37:01.0/0000:38:00.0/0000:39:01.0/config";
  fs::resize_file(bridge, 200);
  const fs::path vpd =
      root / "sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:01.0/0000:19:00.0/vpd";
  fs::resize_file(vpd, 40);
  std::ofstream(root / "clustercert-capture/nvidia-smi-q") << "GPU 00000000:18:0";

  const Twin twin = Judge(root.string());
  fs::remove_all(root);
  EXPECT_EQ(Failing(twin.findings), (std::multiset<std::string>{"pcie.acs node3 "}))
      << Describe(twin.findings);
  const v1::Inventory& node3 = twin.inventories[2];
  const v1::PciFunction* nic0 = FindPci(node3, "0000:19:00.0");
  ASSERT_NE(nic0, nullptr);
  EXPECT_TRUE(nic0->serial_number().empty());
  EXPECT_NE(nic0->identity_source().find("malformed VPD"), std::string::npos)
      << nic0->identity_source();
  bool gpu_identity_unknown = false;
  for (const auto& unknown : node3.unknowns()) {
    gpu_identity_unknown |= unknown.field() == "gpu_identity";
  }
  EXPECT_TRUE(gpu_identity_unknown);
}

}  // namespace
}  // namespace clustercert::controller::checks
