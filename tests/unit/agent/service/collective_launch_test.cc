// StartCollective's validation before anything is spawned: what a caller
// on the management network could otherwise hand to root processes.
#include <unistd.h>

#include <functional>
#include <string>
#include <vector>

#include "agent/service/collective_handlers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sweep/worker_options.h"
#include "tests/support/environment_skip.h"

namespace clustercert::agent {
namespace {

using ::testing::HasSubstr;

constexpr int kNoGpus = 0;
constexpr char kMissingWorkers[] = "/nonexistent";

// The refusal for `request`: InvalidArgument or FailedPrecondition before any
// worker binary is looked for, with its message.
absl::Status Refusal(const v1::StartCollectiveRequest& request, int gpus = kNoGpus) {
  return JobLaunchFor(request, kMissingWorkers, gpus).status();
}

v1::StartCollectiveRequest Request() {
  v1::StartCollectiveRequest request;
  request.set_name("collectives/2-node");
  v1::CollectiveJobSpec& spec = *request.mutable_spec();
  spec.set_backend("gloo");
  spec.set_transport("tcp");
  spec.set_world_size(2);
  v1::CollectiveRank* rank = spec.add_ranks();
  rank->set_rank(0);
  spec.mutable_sweep()->set_min_bytes(8);
  spec.mutable_sweep()->set_max_bytes(1024);
  spec.mutable_sweep()->set_factor(2);
  spec.mutable_sweep()->set_iters(1);
  return request;
}

// Issue 15: LD_PRELOAD in StartCollective's env ran a library's constructor
// as uid 0. The agent refuses it before looking for a worker binary.
TEST(CollectiveLaunchTest, LoaderAndPluginVariablesAreRefusedByTheAgent) {
  for (const char* name : {"LD_PRELOAD", "LD_DEBUG_OUTPUT", "PATH", "NCCL_NET_PLUGIN"}) {
    v1::StartCollectiveRequest request = Request();
    (*request.mutable_spec()->mutable_env())[name] = "/tmp/evil.so";
    auto launch = JobLaunchFor(request, "/nonexistent", kNoGpus);
    ASSERT_FALSE(launch.ok()) << name;
    EXPECT_TRUE(absl::IsInvalidArgument(launch.status())) << name << ": " << launch.status();
    EXPECT_THAT(std::string(launch.status().message()), HasSubstr(name));
  }
}

// Issue 34: three libraries current NCCL dlopens, a file it writes and any
// NCCL_* name not on the list reached the workers; a caller need not be our
// controller, so the agent refuses them itself.
TEST(CollectiveLaunchTest, UnlistedAndPathVariablesAreRefusedByTheAgent) {
  for (const char* name : {"NCCL_GIN_PLUGIN", "NCCL_RMA_PLUGIN", "NCCL_IBVERBS_LIB",
                           "NCCL_PROXY_PROFILE", "NCCL_FOO"}) {
    v1::StartCollectiveRequest request = Request();
    request.mutable_spec()->set_backend("nccl");
    (*request.mutable_spec()->mutable_env())["NCCL_DEBUG"] = "INFO";
    (*request.mutable_spec()->mutable_env())[name] = "/tmp/evil.so";
    const absl::Status refused = Refusal(request, /*gpus=*/1);
    EXPECT_TRUE(absl::IsInvalidArgument(refused)) << name << ": " << refused;
    EXPECT_THAT(std::string(refused.message()), ::testing::StartsWith(name));
    EXPECT_THAT(std::string(refused.message()), HasSubstr("docs/security.md"));
  }
  // A listed name with a path for its value is refused too.
  v1::StartCollectiveRequest request = Request();
  (*request.mutable_spec()->mutable_env())["NCCL_IB_HCA"] = "/tmp/evil.so";
  EXPECT_THAT(std::string(Refusal(request).message()), HasSubstr("never a path"));
}

TEST(CollectiveLaunchTest, AllowedVariablesGetPastTheEnvCheck) {
  v1::StartCollectiveRequest request = Request();
  (*request.mutable_spec()->mutable_env())["NCCL_DEBUG"] = "INFO";
  (*request.mutable_spec()->mutable_env())["GLOO_SOCKET_IFNAME"] = "eth0";
  // What the controller derives from the plan (controller/checks/nccl_env_checks.cc).
  (*request.mutable_spec()->mutable_env())["NCCL_IB_HCA"] = "=mlx5_0,mlx5_1";
  (*request.mutable_spec()->mutable_env())["NCCL_IB_GID_INDEX"] = "3";
  (*request.mutable_spec()->mutable_env())["NCCL_IB_TC"] = "106";
  (*request.mutable_spec()->mutable_env())["NCCL_SOCKET_IFNAME"] = "=eth0";
  auto launch = JobLaunchFor(request, "/nonexistent", kNoGpus);
  // Refused later, for the missing worker binary, not for the env.
  EXPECT_TRUE(absl::IsFailedPrecondition(launch.status())) << launch.status();
}

// Issue 15: one StartCollective made 256 worker processes (only world_size
// was checked). At most 16 ranks a node, and for nccl one per GPU.
TEST(CollectiveLaunchTest, RanksPerNodeAreCapped) {
  v1::StartCollectiveRequest request = Request();
  v1::CollectiveJobSpec& spec = *request.mutable_spec();
  spec.set_world_size(256);
  spec.clear_ranks();
  for (int i = 0; i < 256; ++i) {
    v1::CollectiveRank* rank = spec.add_ranks();
    rank->set_rank(i);
    rank->set_local_rank(i);
  }
  const absl::Status refused = Refusal(request);
  EXPECT_TRUE(absl::IsInvalidArgument(refused)) << refused;
  EXPECT_EQ(refused.message(),
            "the collective job places 256 ranks on this node; the most is 16: lower "
            "collectives.ranks_per_node");
}

TEST(CollectiveLaunchTest, NcclGetsNoMoreRanksThanTheNodesGpus) {
  v1::StartCollectiveRequest request = Request();
  v1::CollectiveJobSpec& spec = *request.mutable_spec();
  spec.set_backend("nccl");
  spec.set_transport("");
  spec.set_world_size(8);
  spec.clear_ranks();
  for (int i = 0; i < 4; ++i) {
    v1::CollectiveRank* rank = spec.add_ranks();
    rank->set_rank(i);
    rank->set_local_rank(i);
    rank->set_cuda_device(-1);
  }
  const absl::Status over = Refusal(request, /*gpus=*/2);
  EXPECT_TRUE(absl::IsFailedPrecondition(over)) << over;
  EXPECT_THAT(std::string(over.message()),
              HasSubstr("places 4 ranks on this node, which has 2 GPUs the CUDA runtime sees"));
  // Within the GPUs: past validation, refused only for the missing worker.
  EXPECT_THAT(std::string(Refusal(request, /*gpus=*/8).message()), HasSubstr("has no nccl worker"));
  spec.mutable_ranks(3)->set_cuda_device(9);
  EXPECT_THAT(std::string(Refusal(request, /*gpus=*/8).message()),
              HasSubstr("asks for cuda_device 9 (GPU 9); this node's ranks need distinct GPUs "
                        "0..7"));
  spec.mutable_ranks(3)->set_cuda_device(0);  // GPU 0 is rank 0's already
  EXPECT_TRUE(absl::IsInvalidArgument(Refusal(request, /*gpus=*/8)));
}

// Issue 15: bind_ip "--copy-check" reached the worker's command line.
TEST(CollectiveLaunchTest, WorkerArgumentsAreValidatedBeforeAnyProcess) {
  struct Case {
    const char* what;
    std::function<void(v1::CollectiveJobSpec&)> set;
    const char* expected;
  };
  const std::vector<Case> cases = {
      {"bind_ip flag", [](auto& s) { s.set_bind_ip("--copy-check"); },
       "bind_ip is '--copy-check': it must be this node's data address as an IP literal"},
      {"bind_ip name", [](auto& s) { s.set_bind_ip("evil.example.com"); }, "bind_ip is"},
      {"ib_device flag",
       [](auto& s) {
         s.set_transport("ibverbs");
         s.set_ib_device("--print-table");
       },
       "ib_device is '--print-table'"},
      {"ib_port", [](auto& s) { s.set_ib_port(4294967295u); },
       "collective ib_port is 4294967295; it must be 1 to 255"},
      {"gid_index", [](auto& s) { s.set_gid_index(100000); }, "gid_index is 100000"},
      {"memory cap", [](auto& s) { s.set_memory_cap_bytes(-1); }, "memory_cap_bytes is -1"},
      {"iters", [](auto& s) { s.mutable_sweep()->set_iters(2147483647); },
       "collectives.iters is 2147483647: it must be 1 to 100000"},
      {"warmup", [](auto& s) { s.mutable_sweep()->set_warmup_iters(1000000); },
       "collectives.warmup_iters is 1000000"},
      {"max bytes", [](auto& s) { s.mutable_sweep()->set_max_bytes(int64_t{1} << 50); },
       "collectives.sizes.max is 1125899906842624 bytes: the most is 34359738368"},
      {"factor", [](auto& s) { s.mutable_sweep()->set_factor(1 << 30); },
       "collectives.sizes.factor is 1073741824"},
      {"timeout", [](auto& s) { s.set_timeout_ms(4294967295u); },
       "collective timeout_ms is 4294967295; it must be at most 86400000"},
      {"local rank", [](auto& s) { s.mutable_ranks(0)->set_local_rank(5); },
       "has local_rank 5; the ranks on this node must have distinct local ranks 0..0"},
      {"world size", [](auto& s) { s.set_world_size(1 << 20); },
       "collective world_size is 1048576; it must be 1 to 65536"},
      {"env =", [](auto& s) { (*s.mutable_env())["NCCL_DEBUG=INFO"] = "x"; },
       "environment variable 'NCCL_DEBUG=INFO' is not a variable name"},
      {"env NUL", [](auto& s) { (*s.mutable_env())[std::string("NCCL_A\0B", 8)] = "x"; },
       "environment variable 'NCCL_A\\000B' is not a variable name"},
  };
  for (const Case& c : cases) {
    v1::StartCollectiveRequest request = Request();
    c.set(*request.mutable_spec());
    const absl::Status refused = Refusal(request);
    EXPECT_TRUE(absl::IsInvalidArgument(refused)) << c.what << ": " << refused;
    EXPECT_THAT(std::string(refused.message()), HasSubstr(c.expected)) << c.what;
  }
}

// Issue 15: a megabyte field came back whole in the error.
TEST(CollectiveLaunchTest, MegabyteFieldsAreQuotedClipped) {
  v1::StartCollectiveRequest request = Request();
  request.mutable_spec()->set_backend(std::string(1 << 20, 'g'));
  const absl::Status backend = Refusal(request);
  EXPECT_TRUE(absl::IsInvalidArgument(backend));
  EXPECT_LT(backend.message().size(), 200u);
  request = Request();
  request.set_name(std::string(1 << 20, 'n'));
  const absl::Status name = Refusal(request);
  EXPECT_TRUE(absl::IsInvalidArgument(name));
  EXPECT_LT(name.message().size(), 300u);
  EXPECT_THAT(std::string(name.message()), HasSubstr("(1048576 bytes)"));
  request = Request();
  request.mutable_spec()->set_bind_ip(std::string(1 << 20, '1'));
  const absl::Status bind = Refusal(request);
  EXPECT_TRUE(absl::IsInvalidArgument(bind));
  EXPECT_LT(bind.message().size(), 400u);
}

// What passes becomes the command line the worker parses back unchanged.
TEST(CollectiveLaunchTest, AValidRequestBecomesCheckedWorkerArguments) {
  v1::StartCollectiveRequest request = Request();
  request.mutable_spec()->set_bind_ip("10.0.0.7");
  const std::string bin = std::string(CLUSTERCERT_BINARY_DIR) + "/bin";
  if (::access((bin + "/collective-worker-gloo").c_str(), X_OK) != 0) {
    SKIP_FOR_ENVIRONMENT("gloo-worker") << "collective-worker-gloo is not built (no libgloo-dev)";
  }
  auto launch = JobLaunchFor(request, bin, kNoGpus);
  ASSERT_TRUE(launch.ok()) << launch.status();
  ASSERT_EQ(launch->workers.size(), 1u);
  std::string error;
  auto parsed = sweep::ParseWorkerArgs(launch->workers[0].args, error);
  ASSERT_TRUE(parsed.has_value()) << error;
  EXPECT_EQ(parsed->bind_ip, "10.0.0.7");
  EXPECT_EQ(parsed->ranks, 2);
}

}  // namespace
}  // namespace clustercert::agent
