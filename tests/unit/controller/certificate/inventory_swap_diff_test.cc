// `controller diff` names a swapped NIC or GPU by its serial number (PCI VPD
// or nvidia-smi -q), matched at the same place: the NIC's rail name, the GPU's
// PCI name and CUDA index.
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

void AddNic(v1::Inventory& inventory, const std::string& name, const std::string& address,
            const std::string& serial, const std::string& part) {
  v1::PciFunction* nic = inventory.add_pci();
  nic->set_role("nic");
  nic->set_name(name);
  nic->set_address(address);
  nic->set_serial_number(serial);
  nic->set_part_number(part);
  nic->set_identity_source(serial.empty() ? "no VPD (the function has no vpd file)" : "vpd");
}

std::vector<const DiffEntry*> Swaps(const CertificateDiff& diff) {
  std::vector<const DiffEntry*> found;
  for (const auto& entry : diff.entries) {
    if (entry.kind == DiffKind::kIdentityChanged && entry.field == "serial_number") {
      found.push_back(&entry);
    }
  }
  return found;
}

std::string Dump(const CertificateDiff& diff) { return RenderDiffText(diff, false); }

TEST(InventorySwapDiffTest, ASwappedNicIsNamedBySerialAndPart) {
  v1::Certificate before = Healthy();
  AddNic(Node3(before), "mlx5_0", "0000:41:00.0", "MT2235X00001", "MCX75310AAS-NEAT");
  AddNic(Node3(before), "mlx5_1", "0000:42:00.0", "MT2235X01234", "MCX75310AAS-NEAT");
  v1::Certificate after = before;
  Node3(after).mutable_pci(Node3(after).pci_size() - 1)->set_serial_number("MT2301X05678");

  const CertificateDiff diff = DiffCertificates(before, after, DiffOptions());
  const auto swaps = Swaps(diff);
  ASSERT_EQ(swaps.size(), 1u) << Dump(diff);
  EXPECT_EQ(swaps[0]->subject, "node3 mlx5_1");
  EXPECT_EQ(swaps[0]->old_value, "MT2235X01234");
  EXPECT_EQ(swaps[0]->new_value, "MT2301X05678");
  EXPECT_EQ(swaps[0]->nodes, std::vector<std::string>{"node3"});
  EXPECT_EQ(swaps[0]->text,
            "mlx5_1 on node3 was swapped: serial MT2235X01234 -> MT2301X05678 (part "
            "MCX75310AAS-NEAT)");
  EXPECT_FALSE(swaps[0]->regression);
  EXPECT_FALSE(diff.regressed()) << Dump(diff);
  EXPECT_NE(Dump(diff).find("mlx5_1 on node3 was swapped"), std::string::npos) << Dump(diff);
}

TEST(InventorySwapDiffTest, AnotherPartNumberIsShownBothWays) {
  v1::Certificate before = Healthy();
  AddNic(Node3(before), "mlx5_1", "0000:42:00.0", "MT2235X01234", "MCX75310AAS-NEAT");
  v1::Certificate after = before;
  v1::PciFunction* nic = Node3(after).mutable_pci(Node3(after).pci_size() - 1);
  nic->set_serial_number("MT2301X05678");
  nic->set_part_number("MCX75310AAC-NEAT");
  const CertificateDiff diff = DiffCertificates(before, after, DiffOptions());
  const auto swaps = Swaps(diff);
  ASSERT_EQ(swaps.size(), 1u) << Dump(diff);
  EXPECT_EQ(swaps[0]->text,
            "mlx5_1 on node3 was swapped: serial MT2235X01234 -> MT2301X05678 (part "
            "MCX75310AAS-NEAT -> MCX75310AAC-NEAT)");
}

TEST(InventorySwapDiffTest, ASerialOnlyOneSideHasIsNotASwap) {
  // OLD from an agent that did not read VPD yet, or a VPD that was unreadable.
  v1::Certificate before = Healthy();
  AddNic(Node3(before), "mlx5_1", "0000:42:00.0", "", "");
  v1::Certificate after = before;
  Node3(after).mutable_pci(Node3(after).pci_size() - 1)->set_serial_number("MT2301X05678");
  EXPECT_TRUE(Swaps(DiffCertificates(before, after, DiffOptions())).empty());
  EXPECT_TRUE(Swaps(DiffCertificates(after, after, DiffOptions())).empty());
}

TEST(InventorySwapDiffTest, ASwappedGpuIsListedOnceFromItsFunctionAndItsRuntimeEntry) {
  v1::Certificate before = Healthy();
  v1::Inventory& inventory = Node3(before);
  v1::PciFunction* function = inventory.add_pci();
  function->set_role("gpu");
  function->set_name("gpu0");
  function->set_address("0000:18:00.0");
  function->set_serial_number("1652023012345");
  function->set_part_number("692-2G520-0200-000");
  v1::Gpu* gpu = inventory.mutable_gpu_runtime()->add_gpus();
  gpu->set_index(0);
  gpu->set_pci_bus_id("0000:18:00.0");
  gpu->set_serial("1652023012345");
  gpu->set_part_number("692-2G520-0200-000");
  v1::Certificate after = before;
  v1::Inventory& swapped = Node3(after);
  swapped.mutable_pci(swapped.pci_size() - 1)->set_serial_number("1652123099999");
  swapped.mutable_gpu_runtime()
      ->mutable_gpus(swapped.gpu_runtime().gpus_size() - 1)
      ->set_serial("1652123099999");

  const CertificateDiff diff = DiffCertificates(before, after, DiffOptions());
  const auto swaps = Swaps(diff);
  ASSERT_EQ(swaps.size(), 1u) << Dump(diff);
  EXPECT_EQ(swaps[0]->text,
            "gpu0 on node3 was swapped: serial 1652023012345 -> 1652123099999 (part "
            "692-2G520-0200-000)");

  // Without PCI identity (an older agent's functions), the runtime entry says it.
  v1::Certificate runtime_only_before = before;
  v1::Certificate runtime_only_after = after;
  for (v1::Certificate* cert : {&runtime_only_before, &runtime_only_after}) {
    v1::Inventory& node = Node3(*cert);
    node.mutable_pci(node.pci_size() - 1)->clear_serial_number();
  }
  const CertificateDiff runtime_diff =
      DiffCertificates(runtime_only_before, runtime_only_after, DiffOptions());
  const auto runtime_swaps = Swaps(runtime_diff);
  ASSERT_EQ(runtime_swaps.size(), 1u) << Dump(runtime_diff);
  EXPECT_EQ(runtime_swaps[0]->subject, "node3 gpu0");
}

}  // namespace
}  // namespace clustercert::controller
