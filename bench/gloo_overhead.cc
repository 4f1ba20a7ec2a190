// The sweep harness's own overhead on gloo: 4 ranks as threads in one
// process over gloo tcp on 127.0.0.1, rendezvous through gloo's HashStore.
// For each size it times the allreduce two ways on the same connected
// context and buffers size: as RunCollectiveSweep measures it through
// GlooCollectiveBackend (the worker's code), and as a bare loop of the same
// gloo::allreduce call with the same options and iteration counts. Each is
// repeated and the medians compared; the target is a ratio of at most 1.02.
// It prints figures only (exit 0 either way): timing is no test assertion.

#include <gloo/allreduce.h>
#include <gloo/math.h>
#include <gloo/rendezvous/hash_store.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "sweep/collective_sweep.h"
#include "sweep/worker_options.h"
#include "workers/gloo/gloo_backend.h"

namespace {

using clustercert::sweep::SweepSpec;
using clustercert::workers::gloo_worker::GlooCollectiveBackend;

constexpr int kRanks = 4;
constexpr int kRepetitions = 5;
constexpr double kTargetRatio = 1.02;
const std::vector<int64_t> kSizes = {8, 64 << 10, 1 << 20, 16 << 20};

double SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

struct SizeFigures {
  std::vector<double> sweep_us;
  std::vector<double> loop_us;
};

// One rank: alternates sweep and bare loop kRepetitions times per size, so
// drift on the machine falls on both alike. `figures` is filled by rank 0.
void RunRank(int rank, gloo::rendezvous::HashStore& store, std::vector<SizeFigures>& figures,
             std::string& error) {
  clustercert::sweep::WorkerOptions options;
  options.rank = rank;
  options.ranks = kRanks;
  options.transport = "tcp";
  options.bind_ip = "127.0.0.1";
  options.timeout_s = 60;
  std::unique_ptr<GlooCollectiveBackend> backend =
      GlooCollectiveBackend::Connect(options, store, error);
  if (!backend) return;

  for (size_t s = 0; s < kSizes.size(); ++s) {
    SweepSpec spec;
    spec.min_bytes = kSizes[s];
    spec.max_bytes = kSizes[s];
    spec.in_place = false;
    const size_t count = static_cast<size_t>(kSizes[s]) / sizeof(float);
    std::vector<float> send(count);
    for (size_t i = 0; i < count; ++i) send[i] = clustercert::sweep::InitialValue(rank, i);
    std::vector<float> receive(count);

    gloo::AllreduceOptions allreduce(backend->context());
    allreduce.setInput(send.data(), count);
    allreduce.setOutput(receive.data(), count);
    allreduce.setReduceFunction(
        static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));

    for (int repetition = 0; repetition < kRepetitions; ++repetition) {
      double sweep_us = 0;
      double loop_us = 0;
      // Which goes first alternates, so neither always runs on a warmer cache.
      for (int turn = 0; turn < 2; ++turn) {
        if ((turn + repetition) % 2 == 0) {
          clustercert::sweep::SweepOutcome outcome = clustercert::sweep::RunCollectiveSweep(
              *backend, clustercert::sweep::Operation::kAllReduce, spec, SteadySeconds, nullptr);
          if (!outcome.error.empty()) {
            error = outcome.error;
            return;
          }
          sweep_us = outcome.rows.at(0).out_of_place.time_us;
        } else {
          for (int i = 0; i < spec.warmup_iters; ++i) gloo::allreduce(allreduce);
          backend->Barrier();
          const double start = SteadySeconds();
          for (int i = 0; i < spec.iters; ++i) gloo::allreduce(allreduce);
          loop_us = (SteadySeconds() - start) / spec.iters * 1e6;
        }
      }
      if (rank == 0) {
        figures[s].sweep_us.push_back(sweep_us);
        figures[s].loop_us.push_back(loop_us);
      }
    }
  }
}

}  // namespace

int main() {
  gloo::rendezvous::HashStore store;
  std::vector<SizeFigures> figures(kSizes.size());
  std::vector<std::string> errors(kRanks);
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < kRanks; ++rank) {
    ranks.emplace_back([&, rank] {
      try {
        RunRank(rank, store, figures, errors[rank]);
      } catch (const std::exception& failure) {
        errors[rank] = failure.what();
      }
    });
  }
  for (std::thread& rank : ranks) rank.join();
  for (int rank = 0; rank < kRanks; ++rank) {
    if (!errors[rank].empty()) {
      std::fprintf(stderr, "gloo_overhead: rank %d: %s\n", rank, errors[rank].c_str());
      return 1;
    }
  }

  std::printf(
      "gloo tcp 127.0.0.1, %d ranks as threads, medians of %d; sweep = RunCollectiveSweep "
      "+ GlooCollectiveBackend, loop = bare gloo::allreduce\n",
      kRanks, kRepetitions);
  std::printf("%12s %12s %12s %8s\n", "size (B)", "sweep (us)", "loop (us)", "ratio");
  double log_ratio_sum = 0;
  for (size_t s = 0; s < kSizes.size(); ++s) {
    const double sweep_us = Median(figures[s].sweep_us);
    const double loop_us = Median(figures[s].loop_us);
    const double ratio = sweep_us / loop_us;
    log_ratio_sum += std::log(ratio);
    std::printf("%12lld %12.1f %12.1f %8.4f\n", static_cast<long long>(kSizes[s]), sweep_us,
                loop_us, ratio);
  }
  const double overall = std::exp(log_ratio_sum / kSizes.size());
  std::printf("overall ratio (geometric mean) %.4f, target <= %.2f: %s\n", overall, kTargetRatio,
              overall <= kTargetRatio ? "ok" : "over target");
  return 0;
}
