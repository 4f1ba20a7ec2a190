#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace clustercert::controller {

// The first call a node left unanswered in a phase, and what it cost after.
struct Stall {
  std::string node;
  std::string call;         // "RunEndpoint"
  absl::Duration deadline;  // the call's deadline, all of which was waited out
  absl::Time at;            // when the controller gave up on it
  std::string transport;    // what gRPC said ("Deadline Exceeded")
  int calls_not_made = 0;   // later calls to the node this phase refused
};

// Which nodes stopped answering in the phase under way, so that a hung node
// costs one call deadline per phase instead of one per call: a SIGSTOPped
// agent used to cost 30 s at every later call (a 24 s run took 285 s).
//
// A node is judged stopped when a call to it went unanswered (IsNoAnswer:
// its deadline passed, or the channel is down) after the connect phase; its
// later calls in the phase are answered at once with a sentence naming the
// node and that first silence. Each phase starts with every node trusted
// again: a transient stall (a paused VM, a long GC) costs one deadline per
// phase, not the rest of the run.
class NodeHealth {
 public:
  // A poll whose deadline is shorter than this (the pairwise phase's 1 s
  // progress polls) may miss on a busy host without the agent being gone;
  // the next poll asks again, and the call with the long deadline judges.
  static constexpr absl::Duration kShortestJudgedDeadline = absl::Seconds(5);

  explicit NodeHealth(std::function<absl::Time()> now);

  // Starts `phase` with every node trusted. `judges` is false for the
  // connect phase, which retries silent nodes itself.
  void BeginPhase(const std::string& phase, bool judges = true);

  // OK when `node` may be called; else the UNAVAILABLE sentence that stands
  // in for the answer of a call not made.
  absl::Status Admit(const std::string& node, absl::string_view call);

  // A failed answer from `node`: returns the status its caller should see
  // (the stall's sentence when this silence marks the node stopped) and
  // sets *new_stall when it does.
  absl::Status Judge(const std::string& node, absl::string_view call, absl::Duration deadline,
                     const absl::Status& status, bool* new_stall);

  // Whether `node` stopped answering in this phase.
  bool Stalled(const std::string& node) const;

  // This phase's stalls, in the order they happened.
  std::vector<Stall> Stalls() const;

  // "node3 stopped answering at 12:03:04 UTC (RunEndpoint deadline 41s); its
  // remaining 7 call(s) in the pairwise phase were not made: check ..."
  static std::string Summary(const Stall& stall, const std::string& phase);

 private:
  std::string RefusalLocked(const Stall& stall) const;

  std::function<absl::Time()> now_;
  mutable std::mutex mutex_;
  std::string phase_;
  bool judges_ = false;
  std::map<std::string, Stall> stalls_;  // node -> its stall this phase
  std::vector<std::string> order_;       // nodes in the order they stalled
};

}  // namespace clustercert::controller
