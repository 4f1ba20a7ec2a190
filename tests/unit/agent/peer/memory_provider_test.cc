#include "agent/peer/memory_provider.h"

#include <unistd.h>

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "agent/peer/host_memory.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustercert::agent::peer {
namespace {

using ::testing::AllOf;
using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(MemorySpecTest, ParsesHostAndCuda) {
  EXPECT_EQ(MemorySpec::Parse("host")->kind, MemorySpec::Kind::kHost);
  EXPECT_EQ(MemorySpec::Parse("")->kind, MemorySpec::Kind::kHost);
  absl::StatusOr<MemorySpec> cuda = MemorySpec::Parse("cuda:0");
  ASSERT_TRUE(cuda.ok()) << cuda.status();
  EXPECT_EQ(cuda->kind, MemorySpec::Kind::kCuda);
  EXPECT_EQ(cuda->cuda_device, 0);
  EXPECT_EQ(MemorySpec::Parse("cuda:7")->cuda_device, 7);
  EXPECT_EQ(MemorySpec::Parse("cuda:255")->cuda_device, 255);
}

TEST(MemorySpecTest, PrintsWhatItParses) {
  EXPECT_EQ(MemorySpec::Parse("host")->ToString(), "host");
  EXPECT_EQ(MemorySpec::Parse("")->ToString(), "host");
  EXPECT_EQ(MemorySpec::Parse("cuda:12")->ToString(), "cuda:12");
}

TEST(MemorySpecTest, RejectsEverythingElseWithTheForms) {
  for (const char* bad : {"Host", "gpu:0", "cuda", "cuda:", "cuda:-1", "cuda:+1", "cuda:1x",
                          "cuda: 1", "cuda:256", "cuda:99999999999", "cuda:0:1", "rocm:0"}) {
    absl::StatusOr<MemorySpec> spec = MemorySpec::Parse(bad);
    ASSERT_FALSE(spec.ok()) << bad;
    EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(spec.status().message()),
                AllOf(HasSubstr(std::string("memory \"") + bad + "\""),
                      HasSubstr("use \"host\" or \"cuda:N\"")))
        << bad;
  }
}

TEST(HostMemoryTest, AllocatesZeroedPageAlignedMemory) {
  HostMemory host;
  EXPECT_EQ(host.Describe(), "host");
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  for (size_t bytes : {size_t{1}, size_t{4096}, size_t{65536 + 1}, size_t{3} << 20}) {
    absl::StatusOr<std::unique_ptr<Buffer>> buffer = host.Allocate(bytes);
    ASSERT_TRUE(buffer.ok()) << buffer.status();
    const auto address = reinterpret_cast<uintptr_t>((*buffer)->data());
    EXPECT_EQ(address % page, 0u) << bytes;
    EXPECT_GE((*buffer)->size(), bytes);
    EXPECT_EQ((*buffer)->size() % page, 0u);
    EXPECT_TRUE((*buffer)->host_accessible());
    const auto* data = static_cast<const uint8_t*>((*buffer)->data());
    size_t nonzero = 0;
    for (size_t i = 0; i < (*buffer)->size(); ++i) nonzero += data[i] != 0;
    EXPECT_EQ(nonzero, 0u);
    // Writable end to end.
    static_cast<uint8_t*>((*buffer)->data())[(*buffer)->size() - 1] = 0x5A;
  }
}

TEST(HostMemoryTest, RejectsNothingAndTooMuch) {
  HostMemory host;
  EXPECT_EQ(host.Allocate(0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(host.Allocate(SIZE_MAX).ok());
}

TEST(MemoryProviderTest, MakesHostMemory) {
  absl::StatusOr<std::unique_ptr<MemoryProvider>> provider =
      MakeMemoryProvider(*MemorySpec::Parse("host"));
  ASSERT_TRUE(provider.ok()) << provider.status();
  EXPECT_EQ((*provider)->Describe(), "host");
}

// This machine has no GPU driver: the CUDA provider must say so, not crash.
// Where a GPU is present it must allocate and describe itself as cuda:0.
TEST(CudaMemoryTest, ReportsAMissingDriverOrWorks) {
  absl::StatusOr<std::unique_ptr<MemoryProvider>> provider = MakeCudaMemory(0);
  if (!provider.ok()) {
    EXPECT_THAT(provider.status().code(),
                AnyOf(absl::StatusCode::kFailedPrecondition, absl::StatusCode::kNotFound,
                      absl::StatusCode::kUnimplemented));
    EXPECT_THAT(std::string(provider.status().message()), HasSubstr("cuda:0"));
#ifndef CLUSTERCERT_HAVE_CUDA
    EXPECT_THAT(std::string(provider.status().message()),
                HasSubstr("built without the CUDA toolkit: cuda memory tests cannot run"));
#endif
    return;
  }
  EXPECT_EQ((*provider)->Describe(), "cuda:0");
  absl::StatusOr<std::unique_ptr<Buffer>> buffer = (*provider)->Allocate(100);
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  EXPECT_NE((*buffer)->data(), nullptr);
  EXPECT_EQ((*buffer)->size(), 64u * 1024);
  EXPECT_FALSE((*buffer)->host_accessible());
}

TEST(CudaMemoryTest, RejectsANegativeDevice) {
  absl::StatusOr<std::unique_ptr<MemoryProvider>> provider = MakeCudaMemory(-1);
  EXPECT_FALSE(provider.ok());
}

TEST(CudaMemoryTest, NamesADeviceThatIsNotThere) {
  absl::StatusOr<std::unique_ptr<MemoryProvider>> provider = MakeCudaMemory(200);
  ASSERT_FALSE(provider.ok());
  EXPECT_THAT(std::string(provider.status().message()), StartsWith("memory cuda:200"));
}

}  // namespace
}  // namespace clustercert::agent::peer
