#include "agent/collective/collective_job.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <optional>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/printable.h"
#include "common/process/child_process.h"
#include "spdlog/spdlog.h"
#include "sweep/worker_protocol.h"

namespace clustercert::agent::collective {
namespace {

// A protocol line longer than this is cut there (a worker gone wrong must not
// grow the agent without bound); store values are NCCL ids and gloo addresses,
// far below it.
constexpr size_t kMaxStdoutLineBytes = 1 << 20;
// Log lines are cut here; NCCL's INFO lines are ~100 bytes.
constexpr size_t kMaxStderrLineBytes = 4096;
// Without a pidfd the loop looks for exited workers this often.
constexpr int kReapPollMillis = 50;
// Reads per stream per wakeup, so one chatty worker cannot starve the others.
constexpr int kReadsPerWakeup = 16;
// Reads of an exited worker's pipes: bounded, in case a descendant that left
// the process group keeps writing into them.
constexpr int kMaxDrainReads = 1024;

// NCCL's lines that say which transport it chose: kept past the log cap
// because the certificate reads them (sweep/nccl_transport_log.h).
bool IsTransportLine(const std::string& line) {
  return absl::StrContains(line, "NCCL INFO Channel ") ||
         absl::StrContains(line, "NCCL INFO Using network");
}

size_t EntryBytes(const std::string& key, const std::vector<char>& value) {
  return key.size() + value.size();
}

// A store key as an error quotes it: printable, at most 80 characters.
std::string ClipKey(const std::string& key) {
  constexpr size_t kMaxQuoted = 80;
  std::string text = "'";
  for (char c : key.substr(0, kMaxQuoted)) {
    text.push_back(c >= 0x20 && c < 0x7f ? c : '?');
  }
  text.push_back('\'');
  if (key.size() > kMaxQuoted) absl::StrAppend(&text, " (", key.size(), " bytes)");
  return text;
}

std::string SecondsText(absl::Duration duration) {
  return absl::StrCat(absl::ToDoubleSeconds(duration), " s");
}

// A worker's stderr, at most kMaxLogLines: transport lines first claim their
// room, the most recent other lines fill the rest; returned in arrival order.
class CappedLog {
 public:
  void Add(std::string line) {
    const uint64_t sequence = next_sequence_++;
    if (IsTransportLine(line) && transport_.size() < CollectiveJob::kMaxLogLines) {
      transport_.emplace_back(sequence, std::move(line));
      return;
    }
    recent_.emplace_back(sequence, std::move(line));
    if (recent_.size() > CollectiveJob::kMaxLogLines) recent_.pop_front();
  }

  std::vector<std::string> Lines() const {
    const size_t room = CollectiveJob::kMaxLogLines - transport_.size();
    const size_t skip = recent_.size() > room ? recent_.size() - room : 0;
    std::vector<std::string> lines;
    lines.reserve(transport_.size() + recent_.size() - skip);
    auto transport = transport_.begin();
    auto recent = recent_.begin() + static_cast<std::ptrdiff_t>(skip);
    while (transport != transport_.end() || recent != recent_.end()) {
      if (recent == recent_.end() ||
          (transport != transport_.end() && transport->first < recent->first)) {
        lines.push_back((transport++)->second);
      } else {
        lines.push_back((recent++)->second);
      }
    }
    return lines;
  }

  int64_t Dropped() const {
    const size_t room = CollectiveJob::kMaxLogLines - transport_.size();
    const size_t kept = transport_.size() + std::min(recent_.size(), room);
    return static_cast<int64_t>(next_sequence_) - static_cast<int64_t>(kept);
  }

 private:
  uint64_t next_sequence_ = 0;
  std::vector<std::pair<uint64_t, std::string>> transport_;
  std::deque<std::pair<uint64_t, std::string>> recent_;
};

}  // namespace

struct CollectiveJob::Worker {
  int rank = 0;
  std::unique_ptr<process::ChildProcess> process;
  std::string stdout_partial;
  std::string stderr_partial;
  bool said_done = false;
  std::optional<std::string> fail_text;
  // Set when the job killed it (deadline or Cancel): its error, unless it
  // finished cleanly before the kill landed.
  std::optional<std::string> kill_reason;
  std::string last_stderr_line;
  CappedLog log;
  RankReport report;  // state, error, exit_code, signal, notes; log filled by Ranks()
};

CollectiveJob::CollectiveJob(JobLaunch launch, process::ProcessSpawner& spawner, Clock& clock)
    : launch_(std::move(launch)), spawner_(spawner), clock_(clock) {}

absl::StatusOr<std::unique_ptr<CollectiveJob>> CollectiveJob::Start(
    JobLaunch launch, process::ProcessSpawner& spawner, Clock& clock) {
  if (launch.workers.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "collective job ", launch.name,
        " has no workers for this node: the controller must place at least one rank here"));
  }
  if (launch.timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("collective job ", launch.name, " has a timeout of ",
                     absl::FormatDuration(launch.timeout), ": it must be positive"));
  }
  std::set<int> ranks;
  for (const auto& worker : launch.workers) {
    if (!ranks.insert(worker.rank).second) {
      return absl::InvalidArgumentError(absl::StrCat("collective job ", launch.name,
                                                     " places rank ", worker.rank,
                                                     " on this node twice: each rank runs once"));
    }
  }

  std::unique_ptr<CollectiveJob> job(new CollectiveJob(std::move(launch), spawner, clock));
  int wake[2];
  if (::pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) {
    return absl::ResourceExhaustedError(absl::StrCat("collective job ", job->launch_.name,
                                                     ": pipe2 failed: ", std::strerror(errno),
                                                     "; raise the agent's ulimit -n"));
  }
  job->wake_read_ = wake[0];
  job->wake_write_ = wake[1];

  std::promise<absl::Status> started;
  std::future<absl::Status> spawned = started.get_future();
  job->loop_ = std::thread(&CollectiveJob::Loop, job.get(), &started);
  absl::Status status = spawned.get();
  // On failure the destructor joins the loop (already returning) and kills
  // and reaps the workers that did start.
  if (!status.ok()) return status;
  return job;
}

CollectiveJob::~CollectiveJob() {
  Cancel(absl::StrCat("collective job ", launch_.name,
                      " was stopped on this node before this rank finished"));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  Wake();
  if (loop_.joinable()) loop_.join();
  workers_.clear();  // ~process::ChildProcess kills the group and reaps
  if (wake_read_ >= 0) ::close(wake_read_);
  if (wake_write_ >= 0) ::close(wake_write_);
}

void CollectiveJob::Wake() {
  if (wake_write_ < 0) return;
  const char byte = 1;
  // EAGAIN: the pipe already holds a wakeup, which is all the loop needs.
  (void)!::write(wake_write_, &byte, 1);
}

absl::Status CollectiveJob::Deliver(const std::vector<StoreEntry>& entries) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return absl::OkStatus();
  size_t adding = 0;
  for (const auto& entry : entries) {
    // A worker's "set KEY HEX" line carries one token: a key no worker could
    // have set (empty, or with spaces or control bytes) is not relayed.
    if (entry.key.empty() || std::any_of(entry.key.begin(), entry.key.end(), [](char c) {
          return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f;
        })) {
      return absl::InvalidArgumentError(absl::StrCat(
          "collective job ", launch_.name, ": the delivered key ", ClipKey(entry.key),
          " is not one a rank could have published (one word of printable text): relay only "
          "what PollCollective returned as published"));
    }
    const size_t bytes = EntryBytes(entry.key, entry.value);
    if (bytes > launch_.store.max_entry_bytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "collective job ", launch_.name, ": the delivered key ", ClipKey(entry.key), " is ",
          bytes, " bytes with its value; one key holds at most ", launch_.store.max_entry_bytes,
          " (gloo's and NCCL's are a few hundred): relay only what the ranks published"));
    }
    adding += bytes;
  }
  if (store_bytes_ + published_bytes_ + adding > launch_.store.max_job_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "collective job ", launch_.name, "'s store holds ", store_bytes_ + published_bytes_,
        " bytes; ", entries.size(), " more keys of ", adding, " bytes would pass its cap of ",
        launch_.store.max_job_bytes, ": relay each key once, only what the ranks published"));
  }
  for (const auto& entry : entries) {
    PutLocked(entry.key, entry.value);
    Answer(entry.key, entry.value);
  }
  Wake();  // replies that did not fit in a pipe wait for POLLOUT
  return absl::OkStatus();
}

size_t CollectiveJob::StoreBytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return store_bytes_ + published_bytes_;
}

void CollectiveJob::PutLocked(const std::string& key, const std::vector<char>& value) {
  auto [it, added] = store_.try_emplace(key);
  if (!added) store_bytes_ -= EntryBytes(key, it->second);
  it->second = value;
  store_bytes_ += EntryBytes(key, value);
}

void CollectiveJob::FreeStoreLocked() {
  finished_ = true;
  store_.clear();
  store_bytes_ = 0;
  pending_gets_.clear();
}

std::vector<StoreEntry> CollectiveJob::TakePublished() {
  std::lock_guard<std::mutex> lock(mutex_);
  published_bytes_ = 0;
  return std::exchange(published_, {});
}

std::vector<RowReport> CollectiveJob::TakeRows() {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(rows_, {});
}

std::vector<RankReport> CollectiveJob::Ranks() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<RankReport> reports;
  reports.reserve(workers_.size());
  for (const auto& worker : workers_) {
    RankReport report = worker->report;
    report.log = worker->log.Lines();
    report.log_lines_dropped = worker->log.Dropped();
    reports.push_back(std::move(report));
  }
  return reports;
}

std::vector<std::string> CollectiveJob::AwaitedKeys() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> keys;
  keys.reserve(pending_gets_.size());
  for (const auto& [key, waiting] : pending_gets_) keys.push_back(key);  // a map: sorted
  return keys;
}

bool CollectiveJob::Finished() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return AllReapedLocked();
}

bool CollectiveJob::AllReapedLocked() const {
  return std::all_of(workers_.begin(), workers_.end(), [](const auto& worker) {
    return worker->report.state != RankState::kRunning;
  });
}

void CollectiveJob::Cancel(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& worker : workers_) {
    if (worker->report.state != RankState::kRunning || worker->kill_reason.has_value()) continue;
    worker->kill_reason = reason;
    worker->process->Kill();
  }
  Wake();
}

void CollectiveJob::Answer(const std::string& key, const std::vector<char>& value) {
  auto waiting = pending_gets_.find(key);
  if (waiting == pending_gets_.end()) return;
  const std::string line = sweep::ValueLine(key, value);
  for (Worker* worker : waiting->second) worker->process->WriteLine(line);
  pending_gets_.erase(waiting);
}

void CollectiveJob::HandleStdoutLine(Worker& worker, const std::string& line) {
  std::optional<sweep::WorkerMessage> message = sweep::ParseWorkerLine(line);
  if (!message.has_value()) {
    // Kept where an operator will look: a worker that prints to stdout
    // breaks the protocol, and this is how they find out.
    worker.log.Add(
        absl::StrCat("[agent] ignored a stdout line that is not the worker protocol: ", line));
    return;
  }
  switch (message->verb) {
    case sweep::WorkerVerb::kSet: {
      // A worker past the caps is ended, not obeyed: its peers then fail on
      // their own deadlines with a reason the controller reports.
      const size_t bytes = EntryBytes(message->key, message->value);
      const size_t held = store_bytes_ + published_bytes_;
      if (bytes > launch_.store.max_entry_bytes || held + 2 * bytes > launch_.store.max_job_bytes) {
        if (!worker.kill_reason.has_value()) {
          worker.kill_reason = absl::StrCat(
              "rank ", worker.rank, " set the key ", ClipKey(message->key), " of ", bytes,
              " bytes while the job's store held ", held, "; the caps are ",
              launch_.store.max_entry_bytes, " bytes a key and ", launch_.store.max_job_bytes,
              " a job, so it was killed: check that the worker and the agent come from one "
              "release");
          worker.process->Kill();
        }
        break;
      }
      PutLocked(message->key, message->value);
      published_.push_back(StoreEntry{message->key, message->value});
      published_bytes_ += bytes;
      Answer(message->key, message->value);
      break;
    }
    case sweep::WorkerVerb::kGet: {
      auto found = store_.find(message->key);
      if (found != store_.end()) {
        worker.process->WriteLine(sweep::ValueLine(found->first, found->second));
      } else {
        pending_gets_[message->key].push_back(&worker);
      }
      break;
    }
    case sweep::WorkerVerb::kRow:
      rows_.push_back(RowReport{worker.rank, message->text});
      break;
    case sweep::WorkerVerb::kNote:
      worker.report.notes.push_back(message->text);
      break;
    case sweep::WorkerVerb::kDone:
      worker.said_done = true;
      break;
    case sweep::WorkerVerb::kFail:
      if (!worker.fail_text.has_value()) worker.fail_text = message->text;
      break;
  }
}

void CollectiveJob::HandleStderrLine(Worker& worker, const std::string& line) {
  if (!line.empty()) worker.last_stderr_line = line;
  worker.log.Add(line);
}

void CollectiveJob::ReadStream(Worker& worker, bool is_stdout, bool until_eof) {
  process::ChildProcess& process = *worker.process;
  const int fd = is_stdout ? process.stdout_fd() : process.stderr_fd();
  if (fd < 0) return;
  std::string& partial = is_stdout ? worker.stdout_partial : worker.stderr_partial;
  const size_t max_line = is_stdout ? kMaxStdoutLineBytes : kMaxStderrLineBytes;
  auto emit = [&](std::string line) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.size() > max_line) line.resize(max_line);
    if (is_stdout) {
      HandleStdoutLine(worker, line);
    } else {
      HandleStderrLine(worker, line);
    }
  };

  char buffer[65536];
  bool closed = false;
  const int max_reads = until_eof ? kMaxDrainReads : kReadsPerWakeup;
  for (int reads = 0; reads < max_reads; ++reads) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;
    if (n <= 0) {
      closed = true;
      break;
    }
    partial.append(buffer, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t newline; (newline = partial.find('\n', start)) != std::string::npos;
         start = newline + 1) {
      emit(partial.substr(start, newline - start));
    }
    partial.erase(0, start);
    // A line that never ends is cut, so memory stays bounded.
    if (partial.size() > max_line) emit(std::exchange(partial, {}));
  }
  // After the worker exited, what is left is all it will ever say.
  if (closed || until_eof) {
    if (!partial.empty()) emit(std::exchange(partial, {}));
    if (is_stdout) {
      process.CloseStdout();
    } else {
      process.CloseStderr();
    }
  }
}

void CollectiveJob::Finalize(Worker& worker) {
  const process::ChildExit exit = *worker.process->TryReap();
  // Everything the worker wrote before it exited is in the pipes by now;
  // grandchildren still holding them must not keep the rank open.
  ReadStream(worker, /*is_stdout=*/true, /*until_eof=*/true);
  ReadStream(worker, /*is_stdout=*/false, /*until_eof=*/true);
  worker.process->CloseStdin();
  for (auto& [key, waiting] : pending_gets_) {
    waiting.erase(std::remove(waiting.begin(), waiting.end(), &worker), waiting.end());
  }
  std::erase_if(pending_gets_, [](const auto& entry) { return entry.second.empty(); });

  RankReport& report = worker.report;
  report.exit_code = exit.exit_code;
  report.signal = exit.signal;
  const std::string rank = absl::StrCat("rank ", worker.rank);
  const std::string last_line =
      worker.last_stderr_line.empty()
          ? std::string("; it wrote nothing on stderr")
          : absl::StrCat("; its last stderr line: \"", worker.last_stderr_line, "\"");

  if (exit.exit_code == 0 && worker.said_done && !worker.fail_text.has_value()) {
    report.state = RankState::kDone;
    spdlog::info("collective job {}: {} done (exit code 0)", PrintableText(launch_.name), rank);
    return;
  }
  report.state = RankState::kFailed;
  if (worker.kill_reason.has_value()) {
    report.error = *worker.kill_reason;
  } else if (worker.fail_text.has_value()) {
    report.error = *worker.fail_text;
  } else if (exit.signal > 0) {
    report.error = absl::StrCat(rank, " was killed by signal ", exit.signal, " (",
                                process::SignalName(exit.signal), ")", last_line);
  } else if (exit.exit_code < 0) {
    report.error = absl::StrCat(rank,
                                " ended but its exit status was lost (reaped elsewhere): check "
                                "that the agent does not ignore SIGCHLD",
                                last_line);
  } else if (worker.said_done) {
    report.error =
        absl::StrCat(rank, " said done but exited with code ", exit.exit_code, last_line);
  } else {
    report.error =
        absl::StrCat(rank, " exited with code ", exit.exit_code, " without saying done", last_line);
  }
  spdlog::warn("collective job {}: {} failed (exit code {}, signal {}): {}",
               PrintableText(launch_.name), rank, exit.exit_code, exit.signal,
               PrintableText(report.error, 512));
}

absl::Status CollectiveJob::SpawnWorkersLocked() {
  for (const auto& launch : launch_.workers) {
    auto process = spawner_.Spawn(launch.executable, launch.args, launch.env);
    if (!process.ok()) {
      // The agent resolved the path from --worker-dir: a missing worker
      // means an incomplete build or install, or the wrong directory.
      const char* fix = absl::IsNotFound(process.status())
                            ? "; build it (bash scripts/build.sh) or pass --worker-dir"
                            : "";
      return absl::Status(process.status().code(),
                          absl::StrCat("collective job ", launch_.name, ", rank ", launch.rank,
                                       ": ", process.status().message(), fix));
    }
    auto worker = std::make_unique<Worker>();
    worker->rank = launch.rank;
    worker->report.rank = launch.rank;
    worker->process = *std::move(process);
    workers_.push_back(std::move(worker));
  }
  return absl::OkStatus();
}

void CollectiveJob::KillPastDeadlineLocked() {
  for (auto& worker : workers_) {
    if (worker->report.state != RankState::kRunning || worker->kill_reason.has_value()) continue;
    worker->kill_reason = absl::StrCat(
        "rank ", worker->rank, " ran past the job's deadline of ", SecondsText(launch_.timeout),
        " and was killed: a rank that hangs usually waits for a peer that never joined; "
        "check the other ranks' errors");
    worker->process->Kill();
  }
}

void CollectiveJob::PollSet::Clear() {
  fds.clear();  // keeps the capacity: the loop rebuilds the set every wake-up
  sources.clear();
  running = false;
  needs_reap_timer = false;
}

void CollectiveJob::PollSet::Add(int fd, short events, Source source, Worker* worker) {
  if (fd < 0) return;
  fds.push_back(pollfd{fd, events, 0});
  sources.emplace_back(source, worker);
}

void CollectiveJob::BuildPollSetLocked(PollSet& set) {
  using Source = PollSet::Source;
  set.Clear();
  set.Add(wake_read_, POLLIN, Source::kWake, nullptr);
  for (auto& worker : workers_) {
    if (worker->report.state != RankState::kRunning) continue;
    process::ChildProcess& process = *worker->process;
    if (process.exit_fd() < 0) {
      if (process.TryReap().has_value()) {
        Finalize(*worker);
        continue;
      }
      set.needs_reap_timer = true;
    }
    set.running = true;
    set.Add(process.stdout_fd(), POLLIN, Source::kStdout, worker.get());
    set.Add(process.stderr_fd(), POLLIN, Source::kStderr, worker.get());
    set.Add(process.exit_fd(), POLLIN, Source::kExit, worker.get());
    if (process.HasPendingStdin()) {
      set.Add(process.stdin_fd(), POLLOUT, Source::kStdin, worker.get());
    }
  }
}

void CollectiveJob::AbandonWorkersLocked(const std::string& cause) {
  for (auto& worker : workers_) {
    if (worker->report.state != RankState::kRunning) continue;
    if (!worker->kill_reason.has_value()) {
      worker->kill_reason = absl::StrCat(
          "rank ", worker->rank, " was killed because the agent could not watch it (poll: ", cause,
          "); check the agent's memory and ulimit -n");
    }
    worker->process->Kill();
    worker->process->Wait();  // SIGKILLed: returns at once
    Finalize(*worker);
  }
  FreeStoreLocked();
}

void CollectiveJob::ServeReadyLocked(const PollSet& set) {
  using Source = PollSet::Source;
  for (size_t i = 0; i < set.fds.size(); ++i) {
    if (set.fds[i].revents == 0) continue;
    auto [source, worker] = set.sources[i];
    switch (source) {
      case Source::kWake: {
        char drain[64];
        while (::read(wake_read_, drain, sizeof(drain)) > 0) {
        }
        break;
      }
      case Source::kStdout:
        ReadStream(*worker, /*is_stdout=*/true, /*until_eof=*/false);
        break;
      case Source::kStderr:
        ReadStream(*worker, /*is_stdout=*/false, /*until_eof=*/false);
        break;
      case Source::kStdin:
        worker->process->FlushStdin();
        break;
      case Source::kExit:
        break;  // below, after every stream of this round was read
    }
  }
  for (size_t i = 0; i < set.fds.size(); ++i) {
    auto [source, worker] = set.sources[i];
    if (source != Source::kExit || set.fds[i].revents == 0) continue;
    if (worker->report.state == RankState::kRunning && worker->process->TryReap().has_value()) {
      Finalize(*worker);
    }
  }
  // The last rank reaped frees the store here, under the lock that made it
  // finished, not at the loop's next turn: a Poll between the two read
  // finished=true with the store still held (CI saw 4,102 bytes) and would
  // have kept a key relayed late.
  if (AllReapedLocked()) FreeStoreLocked();
}

void CollectiveJob::Loop(std::promise<absl::Status>* started) {
  // Armed until it fires once; infinite timeouts never arm it.
  bool deadline_armed = false;
  absl::Time deadline = absl::InfiniteFuture();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (absl::Status spawned = SpawnWorkersLocked(); !spawned.ok()) {
      started->set_value(std::move(spawned));
      return;  // the destructor kills and reaps the ranks already started
    }
    if (launch_.timeout != absl::InfiniteDuration()) {
      deadline = clock_.Now() + launch_.timeout;
      deadline_armed = true;
    }
  }
  started->set_value(absl::OkStatus());

  PollSet set;
  while (true) {
    int timeout_ms = -1;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) return;
      if (deadline_armed && clock_.Now() >= deadline) {
        KillPastDeadlineLocked();
        deadline_armed = false;
      }
      BuildPollSetLocked(set);
      if (!set.running) {  // every rank is reaped and reported
        FreeStoreLocked();
        return;
      }
      if (deadline_armed) {
        const int64_t left_ms =
            absl::ToInt64Milliseconds(absl::Ceil(deadline - clock_.Now(), absl::Milliseconds(1)));
        timeout_ms = static_cast<int>(std::clamp<int64_t>(left_ms, 0, 60'000));
      }
      if (set.needs_reap_timer && (timeout_ms < 0 || timeout_ms > kReapPollMillis)) {
        timeout_ms = kReapPollMillis;
      }
    }

    int ready = ::poll(set.fds.data(), set.fds.size(), timeout_ms);
    if (ready < 0 && errno != EINTR) {
      // ENOMEM or a descriptor limit: the loop cannot serve the workers any
      // more, so end them with a reason rather than leave them unwatched.
      const std::string cause = std::strerror(errno);
      std::lock_guard<std::mutex> lock(mutex_);
      AbandonWorkersLocked(cause);
      return;
    }
    if (ready <= 0) continue;
    std::lock_guard<std::mutex> lock(mutex_);
    ServeReadyLocked(set);
  }
}

}  // namespace clustercert::agent::collective
