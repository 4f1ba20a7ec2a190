#pragma once

#include <functional>
#include <memory>
#include <string>

#include "clustercert/v1/certificate.pb.h"
#include "controller/pairwise/link_ber.h"
#include "controller/pairwise/phase/cell_plan.h"
#include "controller/phases/call_loop.h"
#include "controller/phases/peer_broker.h"
#include "controller/phases/progress.h"
#include "controller/plan/plan.h"

namespace clustercert::controller {

// One cell to run: both ends, the test, and where it sits in the run.
struct CellJob {
  Side client;
  Side server;
  TestItem item;
  double line_rate_gbps = 0;
  int round = 0;          // 1-based; 0 for a retest
  std::string label;      // "round 2/3 ", "retest ": starts its progress lines
  std::string retest_of;  // for a retest, the failing cell's "client->server"
  // How long a busy device is waited for (BrokerDeadlines::busy_wait): a
  // resumed run's cells wait out what the killed controller left prepared.
  absl::Duration busy_wait = absl::ZeroDuration();
};

// The fields that name `job`'s cell (ends, rail, test, engine, memory and
// GPUs, round, unit, what it retests), as its result starts out: CellRun
// fills these in first, and a resumed run matches journaled cells by them.
v1::PairResult CellIdentity(const plan::Plan& plan, const CellJob& job);

// Whose byte counter shows a bandwidth test's live progress: the client's for
// verbs RDMA writes and reads (it posts them; the passive server sees no
// completions), the server's (the receiver) for sends and every tcp test.
bool ProgressFromClient(plan::PairwiseEngine engine, const std::string& test);

// One cell as a state machine on a CallLoop: the port counters of both ends
// before, the brokered test, the counters after (and, for a bandwidth test,
// each receiving end's bit error rate from them), then the judged result to
// `finished`, all on the loop's thread. A cell with an unreachable end (or a
// tcp end without data_ip) ends at once as an error cell, calling no agent.
class CellRun : public std::enable_shared_from_this<CellRun> {
 public:
  CellRun(CallLoop& loop, const plan::Plan& plan, Progress& progress, CellJob job,
          std::function<void(v1::PairResult)> finished);

  void Start();
  // The executor's tick, once a second: renews the leases of the ends the
  // test waits with (the broker's keep-alive), and while a bandwidth test
  // runs, asks the counting end for its bytes and prints the rate since the
  // last poll.
  void PollProgress();
  // The tick without the live rate: only the broker's keep-alive.
  void KeepAlive();

 private:
  std::string Unrunnable() const;
  v1::PeerTestSpec Spec(const Side& side, const char* role) const;
  absl::Duration RunTimeout() const;
  // Reads both ends' counters into `client_out`/`server_out`, then `then`.
  void ReadCounters(v1::PortCounters* client_out, v1::PortCounters* server_out,
                    std::function<void()> then);
  void RunTest();
  void TestFinished(BrokeredRun run);
  void ShowProgress(const v1::PeerTestProgress& now);
  void RecordCounters(const Side& side, const v1::PortCounters& before,
                      const v1::PortCounters& after,
                      google::protobuf::RepeatedPtrField<v1::CounterDelta>* out);
  void RecordBer();
  pairwise::ReceivingPort ReceivingPortOf(const Side& side, const v1::PortCounters* before,
                                          const v1::PortCounters* after, double seconds) const;
  void Finish(const std::string& error);

  CallLoop& loop_;
  const plan::Plan& plan_;
  Progress& progress_;
  const CellJob job_;
  std::function<void(v1::PairResult)> finished_;
  v1::PairResult result_;
  std::string test_id_;  // "node1 -> node2 mlx5_0 write_bw host"
  v1::PortCounters client_before_, server_before_, client_after_, server_after_;
  std::function<void()> keep_alive_;  // the brokered test's, once it started
  // Live progress: the end that counts the bytes (ProgressFromClient) and
  // its endpoint, set while both runs are out.
  const Side* counting_ = nullptr;
  std::string counting_endpoint_;
  bool poll_out_ = false;
  uint64_t last_bytes_ = 0;
  double last_seconds_ = 0;
};

}  // namespace clustercert::controller
