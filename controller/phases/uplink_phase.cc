#include "controller/phases/uplink_phase.h"

#include <algorithm>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "controller/checks/status_text.h"
#include "controller/phases/connect_phase.h"
#include "controller/phases/peer_broker.h"
#include "controller/phases/sync_call.h"
#include "controller/uplink/uplink_sizing.h"
#include "controller/uplink/uplink_verdicts.h"

namespace clustercert::controller {
namespace {

constexpr absl::Duration kCallSlack = absl::Seconds(15);
// Large writes, like a dataloader's reads: per-flow rate, not syscall rate.
constexpr uint64_t kFlowMessageBytes = 1 << 20;

// Aggregate, per-flow and extremes from the flows' own figures.
void SetFlowFigures(v1::UplinkThroughput& run, const std::vector<double>& flow_gbps,
                    double aggregate_gbps, double seconds, uint64_t bytes) {
  run.set_aggregate_gbps(aggregate_gbps);
  run.set_seconds(seconds);
  run.set_bytes(bytes);
  for (double gbps : flow_gbps) run.add_flow_gbps(gbps);
  if (!flow_gbps.empty()) {
    run.set_min_flow_gbps(*std::min_element(flow_gbps.begin(), flow_gbps.end()));
    run.set_max_flow_gbps(*std::max_element(flow_gbps.begin(), flow_gbps.end()));
  }
}

class UplinkRunner {
 public:
  UplinkRunner(const plan::Plan& plan, std::vector<NodeState>& nodes, std::vector<NodeState>& sinks)
      : plan_(plan), nodes_(nodes), sinks_(sinks) {}

  void Run(NodeState& node, const plan::UplinkTarget& target, int flows,
           v1::UplinkThroughput& run) {
    if (!node.reachable) {
      run.set_error(absl::StrCat(node.node.name, " is unreachable"));
      return;
    }
    if (target.type == "agent") {
      RunToAgent(node, target, flows, run);
    } else {
      RunThroughAgent(node, target, flows, run);
    }
  }

 private:
  absl::Duration Duration() const { return plan_.uplink.duration; }

  // http and tcp targets: the node's agent opens the flows itself.
  void RunThroughAgent(NodeState& node, const plan::UplinkTarget& target, int flows,
                       v1::UplinkThroughput& run) {
    v1::RunUplinkFlowsRequest request;
    request.set_type(target.type);
    request.set_url(target.url);
    request.set_address(target.address);
    request.set_flows(static_cast<uint32_t>(flows));
    request.set_duration_s(absl::ToDoubleSeconds(Duration()));
    const absl::Duration timeout = Duration() + kCallSlack;
    request.set_timeout_ms(static_cast<uint32_t>(absl::ToInt64Milliseconds(timeout)));
    auto answer = CallAndWait<v1::RunUplinkFlowsResponse>([&](auto done) {
      node.client->RunUplinkFlows(request, timeout + absl::Seconds(5), std::move(done));
    });
    if (!answer.ok()) {
      run.set_error(absl::StrCat(node.node.name, ": ", answer.status().message()));
      return;
    }
    const v1::UplinkFlows& result = answer->result();
    std::vector<double> per_flow;
    for (const v1::UplinkFlow& flow : result.flows()) per_flow.push_back(flow.gbps());
    SetFlowFigures(run, per_flow, result.aggregate_gbps(), result.seconds(), result.total_bytes());
    run.set_detail(result.detail());
    run.set_ok(true);
  }

  // The sink: a plan node, or a node-agent named by the target.
  NodeState* SinkFor(const plan::UplinkTarget& target) {
    auto& pool = target.node.empty() ? sinks_ : nodes_;
    const std::string& name = target.node.empty() ? target.name : target.node;
    for (NodeState& state : pool) {
      if (state.node.name == name) return &state;
    }
    return nullptr;
  }

  // Agent targets: a tcp peer test, the node sending `flows` streams to the
  // sink, which counts each stream as it receives it.
  void RunToAgent(NodeState& node, const plan::UplinkTarget& target, int flows,
                  v1::UplinkThroughput& run) {
    NodeState* sink = SinkFor(target);
    if (sink == nullptr || !sink->reachable) {
      run.set_error(absl::StrCat("the sink ", target.name, " is unreachable",
                                 sink != nullptr && !sink->error.empty()
                                     ? absl::StrCat(" (", sink->error, ")")
                                     : std::string()));
      return;
    }
    auto spec = [&](const NodeState& side, const char* role) {
      v1::PeerTestSpec spec;
      spec.set_engine("tcp");
      spec.set_test("write_bw");
      spec.set_role(role);
      spec.set_memory("host");
      spec.set_data_ip(side.node.data_ip);
      spec.set_message_bytes(kFlowMessageBytes);
      spec.set_streams(static_cast<uint32_t>(flows));
      spec.set_duration_s(absl::ToDoubleSeconds(Duration()));
      return spec;
    };
    const BrokeredSide server{sink->client.get(), sink->node.name, spec(*sink, "server")};
    const BrokeredSide client{node.client.get(), node.node.name, spec(node, "client")};
    BrokerDeadlines deadlines;
    deadlines.call = plan_.agents.call_timeout;
    deadlines.run = Duration() + kCallSlack;
    BrokeredRun result = RunBrokeredTest(
        server, client,
        absl::StrCat("uplink ", node.node.name, " -> ", target.name, " ", flows, " flow(s)"),
        deadlines);
    if (!result.error.empty()) {
      run.set_error(result.error);
      return;
    }
    const v1::BandwidthStats& received = result.server_result.bandwidth();
    std::vector<double> per_flow(result.server_result.stream_gbps().begin(),
                                 result.server_result.stream_gbps().end());
    SetFlowFigures(run, per_flow, received.avg_gbps(), received.seconds(),
                   received.message_bytes() * received.iterations());
    run.set_detail(result.server_result.detail());
    run.set_ok(true);
  }

  const plan::Plan& plan_;
  std::vector<NodeState>& nodes_;
  std::vector<NodeState>& sinks_;
};

}  // namespace

UplinkOutcome RunUplinkPhase(std::vector<NodeState>& nodes, std::vector<NodeState>& sinks,
                             const plan::Plan& plan, Progress& progress, Clock& clock,
                             const RerunScope* rerun, const RunStop* stop, PhaseJournal* journal) {
  UplinkOutcome outcome;
  auto stopping = [stop] { return stop != nullptr && stop->requested(); };
  *outcome.uplink.mutable_sizing() = uplink::SizeUplink(plan);
  const v1::UplinkSizing& sizing = outcome.uplink.sizing();
  if (!sizing.arithmetic().empty()) {
    progress.Line("uplink", absl::StrCat("sizing: ", sizing.arithmetic(), " against ",
                                         uplink::GbpsText(sizing.capacity_gbps()), ": ",
                                         checks::StatusText(sizing.verdict())));
  }
  // The sinks that are not plan nodes are reached like the nodes (deadline,
  // retries, version), so a dead sink is named once, not as a timeout per run.
  if (!sinks.empty()) RunConnectPhase(sinks, plan.agents, progress, clock);

  UplinkRunner runner(plan, nodes, sinks);
  // A node that is itself an agent target does not send to itself.
  auto sends_to = [](const NodeState& node, const plan::UplinkTarget& target) {
    return !(target.type == "agent" && target.node == node.node.name);
  };
  int total = 0;
  for (const NodeState& node : nodes) {
    for (const plan::UplinkTarget& target : plan.uplink.targets) {
      if (sends_to(node, target)) total += static_cast<int>(plan.uplink.flows.size());
    }
  }
  if (total > 0) progress.StartBar("uplink", total, "runs");
  int done = 0;
  for (NodeState& node : nodes) {
    const bool measure = rerun == nullptr || rerun->Measures(node.node.name);
    for (const plan::UplinkTarget& target : plan.uplink.targets) {
      if (!sends_to(node, target)) continue;
      for (int flows : plan.uplink.flows) {
        ++done;
        if (!measure || stopping()) continue;
        std::optional<v1::UplinkThroughput> run =
            journal != nullptr ? journal->TakeUplinkRun(node.node.name, target.name, flows)
                               : std::nullopt;
        const bool taken = run.has_value();
        if (!taken) {
          run.emplace();
          run->set_node(node.node.name);
          run->set_target(target.name);
          run->set_target_type(target.type);
          run->set_flows(flows);
          run->set_need_gbps(uplink::NodeNeedGbps(plan, sizing, node.node));
          runner.Run(node, target, flows, *run);
          // A run the stop cut short is not a completed one.
          if (journal != nullptr && !stopping()) journal->RecordUplinkRun(*run);
        }
        progress.Advance("uplink", done, total,
                         absl::StrCat(node.node.name, " -> ", target.name, " ", flows, " flow(s): ",
                                      run->ok() ? uplink::GbpsText(run->aggregate_gbps())
                                                : absl::StrCat("failed: ", run->error()),
                                      taken ? " (taken over from the journal)" : ""));
        *outcome.uplink.add_throughput() = std::move(*run);
      }
    }
  }
  if (total > 0) progress.EndBar();
  if (rerun != nullptr && rerun->baseline != nullptr) {
    for (const v1::UplinkThroughput& old : rerun->baseline->uplink().throughput()) {
      if (rerun->Measures(old.node())) continue;
      v1::UplinkThroughput carried = old;
      if (!carried.has_carried()) *carried.mutable_carried() = rerun->carried;
      *outcome.uplink.add_throughput() = std::move(carried);
    }
  }
  outcome.checks = uplink::JudgeUplink(outcome.uplink);
  return outcome;
}

}  // namespace clustercert::controller
