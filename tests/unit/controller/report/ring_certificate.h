#pragma once

// A synthetic certificate the shape of a large ring run (each node measures
// its neighbour and is measured by it, on every rail), for the tests of the
// per-node summaries, the CSV and the terminal output: no fixture holds a
// cluster past the summary threshold.

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "clustercert/v1/certificate.pb.h"

namespace clustercert::controller::report::testing {

inline std::string RingNodeName(int i) { return absl::StrFormat("n%04d", i); }

// `nodes` nodes n0000..; per rail, cells i -> i+1 and i+1 -> i (2 x nodes),
// all passing at 95-99 % of a 400 Gb/s line rate with an 80 % floor.
inline v1::Certificate RingCertificate(int nodes, const std::vector<std::string>& rails = {
                                                      "mlx5_0", "mlx5_1"}) {
  v1::Certificate c;
  c.set_format_version(5);
  c.set_tool("clustercert");
  c.set_tool_version("test");
  c.set_cluster("ring");
  c.set_verdict("certified");
  for (int i = 0; i < nodes; ++i) {
    v1::NodeResult* node = c.add_nodes();
    node->set_name(RingNodeName(i));
    node->set_reachable(true);
  }
  for (const auto& rail : rails) {
    for (int i = 0; i < nodes; ++i) {
      const int next = (i + 1) % nodes;
      for (auto [client, server] : {std::pair{i, next}, std::pair{next, i}}) {
        v1::PairResult* p = c.add_pairs();
        p->set_test("write_bw");
        p->set_engine("verbs");
        p->set_memory("host");
        p->set_client(RingNodeName(client));
        p->set_server(RingNodeName(server));
        p->set_rail(rail);
        p->set_round(1 + (i % 2));
        p->set_ok(true);
        p->set_value(380 + (client * 7 + server) % 17);
        p->set_unit("Gb/s");
        p->set_threshold(320);
        p->set_line_rate_gbps(400);
        v1::Finding* v = p->mutable_verdict();
        v->set_id("pairwise.bandwidth");
        v->set_status(v1::Finding::pass);
        v->set_severity(v1::Finding::error);
        v->set_message(absl::StrCat(p->client(), " ", rail, " -> ", p->server(), " ", rail,
                                    " write_bw host: ", p->value(), " Gb/s (plan floor 80 %)."));
      }
    }
  }
  return c;
}

// Makes pairs(index) a failing measurement at `gbps`.
inline void FailLow(v1::Certificate& c, int index, double gbps) {
  v1::PairResult* p = c.mutable_pairs(index);
  p->set_value(gbps);
  p->mutable_verdict()->set_status(v1::Finding::fail);
  p->mutable_verdict()->set_message(
      absl::StrCat(p->client(), " -> ", p->server(), ": ", gbps, " Gb/s under the 320 Gb/s floor"));
  c.set_verdict("not-certified");
}

// Makes pairs(index) a test that did not run to the end.
inline void FailError(v1::Certificate& c, int index, const std::string& error) {
  v1::PairResult* p = c.mutable_pairs(index);
  p->set_ok(false);
  p->set_value(0);
  p->set_error(error);
  p->mutable_verdict()->set_status(v1::Finding::fail);
  p->mutable_verdict()->set_message(absl::StrCat("the bandwidth test failed: ", error));
  c.set_verdict("not-certified");
}

}  // namespace clustercert::controller::report::testing
