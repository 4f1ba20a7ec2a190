#pragma once

// One collective run on this node: the worker processes of the ranks the
// controller placed here, the job's share of the rendezvous store, and what
// the workers report. Plain class; the gRPC handlers convert around it.
//
// Each worker is a child process (common/process/child_process.h) speaking
// sweep/worker_protocol.h on its stdin/stdout; its stderr is kept as its
// log. A worker's `get` is answered as soon as the key is in the job's store,
// whether a local worker set it or the controller delivered it.
//
// One event-loop thread per job polls every worker's stdout, stderr, exit
// (pidfd) and, when a reply is queued, stdin, plus a wakeup pipe; it also
// spawns the workers, so their PR_SET_PDEATHSIG is tied to a thread that
// lives as long as they do. Every public method may be called from any
// thread (gRPC handlers) while the loop runs; none of them blocks on a
// worker (stdin writes are non-blocking, the rest queues for the loop).
//
// A rank that fails does not bring the job's other ranks down: the
// controller sees the failure in Ranks() and decides (usually Cancel), and
// gloo/NCCL peers waiting on the dead rank time out by themselves. Only the
// job's deadline (JobLaunch::timeout) and Cancel kill workers.

#include <poll.h>

#include <chrono>
#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/process/process_spawner.h"

namespace clustercert::agent::collective {

struct WorkerLaunch {
  int rank = 0;
  std::string executable;                  // absolute path
  std::vector<std::string> args;           // without argv[0]
  std::map<std::string, std::string> env;  // added to the agent's environment
};

// The job's share of the rendezvous store, bounded: what the controller
// delivers and what local workers set is kept in the agent's memory, so a
// caller relaying without end (or a worker gone wrong) must hit a wall.
// gloo and NCCL keys are a few hundred bytes each and a job holds a few per
// rank, far below both caps.
struct StoreLimits {
  size_t max_entry_bytes = size_t{1} << 20;  // one key plus its value
  size_t max_job_bytes = size_t{16} << 20;   // the store plus keys published, not yet taken
};

struct JobLaunch {
  std::string name;  // the controller's name, for logs
  std::vector<WorkerLaunch> workers;
  absl::Duration timeout;  // every worker is killed this long after start
  StoreLimits store = {};
};

enum class RankState { kRunning, kDone, kFailed };

struct RankReport {
  int rank = 0;
  RankState state = RankState::kRunning;
  std::string error;               // kFailed: the worker's `fail` sentence, or how it died
  int exit_code = -1;              // -1 while running or when killed by a signal
  int signal = 0;                  // the signal that ended it, 0 if none
  std::vector<std::string> notes;  // every `note` line
  std::vector<std::string> log;    // stderr lines, at most kMaxLogLines (the last ones kept,
                                   // but NCCL's "Channel"/"Using network" lines always kept)
  int64_t log_lines_dropped = 0;   // stderr lines left out of `log` by the cap
};

struct StoreEntry {
  std::string key;
  std::vector<char> value;
};

struct RowReport {
  int rank = 0;
  std::string line;  // EncodeRowLine form
};

class CollectiveJob {
 public:
  static constexpr int kMaxLogLines = 2000;

  // Spawns every worker through `spawner` (a test's fake; by default the live
  // one). Fails (and leaves no process behind) when one cannot start, with a
  // sentence naming the executable. The job's deadline (launch.timeout from
  // the start) is kept on `clock`, which must outlive the job; the loop reads
  // it each time it wakes (a worker's output, a call, or its timer, set to
  // the time left on that clock).
  static absl::StatusOr<std::unique_ptr<CollectiveJob>> Start(
      JobLaunch launch, process::ProcessSpawner& spawner = process::LiveSpawner(),
      Clock& clock = RealClock());
  ~CollectiveJob();  // kills and reaps what still runs

  // Keys from other nodes, relayed by the controller. Refused whole
  // (InvalidArgument for an entry over StoreLimits::max_entry_bytes,
  // ResourceExhausted past max_job_bytes) before any is stored; ignored once
  // the job has finished, when nothing will read them.
  absl::Status Deliver(const std::vector<StoreEntry>& entries);
  // Bytes the store and the untaken published keys hold. Both are freed when
  // the job finishes (the store) or the controller takes them (published).
  size_t StoreBytes() const;
  // Keys set by this node's workers since the last call.
  std::vector<StoreEntry> TakePublished();
  // Rows reported since the last call.
  std::vector<RowReport> TakeRows();
  std::vector<RankReport> Ranks() const;
  // Keys running ranks asked for (`get`) that the store does not hold yet,
  // sorted: what the job waits for from other nodes.
  std::vector<std::string> AwaitedKeys() const;
  bool Finished() const;  // every worker exited (or was killed and reaped)
  // Kills every worker still running (SIGKILL to its process group) and
  // records `reason` as its error.
  void Cancel(const std::string& reason);

  CollectiveJob(const CollectiveJob&) = delete;
  CollectiveJob& operator=(const CollectiveJob&) = delete;

 private:
  struct Worker;  // one rank's process, line buffers and report
  // What one poll() of the loop waits on: the wake pipe, and each running
  // rank's stdout, stderr, exit (pidfd) and, with bytes queued, stdin.
  struct PollSet {
    enum class Source { kWake, kStdout, kStderr, kStdin, kExit };
    std::vector<pollfd> fds;
    std::vector<std::pair<Source, Worker*>> sources;  // one per fd
    bool running = false;                             // a rank is still unreaped
    bool needs_reap_timer = false;                    // a rank without a pidfd: poll for its exit
    void Clear();
    void Add(int fd, short events, Source source, Worker* worker);
  };

  CollectiveJob(JobLaunch launch, process::ProcessSpawner& spawner, Clock& clock);
  // The loop thread's body: spawns the workers, reports how that went through
  // `started`, then serves them until every one is reaped or the job stops.
  void Loop(std::promise<absl::Status>* started);
  // Under mutex_: starts every rank; the first spawn failure, named.
  absl::Status SpawnWorkersLocked();
  // Under mutex_: kills each running rank, recording why.
  void KillPastDeadlineLocked();
  // Under mutex_: reaps ranks that exited unseen and lists what to poll.
  void BuildPollSetLocked(PollSet& set);
  // Under mutex_, when poll() itself fails: ends every rank with the cause.
  void AbandonWorkersLocked(const std::string& cause);
  // Under mutex_: serves what poll() found ready, streams before exits.
  void ServeReadyLocked(const PollSet& set);
  void Wake();
  void ReadStream(Worker& worker, bool is_stdout, bool until_eof);
  void HandleStdoutLine(Worker& worker, const std::string& line);
  void HandleStderrLine(Worker& worker, const std::string& line);
  void Answer(const std::string& key, const std::vector<char>& value);
  // Under mutex_: stores a key, keeping store_bytes_ right.
  void PutLocked(const std::string& key, const std::vector<char>& value);
  // Under mutex_, once every worker is reaped: nothing reads the store any more.
  void FreeStoreLocked();
  // Under mutex_: every worker exited (or was killed) and was reaped.
  bool AllReapedLocked() const;
  void Finalize(Worker& worker);

  const JobLaunch launch_;
  process::ProcessSpawner& spawner_;
  Clock& clock_;
  int wake_read_ = -1;
  int wake_write_ = -1;

  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::map<std::string, std::vector<char>> store_;
  size_t store_bytes_ = 0;  // keys plus values in store_
  std::map<std::string, std::vector<Worker*>> pending_gets_;
  std::vector<StoreEntry> published_;
  size_t published_bytes_ = 0;
  bool finished_ = false;  // every worker reaped; the store is freed
  std::vector<RowReport> rows_;
  bool stopping_ = false;

  std::thread loop_;  // last: joined in the destructor before the rest goes
};

}  // namespace clustercert::agent::collective
