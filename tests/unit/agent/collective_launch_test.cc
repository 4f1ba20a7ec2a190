// StartCollective's validation before anything is spawned: what a caller
// on the management network could otherwise hand to root processes.
#include <string>

#include "agent/service/collective_handlers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustercert::agent {
namespace {

using ::testing::HasSubstr;

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
    auto launch = JobLaunchFor(request, "/nonexistent");
    ASSERT_FALSE(launch.ok()) << name;
    EXPECT_TRUE(absl::IsInvalidArgument(launch.status())) << name << ": " << launch.status();
    EXPECT_THAT(std::string(launch.status().message()), HasSubstr(name));
  }
}

TEST(CollectiveLaunchTest, AllowedVariablesGetPastTheEnvCheck) {
  v1::StartCollectiveRequest request = Request();
  (*request.mutable_spec()->mutable_env())["NCCL_DEBUG"] = "INFO";
  (*request.mutable_spec()->mutable_env())["GLOO_SOCKET_IFNAME"] = "eth0";
  auto launch = JobLaunchFor(request, "/nonexistent");
  // Refused later, for the missing worker binary, not for the env.
  EXPECT_TRUE(absl::IsFailedPrecondition(launch.status())) << launch.status();
}

}  // namespace
}  // namespace clustercert::agent
