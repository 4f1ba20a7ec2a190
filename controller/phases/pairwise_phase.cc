#include "controller/phases/pairwise_phase.h"

#include <algorithm>
#include <atomic>
#include <map>
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
#include "controller/phases/matrix_judgement.h"
#include "controller/phases/peer_broker.h"
#include "controller/phases/sync_call.h"
#include "controller/schedule/pair_schedule.h"

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
    if (IsBandwidth(item.test)) {
      spec.set_streams(static_cast<uint32_t>(plan_.pairwise.streams));
      spec.set_bidirectional(plan_.pairwise.bidirectional);
      spec.set_message_bytes(plan_.pairwise.message_bytes);
      spec.set_duration_s(plan_.pairwise.duration_s);
    } else {
      spec.set_message_bytes(kLatencyMessageBytes);
      spec.set_iterations(kLatencyIterations);
    }
    return spec;
  }

  // Bandwidth tests run for duration_s; latency tests run kLatencyIterations
  // ping-pongs, which at the plan's worst allowed latency take iterations x
  // 2 x max_latency_us (40 s in the soft-RoCE lab), so their deadline grows
  // with that rather than failing a slow but passing path.
  absl::Duration RunTimeout(const std::string& test) const {
    absl::Duration run = absl::Seconds(plan_.pairwise.duration_s);
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
                             absl::Notification& client_done) {
      const bool from_client = ProgressFromClient(plan_.pairwise.engine, item.test);
      const Side& counting = from_client ? client : server;
      const std::string& counting_id = from_client ? client_id : server_id;
      uint64_t last_bytes = 0;
      double last_seconds = 0;
      while (!client_done.WaitForNotificationWithTimeout(kProgressPeriod)) {
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

PairwiseOutcome RunPairwisePhase(std::vector<NodeState>& nodes, const plan::Plan& plan,
                                 const std::vector<v1::Finding>& inventory_checks,
                                 Progress& progress, const RerunScope* rerun) {
  PairwiseOutcome outcome;
  auto rounds = schedule::BuildSchedule(plan);
  if (!rounds.ok()) {
    progress.Line("pairwise", absl::StrCat("cannot schedule: ", rounds.status().message()));
    return outcome;
  }
  if (rerun != nullptr) {
    // Only the cells with a re-measured node at either end run again.
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
    *rounds = std::move(kept);
  }
  outcome.rounds = static_cast<int>(rounds->size());
  const bool tcp = plan.pairwise.engine == plan::PairwiseEngine::kTcp;
  std::vector<TestItem> items;
  for (const auto& memory : plan.pairwise.memory) {
    for (const auto& test : plan.pairwise.tests) items.push_back({test, memory});
  }

  PairRunner runner(plan, progress);
  std::vector<std::vector<v1::GpuRail>> gpu_maps(nodes.size());
  for (size_t i = 0; i < nodes.size() && !tcp; ++i) {
    if (nodes[i].inventory) {
      gpu_maps[i] = pairwise::MapGpusToRails(*nodes[i].inventory, nodes[i].node.rails,
                                             plan.pairwise.cuda_gpus);
    }
  }
  auto cells_of = [&](int client, int server, int rail) {
    if (tcp || rail < 0) return items;
    return CellsOnRail(items, gpu_maps[client], nodes[client].node.rails[static_cast<size_t>(rail)],
                       gpu_maps[server], nodes[server].node.rails[static_cast<size_t>(rail)]);
  };
  auto side_of = [&](int node, int rail) {
    const std::string name =
        (tcp || rail < 0) ? std::string() : nodes[node].node.rails[static_cast<size_t>(rail)];
    return DescribeSide(nodes[node], name);
  };
  auto line_rate = [&](const Side& a, const Side& b) {
    double rate = plan.fabric.link_rate_gbps;
    for (const Side* side : {&a, &b}) {
      if (side->rate_gbps > 0) rate = rate > 0 ? std::min(rate, side->rate_gbps) : side->rate_gbps;
    }
    return rate;
  };

  int total_cells = 0;
  for (const auto& round : *rounds) {
    for (const auto& test : round.tests) {
      total_cells += static_cast<int>(cells_of(test.client, test.server, test.rail).size());
    }
  }
  std::atomic<int> finished_cells{0};
  if (total_cells > 0) progress.StartBar("pairwise", total_cells, "cells");

  // Every pair of a round runs on its own thread; its tests run in order.
  for (size_t r = 0; r < rounds->size(); ++r) {
    const auto& round = (*rounds)[r];
    progress.Line("pairwise", absl::StrCat("round ", r + 1, "/", rounds->size(), ": ",
                                           round.tests.size(), " pair(s) at once"));
    std::vector<std::vector<v1::PairResult>> per_pair(round.tests.size());
    std::vector<double> rates(round.tests.size());
    std::vector<std::thread> threads;
    for (size_t p = 0; p < round.tests.size(); ++p) {
      threads.emplace_back([&, p] {
        const schedule::PairTest& test = round.tests[p];
        Side client = side_of(test.client, test.rail);
        Side server = side_of(test.server, test.rail);
        rates[p] = line_rate(client, server);
        for (const auto& item : cells_of(test.client, test.server, test.rail)) {
          v1::PairResult pair = runner.Run(client, server, item, static_cast<int>(r + 1),
                                           absl::StrCat("round ", r + 1, "/", rounds->size(), " "));
          pair.set_line_rate_gbps(rates[p]);
          *pair.mutable_verdict() = JudgeCell(plan, pair);
          progress.Line("pairwise",
                        absl::StrCat("round ", r + 1, "/", rounds->size(), " ", CellLine(pair)));
          progress.Advance("pairwise", ++finished_cells, total_cells,
                           absl::StrCat(pair.client(), "->", pair.server(), " ", pair.test()));
          per_pair[p].push_back(std::move(pair));
        }
      });
    }
    for (auto& thread : threads) thread.join();
    for (size_t p = 0; p < per_pair.size(); ++p) {
      for (auto& pair : per_pair[p]) {
        outcome.pairs.push_back(std::move(pair));
      }
    }
  }

  progress.EndBar();

  // Retest each end of a failing cell once against the partner with the best
  // pass record (more than half its cells passed): a bad endpoint fails
  // again, a bad link passes.
  std::map<std::string, std::pair<int, int>> record;  // node -> (passed, judged)
  for (const auto& pair : outcome.pairs) {
    const std::string& status = pair.verdict().status();
    if (status == "skipped" || status == "unknown") continue;
    for (const std::string& end : {pair.client(), pair.server()}) {
      record[end].second += 1;
      record[end].first += status == "pass" ? 1 : 0;
    }
  }
  std::vector<int> partners;
  for (size_t i = 0; i < nodes.size(); ++i) {
    auto it = record.find(nodes[i].node.name);
    if (nodes[i].reachable && it != record.end() && 2 * it->second.first > it->second.second) {
      partners.push_back(static_cast<int>(i));
    }
  }
  std::sort(partners.begin(), partners.end(), [&](int a, int b) {
    const auto& ra = record[nodes[a].node.name];
    const auto& rb = record[nodes[b].node.name];
    return ra.first * rb.second > rb.first * ra.second;  // best pass fraction first
  });
  std::map<std::string, int> index_of;
  for (size_t i = 0; i < nodes.size(); ++i) index_of[nodes[i].node.name] = static_cast<int>(i);
  std::set<std::string> retested;  // end, rail, test, memory
  const size_t main_cells = outcome.pairs.size();
  for (size_t c = 0; c < main_cells && retested.size() < kMaxRetests; ++c) {
    const v1::PairResult original = outcome.pairs[c];
    if (!CellFails(original.verdict())) continue;
    for (const std::string& end : {original.client(), original.server()}) {
      const int node = index_of[end];
      const std::string key =
          absl::StrCat(end, "|", original.rail(), "|", original.test(), "|", original.memory());
      if (!nodes[node].reachable || retested.count(key)) continue;
      int rail = -1;
      if (!tcp) {
        const auto& rails = nodes[node].node.rails;
        for (size_t k = 0; k < rails.size(); ++k) {
          if (rails[k] == original.rail()) rail = static_cast<int>(k);
        }
        if (rail < 0) continue;
      }
      int partner = -1;
      for (int candidate : partners) {
        const std::string& name = nodes[candidate].node.name;
        if (name == original.client() || name == original.server()) continue;
        if (!tcp && static_cast<size_t>(rail) >= nodes[candidate].node.rails.size()) continue;
        partner = candidate;
        break;
      }
      if (partner < 0) continue;
      retested.insert(key);
      Side client = side_of(node, rail);
      Side server = side_of(partner, rail);
      const double rate = line_rate(client, server);
      // A cuda cell is retested with the same GPU against the partner's GPU
      // nearest the rail.
      v1::PairResult pair =
          runner.Run(client, server, {original.test(), original.memory(), ""}, 0, "retest ");
      pair.set_retest_of(absl::StrCat(original.client(), "->", original.server()));
      pair.set_line_rate_gbps(rate);
      *pair.mutable_verdict() = JudgeCell(plan, pair);
      progress.Line("pairwise", absl::StrCat("retest ", CellLine(pair)));
      outcome.pairs.push_back(std::move(pair));
    }
  }

  if (rerun != nullptr && rerun->baseline != nullptr) {
    for (const v1::PairResult& old : rerun->baseline->pairs()) {
      if (!old.retest_of().empty() || rerun->Measures(old.client()) ||
          rerun->Measures(old.server())) {
        continue;
      }
      v1::PairResult carried = old;
      *carried.mutable_carried() = rerun->carried;
      outcome.pairs.push_back(std::move(carried));
    }
  }
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
