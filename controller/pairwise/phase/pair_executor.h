#pragma once

#include <functional>
#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/pairwise/phase/cell_run.h"
#include "controller/phases/progress.h"
#include "controller/plan/plan.h"

namespace clustercert::controller {

// The cells one pair runs, in order (one pair's tests never overlap).
using CellChain = std::vector<CellJob>;

// Runs `chains` side by side (the caller guarantees they share no node, as
// a schedule round does), each chain's cells one after another, all on one
// CallLoop on the calling thread: no thread per pair, however many pairs a
// round holds. While cells run, each running bandwidth cell shows its live
// rate once a second, in rounds of up to 16 pairs and unless `progress` is
// quiet (above that the progress bar alone shows the round). `cell_done` (may be empty) sees each
// judged cell as it ends. Once `stopping()` holds, no further cell starts; the cells under way
// finish. Returns the cells chain by chain, each chain's in order.
std::vector<v1::PairResult> RunCellChains(
    const plan::Plan& plan, Progress& progress, const std::vector<CellChain>& chains,
    const std::function<bool()>& stopping,
    const std::function<void(const v1::PairResult&)>& cell_done);

// Whether a round of `pairs` pairs shows each running cell's live rate: not
// when `progress` is quiet, nor above 16 pairs (a line per pair per second
// is what an engineer watches on a small cluster; 512 a second in a
// 1,024-node round are noise, and their progress calls cost the controller
// CPU that grows with N). The progress bar counts the cells either way.
bool ShowsLiveRates(const Progress& progress, size_t pairs);

}  // namespace clustercert::controller
