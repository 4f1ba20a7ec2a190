#pragma once

#include <functional>
#include <utility>
#include <vector>

#include "clustercert/v1/counters.pb.h"
#include "controller/pairwise/phase/cell_plan.h"
#include "controller/phases/call_loop.h"

namespace clustercert::controller {

// One end's port counters to read, and where the answer goes.
using CounterRead = std::pair<const Side*, v1::PortCounters*>;

// Reads every end's port counters at once (its rail's port 1, or only its
// netdev's ethtool statistics when it has no rail) into the given places,
// then calls `then` once, on `loop`'s thread, when the last read answered.
// An end whose counters cannot be read keeps empty ones: its deltas are
// then absent, never invented. The places must outlive the reads; `then`
// is dropped once called, so a `then` that holds its run does not keep the
// run alive past it.
void ReadCountersOf(CallLoop& loop, const std::vector<CounterRead>& reads,
                    std::function<void()> then);

}  // namespace clustercert::controller
