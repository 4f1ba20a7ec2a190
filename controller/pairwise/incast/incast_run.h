#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/pairwise/phase/cell_plan.h"
#include "controller/phases/call_loop.h"
#include "controller/phases/peer_broker.h"
#include "controller/phases/progress.h"
#include "controller/plan/plan.h"

namespace clustercert::controller {

// The bandwidth test an incast round runs: write_bw on both engines (the
// tcp engine's bandwidth cells use the same name).
inline constexpr char kIncastTest[] = "write_bw";

// One incast round to run: the receiving end, the sending ends (each on the
// rail it pairs with the receiver's), and where the round sits in the run.
struct IncastJob {
  Side receiver;
  std::vector<Side> senders;
  double line_rate_gbps = 0;  // the receiver's port rate, else the plan's
  int round = 0;              // 1-based
  int rounds = 0;             // how many the run has, for progress
};

// The fields that name `job`'s round (receiver, rail, engine, test, round,
// senders by name and rail, the planned traffic class or service level), as
// its result starts out.
v1::IncastResult IncastIdentity(const plan::Plan& plan, const IncastJob& job);

// The name of the group the receiving ends of one round are prepared in
// (PrepareEndpointRequest.share_group): "incast-<round>", one per round and
// in the agent's group alphabet (letters, digits, '.', '_', ':', '-'; no
// node name, which may hold others), so the agent lets the round's k
// server endpoints share the receiver's device. Rounds run one at a time,
// and an agent shares a device only among one caller's endpoints.
std::string IncastShareGroup(const IncastJob& job);

// One incast round as a state machine on a CallLoop: the port counters of
// the receiver and of every sender before; then k brokered write_bw tests at
// once, all into the receiver, its k ends prepared in one share group; once
// every test has ended, the counters again; then the round's result, summed
// (SummarizeIncast), to `finished`, all on the loop's thread. A round with
// an unreachable end (or a tcp end without data_ip) ends at once as an
// error round, calling no agent; a sender whose test fails is recorded as
// not ok with its error, the others' figures are kept.
class IncastRun : public std::enable_shared_from_this<IncastRun> {
 public:
  IncastRun(CallLoop& loop, const plan::Plan& plan, IncastJob job,
            std::function<void(v1::IncastResult)> finished);

  void Start();
  // The caller's tick, once a second: each running test's keep-alive (the
  // leases of the ends that wait on the other end's step).
  void KeepAlive();

 private:
  std::string Unrunnable() const;
  v1::PeerTestSpec Spec(const Side& side, const char* role) const;
  // Reads every end's counters into `receiver_out` and `senders_out` (one
  // per sender), then `then`; an end that cannot be read keeps empty ones.
  void ReadCounters(v1::PortCounters* receiver_out, std::vector<v1::PortCounters>* senders_out,
                    std::function<void()> then);
  void StartTests();
  void TestFinished(size_t sender, BrokeredRun run);
  void Finish(const std::string& error);

  CallLoop& loop_;
  const plan::Plan& plan_;
  const IncastJob job_;
  std::function<void(v1::IncastResult)> finished_;
  v1::IncastResult result_;
  v1::PortCounters receiver_before_, receiver_after_;
  std::vector<v1::PortCounters> senders_before_, senders_after_;
  std::vector<std::function<void()>> keep_alives_;
  size_t tests_out_ = 0;
};

// What RunIncastRounds measured: each round and its findings.
struct IncastRoundsOutcome {
  std::vector<v1::IncastResult> rounds;
  std::vector<v1::Finding> checks;
};

// Runs `jobs` one after another (a node is in at most one round at a time),
// each round's k tests side by side, all on one CallLoop on the calling
// thread: no thread per sender. Each round is summed, judged
// (pairwise::JudgeIncast) and told on one progress line (IncastRoundLine).
// Once `stopping()` holds no further round starts; the one under way
// finishes.
IncastRoundsOutcome RunIncastRounds(const plan::Plan& plan, Progress& progress,
                                    const std::vector<IncastJob>& jobs,
                                    const std::function<bool()>& stopping);

// The progress line of a finished round: "incast 2/4: node3, node4, node1 ->
// node2 mlx5_0: 91.2 Gb/s of 100 (91 %), fairness 0.93", its error, or the
// senders that failed.
std::string IncastRoundLine(const v1::IncastResult& round, int rounds);

}  // namespace clustercert::controller
