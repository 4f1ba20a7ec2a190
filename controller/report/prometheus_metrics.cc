#include "controller/report/prometheus_metrics.h"

#include <map>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "controller/checks/node_checks.h"
#include "controller/checks/status_text.h"
#include "controller/report/pair_matrices.h"
#include "sweep/numbers.h"

namespace clustercert::controller::report {
namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

// A label value as the exposition format wants it: backslash, double quote
// and line feed escaped; the rest as it is (names come from a plan, which
// the plan validator already bounds).
std::string LabelValue(const std::string& value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

// One metric family: its HELP and TYPE once, then its samples, each label
// set at most once (a repeat would make the whole file unreadable).
class Family {
 public:
  Family(std::string name, std::string help) : name_(std::move(name)), help_(std::move(help)) {}

  void Add(const Labels& labels, double value) {
    std::vector<std::string> parts;
    parts.reserve(labels.size());
    for (const auto& [key, text] : labels) {
      parts.push_back(absl::StrCat(key, "=\"", LabelValue(text), "\""));
    }
    std::string series = absl::StrCat(name_, "{", absl::StrJoin(parts, ","), "}");
    if (!seen_.insert(series).second) return;
    absl::StrAppend(&samples_, series, " ", sweep::ShortestText(value), "\n");
  }

  void AppendTo(std::string& out) const {
    if (samples_.empty()) return;
    absl::StrAppend(&out, "# HELP ", name_, " ", help_, "\n# TYPE ", name_, " gauge\n", samples_);
  }

 private:
  std::string name_;
  std::string help_;
  std::set<std::string> seen_;
  std::string samples_;
};

bool Failing(const v1::Finding& finding) {
  return finding.status() == v1::Finding::fail || finding.status() == v1::Finding::unknown;
}

// The nodes the certificate holds against: a blocking check of the node's
// own (a pair cell's verdict is not one: localisation decides which end it
// points at), a suspect naming it alone or in a link, or no answer at all.
std::set<std::string> NodesNotCertified(const v1::Certificate& certificate) {
  std::set<std::string> pair_verdicts;
  for (const v1::PairResult& pair : certificate.pairs()) {
    pair_verdicts.insert(pair.verdict().key());
  }
  std::set<std::string> held;
  for (const v1::Finding& finding : certificate.checks()) {
    if (finding.node().empty() || pair_verdicts.count(finding.key()) != 0) continue;
    if (checks::BlocksCertification(finding)) held.insert(finding.node());
  }
  for (const v1::Suspect& suspect : certificate.suspects()) {
    for (absl::string_view node : absl::StrSplit(suspect.node(), "<->")) {
      if (!node.empty()) held.insert(std::string(node));
    }
  }
  for (const v1::NodeResult& node : certificate.nodes()) {
    if (!node.reachable()) held.insert(node.name());
  }
  return held;
}

void AddClusterFamilies(const v1::Certificate& certificate, const Labels& cluster,
                        std::string& out) {
  Family certified("clustercert_certified",
                   "1 when the cluster's certificate says certified, 0 when it does not.");
  certified.Add(cluster, certificate.verdict() == "certified" ? 1 : 0);
  certified.AppendTo(out);

  Family finished("clustercert_certificate_timestamp_seconds",
                  "When the certifying run finished, in Unix time; time() minus this is the "
                  "certificate's age.");
  absl::Time at;
  std::string error;
  if (absl::ParseTime(absl::RFC3339_full, certificate.finished_at(), &at, &error)) {
    finished.Add(cluster, absl::ToDoubleSeconds(at - absl::UnixEpoch()));
  }
  finished.AppendTo(out);
}

void AddNodeFamilies(const v1::Certificate& certificate, const Labels& cluster, std::string& out) {
  const std::set<std::string> held = NodesNotCertified(certificate);
  Family node_certified("clustercert_node_certified",
                        "1 when the node answered and neither its own checks nor the pair "
                        "localisation hold it against certification, else 0.");
  for (const v1::NodeResult& node : certificate.nodes()) {
    Labels labels = cluster;
    labels.emplace_back("node", node.name());
    node_certified.Add(labels, held.count(node.name()) != 0 ? 0 : 1);
  }
  node_certified.AppendTo(out);

  std::map<Labels, int> counts;
  for (const v1::Finding& finding : certificate.checks()) {
    if (!Failing(finding)) continue;
    Labels labels = cluster;
    labels.emplace_back("node", finding.node());
    labels.emplace_back("check", finding.id());
    labels.emplace_back("severity", checks::StatusText(finding.severity()));
    ++counts[labels];
  }
  Family failing("clustercert_failing_checks",
                 "Checks that failed or stayed unknown, by node (empty: cluster-wide), check id "
                 "and severity (error blocks certification, warning does not).");
  for (const auto& [labels, count] : counts) failing.Add(labels, count);
  failing.AppendTo(out);
}

void AddPairFamilies(const v1::Certificate& certificate, const Labels& cluster, std::string& out) {
  Family passed("clustercert_pair_passed", "1 when the pair cell passed, else 0.");
  Family bandwidth("clustercert_pair_bandwidth_bytes_per_second",
                   "The pair cell's measured bandwidth, client to server.");
  Family ratio("clustercert_pair_bandwidth_ratio",
               "The pair cell's bandwidth over the slower end's line rate.");
  Family latency("clustercert_pair_latency_seconds", "The pair cell's typical one-way latency.");
  for (const v1::PairResult& pair : certificate.pairs()) {
    Labels labels = cluster;
    labels.insert(labels.end(), {{"client", pair.client()},
                                 {"server", pair.server()},
                                 {"rail", pair.rail()},
                                 {"test", pair.test()},
                                 {"memory", pair.memory()},
                                 {"client_gpu", pair.gpu()},
                                 {"server_gpu", pair.server_gpu()},
                                 {"retest_of", pair.retest_of()}});
    passed.Add(labels, CellStatus(pair) == v1::Finding::pass ? 1 : 0);
    if (!pair.ok()) continue;
    if (pair.unit() == "Gb/s") {
      bandwidth.Add(labels, pair.value() * 1e9 / 8);
      const CellScale scale = ScaleOf(pair, certificate);
      if (scale.ratio) ratio.Add(labels, *scale.ratio);
    } else if (pair.unit() == "us") {
      latency.Add(labels, pair.value() / 1e6);
    }
  }
  for (const Family* family : {&passed, &bandwidth, &ratio, &latency}) family->AppendTo(out);
}

void AddSweepAndUplinkFamilies(const v1::Certificate& certificate, const Labels& cluster,
                               std::string& out) {
  Family busbw("clustercert_collective_busbw_bytes_per_second",
               "The allreduce bus bandwidth of a scope over its largest sizes (nccl-tests' "
               "busbw); nodes names the scope's nodes when it has at most two.");
  for (const v1::CollectiveSweep& sweep : certificate.collectives()) {
    if (!sweep.ok()) continue;
    Labels labels = cluster;
    labels.insert(labels.end(),
                  {{"scope", sweep.scope()},
                   {"backend", sweep.backend()},
                   {"nodes", sweep.nodes_size() <= 2 ? absl::StrJoin(sweep.nodes(), ",") : ""},
                   {"node_count", absl::StrCat(sweep.nodes_size())}});
    busbw.Add(labels, sweep.large_busbw_gbytes() * 1e9);
  }
  busbw.AppendTo(out);

  Family uplink("clustercert_uplink_throughput_bytes_per_second",
                "A node's aggregate throughput to an uplink target at a flow count.");
  for (const v1::UplinkThroughput& run : certificate.uplink().throughput()) {
    if (!run.ok()) continue;
    Labels labels = cluster;
    labels.insert(
        labels.end(),
        {{"node", run.node()}, {"target", run.target()}, {"flows", absl::StrCat(run.flows())}});
    uplink.Add(labels, run.aggregate_gbps() * 1e9 / 8);
  }
  uplink.AppendTo(out);
}

}  // namespace

std::string RenderPrometheusMetrics(const v1::Certificate& certificate) {
  const Labels cluster = {{"cluster", certificate.cluster()}};
  std::string out;
  AddClusterFamilies(certificate, cluster, out);
  AddNodeFamilies(certificate, cluster, out);
  AddPairFamilies(certificate, cluster, out);
  AddSweepAndUplinkFamilies(certificate, cluster, out);
  return out;
}

}  // namespace clustercert::controller::report
