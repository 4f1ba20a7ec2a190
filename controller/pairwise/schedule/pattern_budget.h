#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "controller/plan/plan.h"

namespace clustercert::controller::pairwise::schedule {

// pairwise.budget_minutes: the widest pattern whose estimated time fits the
// budget. All-pairs when it fits; else, when the plan gives every node's
// leaf (two or more), the leaf pattern (every pair inside a leaf and each
// node across the spine); else k-batch with the largest k that fits
// (every node sends to and receives from 2k others); else the ring (every
// node sends to one neighbour and receives from the other, both ways with
// directions: both). Every choice covers each node's send and receive path.

// What one cell costs beyond its test's own time: both ends prepared,
// connected and closed, and their port counters read before and after.
// Measured on loopback agents (bench/scale.sh): about 0.1 s; a real
// management network and a busy agent take longer, so the estimate errs
// long.
inline constexpr absl::Duration kCellOverhead = absl::Seconds(1);

struct PatternChoice {
  plan::PairwisePattern pattern = plan::PairwisePattern::kAllPairs;
  int k = 0;                // k-batch only
  int rounds = 0;           // schedule rounds, rails and directions included
  absl::Duration estimate;  // rounds x RoundTime
  std::string summary;      // one sentence for progress output and the phase detail
};

// One schedule round's time: a pair runs each test on each memory kind in
// turn (cuda: the GPUs nearest the round's rail), each duration_s plus
// kCellOverhead.
absl::Duration RoundTime(const plan::Plan& plan);

// The plan's pattern when it names no budget; otherwise the choice above,
// or an error that says how long the narrowest pattern (the ring) needs
// and what to change.
absl::StatusOr<PatternChoice> ChoosePattern(const plan::Plan& plan);

}  // namespace clustercert::controller::pairwise::schedule
