#include "controller/pairwise/localisation.h"

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "clustercert/v1/certificate.pb.h"
#include "controller/pairwise/pair_measurement.h"
#include "controller/pairwise/pair_verdict.h"
#include "controller/plan/plan.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustercert::controller::pairwise {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Whether the pair client->server on rail is slow.
using BadPair = std::function<bool(const std::string&, const std::string&, const std::string&)>;

// A judged measurement matrix: every ordered pair of `nodes` on every rail runs
// write_bw at 190 Gb/s of 200, or 60 Gb/s where `bad` says so.
struct Matrix {
  std::vector<PairMeasurement> measurements;
  std::vector<v1::Finding> verdicts;

  void Add(const std::string& client, const std::string& server, const std::string& rail, bool slow,
           const std::string& test = "write_bw") {
    PairMeasurement m;
    m.client = client;
    m.server = server;
    m.rail = rail;
    m.memory = "host";
    m.test = test;
    m.ok = true;
    m.line_rate_gbps = 200;
    if (test == "write_lat") {
      m.result.mutable_latency()->set_typical_us(slow ? 30 : 2);
    } else {
      m.result.mutable_bandwidth()->set_avg_gbps(slow ? 60 : 190);
    }
    verdicts.push_back(JudgePair(plan::Pairwise{}, m));
    measurements.push_back(std::move(m));
  }
};

std::vector<std::string> Nodes(int count) {
  std::vector<std::string> nodes;
  for (int i = 1; i <= count; ++i) nodes.push_back(absl::StrCat("node", i));
  return nodes;
}

Matrix AllPairs(int node_count, const std::vector<std::string>& rails, const BadPair& bad) {
  Matrix matrix;
  const std::vector<std::string> nodes = Nodes(node_count);
  for (const std::string& rail : rails) {
    for (const std::string& client : nodes) {
      for (const std::string& server : nodes) {
        if (client != server) matrix.Add(client, server, rail, bad(client, server, rail));
      }
    }
  }
  return matrix;
}

bool Touches(const std::string& client, const std::string& server, const std::string& node) {
  return client == node || server == node;
}

// "node rail failing/total" for compact expectations.
std::vector<std::string> Summaries(const std::vector<Suspect>& suspects) {
  std::vector<std::string> out;
  for (const Suspect& s : suspects) {
    out.push_back(absl::StrCat(s.node, " ", s.rail, " ", s.failing_pairs, "/", s.total_pairs));
  }
  return out;
}

const std::vector<std::string> kTwoRails = {"mlx5_0", "mlx5_1"};

TEST(LocaliseTest, NothingFailingNamesNobody) {
  Matrix matrix = AllPairs(4, kTwoRails, [](auto&, auto&, auto&) { return false; });
  EXPECT_THAT(Localise(matrix.measurements, matrix.verdicts), IsEmpty());
  EXPECT_THAT(Localise({}, {}), IsEmpty());
}

TEST(LocaliseTest, OneBadRailOfOneNode) {
  Matrix matrix = AllPairs(4, kTwoRails, [](auto& c, auto& s, auto& rail) {
    return rail == "mlx5_1" && Touches(c, s, "node3");
  });
  std::vector<Suspect> suspects = Localise(matrix.measurements, matrix.verdicts);
  EXPECT_THAT(Summaries(suspects), ElementsAre("node3 mlx5_1 3/3"));
  EXPECT_EQ(suspects[0].reason,
            "every pair touching node3 on mlx5_1 fails (3 of 3) while node3's mlx5_0 pairs pass: "
            "check node3 mlx5_1's MTU, PFC, the cable/transceiver, the NIC's PCIe gen/lanes, NUMA "
            "placement, in that order");
}

// node3's receive path alone is slow on mlx5_1: the cells where it is the
// server (write_bw: the client writes into it) fail, its client cells pass.
TEST(LocaliseTest, ReceiveSideAloneIsNamed) {
  Matrix matrix = AllPairs(
      4, kTwoRails, [](auto&, auto& s, auto& rail) { return rail == "mlx5_1" && s == "node3"; });
  std::vector<Suspect> suspects = Localise(matrix.measurements, matrix.verdicts);
  ASSERT_THAT(Summaries(suspects), ElementsAre("node3 mlx5_1 3/3"));
  EXPECT_EQ(suspects[0].side, "receive");
  EXPECT_THAT(suspects[0].reason, HasSubstr("only where node3 on mlx5_1 receives"));
}

TEST(LocaliseTest, SendSideAloneOnEveryRailIsNamed) {
  Matrix matrix = AllPairs(4, kTwoRails, [](auto& c, auto&, auto&) { return c == "node2"; });
  std::vector<Suspect> suspects = Localise(matrix.measurements, matrix.verdicts);
  ASSERT_THAT(Summaries(suspects), ElementsAre("node2  6/6"));
  EXPECT_EQ(suspects[0].side, "send");
  EXPECT_THAT(suspects[0].reason, HasSubstr("only where node2 sends"));
}

// read_bw moves data from the server to the client: a slow read served by
// node3 is node3's send path.
TEST(LocaliseTest, ReadsSendFromTheServer) {
  Matrix matrix;
  for (const std::string& client : Nodes(4)) {
    for (const std::string& server : Nodes(4)) {
      if (client != server) matrix.Add(client, server, "mlx5_0", server == "node3", "read_bw");
    }
  }
  std::vector<Suspect> suspects = Localise(matrix.measurements, matrix.verdicts);
  ASSERT_THAT(Summaries(suspects), ElementsAre("node3 mlx5_0 3/3"));
  EXPECT_EQ(suspects[0].side, "send");
}

// Both directions failing, or a pair measured one way only, names no side.
TEST(LocaliseTest, NoSideWithoutEvidenceOfOne) {
  Matrix both =
      AllPairs(4, kTwoRails, [](auto& c, auto& s, auto&) { return Touches(c, s, "node3"); });
  EXPECT_EQ(Localise(both.measurements, both.verdicts)[0].side, "");
  Matrix one_way;
  for (const std::string& client : Nodes(4)) {
    for (const std::string& server : Nodes(4)) {
      if (client < server) one_way.Add(client, server, "mlx5_0", server == "node3");
    }
  }
  std::vector<Suspect> suspects = Localise(one_way.measurements, one_way.verdicts);
  ASSERT_FALSE(suspects.empty());
  EXPECT_EQ(suspects[0].side, "");
}

TEST(LocaliseTest, OneBadNodeOnEveryRail) {
  Matrix matrix =
      AllPairs(4, kTwoRails, [](auto& c, auto& s, auto&) { return Touches(c, s, "node3"); });
  std::vector<Suspect> suspects = Localise(matrix.measurements, matrix.verdicts);
  EXPECT_THAT(Summaries(suspects), ElementsAre("node3  6/6"));
  EXPECT_THAT(suspects[0].reason, HasSubstr("every pair touching node3 fails on all its rails"));
}

TEST(LocaliseTest, OneBadLink) {
  Matrix matrix = AllPairs(4, kTwoRails, [](auto& c, auto& s, auto& rail) {
    return rail == "mlx5_0" && Touches(c, s, "node1") && Touches(c, s, "node3");
  });
  std::vector<Suspect> suspects = Localise(matrix.measurements, matrix.verdicts);
  EXPECT_THAT(Summaries(suspects), ElementsAre("node1<->node3 mlx5_0 1/2"));
  EXPECT_THAT(suspects[0].reason, HasSubstr("pass with their other peers"));
}

TEST(LocaliseTest, EveryPairFailingIsTheFabric) {
  Matrix matrix = AllPairs(4, kTwoRails, [](auto&, auto&, auto&) { return true; });
  std::vector<Suspect> suspects = Localise(matrix.measurements, matrix.verdicts);
  ASSERT_EQ(suspects.size(), 1u);
  EXPECT_EQ(suspects[0].node, "");
  EXPECT_EQ(suspects[0].rail, "");
  EXPECT_EQ(suspects[0].failing_pairs, 12);
  EXPECT_EQ(suspects[0].total_pairs, 12);
  EXPECT_EQ(suspects[0].reason,
            "every pair fails: suspect the switch/fabric (MTU, PFC) rather than one node");
}

TEST(LocaliseTest, EveryPairOfOneRailIsThatRailsSwitch) {
  Matrix matrix = AllPairs(4, kTwoRails, [](auto&, auto&, auto& rail) { return rail == "mlx5_1"; });
  std::vector<Suspect> suspects = Localise(matrix.measurements, matrix.verdicts);
  EXPECT_THAT(Summaries(suspects), ElementsAre(" mlx5_1 6/6"));
  EXPECT_THAT(suspects[0].reason, HasSubstr("every pair on mlx5_1 fails"));
}

TEST(LocaliseTest, EightNodesWithTwoBadNodes) {
  Matrix matrix = AllPairs(8, kTwoRails, [](auto& c, auto& s, auto&) {
    return Touches(c, s, "node2") || Touches(c, s, "node6");
  });
  EXPECT_THAT(Summaries(Localise(matrix.measurements, matrix.verdicts)),
              ElementsAre("node2  14/14", "node6  14/14"));
}

TEST(LocaliseTest, BadNodeAndBadLinkTogether) {
  Matrix matrix = AllPairs(4, {"mlx5_0"}, [](auto& c, auto& s, auto&) {
    return Touches(c, s, "node4") || (Touches(c, s, "node1") && Touches(c, s, "node2"));
  });
  EXPECT_THAT(Summaries(Localise(matrix.measurements, matrix.verdicts)),
              ElementsAre("node4 mlx5_0 3/3", "node1<->node2 mlx5_0 1/1"));
}

TEST(LocaliseTest, MostPairsOfANodeFailing) {
  // node3 fails with node1 and node2 but not node4 (say, node4 shares its leaf).
  Matrix matrix = AllPairs(4, {"mlx5_0"}, [](auto& c, auto& s, auto&) {
    return Touches(c, s, "node3") && !Touches(c, s, "node4");
  });
  std::vector<Suspect> suspects = Localise(matrix.measurements, matrix.verdicts);
  EXPECT_THAT(Summaries(suspects), ElementsAre("node3 mlx5_0 2/3"));
  EXPECT_THAT(suspects[0].reason, HasSubstr("2 of 3 pairs touching node3 on mlx5_0 fail"));
}

TEST(LocaliseTest, TwoNodesCannotTellNodeFromLink) {
  Matrix matrix = AllPairs(2, {"mlx5_0"}, [](auto&, auto&, auto&) { return true; });
  std::vector<Suspect> suspects = Localise(matrix.measurements, matrix.verdicts);
  EXPECT_THAT(Summaries(suspects), ElementsAre("node1<->node2 mlx5_0 1/1"));
  EXPECT_THAT(suspects[0].reason, HasSubstr("there is no third node"));
}

TEST(LocaliseTest, TcpEngineNamesTheNode) {
  Matrix matrix = AllPairs(4, {""}, [](auto& c, auto& s, auto&) { return Touches(c, s, "node2"); });
  std::vector<Suspect> suspects = Localise(matrix.measurements, matrix.verdicts);
  EXPECT_THAT(Summaries(suspects), ElementsAre("node2  3/3"));
  EXPECT_THAT(suspects[0].reason, HasSubstr("check node2's MTU"));
}

TEST(LocaliseTest, RingPatternStillFindsTheNode) {
  Matrix matrix;
  const std::vector<std::string> ring = Nodes(5);
  for (size_t i = 0; i < ring.size(); ++i) {
    const std::string& a = ring[i];
    const std::string& b = ring[(i + 1) % ring.size()];
    matrix.Add(a, b, "mlx5_0", Touches(a, b, "node3"));
  }
  EXPECT_THAT(Summaries(Localise(matrix.measurements, matrix.verdicts)),
              ElementsAre("node3 mlx5_0 2/2"));
}

TEST(LocaliseTest, AnyFailingTestFailsThePairAndUnknownsAreNotCounted) {
  Matrix matrix = AllPairs(4, {"mlx5_0"}, [](auto&, auto&, auto&) { return false; });
  // Latency breaks only between node4 and its peers; bandwidth is fine.
  for (const char* peer : {"node1", "node2", "node3"}) {
    matrix.Add("node4", peer, "mlx5_0", true, "write_lat");
  }
  // A measurement without a line rate is skipped and must not count for anyone.
  matrix.Add("node1", "node2", "mlx5_0", true);
  matrix.measurements.back().line_rate_gbps = 0;
  matrix.verdicts.back() = JudgePair(plan::Pairwise{}, matrix.measurements.back());
  ASSERT_EQ(matrix.verdicts.back().status(), v1::Finding::skipped);
  EXPECT_THAT(Summaries(Localise(matrix.measurements, matrix.verdicts)),
              ElementsAre("node4 mlx5_0 3/3"));
}

TEST(LocaliseTest, VerdictsShorterThanMeasurementsAreNotAnError) {
  Matrix matrix =
      AllPairs(4, {"mlx5_0"}, [](auto& c, auto& s, auto&) { return Touches(c, s, "node3"); });
  std::vector<v1::Finding> verdicts = matrix.verdicts;
  verdicts.resize(2);  // node1->node2, node1->node3
  EXPECT_THAT(Summaries(Localise(matrix.measurements, verdicts)),
              ElementsAre("node1<->node3 mlx5_0 1/1"));
}

}  // namespace
}  // namespace clustercert::controller::pairwise
