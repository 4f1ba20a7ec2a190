#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "clustercert/v1/peer.pb.h"

namespace clustercert::agent::peer {

// The part of a peer-test spec every engine reads the same way: how many
// parallel streams (TCP connections or QPs), whether both directions run, and
// duration mode or iterations mode. Bounds are shared; the unit names the
// engine's kind of stream in messages ("stream", "QP").
struct RunShape {
  uint32_t streams = 1;
  bool bidirectional = false;
  absl::Duration duration = absl::ZeroDuration();  // > 0: duration mode
  uint64_t iterations = 0;                         // otherwise
  // A side that sees its data move ends the run once none moved for this long.
  absl::Duration no_progress = absl::Seconds(10);
};

// Bounds every engine shares.
inline constexpr uint32_t kMaxStreams = 64;
inline constexpr double kMaxDurationSeconds = 3600;
inline constexpr uint64_t kMaxIterations = 100'000'000;
// Latency keeps every sample for its percentiles (8 bytes each).
inline constexpr uint64_t kMaxLatencySamples = 10'000'000;
// no_progress_s when the spec leaves it 0 (a controller that predates it).
inline constexpr double kDefaultNoProgressSeconds = 10;

// What differs between engines.
struct RunShapeLimits {
  uint64_t default_iterations = 1000;
  std::string stream_unit = "stream";  // "stream" | "QP"
  std::string engine = "tcp";
};

absl::StatusOr<RunShape> ParseRunShape(const v1::PeerTestSpec& spec, bool latency,
                                       const RunShapeLimits& limits);

}  // namespace clustercert::agent::peer
