#include "controller/pairwise/phase/pairwise_phase.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/counter_deltas.h"
#include "controller/pairwise/gpu_rail_map.h"
#include "controller/pairwise/localisation.h"
#include "controller/pairwise/pair_measurement.h"
#include "controller/pairwise/pair_verdict.h"
#include "controller/pairwise/phase/matrix_judgement.h"
#include "controller/pairwise/schedule/pair_schedule.h"
#include "controller/phases/peer_broker.h"
#include "controller/phases/sync_call.h"

namespace clustercert::controller {

std::string CudaMemoryFor(const NodeState& node, const std::string& rail) {
  static constexpr const char* kOrder[] = {"PIX", "PXB", "PHB", "NODE", "SYS"};
  auto rank = [](const std::string& relation) {
    for (int i = 0; i < 5; ++i) {
      if (relation == kOrder[i]) return i;
    }
    return 5;
  };
  if (!node.inventory || rail.empty()) return "cuda:0";
  const v1::GpuNicPath* nearest = nullptr;
  for (const auto& path : node.inventory->gpu_nic_paths()) {
    if (path.nic() != rail) continue;
    if (nearest == nullptr || rank(path.relation()) < rank(nearest->relation())) nearest = &path;
  }
  if (nearest == nullptr) return "cuda:0";
  for (const auto& gpu : node.inventory->gpu_runtime().gpus()) {
    if (absl::EqualsIgnoreCase(gpu.pci_bus_id(), nearest->gpu_pci())) {
      return absl::StrCat("cuda:", gpu.index());
    }
  }
  return "cuda:0";
}

namespace {

constexpr absl::Duration kCallSlack = absl::Seconds(10);
constexpr absl::Duration kRunSlack = absl::Seconds(30);
constexpr uint64_t kLatencyMessageBytes = 2;  // perftest's latency default
constexpr uint64_t kLatencyIterations = 1000;
constexpr size_t kMaxRetests = 64;
constexpr absl::Duration kProgressPeriod = absl::Seconds(1);

bool IsBandwidth(const std::string& test) { return IsBandwidthTest(test); }

struct TestItem {
  std::string test;
  std::string memory;      // host | cuda | cuda:N (the client's GPU)
  std::string server_gpu;  // cuda:N on the server; empty: its GPU nearest the rail
};

// The part of one node a pair test touches.
struct Side {
  NodeState* state = nullptr;
  std::string device;  // rail; empty for tcp
  std::string netdev;  // for the counters
  double rate_gbps = 0;
};

const v1::RdmaPort* FirstPort(const NodeState& node, const std::string& rail) {
  if (!node.inventory) return nullptr;
  for (const auto& device : node.inventory->rdma_devices()) {
    if (device.name() == rail && device.ports_size() > 0) return &device.ports(0);
  }
  return nullptr;
}

const v1::Netdev* NetdevWithAddress(const NodeState& node, const std::string& ip) {
  if (!node.inventory || ip.empty()) return nullptr;
  for (const auto& netdev : node.inventory->netdevs()) {
    for (const auto& address : netdev.ipv4()) {
      if (address == ip) return &netdev;
    }
  }
  return nullptr;
}

Side DescribeSide(NodeState& node, const std::string& rail) {
  Side side;
  side.state = &node;
  side.device = rail;
  if (!rail.empty()) {
    if (const v1::RdmaPort* port = FirstPort(node, rail)) {
      side.netdev = port->netdev();
      if (port->has_rate_gbps()) side.rate_gbps = port->rate_gbps();
    }
  } else if (const v1::Netdev* netdev = NetdevWithAddress(node, node.node.data_ip)) {
    side.netdev = netdev->name();
    if (netdev->has_speed_mbps() && netdev->speed_mbps() > 0) {
      side.rate_gbps = netdev->speed_mbps() / 1000.0;
    }
  }
  return side;
}

class PairRunner {
 public:
  PairRunner(const plan::Plan& plan, Progress& progress) : plan_(plan), progress_(progress) {}

  v1::PairResult Run(Side client, Side server, const TestItem& item, int round,
                     const std::string& label_prefix) {
    v1::PairResult result;
    result.set_test(item.test);
    result.set_engine(plan_.pairwise.engine == plan::PairwiseEngine::kVerbs ? "verbs" : "tcp");
    result.set_memory(item.memory);
    if (item.memory != "host") {
      result.set_gpu(MemoryFor(client, item, "client"));
      result.set_server_gpu(MemoryFor(server, item, "server"));
    }
    result.set_client(client.state->node.name);
    result.set_server(server.state->node.name);
    result.set_rail(client.device);
    result.set_round(round);
    result.set_unit(IsBandwidth(item.test) ? "Gb/s" : "us");

    std::string error = Execute(client, server, item, label_prefix, result);
    result.set_ok(error.empty());
    result.set_error(error);
    if (error.empty()) {
      if (IsBandwidth(item.test) && plan_.pairwise.bidirectional) {
        // Both directions at once: the sum, as perftest -b reports.
        result.set_value(result.server_result().bandwidth().avg_gbps() +
                         result.client_result().bandwidth().avg_gbps());
      } else if (IsBandwidth(item.test)) {
        const double received = result.server_result().bandwidth().avg_gbps();
        result.set_value(received > 0 ? received : result.client_result().bandwidth().avg_gbps());
      } else {
        result.set_value(result.client_result().latency().typical_us());
      }
    }
    return result;
  }

 private:
  static std::string MemoryFor(const Side& side, const TestItem& item, const std::string& role) {
    if (!absl::StartsWith(item.memory, "cuda")) return "host";
    if (role == "server" && !item.server_gpu.empty()) return item.server_gpu;
    if (role == "client" && item.memory != "cuda") return item.memory;
    return CudaMemoryFor(*side.state, side.device);
  }

  v1::PeerTestSpec Spec(const Side& side, const TestItem& item, const char* role) const {
    v1::PeerTestSpec spec;
    spec.set_engine(plan_.pairwise.engine == plan::PairwiseEngine::kVerbs ? "verbs" : "tcp");
    spec.set_test(item.test);
    spec.set_role(role);
    spec.set_device(side.device);
    spec.set_port(1);
    spec.set_gid_index(plan_.fabric.roce.gid_index);
    spec.set_memory(MemoryFor(side, item, role));
    spec.set_data_ip(side.state->node.data_ip);
    spec.set_queue_depth(128);
    spec.set_streams(1);
    spec.set_no_progress_s(absl::ToDoubleSeconds(plan_.pairwise.no_progress));
    if (IsBandwidth(item.test)) {
      spec.set_streams(static_cast<uint32_t>(plan_.pairwise.streams));
      spec.set_bidirectional(plan_.pairwise.bidirectional);
      spec.set_message_bytes(plan_.pairwise.message_bytes);
      spec.set_duration_s(absl::ToDoubleSeconds(plan_.pairwise.duration));
    } else {
      spec.set_message_bytes(kLatencyMessageBytes);
      spec.set_iterations(kLatencyIterations);
    }
    return spec;
  }

  // Bandwidth tests run for pairwise.duration_s; latency tests run kLatencyIterations
  // ping-pongs, which at the plan's worst allowed latency take iterations x
  // 2 x max_latency_us (120 s in the soft-RoCE lab), so their deadline grows
  // with that rather than failing a slow but passing path.
  absl::Duration RunTimeout(const std::string& test) const {
    absl::Duration run = plan_.pairwise.duration;
    if (!IsBandwidth(test)) {
      run = std::max(run, absl::Microseconds(plan_.pairwise.max_latency_us) * 2 *
                              static_cast<double>(kLatencyIterations));
    }
    return run + kRunSlack;
  }

  void ReadCounters(const Side& side, v1::PortCounters* out) {
    v1::ReadPortCountersRequest request;
    request.set_device(side.device);
    request.set_port(side.device.empty() ? 0 : 1);
    request.set_netdev(side.netdev);
    auto answer = CallAndWait<v1::ReadPortCountersResponse>([&](auto done) {
      side.state->client->ReadPortCounters(request, kCallSlack, std::move(done));
    });
    if (answer.ok()) *out = answer->counters();
  }

  // Returns "" on success, else why the test did not complete.
  // `label` ("round 2/3 ", "retest ") starts the live progress lines.
  std::string Execute(const Side& client, const Side& server, const TestItem& item,
                      const std::string& label, v1::PairResult& result) {
    for (const Side* side : {&client, &server}) {
      const plan::Node& node = side->state->node;
      if (!side->state->reachable) return absl::StrCat(node.name, " is unreachable");
      if (result.engine() == "tcp" && node.data_ip.empty()) {
        return absl::StrCat(node.name,
                            " has no data_ip in the plan: the tcp engine runs over the data plane");
      }
    }
    std::string test_id = absl::StrCat(result.client(), " -> ", result.server());
    if (!result.rail().empty()) absl::StrAppend(&test_id, " ", result.rail());
    absl::StrAppend(&test_id, " ", item.test, " ", item.memory);

    v1::PortCounters client_before, server_before, client_after, server_after;
    ReadCounters(client, &client_before);
    ReadCounters(server, &server_before);

    const BrokeredSide server_side{server.state->client.get(), server.state->node.name,
                                   Spec(server, item, "server")};
    const BrokeredSide client_side{client.state->client.get(), client.state->node.name,
                                   Spec(client, item, "client")};
    // Live progress of bandwidth tests, once a second, from the side whose
    // completions count the data (see ProgressFromClient).
    auto show_progress = [&](const std::string& client_id, const std::string& server_id,
                             Completion& first_done) {
      const bool from_client = ProgressFromClient(plan_.pairwise.engine, item.test);
      const Side& counting = from_client ? client : server;
      const std::string& counting_id = from_client ? client_id : server_id;
      uint64_t last_bytes = 0;
      double last_seconds = 0;
      while (!first_done.WaitFor(kProgressPeriod)) {
        if (!IsBandwidth(item.test)) continue;
        v1::GetEndpointProgressRequest request;
        request.set_endpoint_id(counting_id);
        auto answer = CallAndWait<v1::GetEndpointProgressResponse>([&](auto done) {
          counting.state->client->GetEndpointProgress(request, kProgressPeriod, std::move(done));
        });
        if (!answer.ok() || !answer->progress().running()) continue;
        const auto& now = answer->progress();
        const double seconds = now.seconds() - last_seconds;
        if (seconds > 0 && now.bytes() >= last_bytes) {
          progress_.Line(
              "pairwise",
              absl::StrCat(label, test_id, ": ",
                           absl::StrFormat("%.2f", (now.bytes() - last_bytes) * 8 / seconds / 1e9),
                           " Gb/s now (", absl::StrFormat("%.0f", now.seconds()), " s)"));
        }
        last_bytes = now.bytes();
        last_seconds = now.seconds();
      }
    };
    BrokeredRun run =
        RunBrokeredTest(server_side, client_side, test_id, RunTimeout(item.test), show_progress);
    if (run.has_client_result) *result.mutable_client_result() = run.client_result;
    if (run.has_server_result) *result.mutable_server_result() = run.server_result;
    const std::string error = run.error;

    ReadCounters(client, &client_after);
    ReadCounters(server, &server_after);
    RecordCounters(client, client_before, client_after, result.mutable_client_counters(), result);
    RecordCounters(server, server_before, server_after, result.mutable_server_counters(), result);
    return error;
  }

  // Keeps the deltas that moved and turns the worrying ones into sentences.
  void RecordCounters(const Side& side, const v1::PortCounters& before,
                      const v1::PortCounters& after,
                      google::protobuf::RepeatedPtrField<v1::CounterDelta>* out,
                      v1::PairResult& result) {
    std::vector<v1::CounterDelta> moved;
    for (auto& delta : counters::DiffCounters(before, after)) {
      if (delta.delta() != 0 || !delta.note().empty()) moved.push_back(delta);
    }
    counters::ConcernContext context;
    context.device = side.device;
    context.port = side.device.empty() ? 0 : 1;
    context.rdma_priority =
        plan_.fabric.type == plan::FabricType::kRoce ? plan_.fabric.roce.pfc_priority : -1;
    for (const auto& concern : counters::CounterConcerns(moved, context)) {
      result.add_counter_concerns(absl::StrCat(side.state->node.name, " ", concern));
    }
    for (auto& delta : moved) *out->Add() = std::move(delta);
  }

  const plan::Plan& plan_;
  Progress& progress_;
};

std::string CellLine(const v1::PairResult& pair) {
  std::string where = absl::StrCat(pair.client(), " -> ", pair.server());
  if (!pair.rail().empty()) absl::StrAppend(&where, " ", pair.rail());
  absl::StrAppend(&where, " ", pair.test(), " ", pair.memory());
  if (!pair.ok()) return absl::StrCat(where, ": error: ", pair.error());
  return absl::StrCat(where, ": ", absl::StrFormat("%.2f", pair.value()), " ", pair.unit(), " (",
                      pair.verdict().status(), ")");
}

// The cells one pair runs on one rail: each host item as it is; a cuda item
// once per GPU of the client that is nearest this rail (pairwise.cuda_gpus
// bounds them), each against the server's GPU in the same position on its
// rail. Without a GPU map (no inventory GPUs) a cuda item stays one cell on
// the GPU nearest the rail.
std::vector<TestItem> CellsOnRail(const std::vector<TestItem>& items,
                                  const std::vector<v1::GpuRail>& client_map,
                                  const std::string& client_rail,
                                  const std::vector<v1::GpuRail>& server_map,
                                  const std::string& server_rail) {
  std::vector<TestItem> cells;
  const std::vector<std::string> client_gpus = pairwise::GpusOnRail(client_map, client_rail);
  const std::vector<std::string> server_gpus = pairwise::GpusOnRail(server_map, server_rail);
  for (const TestItem& item : items) {
    if (item.memory != "cuda" || client_map.empty()) {
      cells.push_back(item);
      continue;
    }
    for (size_t k = 0; k < client_gpus.size(); ++k) {
      cells.push_back({item.test, client_gpus[k],
                       server_gpus.empty() ? std::string() : server_gpus[k % server_gpus.size()]});
    }
  }
  return cells;
}

}  // namespace

bool ProgressFromClient(plan::PairwiseEngine engine, const std::string& test) {
  return engine == plan::PairwiseEngine::kVerbs &&
         (absl::StartsWith(test, "write_") || absl::StartsWith(test, "read_"));
}

namespace {

// The schedule's rounds; in a partial re-certification only the cells with a
// re-measured node at either end.
absl::StatusOr<std::vector<schedule::Round>> ScheduleRounds(const plan::Plan& plan,
                                                            const std::vector<NodeState>& nodes,
                                                            const RerunScope* rerun) {
  auto rounds = schedule::BuildSchedule(plan);
  if (!rounds.ok() || rerun == nullptr) return rounds;
  std::vector<schedule::Round> kept;
  for (auto& round : *rounds) {
    std::vector<schedule::PairTest> tests;
    for (const auto& test : round.tests) {
      if (rerun->Measures(nodes[test.client].node.name) ||
          rerun->Measures(nodes[test.server].node.name)) {
        tests.push_back(test);
      }
    }
    if (!tests.empty()) kept.push_back({std::move(tests), round.idle});
  }
  return kept;
}

// What a pair of nodes runs on a rail (the plan's tests x memories; cuda
// cells per GPU nearest the rail), each end as a Side, and the line rate a
// pair is judged against (the slower end's port, else the plan's rate).
class CellPlanner {
 public:
  CellPlanner(const plan::Plan& plan, std::vector<NodeState>& nodes)
      : plan_(plan), nodes_(nodes), tcp_(plan.pairwise.engine == plan::PairwiseEngine::kTcp) {
    for (const auto& memory : plan.pairwise.memory) {
      for (const auto& test : plan.pairwise.tests) items_.push_back({test, memory});
    }
    gpu_maps_.resize(nodes.size());
    for (size_t i = 0; i < nodes.size() && !tcp_; ++i) {
      if (nodes[i].inventory) {
        gpu_maps_[i] = pairwise::MapGpusToRails(*nodes[i].inventory, nodes[i].node.rails,
                                                plan.pairwise.cuda_gpus);
      }
    }
  }

  bool tcp() const { return tcp_; }

  std::vector<TestItem> Cells(int client, int server, int rail) const {
    if (tcp_ || rail < 0) return items_;
    return CellsOnRail(items_, gpu_maps_[client], RailName(client, rail), gpu_maps_[server],
                       RailName(server, rail));
  }

  Side SideOf(int node, int rail) const {
    return DescribeSide(nodes_[node], (tcp_ || rail < 0) ? std::string() : RailName(node, rail));
  }

  double LineRate(const Side& a, const Side& b) const {
    double rate = plan_.fabric.link_rate_gbps;
    for (const Side* side : {&a, &b}) {
      if (side->rate_gbps > 0) rate = rate > 0 ? std::min(rate, side->rate_gbps) : side->rate_gbps;
    }
    return rate;
  }

 private:
  const std::string& RailName(int node, int rail) const {
    return nodes_[node].node.rails[static_cast<size_t>(rail)];
  }

  const plan::Plan& plan_;
  std::vector<NodeState>& nodes_;
  const bool tcp_;
  std::vector<TestItem> items_;
  std::vector<std::vector<v1::GpuRail>> gpu_maps_;
};

// Runs one cell and judges it; a retest carries the cell it retests in
// `retest_of` before the judgement, whose key names it.
v1::PairResult RunCell(PairRunner& runner, const plan::Plan& plan, const Side& client,
                       const Side& server, double rate, const TestItem& item, int round,
                       const std::string& label, const std::string& retest_of = "") {
  v1::PairResult pair = runner.Run(client, server, item, round, label);
  if (!retest_of.empty()) pair.set_retest_of(retest_of);
  pair.set_line_rate_gbps(rate);
  *pair.mutable_verdict() = JudgeCell(plan, pair);
  return pair;
}

// Runs the rounds in order, every pair of a round on its own thread and its
// cells in order, until done or stopped; appends the cells to `pairs`.
void RunRounds(const std::vector<schedule::Round>& rounds, const CellPlanner& cells,
               PairRunner& runner, const plan::Plan& plan, Progress& progress,
               const std::function<bool()>& stopping, std::vector<v1::PairResult>& pairs) {
  int total_cells = 0;
  for (const auto& round : rounds) {
    for (const auto& test : round.tests) {
      total_cells += static_cast<int>(cells.Cells(test.client, test.server, test.rail).size());
    }
  }
  std::atomic<int> finished_cells{0};
  if (total_cells > 0) progress.StartBar("pairwise", total_cells, "cells");
  for (size_t r = 0; r < rounds.size() && !stopping(); ++r) {
    const auto& round = rounds[r];
    const std::string label = absl::StrCat("round ", r + 1, "/", rounds.size(), " ");
    progress.Line("pairwise", absl::StrCat("round ", r + 1, "/", rounds.size(), ": ",
                                           round.tests.size(), " pair(s) at once"));
    std::vector<std::vector<v1::PairResult>> per_pair(round.tests.size());
    std::vector<std::thread> threads;
    for (size_t p = 0; p < round.tests.size(); ++p) {
      threads.emplace_back([&, p] {
        const schedule::PairTest& test = round.tests[p];
        const Side client = cells.SideOf(test.client, test.rail);
        const Side server = cells.SideOf(test.server, test.rail);
        const double rate = cells.LineRate(client, server);
        for (const auto& item : cells.Cells(test.client, test.server, test.rail)) {
          if (stopping()) break;
          v1::PairResult pair =
              RunCell(runner, plan, client, server, rate, item, static_cast<int>(r + 1), label);
          progress.Line("pairwise", label + CellLine(pair));
          progress.Advance("pairwise", ++finished_cells, total_cells,
                           absl::StrCat(pair.client(), "->", pair.server(), " ", pair.test()));
          per_pair[p].push_back(std::move(pair));
        }
      });
    }
    for (auto& thread : threads) thread.join();
    for (auto& cells_of_pair : per_pair) {
      for (auto& pair : cells_of_pair) pairs.push_back(std::move(pair));
    }
  }
  progress.EndBar();
}

// The nodes a failing cell's ends are retested against: reachable, still
// answering, more than half of their judged cells passed; best pass
// fraction first.
std::vector<int> RetestPartners(const std::vector<NodeState>& nodes,
                                const std::vector<v1::PairResult>& pairs) {
  std::map<std::string, std::pair<int, int>> record;  // node -> (passed, judged)
  for (const auto& pair : pairs) {
    const auto status = pair.verdict().status();
    if (status == v1::Finding::skipped || status == v1::Finding::unknown) continue;
    for (const std::string& end : {pair.client(), pair.server()}) {
      record[end].second += 1;
      record[end].first += status == v1::Finding::pass ? 1 : 0;
    }
  }
  std::vector<int> partners;
  for (size_t i = 0; i < nodes.size(); ++i) {
    auto it = record.find(nodes[i].node.name);
    if (nodes[i].reachable && nodes[i].Answering() && it != record.end() &&
        2 * it->second.first > it->second.second) {
      partners.push_back(static_cast<int>(i));
    }
  }
  std::sort(partners.begin(), partners.end(), [&](int a, int b) {
    const auto& ra = record[nodes[a].node.name];
    const auto& rb = record[nodes[b].node.name];
    return ra.first * rb.second > rb.first * ra.second;  // best pass fraction first
  });
  return partners;
}

// One retest to run: a failing cell's end against a partner, on a rail.
struct Retest {
  int node = -1;
  int partner = -1;
  int rail = -1;  // -1 for tcp
};

// The retest of `end` of `original`, if one can run: the end answers, it
// has the cell's rail, and a partner (not the cell's other end) has it too.
std::optional<Retest> PlanRetest(const std::vector<NodeState>& nodes, bool tcp,
                                 const std::vector<int>& partners, int node,
                                 const v1::PairResult& original) {
  if (!nodes[node].reachable || !nodes[node].Answering()) return std::nullopt;
  Retest retest{node, -1, -1};
  if (!tcp) {
    const auto& rails = nodes[node].node.rails;
    for (size_t k = 0; k < rails.size(); ++k) {
      if (rails[k] == original.rail()) retest.rail = static_cast<int>(k);
    }
    if (retest.rail < 0) return std::nullopt;
  }
  for (int candidate : partners) {
    const std::string& name = nodes[candidate].node.name;
    if (name == original.client() || name == original.server()) continue;
    if (!tcp && static_cast<size_t>(retest.rail) >= nodes[candidate].node.rails.size()) continue;
    retest.partner = candidate;
    return retest;
  }
  return std::nullopt;
}

// Retests each end of a failing cell once against the partner with the best
// pass record: a bad endpoint fails again, a bad link passes. Appends the
// retests (retest_of set) to `pairs`.
void RunRetests(const std::vector<NodeState>& nodes, const CellPlanner& cells, PairRunner& runner,
                const plan::Plan& plan, Progress& progress, const std::function<bool()>& stopping,
                std::vector<v1::PairResult>& pairs) {
  const std::vector<int> partners = RetestPartners(nodes, pairs);
  std::map<std::string, int> index_of;
  for (size_t i = 0; i < nodes.size(); ++i) index_of[nodes[i].node.name] = static_cast<int>(i);
  std::set<std::string> retested;  // end, rail, test, memory
  const size_t main_cells = pairs.size();
  for (size_t c = 0; c < main_cells && retested.size() < kMaxRetests && !stopping(); ++c) {
    const v1::PairResult original = pairs[c];
    if (!CellFails(original.verdict())) continue;
    for (const std::string& end : {original.client(), original.server()}) {
      const std::string key =
          absl::StrCat(end, "|", original.rail(), "|", original.test(), "|", original.memory());
      if (retested.count(key)) continue;
      const std::optional<Retest> retest =
          PlanRetest(nodes, cells.tcp(), partners, index_of[end], original);
      if (!retest.has_value()) continue;
      retested.insert(key);
      const Side client = cells.SideOf(retest->node, retest->rail);
      const Side server = cells.SideOf(retest->partner, retest->rail);
      // A cuda cell is retested with the same GPU against the partner's GPU
      // nearest the rail.
      v1::PairResult pair = RunCell(runner, plan, client, server, cells.LineRate(client, server),
                                    {original.test(), original.memory(), ""}, 0, "retest ",
                                    absl::StrCat(original.client(), "->", original.server()));
      progress.Line("pairwise", absl::StrCat("retest ", CellLine(pair)));
      pairs.push_back(std::move(pair));
    }
  }
}

// A partial re-certification keeps the baseline's cells between nodes it
// does not measure again, marked carried.
void CarryBaselineCells(const RerunScope* rerun, std::vector<v1::PairResult>& pairs) {
  if (rerun == nullptr || rerun->baseline == nullptr) return;
  for (const v1::PairResult& old : rerun->baseline->pairs()) {
    if (!old.retest_of().empty() || rerun->Measures(old.client()) ||
        rerun->Measures(old.server())) {
      continue;
    }
    v1::PairResult carried = old;
    *carried.mutable_carried() = rerun->carried;
    pairs.push_back(std::move(carried));
  }
}

}  // namespace

PairwiseOutcome RunPairwisePhase(std::vector<NodeState>& nodes, const plan::Plan& plan,
                                 const std::vector<v1::Finding>& inventory_checks,
                                 Progress& progress, const RerunScope* rerun, const RunStop* stop) {
  PairwiseOutcome outcome;
  const std::function<bool()> stopping = [stop] { return stop != nullptr && stop->requested(); };
  auto rounds = ScheduleRounds(plan, nodes, rerun);
  if (!rounds.ok()) {
    progress.Line("pairwise", absl::StrCat("cannot schedule: ", rounds.status().message()));
    return outcome;
  }
  outcome.rounds = static_cast<int>(rounds->size());
  const CellPlanner cells(plan, nodes);
  PairRunner runner(plan, progress);
  RunRounds(*rounds, cells, runner, plan, progress, stopping, outcome.pairs);
  RunRetests(nodes, cells, runner, plan, progress, stopping, outcome.pairs);
  CarryBaselineCells(rerun, outcome.pairs);

  MatrixJudgement judgement = JudgeMatrix(plan, outcome.pairs, inventory_checks);
  outcome.checks = std::move(judgement.checks);
  outcome.failing = judgement.failing;
  for (auto& suspect : judgement.suspects) {
    progress.Line("pairwise", absl::StrCat("suspect: ", suspect.node(),
                                           suspect.rail().empty() ? "" : "/" + suspect.rail(), ": ",
                                           suspect.reason()));
    outcome.suspects.push_back(std::move(suspect));
  }
  return outcome;
}

}  // namespace clustercert::controller
