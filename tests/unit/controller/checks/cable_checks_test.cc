#include "controller/checks/cable_checks.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "controller/checks/inventory_evaluation.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/controller/checks/test_inventories.h"

namespace clustercert::controller::checks {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

void SetLimits(v1::ModuleThresholds* limits, double high_alarm, double low_alarm,
               double high_warning, double low_warning) {
  limits->set_high_alarm(high_alarm);
  limits->set_low_alarm(low_alarm);
  limits->set_high_warning(high_warning);
  limits->set_low_warning(low_warning);
}

// A healthy QSFP28 AOC as DecodeModuleEeprom gives it.
v1::CableModule HealthyAoc(const std::string& serial) {
  v1::CableModule module;
  module.set_identifier_code(0x11);
  module.set_identifier("QSFP28");
  module.set_management("SFF-8636");
  module.set_media("AOC");
  module.set_vendor("Mellanox");
  module.set_part_number("MFA1A00-C003");
  module.set_serial(serial);
  module.set_temperature_c(40);
  module.set_voltage_v(3.3);
  for (uint32_t lane = 1; lane <= 4; ++lane) {
    v1::ModuleLane* out = module.add_lanes();
    out->set_lane(lane);
    out->set_tx_bias_ma(6.5);
    out->set_tx_power_mw(0.8);
    out->set_rx_power_mw(0.9);
  }
  SetLimits(module.mutable_temperature_limits(), 75, -5, 70, 0);
  SetLimits(module.mutable_voltage_limits(), 3.63, 2.97, 3.465, 3.135);
  SetLimits(module.mutable_tx_bias_limits(), 12, 2, 10, 3);
  SetLimits(module.mutable_tx_power_limits(), 3.5, 0.1, 2.5, 0.2);
  SetLimits(module.mutable_rx_power_limits(), 3.4, 0.05, 2.2, 0.1);
  return module;
}

class CableChecksTest : public ::testing::Test {
 protected:
  // `count` nodes, each with rails mlx5_0 and mlx5_1 holding healthy AOCs.
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
      for (const std::string& rail : node.rails) {
        v1::RailPort* port = inventory.add_rail_ports();
        port->set_rail(rail);
        port->set_device(rail);
        port->set_port(1);
        port->set_netdev(absl::StrCat("enp", i, "s0f", rail.substr(rail.size() - 1)));
        *port->mutable_module() = HealthyAoc(absl::StrCat("MT20", i, rail.substr(rail.size() - 1)));
      }
      inventories_.push_back(inventory);
    }
  }

  v1::RailPort& Port(int node, int rail) {
    return *inventories_[static_cast<size_t>(node - 1)].mutable_rail_ports(rail);
  }

  std::vector<v1::Finding> Evaluate() const {
    std::vector<NodeEvidence> evidence;
    for (size_t i = 0; i < plan_.nodes.size(); ++i) {
      NodeEvidence e;
      e.node = &plan_.nodes[i];
      e.reachable = true;
      e.inventory = &inventories_[i];
      evidence.push_back(e);
    }
    return EvaluateCables(plan_, evidence);
  }

  static std::vector<v1::Finding> WithId(const std::vector<v1::Finding>& findings,
                                         const std::string& id) {
    std::vector<v1::Finding> out;
    for (const v1::Finding& finding : findings) {
      if (finding.id() == id) out.push_back(finding);
    }
    return out;
  }

  static std::vector<std::string> NotPassing(const std::vector<v1::Finding>& findings) {
    std::vector<std::string> out;
    for (const v1::Finding& f : findings) {
      if (f.status() != v1::Finding::pass) {
        out.push_back(absl::StrCat(f.id(), " ", f.node(), " ", f.device()));
      }
    }
    return out;
  }

  plan::Plan plan_;
  std::vector<v1::Inventory> inventories_;
};

TEST_F(CableChecksTest, HealthyCablesPass) {
  MakeCluster(3);
  const std::vector<v1::Finding> findings = Evaluate();
  EXPECT_THAT(NotPassing(findings), IsEmpty());
  const std::vector<v1::Finding> present = WithId(findings, "cable.present");
  ASSERT_THAT(present, SizeIs(6));
  EXPECT_EQ(present[0].message(),
            "node1 mlx5_0 holds QSFP28 AOC Mellanox MFA1A00-C003 serial MT2010.");
  EXPECT_EQ(present[0].severity(), v1::Finding::warning);
  ASSERT_THAT(WithId(findings, "cable.dom"), SizeIs(6));
  EXPECT_EQ(WithId(findings, "cable.dom")[0].observed(), "14 of 14 values within thresholds");
  const std::vector<v1::Finding> consistency = WithId(findings, "cable.consistency");
  ASSERT_THAT(consistency, SizeIs(2));
  EXPECT_EQ(consistency[0].message(), "All 3 nodes hold MFA1A00-C003 on rail 0 (mlx5_0).");
}

TEST_F(CableChecksTest, NoRailPortsAndNoCablingAskedIsSkipped) {
  MakeCluster(2);
  for (auto& inventory : inventories_) inventory.clear_rail_ports();
  const std::vector<v1::Finding> findings = Evaluate();
  ASSERT_THAT(findings, SizeIs(3));
  for (const v1::Finding& finding : findings) {
    EXPECT_EQ(finding.status(), v1::Finding::skipped);
    EXPECT_EQ(finding.message(), "the plan did not ask for cabling");
  }
}

TEST_F(CableChecksTest, CablingAskedButNoRailPortsIsUnknown) {
  MakeCluster(2);
  plan_.fabric.cabling = "cables.csv";
  inventories_[1].clear_rail_ports();
  const std::vector<v1::Finding> findings = Evaluate();
  const std::vector<v1::Finding> present = WithId(findings, "cable.present");
  ASSERT_THAT(present, SizeIs(3));
  EXPECT_EQ(present[2].node(), "node2");
  EXPECT_EQ(present[2].status(), v1::Finding::unknown);
  EXPECT_THAT(present[2].message(), HasSubstr("no rail ports"));
}

TEST_F(CableChecksTest, MissingModuleIsUnknownWithTheAgentsReason) {
  MakeCluster(3);
  v1::RailPort& port = Port(2, 1);
  port.clear_module();
  v1::Unknown* unknown = port.add_unknowns();
  unknown->set_field("module");
  unknown->set_path("ETHTOOL_GMODULEINFO");
  unknown->set_reason(
      "enp2s0f1 has no pluggable module the kernel can read (EOPNOTSUPP): a virtual or on-board "
      "port");
  const std::vector<v1::Finding> findings = Evaluate();
  EXPECT_THAT(NotPassing(findings),
              ::testing::ElementsAre("cable.present node2 mlx5_1", "cable.dom node2 mlx5_1"));
  const v1::Finding present = WithId(findings, "cable.present")[3];
  EXPECT_EQ(present.status(), v1::Finding::unknown);
  EXPECT_THAT(present.message(), HasSubstr("EOPNOTSUPP"));
  EXPECT_THAT(present.remedy(), HasSubstr("sudo ethtool -m enp2s0f1"));
  EXPECT_EQ(WithId(findings, "cable.dom")[3].status(), v1::Finding::skipped);
}

TEST_F(CableChecksTest, NeitherModuleNorReasonIsUnknownNeverPass) {
  MakeCluster(2);
  Port(1, 0).clear_module();
  const v1::Finding present = WithId(Evaluate(), "cable.present")[0];
  EXPECT_EQ(present.status(), v1::Finding::unknown);
  EXPECT_THAT(present.message(), HasSubstr("neither a module nor why"));
}

TEST_F(CableChecksTest, RxPowerUnderLowAlarmFailsNamingLaneValueThresholdAndFix) {
  MakeCluster(3);
  Port(3, 1).mutable_module()->mutable_lanes(1)->set_rx_power_mw(0.02);
  const std::vector<v1::Finding> findings = Evaluate();
  EXPECT_THAT(NotPassing(findings), ::testing::ElementsAre("cable.dom node3 mlx5_1"));
  const v1::Finding dom = WithId(findings, "cable.dom")[5];
  EXPECT_EQ(dom.status(), v1::Finding::fail);
  EXPECT_EQ(dom.severity(), v1::Finding::error);
  EXPECT_EQ(dom.message(),
            "node3 mlx5_1 lane 2 rx power 0.02 mW is under the module's low alarm 0.05 mW: clean "
            "or replace the fibre/transceiver.");
  EXPECT_EQ(dom.observed(), "lane 2 rx power 0.02 mW");
  EXPECT_EQ(dom.expected(), ">= 0.05 mW (the module's low alarm)");
  EXPECT_EQ(dom.remedy(), "clean or replace the fibre/transceiver.");
}

TEST_F(CableChecksTest, BeyondOnlyAWarningThresholdWarns) {
  MakeCluster(2);
  Port(1, 0).mutable_module()->set_temperature_c(72);
  const v1::Finding dom = WithId(Evaluate(), "cable.dom")[0];
  EXPECT_EQ(dom.status(), v1::Finding::fail);
  EXPECT_EQ(dom.severity(), v1::Finding::warning);
  EXPECT_THAT(dom.message(),
              HasSubstr("node1 mlx5_0 temperature 72 C is over the module's high warning 70 C: "
                        "check the airflow"));
}

TEST_F(CableChecksTest, AlarmsComeFirstAndOthersAreListed) {
  MakeCluster(2);
  v1::CableModule* module = Port(2, 0).mutable_module();
  module->set_temperature_c(72);                   // warning
  module->mutable_lanes(0)->set_tx_bias_ma(13);    // alarm
  module->mutable_lanes(3)->set_rx_power_mw(3.0);  // high warning
  const v1::Finding dom = WithId(Evaluate(), "cable.dom")[2];
  EXPECT_EQ(dom.severity(), v1::Finding::error);
  EXPECT_THAT(dom.message(), HasSubstr("node2 mlx5_0 lane 1 tx bias 13 mA is over the module's "
                                       "high alarm 12 mA: replace the transceiver"));
  EXPECT_THAT(dom.message(), HasSubstr("Also: temperature 72 C is over the module's high "
                                       "warning 70 C; lane 4 rx power 3 mW is over"));
}

TEST_F(CableChecksTest, UnsetThresholdsAreUnknownNotPass) {
  MakeCluster(2);
  v1::CableModule* module = Port(1, 1).mutable_module();
  for (auto* limits : {module->mutable_temperature_limits(), module->mutable_voltage_limits(),
                       module->mutable_tx_bias_limits(), module->mutable_tx_power_limits(),
                       module->mutable_rx_power_limits()}) {
    SetLimits(limits, 0, 0, 0, 0);
  }
  module->mutable_lanes(0)->set_rx_power_mw(0.0);  // would fail if zeros were limits
  const v1::Finding dom = WithId(Evaluate(), "cable.dom")[1];
  EXPECT_EQ(dom.status(), v1::Finding::unknown);
  EXPECT_EQ(dom.severity(), v1::Finding::warning);
}

TEST_F(CableChecksTest, PassiveCopperHasNoMonitorsToJudge) {
  MakeCluster(2);
  v1::CableModule dac;
  dac.set_identifier("QSFP-DD");
  dac.set_media("DAC");
  dac.set_part_number("MFA1A00-C003");
  *Port(1, 0).mutable_module() = dac;
  const v1::Finding dom = WithId(Evaluate(), "cable.dom")[0];
  EXPECT_EQ(dom.status(), v1::Finding::skipped);
  EXPECT_THAT(dom.message(), HasSubstr("passive copper"));
}

TEST_F(CableChecksTest, DifferentPartNumberOnOneRailWarns) {
  MakeCluster(4);
  Port(3, 1).mutable_module()->set_part_number("MFA1A00-C005");
  const std::vector<v1::Finding> findings = Evaluate();
  EXPECT_THAT(NotPassing(findings), ::testing::ElementsAre("cable.consistency node3 mlx5_1"));
  const std::vector<v1::Finding> consistency = WithId(findings, "cable.consistency");
  ASSERT_THAT(consistency, SizeIs(2));
  const v1::Finding& odd = consistency[1];
  EXPECT_EQ(odd.severity(), v1::Finding::warning);
  EXPECT_EQ(odd.observed(), "MFA1A00-C005");
  EXPECT_EQ(odd.expected(), "MFA1A00-C003");
  EXPECT_EQ(odd.message(),
            "node3 mlx5_1 holds cable/transceiver MFA1A00-C005 while 3 of the 4 nodes hold "
            "MFA1A00-C003 on rail 1 (mlx5_1).");
  EXPECT_THAT(odd.remedy(), HasSubstr("Replace node3 mlx5_1's with a MFA1A00-C003"));
}

TEST_F(CableChecksTest, OneNodeHasNothingToCompare) {
  MakeCluster(1);
  const std::vector<v1::Finding> consistency = WithId(Evaluate(), "cable.consistency");
  ASSERT_THAT(consistency, SizeIs(2));
  EXPECT_EQ(consistency[0].status(), v1::Finding::skipped);
}

}  // namespace
}  // namespace clustercert::controller::checks
