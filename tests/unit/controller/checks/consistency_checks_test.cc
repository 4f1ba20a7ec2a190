#include "controller/checks/consistency_checks.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "controller/checks/inventory_evaluation.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/controller/checks/test_inventories.h"

namespace clustercert::controller::checks {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

// A cluster of `count` copies of the healthy RoCE node (two MT4123 rails on
// 20.31.1014) that agree on every version; tests change one node at a time.
class ConsistencyTest : public ::testing::Test {
 protected:
  void MakeCluster(int count) {
    plan_ = testing::RocePlan();
    const plan::Node base = plan_.nodes[0];
    plan_.nodes.clear();
    inventories_.clear();
    for (int i = 1; i <= count; ++i) {
      plan::Node node = base;
      node.name = absl::StrCat("node", i);
      plan_.nodes.push_back(node);
      v1::Inventory inventory = testing::HealthyRoceInventory();
      inventory.set_node_name(node.name);
      v1::Stack* stack = inventory.mutable_stack();
      stack->set_kernel_release("6.8.0-45-generic");
      stack->set_nvidia_driver_version("550.54.15");
      stack->set_nvidia_driver_flavour("open");
      stack->set_nccl_version("2.21.5");
      inventory.mutable_gpu_runtime()->set_runtime_version("12.4");
      inventories_.push_back(inventory);
    }
  }

  std::vector<v1::Finding> Evaluate() const {
    std::vector<NodeEvidence> evidence;
    for (size_t i = 0; i < plan_.nodes.size(); ++i) {
      NodeEvidence e;
      e.node = &plan_.nodes[i];
      e.reachable = reachable_.empty() || reachable_[i];
      e.inventory = e.reachable ? &inventories_[i] : nullptr;
      evidence.push_back(e);
    }
    return EvaluateConsistency(plan_, evidence);
  }

  static std::vector<v1::Finding> WithId(const std::vector<v1::Finding>& findings,
                                         const std::string& id) {
    std::vector<v1::Finding> out;
    for (const v1::Finding& finding : findings) {
      if (finding.id() == id) out.push_back(finding);
    }
    return out;
  }

  static std::vector<std::string> Failing(const std::vector<v1::Finding>& findings) {
    std::vector<std::string> out;
    for (const v1::Finding& f : findings) {
      if (f.status() == v1::Finding::fail)
        out.push_back(absl::StrCat(f.id(), " ", f.node(), " ", f.device()));
    }
    return out;
  }

  v1::RdmaDevice& Device(int node, const std::string& name) {
    return testing::Device(inventories_[static_cast<size_t>(node - 1)], name);
  }
  v1::Stack& Stack(int node) {
    return *inventories_[static_cast<size_t>(node - 1)].mutable_stack();
  }

  plan::Plan plan_;
  std::vector<v1::Inventory> inventories_;
  std::vector<bool> reachable_;
};

TEST_F(ConsistencyTest, AllAgreeIsOnePassPerArea) {
  MakeCluster(4);
  std::vector<v1::Finding> findings = Evaluate();
  EXPECT_THAT(Failing(findings), IsEmpty());
  for (const char* id : {"consistency.nic_firmware", "consistency.kernel", "consistency.ofed",
                         "consistency.gpu_driver", "consistency.cuda", "consistency.nccl"}) {
    std::vector<v1::Finding> area = WithId(findings, id);
    ASSERT_THAT(area, SizeIs(1)) << id;
    EXPECT_EQ(area[0].status(), v1::Finding::pass) << id;
  }
  const v1::Finding kernel = WithId(findings, "consistency.kernel")[0];
  EXPECT_EQ(kernel.observed(), "6.8.0-45-generic");
  EXPECT_EQ(kernel.severity(), v1::Finding::warning);
  EXPECT_EQ(kernel.message(), "All 4 nodes run kernel 6.8.0-45-generic.");
  const v1::Finding firmware = WithId(findings, "consistency.nic_firmware")[0];
  EXPECT_EQ(firmware.device(), "MT4123");
  EXPECT_EQ(firmware.message(), "All 8 MT4123 rail NICs run firmware 20.31.1014.");
  EXPECT_EQ(WithId(findings, "consistency.gpu_driver")[0].observed(), "550.54.15");
}

TEST_F(ConsistencyTest, OneNodeWithOlderFirmwareIsTheOnlyFailure) {
  MakeCluster(4);
  Device(3, "mlx5_1").set_fw_ver("20.28.1002");
  std::vector<v1::Finding> findings = Evaluate();
  EXPECT_THAT(Failing(findings), ElementsAre("consistency.nic_firmware node3 mlx5_1"));
  const v1::Finding odd = WithId(findings, "consistency.nic_firmware")[0];
  EXPECT_EQ(odd.severity(), v1::Finding::error);
  EXPECT_EQ(odd.observed(), "20.28.1002");
  EXPECT_EQ(odd.expected(), "20.31.1014");
  EXPECT_EQ(odd.message(),
            "node3 mlx5_1 runs firmware 20.28.1002 while 7 of the 8 MT4123 rail NICs run "
            "20.31.1014.");
  EXPECT_THAT(odd.remedy(), HasSubstr("Flash mlx5_1 on node3 to 20.31.1014 like the other 7 "
                                      "MT4123 rail NICs"));
  EXPECT_THAT(odd.remedy(), HasSubstr("mstflint -d 0000:c1:00.0 -i <image for 20.31.1014> burn"));
  EXPECT_THAT(odd.remedy(), HasSubstr("mlxfwmanager"));
}

TEST_F(ConsistencyTest, DifferentNicModelsAreNotComparedWithEachOther) {
  MakeCluster(4);
  // Every node's second rail is a ConnectX-7 on its own firmware line.
  for (int node = 1; node <= 4; ++node) {
    Device(node, "mlx5_1").set_hca_type("MT4129");
    Device(node, "mlx5_1").set_fw_ver("28.39.1002");
  }
  std::vector<v1::Finding> findings = Evaluate();
  EXPECT_THAT(Failing(findings), IsEmpty());
  std::vector<v1::Finding> firmware = WithId(findings, "consistency.nic_firmware");
  ASSERT_THAT(firmware, SizeIs(2));
  EXPECT_EQ(firmware[0].device(), "MT4123");
  EXPECT_EQ(firmware[0].observed(), "20.31.1014");
  EXPECT_EQ(firmware[1].device(), "MT4129");
  EXPECT_EQ(firmware[1].observed(), "28.39.1002");
}

TEST_F(ConsistencyTest, RailsOutsideThePlanAreNotCompared) {
  MakeCluster(3);
  for (plan::Node& node : plan_.nodes) node.rails = {"mlx5_0"};
  Device(2, "mlx5_1").set_fw_ver("20.28.1002");
  EXPECT_THAT(Failing(Evaluate()), IsEmpty());
}

TEST_F(ConsistencyTest, TwoTwoSplitNamesBothCamps) {
  MakeCluster(4);
  Stack(3).set_nccl_version("2.18.3");
  Stack(4).set_nccl_version("2.18.3");
  std::vector<v1::Finding> nccl = WithId(Evaluate(), "consistency.nccl");
  ASSERT_THAT(nccl, SizeIs(2));
  for (const v1::Finding& f : nccl) {
    EXPECT_EQ(f.status(), v1::Finding::fail);
    EXPECT_EQ(f.severity(), v1::Finding::error);
    EXPECT_EQ(f.node(), "");
    EXPECT_EQ(f.expected(), "the same NCCL on all nodes");
    EXPECT_THAT(f.message(), HasSubstr("split on NCCL with no strict majority"));
    EXPECT_THAT(f.remedy(), HasSubstr("Pick one NCCL release"));
  }
  EXPECT_EQ(nccl[0].observed(), "2.18.3");
  EXPECT_EQ(nccl[0].device(), "node3, node4");
  EXPECT_EQ(nccl[0].message(),
            "The nodes are split on NCCL with no strict majority: 2.18.3 on node3, node4 (2 of "
            "4), 2.21.5 on 2.");
  EXPECT_EQ(nccl[1].observed(), "2.21.5");
  EXPECT_EQ(nccl[1].device(), "node1, node2");
}

TEST_F(ConsistencyTest, PluralityWithoutMajorityIsASplit) {
  MakeCluster(4);
  Stack(3).set_kernel_release("6.5.0-1-generic");
  Stack(4).set_kernel_release("5.15.0-91-generic");
  std::vector<v1::Finding> kernel = WithId(Evaluate(), "consistency.kernel");
  ASSERT_THAT(kernel, SizeIs(3));
  EXPECT_EQ(kernel[0].observed(), "6.8.0-45-generic");  // the largest camp first
  for (const v1::Finding& f : kernel) EXPECT_EQ(f.severity(), v1::Finding::warning);
}

TEST_F(ConsistencyTest, EachAreaNamesItsOddNodeAndRemedy) {
  MakeCluster(4);
  Stack(2).set_kernel_release("5.15.0-91-generic");
  Stack(2).set_ofed_version("MLNX_OFED_LINUX-23.10-0.5.5.0");
  Stack(2).set_nvidia_driver_version("535.129.03");
  Stack(2).set_nccl_version("2.18.3");
  inventories_[1].mutable_gpu_runtime()->set_runtime_version("12.2");
  std::vector<v1::Finding> findings = Evaluate();
  EXPECT_THAT(Failing(findings), ElementsAre("consistency.kernel node2 ", "consistency.ofed node2 ",
                                             "consistency.gpu_driver node2 ",
                                             "consistency.cuda node2 ", "consistency.nccl node2 "));
  const v1::Finding kernel = WithId(findings, "consistency.kernel")[0];
  EXPECT_EQ(kernel.message(),
            "node2 runs kernel 5.15.0-91-generic while 3 of the 4 nodes run 6.8.0-45-generic.");
  EXPECT_THAT(kernel.remedy(),
              HasSubstr("Boot node2 into kernel 6.8.0-45-generic like the other 3 nodes"));
  EXPECT_THAT(WithId(findings, "consistency.ofed")[0].remedy(),
              HasSubstr("Install MLNX_OFED_LINUX-5.8-1.1.2.1 on node2 like the other 3 nodes"));
  const v1::Finding driver = WithId(findings, "consistency.gpu_driver")[0];
  EXPECT_EQ(driver.observed(), "535.129.03");
  EXPECT_EQ(driver.expected(), "550.54.15");
  EXPECT_THAT(driver.remedy(), HasSubstr("Install NVIDIA driver 550.54.15 on node2"));
  EXPECT_EQ(WithId(findings, "consistency.cuda")[0].severity(), v1::Finding::warning);
  EXPECT_THAT(WithId(findings, "consistency.nccl")[0].remedy(),
              HasSubstr("Install NCCL 2.21.5 on node2 like the other 3 nodes"));
}

TEST_F(ConsistencyTest, UpstreamRdmaCoreIsComparedWhenThereIsNoOfed) {
  MakeCluster(3);
  for (int node = 1; node <= 3; ++node) Stack(node).clear_ofed_version();
  Stack(1).set_rdma_core_version("50.0");
  std::vector<v1::Finding> ofed = WithId(Evaluate(), "consistency.ofed");
  ASSERT_THAT(ofed, SizeIs(1));
  EXPECT_EQ(ofed[0].node(), "node1");
  EXPECT_EQ(ofed[0].observed(), "rdma-core 50.0");
  EXPECT_EQ(ofed[0].expected(), "rdma-core 58mlnx43");
}

TEST_F(ConsistencyTest, NodesThatDoNotReportAreNotJudged) {
  MakeCluster(4);
  Stack(4).clear_nccl_version();
  reachable_ = {true, true, false, true};
  std::vector<v1::Finding> findings = Evaluate();
  EXPECT_THAT(Failing(findings), IsEmpty());
  const v1::Finding nccl = WithId(findings, "consistency.nccl")[0];
  EXPECT_EQ(nccl.status(), v1::Finding::pass);
  EXPECT_EQ(nccl.message(), "All 2 nodes run NCCL 2.21.5 (node4 does not report it).");
}

TEST_F(ConsistencyTest, FewerThanTwoReportingNodesIsSkipped) {
  MakeCluster(3);
  for (int node = 2; node <= 3; ++node) Stack(node).clear_nccl_version();
  const v1::Finding nccl = WithId(Evaluate(), "consistency.nccl")[0];
  EXPECT_EQ(nccl.status(), v1::Finding::skipped);
  EXPECT_THAT(nccl.message(), HasSubstr("Only node1 reports NCCL among the nodes"));
}

TEST_F(ConsistencyTest, CudaDriverApiVersionOnlyWhenNoNodeReportsTheDriver) {
  MakeCluster(3);
  for (int node = 1; node <= 3; ++node) Stack(node).clear_nvidia_driver_version();
  inventories_[2].mutable_gpu_runtime()->set_driver_version("12.2");
  std::vector<v1::Finding> driver = WithId(Evaluate(), "consistency.gpu_driver");
  ASSERT_THAT(driver, SizeIs(1));
  EXPECT_EQ(driver[0].node(), "node3");
  EXPECT_EQ(driver[0].observed(), "12.2");
  EXPECT_THAT(driver[0].message(), HasSubstr("CUDA driver API 12.2"));

  // One node with the driver release: the API versions are no longer compared.
  Stack(1).set_nvidia_driver_version("550.54.15");
  driver = WithId(Evaluate(), "consistency.gpu_driver");
  ASSERT_THAT(driver, SizeIs(1));
  EXPECT_EQ(driver[0].status(), v1::Finding::skipped);
}

TEST_F(ConsistencyTest, OneNodePlanIsSkipped) {
  MakeCluster(1);
  std::vector<v1::Finding> findings = Evaluate();
  ASSERT_THAT(findings, SizeIs(6));
  for (const v1::Finding& f : findings) {
    EXPECT_EQ(f.status(), v1::Finding::skipped) << f.id();
    EXPECT_THAT(f.message(), HasSubstr("The plan has one node")) << f.id();
  }
}

TEST_F(ConsistencyTest, RunsInsideEvaluateInventoryChecks) {
  MakeCluster(4);
  Stack(2).set_nccl_version("2.18.3");
  std::vector<NodeEvidence> evidence;
  for (size_t i = 0; i < plan_.nodes.size(); ++i) {
    evidence.push_back({&plan_.nodes[i], true, "", &inventories_[i], std::nullopt});
  }
  std::vector<v1::Finding> checks = EvaluateInventoryChecks(plan_, evidence);
  std::vector<v1::Finding> nccl = WithId(checks, "consistency.nccl");
  ASSERT_THAT(nccl, SizeIs(1));
  EXPECT_EQ(nccl[0].node(), "node2");
  EXPECT_EQ(checks.back().id(), "clock.offset");
}

TEST(NodeVersionsOfTest, ListsThePlansRailsAndTheVersions) {
  plan::Plan plan = testing::RocePlan();
  v1::Inventory inventory = testing::HealthyRoceInventory();
  inventory.mutable_stack()->set_kernel_release("6.8.0-45-generic");
  inventory.mutable_stack()->set_nvidia_driver_version("550.54.15");
  inventory.mutable_stack()->set_nccl_version("2.21.5");
  inventory.mutable_gpu_runtime()->set_runtime_version("12.4");
  testing::Device(inventory, "mlx5_1").set_hca_type("MT4129");
  testing::Device(inventory, "mlx5_1").set_fw_ver("28.39.1002");
  v1::NodeVersions versions = NodeVersionsOf(inventory, plan.nodes[0]);
  EXPECT_EQ(versions.kernel(), "6.8.0-45-generic");
  EXPECT_EQ(versions.ofed(), "MLNX_OFED_LINUX-5.8-1.1.2.1");
  EXPECT_EQ(versions.rdma_core(), "58mlnx43");
  EXPECT_THAT(versions.nic_firmware(),
              ElementsAre("mlx5_0 MT4123 20.31.1014", "mlx5_1 MT4129 28.39.1002"));
  EXPECT_EQ(versions.gpu_driver(), "550.54.15");
  EXPECT_EQ(versions.cuda_runtime(), "12.4");
  EXPECT_EQ(versions.nccl(), "2.21.5");

  plan.nodes[0].rails = {"mlx5_1", "mlx5_9"};
  inventory.mutable_stack()->clear_nvidia_driver_version();
  versions = NodeVersionsOf(inventory, plan.nodes[0]);
  EXPECT_THAT(versions.nic_firmware(), ElementsAre("mlx5_1 MT4129 28.39.1002"));
  EXPECT_EQ(versions.gpu_driver(), "12.4");  // the CUDA driver API version, as the check falls back
}

}  // namespace
}  // namespace clustercert::controller::checks
