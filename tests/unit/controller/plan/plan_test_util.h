#pragma once

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "controller/plan/plan_parser.h"
#include "gtest/gtest.h"

namespace clustercert::controller::plan::testing {

// The file name the error tests parse under.
inline constexpr char kFile[] = "plans/t.yaml";

// A small valid plan that touches every section; error tests change one line.
inline std::string BasePlan() {
  return R"(cluster: test-cluster
fabric:
  type: roce
  link_rate_gbps: 200
  active_mtu: 4096
  min_netdev_mtu: 9000
  roce: {gid_index: 3, pfc_priority: 3, dscp: 26, trust: dscp, ecn: true}
nodes:
  - name: node1
    agent: 192.168.100.11:7070
    data_ip: 10.10.1.1
    rails: [mlx5_0, mlx5_1]
    gpus: 4
  - name: node2
    agent: 192.168.100.12:7070
    data_ip: 10.10.1.2
    rails: [mlx5_0, mlx5_1]
    gpus: 4
expect:
  nvidia_peermem: true
  pcie: {gen: 4, width: 16}
  clock_offset_ms: 5
  ntp_synced: true
  ofed: true
  max_gpu_nic_relation: PHB
  gpu_nic_same_numa: true
agents:
  insecure: false
  tls: {ca: /pki/ca.pem, cert: /pki/controller.pem, key: /pki/controller.key}
  connect_timeout_s: 5
  call_timeout_s: 30
  retries: 2
pairwise:
  engine: verbs
  pattern: all-pairs
  tests: [write_bw, send_bw, write_lat]
  memory: [host, cuda]
  duration_s: 10
  message_bytes: 8M
  min_fraction_of_line_rate: 0.80
  max_latency_us: 5
collectives:
  backend: nccl
  sizes: {min: 8, max: 8G, factor: 2}
  ranks_per_node: 4
  min_busbw_gbytes: 22
  env: {NCCL_IB_HCA: "mlx5_0,mlx5_1", NCCL_IB_GID_INDEX: 3}
uplink:
  capacity_gbps: 25
  workload: {gpus_per_node: 4, ingest_gbytes_per_gpu: 0.25, checkpoint_gbytes: 280}
  targets:
    - {type: agent, node: node2}
    - {type: http, url: "http://10.10.9.1:9000/bucket/shard-000.tar"}
    - {type: tcp, address: "10.10.9.1:5201"}
  flows: [1, 8]
certificate: {out: certs/, signing_key: /pki/signing.key}
)";
}

// `text` with its only occurrence of `from` replaced by `to`.
inline std::string Replace(const std::string& text, const std::string& from,
                           const std::string& to) {
  const size_t at = text.find(from);
  if (at == std::string::npos || text.find(from, at + 1) != std::string::npos) {
    ADD_FAILURE() << "\"" << from << "\" must occur exactly once in the plan";
    return text;
  }
  std::string result = text;
  result.replace(at, from.size(), to);
  return result;
}

// "line:column" (1-based) of byte `offset` in `text`.
inline std::string PositionAt(const std::string& text, size_t offset) {
  int line = 1;
  int column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return absl::StrCat(line, ":", column);
}

// "line:column" of the only occurrence of `needle` in `text`.
inline std::string PositionOf(const std::string& text, const std::string& needle) {
  const size_t at = text.find(needle);
  if (at == std::string::npos || text.find(needle, at + 1) != std::string::npos) {
    ADD_FAILURE() << "\"" << needle << "\" must occur exactly once in the plan";
    return "?:?";
  }
  return PositionAt(text, at);
}

inline std::vector<std::string> ErrorLines(const absl::Status& status) {
  return absl::StrSplit(std::string(status.message()), '\n');
}

// One way to break BasePlan() and the error it must produce.
struct RejectCase {
  std::string name;                                        // test name suffix
  std::vector<std::pair<std::string, std::string>> edits;  // each: replace .first by .second
  // Unique text of the edited plan; the error points at its '|' (at its start
  // when it has none).
  std::string at;
  // The error line must start with "plans/t.yaml:LINE:COL: " + message.
  std::string message;
  size_t error_count = 1;  // lines in the status message
};

inline void PrintTo(const RejectCase& c, std::ostream* os) { *os << c.name; }

inline std::string ApplyEdits(const RejectCase& c) {
  std::string text = BasePlan();
  for (const auto& [from, to] : c.edits) text = Replace(text, from, to);
  return text;
}

// Parses BasePlan() with the case's edits and checks the error's exact
// position, key and wording, and that no other error came with it.
inline void ExpectRejected(const RejectCase& c) {
  const std::string text = ApplyEdits(c);
  std::string needle = c.at;
  const size_t bar = needle.find('|');
  if (bar != std::string::npos) needle.erase(bar, 1);
  const size_t found = text.find(needle);
  ASSERT_NE(found, std::string::npos) << "\"" << needle << "\" is not in the edited plan";
  ASSERT_EQ(text.find(needle, found + 1), std::string::npos)
      << "\"" << needle << "\" occurs more than once in the edited plan";
  const size_t offset = found + (bar == std::string::npos ? 0 : bar);
  const std::string expected = absl::StrCat(kFile, ":", PositionAt(text, offset), ": ", c.message);

  const absl::StatusOr<Plan> plan = ParsePlan(text, kFile);
  ASSERT_FALSE(plan.ok()) << "the plan parsed, but should fail with: " << expected;
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  const std::vector<std::string> lines = ErrorLines(plan.status());
  bool matched = false;
  for (const std::string& line : lines) matched |= line.rfind(expected, 0) == 0;
  EXPECT_TRUE(matched) << "expected a line starting with:\n  " << expected << "\ngot:\n  "
                       << plan.status().message();
  EXPECT_EQ(lines.size(), c.error_count) << plan.status().message();
}

inline std::string CaseName(const ::testing::TestParamInfo<RejectCase>& info) {
  return info.param.name;
}

}  // namespace clustercert::controller::plan::testing
