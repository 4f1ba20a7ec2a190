#include "common/worker_env.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustercert {
namespace {

using ::testing::HasSubstr;

TEST(WorkerEnvTest, NcclGlooAndTheDocumentedExtrasPass) {
  for (const char* name : {"NCCL_IB_HCA", "NCCL_NET_GDR_LEVEL", "NCCL_DEBUG", "GLOO_SOCKET_IFNAME",
                           "CUDA_DEVICE_MAX_CONNECTIONS", "OMP_NUM_THREADS"}) {
    EXPECT_TRUE(CheckWorkerEnv(name, "=mlx5_0,mlx5_1").ok()) << name;
  }
}

// The attacks of issue 15: each reached a worker running as root.
TEST(WorkerEnvTest, LoaderPathAndUnlistedVariablesAreRefused) {
  for (const char* name : {"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_DEBUG_OUTPUT", "LD_AUDIT", "PATH",
                           "HOME", "PYTHONPATH", "MALLOC_CONF"}) {
    const absl::Status status = CheckWorkerEnv(name, "/tmp/evil.so");
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << name;
    EXPECT_THAT(std::string(status.message()), HasSubstr("remove it from collectives.env")) << name;
  }
}

TEST(WorkerEnvTest, NcclPluginAndFileVariablesAreRefused) {
  for (const char* name : {"NCCL_NET_PLUGIN", "NCCL_TUNER_PLUGIN", "NCCL_DEBUG_FILE",
                           "NCCL_TOPO_FILE", "NCCL_TOPO_DUMP_FILE", "NCCL_GRAPH_DUMP_FILE"}) {
    const absl::Status status = CheckWorkerEnv(name, "/etc/shadow");
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << name;
    EXPECT_THAT(std::string(status.message()), HasSubstr("load a library or open a file")) << name;
  }
}

TEST(WorkerEnvTest, BadNamesAndValuesAreRefused) {
  EXPECT_FALSE(CheckWorkerEnv("NCCL_IB=HCA", "x").ok());
  EXPECT_FALSE(CheckWorkerEnv(std::string("NCCL_\0X", 7), "x").ok());
  EXPECT_FALSE(CheckWorkerEnv("nccl_ib_hca", "x").ok());
  EXPECT_FALSE(CheckWorkerEnv("", "x").ok());
  EXPECT_FALSE(CheckWorkerEnv("NCCL_" + std::string(200, 'A'), "x").ok());
  EXPECT_FALSE(CheckWorkerEnv("NCCL_DEBUG", std::string("INFO\0x", 6)).ok());
  EXPECT_FALSE(CheckWorkerEnv("NCCL_DEBUG", "INFO\nLD_PRELOAD=x").ok());
  EXPECT_FALSE(CheckWorkerEnv("NCCL_DEBUG", std::string(2000, 'x')).ok());
  EXPECT_TRUE(CheckWorkerEnv("NCCL_DEBUG", "").ok());
}

// Issue 15: env keys with '=' or NUL were accepted; the worker's environ
// would hold "NCCL_X=1=..." or a name cut short at the NUL.
TEST(WorkerEnvTest, KeysWithEqualsOrNulAreRefusedAndQuotedSafely) {
  for (const std::string& name :
       {std::string("NCCL_IB_HCA=mlx5_0"), std::string("NCCL_DEBUG\0LD_PRELOAD", 21),
        std::string("=NCCL"), std::string("nccl_debug"), std::string("1NCCL"), std::string()}) {
    const absl::Status status = CheckWorkerEnv(name, "x");
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << name;
    EXPECT_THAT(std::string(status.message()), HasSubstr("not a variable name the workers take"));
    EXPECT_EQ(std::string(status.message()).find('\0'), std::string::npos);
  }
  const absl::Status nul = CheckWorkerEnv(std::string("NCCL_DEBUG\0X", 12), "x");
  EXPECT_THAT(std::string(nul.message()), HasSubstr("'NCCL_DEBUG\\000X'"));
}

TEST(WorkerEnvTest, AMegabyteKeyIsQuotedClipped) {
  const absl::Status status = CheckWorkerEnv(std::string(1 << 20, '-'), "x");
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_LT(status.message().size(), 400u);
  EXPECT_THAT(std::string(status.message()), HasSubstr("(1048576 bytes)"));
}

}  // namespace
}  // namespace clustercert
