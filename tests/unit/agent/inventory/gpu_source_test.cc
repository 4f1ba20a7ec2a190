#include "agent/inventory/gpu_source.h"

#include <filesystem>
#include <iostream>
#include <regex>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustercert::agent::inventory {
namespace {

using ::testing::StartsWith;

TEST(GpuSourceTest, DescribesThisHost) {
  auto source = MakeGpuSource();
  ASSERT_NE(source, nullptr);
  v1::GpuRuntime runtime = source->Read();
  std::cout << "[ info     ] " << runtime.ShortDebugString() << "\n";
#ifdef CLUSTERCERT_HAVE_CUDA
  // The NVIDIA kernel driver publishes its version here; without it CUDA has no driver.
  const bool nvidia_driver = std::filesystem::exists("/proc/driver/nvidia/version");
  if (!nvidia_driver) {
    EXPECT_FALSE(runtime.driver_present());
    EXPECT_THAT(runtime.reason(), StartsWith("no GPU driver"));
    EXPECT_EQ(runtime.gpus_size(), 0);
    EXPECT_FALSE(runtime.runtime_version().empty());
    return;
  }
  ASSERT_TRUE(runtime.driver_present()) << runtime.reason();
  EXPECT_FALSE(runtime.driver_version().empty());
  const std::regex uuid("GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
  const std::regex bus_id("[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\\.[0-7]");
  for (const auto& gpu : runtime.gpus()) {
    EXPECT_TRUE(std::regex_match(gpu.uuid(), uuid)) << gpu.uuid();
    EXPECT_TRUE(std::regex_match(gpu.pci_bus_id(), bus_id)) << gpu.pci_bus_id();
    EXPECT_GT(gpu.memory_bytes(), 0u);
    EXPECT_FALSE(gpu.name().empty());
  }
#else
  EXPECT_FALSE(runtime.driver_present());
  EXPECT_EQ(runtime.reason(), "built without the CUDA toolkit");
#endif
}

}  // namespace
}  // namespace clustercert::agent::inventory
