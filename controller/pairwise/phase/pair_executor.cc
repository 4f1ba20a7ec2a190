#include "controller/pairwise/phase/pair_executor.h"

#include <memory>
#include <utility>

#include "controller/phases/call_loop.h"

namespace clustercert::controller {
namespace {

constexpr absl::Duration kProgressPeriod = absl::Seconds(1);
// ShowsLiveRates: about a fifth of the controller's CPU per round at 256
// nodes went to the progress calls of rounds nobody could read.
constexpr size_t kMaxLiveRatePairs = 16;

// The chains' state, touched only on the loop's thread.
class ChainRunner {
 public:
  ChainRunner(CallLoop& loop, const plan::Plan& plan, Progress& progress,
              const std::vector<CellChain>& chains, const std::function<bool()>& stopping,
              const std::function<void(const v1::PairResult&)>& cell_done)
      : loop_(loop),
        plan_(plan),
        progress_(progress),
        chains_(chains),
        stopping_(stopping),
        cell_done_(cell_done),
        results_(chains.size()),
        running_(chains.size()),
        chains_left_(chains.size()),
        live_rates_(ShowsLiveRates(progress, chains.size())) {}

  void Start() {
    for (size_t c = 0; c < chains_.size(); ++c) StartCell(c, 0);
  }
  bool Done() const { return chains_left_ == 0; }
  void Tick() {
    for (auto& cell : running_) {
      if (!cell) continue;
      if (live_rates_) {
        cell->PollProgress();
      } else {
        cell->KeepAlive();
      }
    }
  }
  std::vector<v1::PairResult> Results() {
    std::vector<v1::PairResult> all;
    for (auto& chain : results_) {
      for (auto& pair : chain) all.push_back(std::move(pair));
    }
    return all;
  }

 private:
  void StartCell(size_t chain, size_t cell) {
    if (cell >= chains_[chain].size() || stopping_()) {
      running_[chain].reset();
      --chains_left_;
      return;
    }
    running_[chain] = std::make_shared<CellRun>(
        loop_, plan_, progress_, chains_[chain][cell], [this, chain, cell](v1::PairResult pair) {
          if (cell_done_) cell_done_(pair);
          results_[chain].push_back(std::move(pair));
          // Queued, not called: the next cell starts from a fresh stack
          // even when the fakes of a test answer inline.
          loop_.Post([this, chain, cell] { StartCell(chain, cell + 1); });
        });
    running_[chain]->Start();
  }

  CallLoop& loop_;
  const plan::Plan& plan_;
  Progress& progress_;
  const std::vector<CellChain>& chains_;
  const std::function<bool()>& stopping_;
  const std::function<void(const v1::PairResult&)>& cell_done_;
  std::vector<std::vector<v1::PairResult>> results_;
  std::vector<std::shared_ptr<CellRun>> running_;  // each chain's cell under way
  size_t chains_left_;
  const bool live_rates_;
};

}  // namespace

bool ShowsLiveRates(const Progress& progress, size_t pairs) {
  return !progress.quiet() && pairs <= kMaxLiveRatePairs;
}

std::vector<v1::PairResult> RunCellChains(
    const plan::Plan& plan, Progress& progress, const std::vector<CellChain>& chains,
    const std::function<bool()>& stopping,
    const std::function<void(const v1::PairResult&)>& cell_done) {
  CallLoop loop;
  ChainRunner runner(loop, plan, progress, chains, stopping, cell_done);
  loop.Post([&runner] { runner.Start(); });
  loop.RunUntil([&runner] { return runner.Done(); }, kProgressPeriod, [&runner] { runner.Tick(); });
  loop.Drain();  // late progress answers, before the runner they call goes
  return runner.Results();
}

}  // namespace clustercert::controller
