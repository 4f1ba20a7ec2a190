// `controller diff` names a replaced cable or transceiver by its serial, read
// from the module EEPROM of the rail port it sits in (Inventory.rail_ports).
#include <string>
#include <vector>

#include "controller/certificate/certificate_diff.h"
#include "controller/certificate/certificate_diff_render.h"
#include "controller/certificate/certificate_reader.h"
#include "gtest/gtest.h"

namespace clustercert::controller {
namespace {

v1::Certificate Healthy() {
  auto loaded =
      LoadCertificate(std::string(CLUSTERCERT_FIXTURES) + "/certificates/lab-healthy.json");
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  return loaded.ok() ? loaded->certificate : v1::Certificate();
}

v1::Inventory& Node3(v1::Certificate& cert) {
  for (auto& node : *cert.mutable_nodes()) {
    if (node.name() == "node3") return *node.mutable_inventory();
  }
  ADD_FAILURE() << "no node3";
  return *cert.add_nodes()->mutable_inventory();
}

v1::CableModule& AddModule(v1::Inventory& inventory, const std::string& rail,
                           const std::string& serial, const std::string& part) {
  v1::RailPort* port = inventory.add_rail_ports();
  port->set_rail(rail);
  port->set_device(rail);
  port->set_port(1);
  v1::CableModule* module = port->mutable_module();
  module->set_identifier("QSFP28");
  module->set_media("AOC");
  module->set_serial(serial);
  module->set_part_number(part);
  return *module;
}

std::vector<const DiffEntry*> CableSwaps(const CertificateDiff& diff) {
  std::vector<const DiffEntry*> found;
  for (const auto& entry : diff.entries) {
    if (entry.kind == DiffKind::kIdentityChanged && entry.field == "module_serial") {
      found.push_back(&entry);
    }
  }
  return found;
}

TEST(CableSwapDiffTest, AReplacedTransceiverIsNamedBySerialAndPart) {
  v1::Certificate before = Healthy();
  AddModule(Node3(before), "mlx5_0", "MT2012FT00001", "MFA1A00-C003");
  AddModule(Node3(before), "mlx5_1", "MT2012FT01234", "MFA1A00-C003");
  v1::Certificate after = before;
  Node3(after)
      .mutable_rail_ports(Node3(after).rail_ports_size() - 1)
      ->mutable_module()
      ->set_serial("MT2104FT09999");

  const CertificateDiff diff = DiffCertificates(before, after, DiffOptions());
  const auto swaps = CableSwaps(diff);
  ASSERT_EQ(swaps.size(), 1u) << RenderDiffText(diff, false);
  EXPECT_EQ(swaps[0]->subject, "node3 mlx5_1 cable");
  EXPECT_EQ(swaps[0]->old_value, "MT2012FT01234");
  EXPECT_EQ(swaps[0]->new_value, "MT2104FT09999");
  EXPECT_EQ(swaps[0]->nodes, std::vector<std::string>{"node3"});
  EXPECT_EQ(swaps[0]->text,
            "the cable/transceiver in mlx5_1 on node3 was replaced: serial MT2012FT01234 -> "
            "MT2104FT09999 (part MFA1A00-C003)");
  EXPECT_FALSE(swaps[0]->regression);
  EXPECT_NE(RenderDiffText(diff, false).find("mlx5_1 on node3 was replaced"), std::string::npos);
}

TEST(CableSwapDiffTest, AnotherPartIsShownBothWays) {
  v1::Certificate before = Healthy();
  AddModule(Node3(before), "mlx5_1", "MT2012FT01234", "MFA1A00-C003");
  v1::Certificate after = before;
  v1::CableModule* module =
      Node3(after).mutable_rail_ports(Node3(after).rail_ports_size() - 1)->mutable_module();
  module->set_serial("MT2104FT09999");
  module->set_part_number("MFA1A00-C005");
  const CertificateDiff diff = DiffCertificates(before, after, DiffOptions());
  const auto swaps = CableSwaps(diff);
  ASSERT_EQ(swaps.size(), 1u);
  EXPECT_EQ(swaps[0]->text,
            "the cable/transceiver in mlx5_1 on node3 was replaced: serial MT2012FT01234 -> "
            "MT2104FT09999 (part MFA1A00-C003 -> MFA1A00-C005)");
}

TEST(CableSwapDiffTest, AModuleOrSerialOnlyOneSideReadIsNotAReplacement) {
  v1::Certificate before = Healthy();
  AddModule(Node3(before), "mlx5_1", "", "MFA1A00-C003");
  v1::Certificate after = before;
  Node3(after)
      .mutable_rail_ports(Node3(after).rail_ports_size() - 1)
      ->mutable_module()
      ->set_serial("MT2104FT09999");
  EXPECT_TRUE(CableSwaps(DiffCertificates(before, after, DiffOptions())).empty());
  v1::Certificate unread = after;
  Node3(unread).mutable_rail_ports(Node3(unread).rail_ports_size() - 1)->clear_module();
  EXPECT_TRUE(CableSwaps(DiffCertificates(after, unread, DiffOptions())).empty());
  EXPECT_TRUE(CableSwaps(DiffCertificates(after, after, DiffOptions())).empty());
}

}  // namespace
}  // namespace clustercert::controller
