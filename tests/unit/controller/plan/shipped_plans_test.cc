// The plans shipped under plans/ parse, with the values a cluster engineer
// wrote in them.

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "controller/plan/plan_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustercert::controller::plan {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

absl::StatusOr<Plan> LoadShipped(const std::string& name) {
  return LoadPlan(absl::StrCat(CLUSTERCERT_SOURCE_DIR, "/plans/", name));
}

TEST(ShippedPlansTest, FourNodeRoce) {
  const absl::StatusOr<Plan> plan = LoadShipped("4node-roce.yaml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->cluster, "kentino-4node");
  EXPECT_EQ(plan->fabric.type, FabricType::kRoce);
  EXPECT_EQ(plan->fabric.link_rate_gbps, 400);
  EXPECT_EQ(plan->fabric.active_mtu, 4096);
  EXPECT_EQ(plan->fabric.min_netdev_mtu, 9000);
  EXPECT_EQ(plan->fabric.roce.gid_index, 3);
  EXPECT_EQ(plan->fabric.roce.pfc_priority, 3);
  EXPECT_EQ(plan->fabric.roce.dscp, 26);
  EXPECT_EQ(plan->fabric.roce.trust, "dscp");
  EXPECT_TRUE(plan->fabric.roce.ecn);

  ASSERT_EQ(plan->nodes.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    const Node& node = plan->nodes[i];
    EXPECT_EQ(node.name, absl::StrCat("node", i + 1));
    EXPECT_EQ(node.agent, absl::StrCat("192.168.100.", 11 + i, ":7070"));
    EXPECT_EQ(node.data_ip, absl::StrCat("10.10.1.", i + 1));
    EXPECT_THAT(node.rails, ElementsAre("mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4", "mlx5_5",
                                        "mlx5_6", "mlx5_7"));
    EXPECT_EQ(node.gpus, 8);
    EXPECT_GT(node.location.line, 0);
  }

  EXPECT_TRUE(plan->expect.nvidia_peermem);
  EXPECT_EQ(plan->expect.pcie.gen, 5);
  EXPECT_EQ(plan->expect.pcie.width, 16);
  EXPECT_EQ(plan->expect.clock_offset, absl::Milliseconds(5));
  EXPECT_TRUE(plan->expect.ntp_synced);
  EXPECT_EQ(plan->expect.max_gpu_nic_relation, "PHB");

  EXPECT_FALSE(plan->agents.insecure);
  EXPECT_EQ(plan->agents.tls.ca, "/etc/clustercert/ca.pem");
  EXPECT_EQ(plan->agents.tls.cert, "/etc/clustercert/controller.pem");
  EXPECT_EQ(plan->agents.tls.key, "/etc/clustercert/controller.key");
  EXPECT_EQ(plan->agents.retries, 2);

  EXPECT_TRUE(plan->pairwise.enabled);
  EXPECT_EQ(plan->pairwise.engine, PairwiseEngine::kVerbs);
  EXPECT_EQ(plan->pairwise.pattern, PairwisePattern::kAllPairs);
  EXPECT_THAT(plan->pairwise.tests, ElementsAre("write_bw", "send_bw", "write_lat"));
  EXPECT_THAT(plan->pairwise.memory, ElementsAre("host", "cuda"));
  EXPECT_EQ(plan->pairwise.cuda_gpus, 0);
  EXPECT_EQ(plan->locations.count("pairwise.cuda_gpus"), 1u);
  EXPECT_EQ(plan->pairwise.duration, absl::Seconds(10));
  EXPECT_EQ(plan->pairwise.no_progress, absl::Seconds(10));  // the default
  EXPECT_EQ(plan->pairwise.message_bytes, 8 << 20);
  EXPECT_DOUBLE_EQ(plan->pairwise.min_fraction_of_line_rate, 0.80);
  EXPECT_EQ(plan->pairwise.max_latency_us, 5);

  EXPECT_TRUE(plan->collectives.enabled);
  EXPECT_EQ(plan->collectives.backend, CollectiveBackend::kNccl);
  EXPECT_EQ(plan->collectives.sizes.min_bytes, 8);
  EXPECT_EQ(plan->collectives.sizes.max_bytes, 8LL << 30);
  EXPECT_EQ(plan->collectives.sizes.factor, 2);
  EXPECT_EQ(plan->collectives.ranks_per_node, 8);
  EXPECT_EQ(plan->collectives.min_busbw_gbytes, 0);  // the floor follows the rails
  EXPECT_DOUBLE_EQ(plan->collectives.min_fraction_of_fabric, 0.8);
  // NCCL_IB_HCA and NCCL_IB_GID_INDEX are derived from the plan (DerivedNcclEnv).
  EXPECT_THAT(plan->collectives.env, ElementsAre(Pair("NCCL_NET_GDR_LEVEL", "PHB")));

  EXPECT_TRUE(plan->uplink.enabled);
  EXPECT_EQ(plan->uplink.capacity_gbps, 25);
  EXPECT_EQ(plan->uplink.workload.profile, "llm-pretrain");
  EXPECT_EQ(plan->uplink.workload.checkpoint_gbytes, 280);
  ASSERT_EQ(plan->uplink.targets.size(), 3u);
  EXPECT_EQ(plan->uplink.targets[0].type, "agent");
  EXPECT_EQ(plan->uplink.targets[0].name, "storage1");
  EXPECT_EQ(plan->uplink.targets[0].agent, "192.168.100.50:7070");
  EXPECT_EQ(plan->uplink.targets[0].data_ip, "10.10.9.1");
  EXPECT_EQ(plan->uplink.targets[1].type, "http");
  EXPECT_EQ(plan->uplink.targets[1].url, "http://10.10.9.1:9000/bucket/shard-000.tar");
  EXPECT_EQ(plan->uplink.targets[1].name, plan->uplink.targets[1].url);
  EXPECT_EQ(plan->uplink.targets[2].type, "tcp");
  EXPECT_EQ(plan->uplink.targets[2].address, "10.10.9.1:5201");
  EXPECT_THAT(plan->uplink.flows, ElementsAre(1, 8));
  EXPECT_EQ(plan->uplink.duration, absl::Seconds(5));

  EXPECT_EQ(plan->certificate.out, "certs/");
  EXPECT_EQ(plan->certificate.signing_key, "/etc/clustercert/signing.key");
  EXPECT_EQ(plan->path, absl::StrCat(CLUSTERCERT_SOURCE_DIR, "/plans/4node-roce.yaml"));
  EXPECT_EQ(plan->sha256.size(), 64u);
}

TEST(ShippedPlansTest, FourNodeInfinibandHdr) {
  const absl::StatusOr<Plan> plan = LoadShipped("4node-ib-hdr.yaml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->fabric.type, FabricType::kInfiniband);
  EXPECT_EQ(plan->fabric.link_rate_gbps, 400);  // NDR
  ASSERT_EQ(plan->nodes.size(), 4u);
  for (const Node& node : plan->nodes) {
    EXPECT_THAT(node.rails, ElementsAre("mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4", "mlx5_5",
                                        "mlx5_6", "mlx5_7"));
    EXPECT_EQ(node.gpus, 8);
  }
  EXPECT_EQ(plan->expect.pcie.gen, 5);
  EXPECT_EQ(plan->collectives.ranks_per_node, 8);
  EXPECT_EQ(plan->collectives.min_busbw_gbytes, 0);
  EXPECT_EQ(plan->expect.max_gpu_nic_relation, "PIX");
  EXPECT_THAT(plan->pairwise.tests, ElementsAre("write_bw", "read_bw", "write_lat"));
  EXPECT_EQ(plan->collectives.backend, CollectiveBackend::kNccl);
  EXPECT_EQ(plan->collectives.env.count("NCCL_IB_HCA"), 0u);  // derived from the rails
  EXPECT_EQ(plan->collectives.env.at("NCCL_NET_GDR_LEVEL"), "PIX");
  EXPECT_FALSE(plan->uplink.enabled);
  EXPECT_EQ(plan->locations.count("fabric.roce"), 0u);
}

TEST(ShippedPlansTest, Local) {
  const absl::StatusOr<Plan> plan = LoadShipped("local.yaml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->fabric.type, FabricType::kEthernet);
  EXPECT_EQ(plan->fabric.link_rate_gbps, 1);
  ASSERT_EQ(plan->nodes.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    const Node& node = plan->nodes[i];
    EXPECT_EQ(node.name, absl::StrCat("local", i + 1));
    EXPECT_EQ(node.agent, absl::StrCat("127.0.0.1:", 17071 + i));
    EXPECT_TRUE(node.rails.empty());
    EXPECT_EQ(node.gpus, 0);
    EXPECT_EQ(node.data_ip, "127.0.0.1");  // the gloo ranks bind there
  }
  EXPECT_TRUE(plan->agents.insecure);
  EXPECT_FALSE(plan->expect.ntp_synced);
  EXPECT_FALSE(plan->expect.management_separate);
  EXPECT_FALSE(plan->expect.nvidia_peermem);
  EXPECT_FALSE(plan->expect.ofed);
  EXPECT_EQ(plan->certificate.out, "certs/");
  EXPECT_EQ(plan->certificate.signing_key, "certs/demo-signing.key");  // demo.sh makes it
  // The demo must certify with what this release runs on a box without RDMA
  // or GPUs: connect, inventory, a tcp pair matrix, gloo sweeps over tcp and
  // the uplink to an agent sink.
  EXPECT_TRUE(plan->pairwise.enabled);
  EXPECT_EQ(plan->pairwise.engine, PairwiseEngine::kTcp);
  EXPECT_TRUE(plan->collectives.enabled);
  EXPECT_EQ(plan->collectives.backend, CollectiveBackend::kGloo);
  EXPECT_EQ(plan->collectives.transport, GlooTransport::kTcp);
  EXPECT_EQ(plan->collectives.ranks_per_node, 2);
  EXPECT_GT(plan->collectives.min_busbw_gbytes, 0);
  // The uplink on loopback: sizing that fits, flows to local4's agent.
  EXPECT_TRUE(plan->uplink.enabled);
  EXPECT_EQ(plan->uplink.workload.profile, "llm-pretrain");
  ASSERT_EQ(plan->uplink.targets.size(), 1u);
  EXPECT_EQ(plan->uplink.targets[0].type, "agent");
  EXPECT_EQ(plan->uplink.targets[0].node, "local4");
}

TEST(ShippedPlansTest, LabSoftroce) {
  const absl::StatusOr<Plan> plan = LoadShipped("lab-softroce.yaml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->fabric.type, FabricType::kRoce);
  EXPECT_EQ(plan->fabric.link_rate_gbps, 2.5);  // what rxe reports for a 1000 Mb/s NIC
  EXPECT_EQ(plan->fabric.roce.gid_index, 1);
  EXPECT_FALSE(plan->fabric.roce.lossless);
  ASSERT_EQ(plan->nodes.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    const Node& node = plan->nodes[i];
    EXPECT_EQ(node.agent, absl::StrCat("10.203.1.", i + 1, ":7070"));
    EXPECT_THAT(node.rails, ElementsAre("rxe0"));
  }
  EXPECT_TRUE(plan->pairwise.enabled);
  EXPECT_EQ(plan->pairwise.engine, PairwiseEngine::kVerbs);
  EXPECT_THAT(plan->pairwise.tests, ElementsAre("write_bw", "send_bw", "write_lat", "send_lat"));
  // Emulated QPs beside CI's CPU hog stall for 10 s and go on.
  EXPECT_EQ(plan->pairwise.no_progress, absl::Seconds(30));
  EXPECT_TRUE(plan->collectives.enabled);  // gloo over rxe0's verbs
  EXPECT_EQ(plan->collectives.backend, CollectiveBackend::kGloo);
  EXPECT_EQ(plan->collectives.transport, GlooTransport::kIbverbs);
  EXPECT_FALSE(plan->uplink.enabled);
}

}  // namespace
}  // namespace clustercert::controller::plan
