// The controller's own scheduling overhead per pairwise round at cluster
// scale (issue 17's target: <= 5 % of the test time), without agents that
// compete with it for the CPU: N fake agents answer every call at once,
// except RunEndpoint, which answers `duration` after it was called, from one
// timer thread (as a real agent answers when its test ends). The real
// pairwise phase runs over them (schedule, CallLoop, brokering, counters,
// progress polls, judgement), so what a round takes beyond `duration` is the
// controller's: prepare, connect and close round trips, the per-cell work,
// and the wait from a round's last cell to the next round's first.
//
// bench/scale.sh measures the same phase with real agents on loopback; on a
// 2-core machine with 1,024 of them there, each cell waits for CPU the
// agents need, which this bench leaves out.
//
// Usage: pairwise_scheduling_bench [N ...]   (default 64 256 1024)
//   SCHED_DURATION_S=1   the test duration (default 1 s)
#include <sys/resource.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "controller/pairwise/phase/pairwise_phase.h"
#include "tests/support/fake_agent_client.h"

namespace clustercert::controller {
namespace {

// Runs each posted callback at its time, on one thread.
class TimerThread {
 public:
  TimerThread() : thread_([this] { Loop(); }) {}
  ~TimerThread() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  void At(absl::Time when, std::function<void()> fire) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      due_.emplace(when, std::move(fire));
    }
    wake_.notify_all();
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_) {
      if (due_.empty()) {
        wake_.wait(lock);
        continue;
      }
      const absl::Time next = due_.begin()->first;
      if (absl::Now() < next) {
        wake_.wait_for(lock, absl::ToChronoNanoseconds(next - absl::Now()));
        continue;
      }
      std::function<void()> fire = std::move(due_.begin()->second);
      due_.erase(due_.begin());
      lock.unlock();
      fire();
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::multimap<absl::Time, std::function<void()>> due_;
  bool stopping_ = false;
  std::thread thread_;
};

// An agent that costs nothing: 9 Gb/s on a 10 Gb/s line, a test that lasts
// `duration` from its RunEndpoint call.
class InstantAgent final : public testing::FakeAgentClient {
 public:
  InstantAgent(std::string node, absl::Duration duration, TimerThread& timers)
      : node_(std::move(node)), duration_(duration), timers_(timers) {}

  void PrepareEndpoint(const v1::PrepareEndpointRequest& request, absl::Duration,
                       AgentCallback<v1::PrepareEndpointResponse> done) override {
    v1::PrepareEndpointResponse response;
    response.set_endpoint_id(request.spec().role() + "@" + node_);
    response.mutable_info()->set_address(node_);
    done(response, {});
  }
  void RunEndpoint(const v1::RunEndpointRequest&, absl::Duration,
                   AgentCallback<v1::RunEndpointResponse> done) override {
    v1::RunEndpointResponse response;
    auto* bandwidth = response.mutable_result()->mutable_bandwidth();
    bandwidth->set_avg_gbps(9.0);
    bandwidth->set_seconds(absl::ToDoubleSeconds(duration_));
    timers_.At(absl::Now() + duration_,
               [done = std::move(done), response]() mutable { done(response, {}); });
  }

 private:
  std::string node_;
  absl::Duration duration_;
  TimerThread& timers_;
};

plan::Plan BenchPlan(int n, plan::PairwisePattern pattern, absl::Duration duration) {
  plan::Plan plan;
  plan.cluster = "scheduling-bench";
  plan.fabric.type = plan::FabricType::kEthernet;
  plan.fabric.link_rate_gbps = 10;
  plan.pairwise.enabled = true;
  plan.pairwise.engine = plan::PairwiseEngine::kTcp;
  plan.pairwise.pattern = pattern;
  plan.pairwise.k = 2;
  plan.pairwise.tests = {"write_bw"};
  plan.pairwise.memory = {"host"};
  plan.pairwise.duration = duration;
  plan.pairwise.min_fraction_of_line_rate = 0.8;
  for (int i = 1; i <= n; ++i) {
    plan::Node node;
    node.name = "n" + std::to_string(i);
    node.agent = "127.0.0.1:" + std::to_string(20000 + i);
    node.data_ip = "10." + std::to_string(i / 65536) + "." + std::to_string(i / 256 % 256) + "." +
                   std::to_string(i % 256);
    plan.nodes.push_back(node);
  }
  return plan;
}

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

void RunOne(int n, plan::PairwisePattern pattern, absl::Duration duration) {
  TimerThread timers;
  const plan::Plan plan = BenchPlan(n, pattern, duration);
  std::vector<NodeState> nodes;
  for (const plan::Node& node : plan.nodes) {
    NodeState state;
    state.node = node;
    state.reachable = true;
    state.inventory = v1::Inventory();
    state.client = std::make_unique<InstantAgent>(node.name, duration, timers);
    nodes.push_back(std::move(state));
  }
  Progress progress(stderr, /*quiet=*/true);
  const double cpu_before = CpuSeconds();
  const absl::Time start = absl::Now();
  const PairwiseOutcome outcome = RunPairwisePhase(nodes, plan, {}, progress);
  const absl::Duration wall = absl::Now() - start;
  const double cpu = CpuSeconds() - cpu_before;
  const absl::Duration ideal = outcome.rounds * duration;
  const absl::Duration per_round =
      outcome.rounds > 0 ? (wall - ideal) / outcome.rounds : absl::ZeroDuration();
  const double overhead_pct =
      100.0 * absl::ToDoubleSeconds(per_round) / absl::ToDoubleSeconds(duration);
  std::printf("%6d  %-8s %6d %7zu %8.2f %8.2f %10.1f %9.2f %8.2f  %s\n", n,
              PairwisePatternName(pattern), outcome.rounds, outcome.pairs.size(),
              absl::ToDoubleSeconds(wall), absl::ToDoubleSeconds(ideal),
              absl::ToDoubleMilliseconds(per_round), overhead_pct, cpu,
              outcome.failing == 0 && overhead_pct <= 5 ? "within 5 %" : "OVER 5 % or failing");
  std::fflush(stdout);
}

}  // namespace
}  // namespace clustercert::controller

int main(int argc, char** argv) {
  using clustercert::controller::RunOne;
  using clustercert::controller::plan::PairwisePattern;
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) {
    const int n = std::atoi(argv[i]);
    if (n < 2 || n > 4096) {
      std::fprintf(stderr,
                   "pairwise_scheduling_bench: '%s' is not a node count in 2..4096; "
                   "give sizes such as 64 256 1024\n",
                   argv[i]);
      return 2;
    }
    sizes.push_back(n);
  }
  if (sizes.empty()) sizes = {64, 256, 1024};
  const char* env = std::getenv("SCHED_DURATION_S");
  const double seconds = env != nullptr ? std::atof(env) : 1.0;
  if (!(seconds >= 0.1 && seconds <= 60)) {
    std::fprintf(stderr, "pairwise_scheduling_bench: SCHED_DURATION_S=%s is outside 0.1..60 s\n",
                 env);
    return 2;
  }
  std::printf(
      "  nodes pattern   rounds  cells   wall_s  ideal_s  ms/round  overhead%%   cpu_s  "
      "verdict (target: <= 5 %% of a %.1f s test per round)\n",
      seconds);
  for (int n : sizes) {
    for (PairwisePattern pattern : {PairwisePattern::kRing, PairwisePattern::kKBatch}) {
      RunOne(n, pattern, absl::Seconds(seconds));
    }
  }
  return 0;
}
