// Times GetInventory round trips against a running node-agent.
//   get_inventory_bench --agent 127.0.0.1:PORT [benchmark flags]
// Reports the round trip (controller view) and, as a counter, the agent's
// own collection time from Inventory.collect_micros.
#include <cstring>
#include <string>

#include "absl/synchronization/notification.h"
#include "benchmark/benchmark.h"
#include "controller/client/grpc_agent_client.h"

namespace {

std::string g_agent = "127.0.0.1:17071";

void BM_GetInventory(benchmark::State& state) {
  clustercert::controller::plan::AgentSettings settings;
  settings.insecure = true;
  auto factory = clustercert::controller::GrpcAgentClientFactory::Create(settings);
  auto client = factory->Connect(g_agent);
  double collect_us_total = 0;
  for (auto _ : state) {
    absl::Notification done;
    bool ok = false;
    client->GetInventory({}, absl::Seconds(10),
                         [&](absl::StatusOr<clustercert::v1::GetInventoryResponse> r,
                             clustercert::controller::CallTiming) {
                           ok = r.ok();
                           if (ok) collect_us_total += r->inventory().collect_micros();
                           done.Notify();
                         });
    done.WaitForNotification();
    if (!ok) {
      state.SkipWithError("GetInventory failed: is the agent running at --agent?");
      break;
    }
  }
  state.counters["agent_collect_us"] =
      benchmark::Counter(collect_us_total, benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_GetInventory)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--agent") == 0) {
      g_agent = argv[i + 1];
      for (int j = i; j + 2 <= argc; ++j) argv[j] = argv[j + 2];
      argc -= 2;
      break;
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
