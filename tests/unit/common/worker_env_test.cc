#include "common/worker_env.h"

#include <iterator>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustercert {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// Every variable the project sets or derives (controller/checks/
// nccl_env_checks.cc, collective_job_spec.cc), and every one the shipped
// plans, docs and tests use, with the values they use.
TEST(WorkerEnvTest, TheProjectsOwnVariablesPass) {
  const std::pair<const char*, const char*> used[] = {
      {"NCCL_IB_HCA", "=mlx5_0,mlx5_1"},
      {"NCCL_IB_HCA", "mlx5_0:1,^mlx5_2"},
      {"NCCL_IB_GID_INDEX", "3"},
      {"NCCL_IB_TC", "106"},
      {"NCCL_SOCKET_IFNAME", "=eth0"},
      {"NCCL_SOCKET_IFNAME", "^docker,lo"},
      {"NCCL_DEBUG", "INFO"},
      {"NCCL_DEBUG_SUBSYS", "INIT,NET"},
      {"NCCL_NET_GDR_LEVEL", "PIX"},
      {"NCCL_NET_GDR_LEVEL", "PHB"},
      {"NCCL_ALGO", "allreduce:tree;allgather:ring"},
      {"GLOO_SOCKET_IFNAME", "eth0"},
      {"CUDA_DEVICE_MAX_CONNECTIONS", "1"},
      {"CUDA_MODULE_LOADING", "LAZY"},
      {"CUDA_LAUNCH_BLOCKING", "0"},
      {"OMP_NUM_THREADS", "4"},
      {"NCCL_IB_TIMEOUT", "-1"}};
  for (const auto& [name, value] : used) {
    const absl::Status status = CheckWorkerEnv(name, value);
    EXPECT_TRUE(status.ok()) << name << "=" << value << ": " << status;
  }
}

TEST(WorkerEnvTest, EveryListedVariableHasAReasonAndPasses) {
  std::set<std::string> names;
  for (size_t i = 0; i < kWorkerEnvAllowedCount; ++i) {
    const WorkerEnvVariable& variable = kWorkerEnvAllowed[i];
    EXPECT_TRUE(names.insert(variable.name).second) << variable.name << " is listed twice";
    EXPECT_GT(std::string(variable.why).size(), 10u) << variable.name;
    EXPECT_TRUE(CheckWorkerEnv(variable.name, "1").ok()) << variable.name;
    EXPECT_TRUE(CheckWorkerEnv(variable.name, "").ok()) << variable.name;
  }
  for (size_t i = 0; i < kWorkerEnvRefusedCount; ++i) {
    EXPECT_EQ(names.count(kWorkerEnvRefused[i].name), 0u)
        << kWorkerEnvRefused[i].name << " is both allowed and refused";
  }
}

// Issue 34: the allow-list was a deny-list. Each of these reached a worker
// running as root: three libraries current NCCL dlopens, and a file it writes.
TEST(WorkerEnvTest, TheFourVariablesOfIssue34AreRefused) {
  const std::pair<const char*, const char*> attacks[] = {
      {"NCCL_GIN_PLUGIN", "loads the GPU-initiated networking plugin library"},
      {"NCCL_RMA_PLUGIN", "loads the RMA plugin library"},
      {"NCCL_IBVERBS_LIB", "loads it as libibverbs"},
      {"NCCL_PROXY_PROFILE", "writes its proxy timeline to the file"}};
  for (const auto& [name, why] : attacks) {
    const absl::Status status = CheckWorkerEnv(name, "evil.so");
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << name;
    const std::string message(status.message());
    EXPECT_THAT(message, StartsWith(absl::StrCat(name, " is refused: ")));
    EXPECT_THAT(message, HasSubstr(why));
    EXPECT_THAT(message, HasSubstr("docs/security.md (\"The worker environment\""));
    EXPECT_THAT(message, HasSubstr("ask for it to be added"));
  }
}

// Every variable known to name a library, a file or a directory, the
// deny-list of issue 15 included, is refused by name whatever its value.
TEST(WorkerEnvTest, EveryVariableThatNamesALibraryOrAFileIsRefused) {
  const char* known[] = {
      "NCCL_NET_PLUGIN",         "NCCL_TUNER_PLUGIN",      "NCCL_PROFILER_PLUGIN",
      "NCCL_ENV_PLUGIN",         "NCCL_GIN_PLUGIN",        "NCCL_RMA_PLUGIN",
      "NCCL_IBVERBS_LIB",        "NCCL_LIBIBVERBS_SO",     "NCCL_CUDA_PATH",
      "NCCL_CONF_FILE",          "NCCL_DEBUG_FILE",        "NCCL_TOPO_FILE",
      "NCCL_TOPO_DUMP_FILE",     "NCCL_GRAPH_FILE",        "NCCL_GRAPH_DUMP_FILE",
      "NCCL_PROXY_PROFILE",      "NCCL_TUNER_CONFIG_FILE", "NCCL_PROFILE_DUMP_FILE",
      "NCCL_INSPECTOR_DUMP_DIR", "CUDA_CACHE_PATH"};
  ASSERT_EQ(std::size(known), kWorkerEnvRefusedCount);
  for (const char* name : known) {
    for (const char* value : {"/tmp/evil.so", "evil", ""}) {
      const absl::Status status = CheckWorkerEnv(name, value);
      EXPECT_TRUE(absl::IsInvalidArgument(status)) << name;
      EXPECT_THAT(std::string(status.message()), StartsWith(absl::StrCat(name, " is refused: ")));
      EXPECT_THAT(std::string(status.message()), HasSubstr("remove it from collectives.env"));
    }
  }
}

// Exact names, no prefixes: an NCCL_* or GLOO_* name NCCL may read one day is
// refused until it is looked at and listed.
TEST(WorkerEnvTest, UnlistedNcclAndGlooNamesAreRefused) {
  for (const char* name : {"NCCL_FOO", "NCCL_", "NCCL_IB_HCA_FILE", "NCCL_SHM_PATH",
                           "NCCL_CUMEM_PATH", "NCCL_COMM_ID", "NCCL_RAS_ADDR", "NCCL_HOSTID",
                           "NCCL_DEBUG_TIMESTAMP_FORMAT", "GLOO_FOO", "CUDA_VISIBLE_DEVICES"}) {
    const absl::Status status = CheckWorkerEnv(name, "1");
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << name;
    EXPECT_THAT(std::string(status.message()),
                StartsWith(absl::StrCat(name, " is not passed to collective workers: ")));
    EXPECT_THAT(std::string(status.message()), HasSubstr("docs/security.md"));
    EXPECT_THAT(std::string(status.message()), HasSubstr("ask for it to be added"));
  }
}

// A second wall: a listed variable's value cannot spell a path, so NCCL
// reading one as a path some day would not reach a file of the caller's.
TEST(WorkerEnvTest, ValuesThatCouldSpellAPathAreRefused) {
  for (const char* value :
       {"/tmp/evil.so", "../../etc/shadow", "$HOME", "~root", "%h.%p", "INFO WARN"}) {
    const absl::Status status = CheckWorkerEnv("NCCL_DEBUG", value);
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << value;
    EXPECT_THAT(std::string(status.message()), HasSubstr("never a path")) << value;
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
