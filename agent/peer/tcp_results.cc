#include "agent/peer/tcp_results.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/perf_stats.h"

namespace clustercert::agent::peer {

std::string FormatSeconds(SteadyClock::duration elapsed) {
  return absl::StrFormat("%.1f s", std::chrono::duration<double>(elapsed).count());
}

std::string StreamName(size_t index, size_t count, absl::string_view doing) {
  return absl::StrCat("stream ", index + 1, " of ", count, ", ", doing);
}

absl::Status StreamFailure(const absl::Status& status, absl::string_view peer,
                           SteadyClock::time_point run_start, absl::string_view stream) {
  const std::string after = FormatSeconds(SteadyClock::now() - run_start);
  switch (status.code()) {
    case absl::StatusCode::kUnavailable:
      return absl::UnavailableError(absl::StrCat("peer ", peer, " closed the connection after ",
                                                 after, ": ", status.message(), " (", stream,
                                                 "); check that the peer agent is alive"));
    case absl::StatusCode::kDeadlineExceeded:
      if (IsNoProgress(status)) {
        return absl::DeadlineExceededError(absl::StrCat(
            "the tcp test with peer ", peer, " stalled: ", status.message(), " (after ", after,
            ", ", stream,
            "): the link or the peer stalled; check the interfaces' drop and error counters and "
            "the peer's result (pairwise.no_progress_s sets how long a run may stall)"));
      }
      return absl::DeadlineExceededError(absl::StrCat(
          "the tcp test with peer ", peer, " reached its deadline after ", after, " (", stream,
          "): the deadline must exceed duration_s, or the peer stopped reading or writing"));
    default:
      return absl::Status(status.code(),
                          absl::StrCat("tcp ", stream, " with peer ", peer, " failed after ", after,
                                       ": ", status.message()));
  }
}

StreamTally Sum(const std::vector<StreamTally>& tallies) {
  StreamTally total;
  total.first = tallies.front().first;
  total.last = tallies.front().last;
  for (const StreamTally& tally : tallies) {
    total.bytes += tally.bytes;
    total.messages += tally.messages;
    total.first = std::min(total.first, tally.first);
    total.last = std::max(total.last, tally.last);
  }
  return total;
}

v1::BandwidthStats BandwidthOf(const TcpTestOptions& options, uint64_t bytes,
                               SteadyClock::duration elapsed) {
  // TCP has no per-message completions to time, so no peak: 0, as perftest
  // prints in duration mode.
  return ComputeBandwidth(options.message_bytes, bytes / options.message_bytes,
                          absl::FromChrono(elapsed), std::nullopt);
}

std::string StreamCount(const TcpTestOptions& options) {
  return absl::StrCat("tcp, ", options.streams, options.streams == 1 ? " stream" : " streams",
                      options.bidirectional ? " each way, bidirectional" : "");
}

absl::Status CheckReceived(const TcpTestOptions& options, const std::vector<StreamTally>& tallies,
                           absl::string_view direction) {
  for (size_t i = 0; i < tallies.size(); ++i) {
    const uint64_t bytes = tallies[i].bytes;
    const bool whole = bytes % options.message_bytes == 0;
    const bool complete = options.duration > absl::ZeroDuration() ||
                          bytes == options.iterations * options.message_bytes;
    if (!whole || !complete) {
      return absl::DataLossError(absl::StrCat(
          direction, " stream ", i + 1, " of ", tallies.size(), " delivered ", bytes,
          " bytes, expected ",
          options.duration > absl::ZeroDuration()
              ? absl::StrCat("whole ", options.message_bytes, "-byte messages")
              : absl::StrCat(options.iterations, " x ", options.message_bytes, " bytes"),
          ": the sender stopped early or was prepared with a different spec"));
    }
  }
  return absl::OkStatus();
}

// One connection of the test with the peer's "ip:port" for messages.

absl::Status CheckDurationFits(const TcpTestOptions& options, absl::Time deadline, absl::Time now) {
  const absl::Duration left = deadline - now;
  if (options.duration == absl::ZeroDuration() || options.duration < left) {
    return absl::OkStatus();
  }
  return absl::DeadlineExceededError(absl::StrFormat(
      "the tcp %s run has %.1f s before its deadline, less than its duration_s %.1f: give Run "
      "a deadline beyond the test's duration",
      options.test, absl::ToDoubleSeconds(left), absl::ToDoubleSeconds(options.duration)));
}

v1::LatencyStats LatencyOf(const TcpTestOptions& options, std::vector<double> rtt_us) {
  if (options.test != "read_lat") {
    for (double& sample : rtt_us) sample = OneWayFromRoundTrip(sample);
  }
  return ComputeLatency(std::move(rtt_us));
}

absl::Status BeginRun(const TcpTestOptions& options, absl::Time deadline, absl::Time now,
                      bool* ran) {
  if (*ran)
    return absl::FailedPreconditionError("this tcp endpoint already ran; prepare a new one");
  *ran = true;
  return CheckDurationFits(options, deadline, now);
}

namespace {

// The read buffers a side needs: the server drains its forward streams from
// one thread into one; the client reads each reverse stream on its own.
absl::StatusOr<std::vector<AlignedBuffer>> ReceiveBuffers(size_t count) {
  std::vector<AlignedBuffer> buffers;
  for (size_t i = 0; i < count; ++i) {
    absl::StatusOr<AlignedBuffer> buffer = AlignedBuffer::Allocate(kReceiveChunkBytes);
    if (!buffer.ok()) return buffer.status();
    buffers.push_back(*std::move(buffer));
  }
  return buffers;
}

}  // namespace

absl::StatusOr<BandwidthTallies> RunBandwidthStreams(const TcpTestOptions& options, bool client,
                                                     const std::vector<Stream*>& forward,
                                                     const std::vector<Stream*>& reverse,
                                                     absl::Time deadline,
                                                     SteadyClock::time_point run_start,
                                                     std::atomic<uint64_t>* moved) {
  const bool sends = client || !reverse.empty();
  absl::StatusOr<AlignedBuffer> message =
      AlignedBuffer::Allocate(sends ? options.message_bytes : 1);
  if (!message.ok()) return message.status();
  absl::StatusOr<std::vector<AlignedBuffer>> scratch = ReceiveBuffers(client ? reverse.size() : 1);
  if (!scratch.ok()) return scratch.status();
  BandwidthTallies tallies{std::vector<StreamTally>(forward.size()),
                           std::vector<StreamTally>(reverse.size()), SteadyClock::now()};
  const SendPlan plan{options.message_bytes, options.iterations, options.duration,
                      tallies.plan_start};
  std::vector<TcpSocket*> forward_sockets;
  forward_sockets.reserve(forward.size());
  for (Stream* stream : forward) forward_sockets.push_back(&stream->socket);
  std::atomic<bool> stop{false};
  std::vector<std::function<absl::Status()>> tasks;
  tasks.reserve(1 + reverse.size());
  tasks.emplace_back([&]() -> absl::Status {
    size_t failed = 0;
    absl::Status status = client ? SendStreams(forward_sockets, *message, plan, deadline, stop,
                                               moved, &tallies.forward, &failed)
                                 : ReceiveStreams(forward_sockets, (*scratch)[0], deadline, stop,
                                                  moved, &tallies.forward, &failed);
    if (status.ok()) return status;
    return StreamFailure(status, forward[failed]->peer, run_start,
                         StreamName(failed, forward.size(), client ? "sending" : "receiving"));
  });
  for (size_t i = 0; i < reverse.size(); ++i) {
    tasks.emplace_back([&, i]() -> absl::Status {
      absl::StatusOr<StreamTally> tally =
          client ? ReceiveStream(reverse[i]->socket, (*scratch)[i], deadline, stop)
                 : SendStream(reverse[i]->socket, *message, plan, deadline, stop);
      if (!tally.ok()) {
        return StreamFailure(tally.status(), reverse[i]->peer, run_start,
                             StreamName(i, reverse.size(), client ? "receiving" : "sending"));
      }
      tallies.reverse[i] = *tally;
      return absl::OkStatus();
    });
  }
  if (absl::Status ran = RunInParallel(std::move(tasks), stop); !ran.ok()) return ran;
  return tallies;
}

}  // namespace clustercert::agent::peer
