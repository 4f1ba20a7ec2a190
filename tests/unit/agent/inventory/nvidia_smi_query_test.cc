// nvidia-smi -q: GPU blocks parsed from an H200-shaped excerpt, garbage and
// truncation refused, and the identities filled into an inventory from a
// canned run (live view) or a capture file (fixture view).
#include "agent/inventory/nvidia_smi_query.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "agent/inventory/inventory_collector.h"
#include "common/sysfs_view.h"
#include "gtest/gtest.h"
#include "tests/unit/agent/inventory/sysfs_test_support.h"

namespace clustercert::agent::inventory {
namespace {

using testing::FindUnknown;
using testing::TempSysfsTree;

// The layout of `nvidia-smi -q` on HGX H100/H200 nodes with driver 545/550
// (banner, top-level lines, "GPU <8-digit domain bus id>" blocks with fields
// at four spaces and nested sections deeper), cut to two GPUs and the
// sections around the identity lines.
constexpr char kTwoH200[] = R"(
==============NVSMI LOG==============

Timestamp                                 : Tue Mar 11 09:12:44 2025
Driver Version                            : 550.127.05
CUDA Version                              : 12.4

Attached GPUs                             : 2
GPU 00000000:18:00.0
    Product Name                          : NVIDIA H200
    Product Brand                         : NVIDIA
    Product Architecture                  : Hopper
    Display Mode                          : Enabled
    Persistence Mode                      : Enabled
    MIG Mode
        Current                           : Disabled
        Pending                           : Disabled
    Serial Number                         : 1652023012345
    GPU UUID                              : GPU-4b1e0c52-9a1d-2f7e-8c3b-7d2e91a0f6c4
    Minor Number                          : 0
    VBIOS Version                         : 96.00.A5.00.01
    MultiGPU Board                        : No
    Board ID                              : 0x1800
    Board Part Number                     : 692-2G520-0200-000
    GPU Part Number                       : 2335-885-A1
    FRU Part Number                       : N/A
    Platform Info
        RACK Serial Number                : N/A
        Module Id                         : 1
    Inforom Version
        Image Version                     : G520.0200.00.05
    PCI
        Bus                               : 0x18
        Bus Id                            : 00000000:18:00.0
        Sub System Id                     : 0x18B010DE
    Fan Speed                             : N/A
GPU 00000000:2A:00.0
    Product Name                          : NVIDIA H200
    Product Brand                         : NVIDIA
    Serial Number                         : 1652023012399
    GPU UUID                              : GPU-0f6a7d33-51c2-48e9-b1d0-3e5c2a9b7f10
    Board Part Number                     : 692-2G520-0200-000
    PCI
        Bus Id                            : 00000000:2A:00.0
)";

TEST(NvidiaSmiQueryTest, ParsesTwoH200Blocks) {
  auto gpus = ParseNvidiaSmiQuery(kTwoH200);
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  ASSERT_EQ(gpus->size(), 2u);
  EXPECT_EQ((*gpus)[0].pci_address, "0000:18:00.0");
  EXPECT_EQ((*gpus)[0].product_name, "NVIDIA H200");
  EXPECT_EQ((*gpus)[0].serial_number, "1652023012345");
  EXPECT_EQ((*gpus)[0].part_number, "692-2G520-0200-000");
  EXPECT_EQ((*gpus)[0].uuid, "GPU-4b1e0c52-9a1d-2f7e-8c3b-7d2e91a0f6c4");
  EXPECT_EQ((*gpus)[1].pci_address, "0000:2a:00.0") << "lowercased, 4-digit domain";
  EXPECT_EQ((*gpus)[1].serial_number, "1652023012399");
}

TEST(NvidiaSmiQueryTest, NotAvailableReadsEmpty) {
  auto gpus = ParseNvidiaSmiQuery(
      "==============NVSMI LOG==============\nGPU 00000000:01:00.0\n"
      "    Product Name                          : NVIDIA GeForce RTX 4070 Laptop GPU\n"
      "    Serial Number                         : N/A\n"
      "    Board Part Number                     : [N/A]\r\n");
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  ASSERT_EQ(gpus->size(), 1u);
  EXPECT_EQ((*gpus)[0].serial_number, "");
  EXPECT_EQ((*gpus)[0].part_number, "");
  EXPECT_EQ((*gpus)[0].product_name, "NVIDIA GeForce RTX 4070 Laptop GPU");
}

TEST(NvidiaSmiQueryTest, NoGpuIsAnEmptyList) {
  auto gpus = ParseNvidiaSmiQuery(
      "\n==============NVSMI LOG==============\n\nTimestamp : x\nAttached GPUs : 0\n");
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  EXPECT_TRUE(gpus->empty());
}

TEST(NvidiaSmiQueryTest, GarbageAndBadBusIdsAreRefused) {
  for (const char* text :
       {"", "bash: nvidia-smi: command not found",
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."}) {
    auto gpus = ParseNvidiaSmiQuery(text);
    EXPECT_TRUE(absl::IsInvalidArgument(gpus.status())) << text;
  }
  auto bad = ParseNvidiaSmiQuery("==============NVSMI LOG==============\nGPU zz:18:00.0\n");
  EXPECT_TRUE(absl::IsInvalidArgument(bad.status()));
  EXPECT_NE(bad.status().message().find("line 2"), std::string::npos) << bad.status();
  EXPECT_FALSE(NvidiaBusIdToPciAddress("00000000:18:00").ok());
  EXPECT_FALSE(NvidiaBusIdToPciAddress("000000000:18:00.0").ok());
  EXPECT_EQ(*NvidiaBusIdToPciAddress("0000:DB:00.0"), "0000:db:00.0");
}

TEST(NvidiaSmiQueryTest, TruncationsNeverCrashAndKeepWhatIsWhole) {
  const std::string full = kTwoH200;
  for (size_t size = 0; size < full.size(); ++size) {
    auto gpus = ParseNvidiaSmiQuery(full.substr(0, size));
    if (!gpus.ok()) continue;
    for (const auto& gpu : *gpus) EXPECT_EQ(gpu.pci_address.size(), 12u) << size;
  }
  const size_t second = full.find("GPU 00000000:2A");
  auto first_only = ParseNvidiaSmiQuery(full.substr(0, second));
  ASSERT_TRUE(first_only.ok());
  EXPECT_EQ(first_only->size(), 1u);
}

class CannedRunner : public process::CommandRunner {
 public:
  absl::StatusOr<process::CommandResult> Run(const std::vector<std::string>& argv,
                                             absl::Duration) override {
    calls.push_back(argv);
    return result;
  }
  absl::StatusOr<process::CommandResult> result;
  std::vector<std::vector<std::string>> calls;
};

v1::Inventory TwoGpuInventory() {
  v1::Inventory inventory;
  for (const char* address : {"0000:18:00.0", "0000:2a:00.0"}) {
    auto* gpu = inventory.mutable_gpu_runtime()->add_gpus();
    gpu->set_index(inventory.gpu_runtime().gpus_size() - 1);
    gpu->set_pci_bus_id(address);
    auto* function = inventory.add_pci();
    function->set_role("gpu");
    function->set_address(address);
    function->set_identity_source("no VPD (the function has no vpd file)");
  }
  return inventory;
}

TEST(NvidiaSmiIdentityTest, FillsGpusAndTheirFunctionsFromALiveRun) {
  CannedRunner runner;
  runner.result = process::CommandResult{0, kTwoH200, ""};
  SysfsView live("/");
  v1::Inventory inventory = TwoGpuInventory();
  // The first function has a VPD identity already: nvidia-smi does not override it.
  inventory.mutable_pci(0)->set_serial_number("VPD-SERIAL");
  inventory.mutable_pci(0)->set_identity_source("vpd");
  NvidiaSmiIdentity(live, &runner).Fill(inventory);
  ASSERT_EQ(runner.calls.size(), 1u);
  EXPECT_EQ(runner.calls[0], (std::vector<std::string>{"nvidia-smi", "-q"}));
  EXPECT_EQ(inventory.gpu_runtime().gpus(0).serial(), "1652023012345");
  EXPECT_EQ(inventory.gpu_runtime().gpus(0).part_number(), "692-2G520-0200-000");
  EXPECT_EQ(inventory.gpu_runtime().gpus(1).serial(), "1652023012399");
  EXPECT_EQ(inventory.pci(0).serial_number(), "VPD-SERIAL");
  EXPECT_EQ(inventory.pci(0).identity_source(), "vpd");
  EXPECT_EQ(inventory.pci(1).serial_number(), "1652023012399");
  EXPECT_EQ(inventory.pci(1).part_number(), "692-2G520-0200-000");
  EXPECT_EQ(inventory.pci(1).product_name(), "NVIDIA H200");
  EXPECT_EQ(inventory.pci(1).identity_source(), "nvidia-smi -q");
  EXPECT_EQ(inventory.unknowns_size(), 0) << inventory.DebugString();
}

TEST(NvidiaSmiIdentityTest, MissingOrFailingNvidiaSmiIsOneUnknown) {
  SysfsView live("/");
  CannedRunner missing;
  missing.result = absl::NotFoundError("nvidia-smi: not found in $PATH");
  v1::Inventory inventory = TwoGpuInventory();
  NvidiaSmiIdentity(live, &missing).Fill(inventory);
  ASSERT_EQ(inventory.unknowns_size(), 1);
  EXPECT_EQ(inventory.unknowns(0).field(), "gpu_identity");
  EXPECT_NE(inventory.unknowns(0).reason().find("nvidia-smi not found"), std::string::npos)
      << inventory.unknowns(0).reason();
  EXPECT_EQ(inventory.gpu_runtime().gpus(0).serial(), "");
  EXPECT_EQ(inventory.pci(1).serial_number(), "");

  CannedRunner failing;
  failing.result = process::CommandResult{
      9, "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n", ""};
  inventory = TwoGpuInventory();
  NvidiaSmiIdentity(live, &failing).Fill(inventory);
  ASSERT_EQ(inventory.unknowns_size(), 1);
  EXPECT_NE(inventory.unknowns(0).reason().find("exited with status 9"), std::string::npos)
      << inventory.unknowns(0).reason();
}

// Under the hardened unit on a host whose /dev/nvidia* are 0660 to a group
// the agent's user is not in: NVML's refusal becomes the group fix.
TEST(NvidiaSmiIdentityTest, DeviceFilesTheAgentMayNotOpenNameTheFix) {
  SysfsView live("/");
  CannedRunner refused;
  refused.result =
      process::CommandResult{4, "Failed to initialize NVML: Insufficient Permissions\n", ""};
  v1::Inventory inventory = TwoGpuInventory();
  NvidiaSmiIdentity(live, &refused).Fill(inventory);
  ASSERT_EQ(inventory.unknowns_size(), 1);
  const std::string& reason = inventory.unknowns(0).reason();
  EXPECT_NE(reason.find("exited with status 4: 'Failed to initialize NVML: Insufficient "
                        "Permissions'"),
            std::string::npos)
      << reason;
  EXPECT_NE(reason.find("usermod -aG GROUP clustercert"), std::string::npos) << reason;
  EXPECT_NE(reason.find("DeviceAllow=char-nvidia*"), std::string::npos) << reason;

  CannedRunner no_driver;
  no_driver.result = process::CommandResult{
      9, "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n", ""};
  inventory = TwoGpuInventory();
  NvidiaSmiIdentity(live, &no_driver).Fill(inventory);
  ASSERT_EQ(inventory.unknowns_size(), 1);
  EXPECT_EQ(inventory.unknowns(0).reason().find("usermod"), std::string::npos)
      << "a missing driver is not a permission problem";
}

TEST(NvidiaSmiIdentityTest, NoGpuRunsNothing) {
  CannedRunner runner;
  runner.result = process::CommandResult{0, kTwoH200, ""};
  v1::Inventory inventory;
  inventory.add_pci()->set_role("nic");
  NvidiaSmiIdentity(SysfsView("/"), &runner).Fill(inventory);
  EXPECT_TRUE(runner.calls.empty());
  EXPECT_EQ(inventory.unknowns_size(), 0);
}

TEST(NvidiaSmiIdentityTest, ACaptureIsReadFromItsFile) {
  // ib-hdr-healthy's GPUs are at 42, 45, 46 and 47; the capture lists two
  // of them, so the others are explained.
  TempSysfsTree tree("ib-hdr-healthy");
  std::string text = kTwoH200;
  const std::vector<std::pair<std::string, std::string>> moves = {
      {"00000000:18:00.0", "00000000:42:00.0"}, {"00000000:2A:00.0", "00000000:45:00.0"}};
  for (const auto& [from, to] : moves) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from)) {
      text.replace(at, from.size(), to);
    }
  }
  tree.Write(NvidiaSmiIdentity::kCapturePath, text);
  SysfsView view(tree.root());
  InventoryCollector collector(view, InventoryProbes{}, "127.0.0.1");
  auto inventory = collector.Collect("");
  ASSERT_TRUE(inventory.ok()) << inventory.status();
  std::vector<const v1::PciFunction*> gpus;
  for (const auto& f : inventory->pci()) {
    if (f.role() == "gpu") gpus.push_back(&f);
  }
  ASSERT_EQ(gpus.size(), 4u);
  EXPECT_EQ(gpus[0]->address(), "0000:42:00.0");
  EXPECT_EQ(gpus[0]->serial_number(), "1652023012345");
  EXPECT_EQ(gpus[0]->identity_source(), "nvidia-smi -q");
  EXPECT_EQ(gpus[1]->serial_number(), "1652023012399");
  EXPECT_EQ(gpus[2]->serial_number(), "");
  const v1::Unknown* unlisted = FindUnknown(gpus[2]->unknowns(), "serial_number");
  ASSERT_NE(unlisted, nullptr);
  EXPECT_EQ(unlisted->path(), NvidiaSmiIdentity::kCapturePath);
  EXPECT_EQ(FindUnknown(inventory->unknowns(), "gpu_identity"), nullptr);
}

TEST(NvidiaSmiIdentityTest, AFixtureWithoutTheCaptureFileSaysSo) {
  SysfsView view(testing::FixtureRoot("ib-hdr-healthy"));
  InventoryCollector collector(view, InventoryProbes{}, "127.0.0.1");
  auto inventory = collector.Collect("");
  ASSERT_TRUE(inventory.ok());
  const v1::Unknown* unknown = FindUnknown(inventory->unknowns(), "gpu_identity");
  ASSERT_NE(unknown, nullptr);
  EXPECT_EQ(unknown->path(), NvidiaSmiIdentity::kCapturePath);
}

}  // namespace
}  // namespace clustercert::agent::inventory
