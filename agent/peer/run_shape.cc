#include "agent/peer/run_shape.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace clustercert::agent::peer {

absl::StatusOr<RunShape> ParseRunShape(const v1::PeerTestSpec& spec, bool latency,
                                       const RunShapeLimits& limits) {
  RunShape shape;
  shape.streams = spec.streams() == 0 ? 1 : spec.streams();
  if (shape.streams > kMaxStreams) {
    return absl::InvalidArgumentError(absl::StrCat("streams ", spec.streams(), " is outside 1..",
                                                   kMaxStreams, " ", limits.stream_unit,
                                                   "s for the ", limits.engine, " engine"));
  }
  if (latency && shape.streams != 1) {
    return absl::InvalidArgumentError(absl::StrCat("streams ", spec.streams(),
                                                   " is outside 1..1 for ", spec.test(),
                                                   ": latency runs on one ", limits.stream_unit));
  }
  if (latency && spec.bidirectional()) {
    return absl::InvalidArgumentError(absl::StrCat("bidirectional is not supported for ",
                                                   spec.test(),
                                                   ": a ping-pong already goes both ways"));
  }
  shape.bidirectional = spec.bidirectional();

  const double quiet = spec.no_progress_s();
  if (std::isnan(quiet) || quiet < 0 || quiet > kMaxDurationSeconds) {
    return absl::InvalidArgumentError(absl::StrCat(
        "no_progress_s ", quiet, " is outside 0 < no_progress_s <= ", kMaxDurationSeconds,
        " (0 selects the default, ", kDefaultNoProgressSeconds, " s)"));
  }
  shape.no_progress = absl::Seconds(quiet > 0 ? quiet : kDefaultNoProgressSeconds);

  const double seconds = spec.duration_s();
  if (std::isnan(seconds) || seconds < 0 || seconds > kMaxDurationSeconds) {
    return absl::InvalidArgumentError(
        absl::StrCat("duration_s ", seconds, " is outside 0 < duration_s <= ", kMaxDurationSeconds,
                     " (0 selects iterations mode)"));
  }
  if (seconds > 0) {
    shape.duration = absl::Seconds(seconds);
    return shape;
  }
  shape.iterations = spec.iterations() == 0 ? limits.default_iterations : spec.iterations();
  const uint64_t max_iterations = latency ? kMaxLatencySamples : kMaxIterations;
  if (shape.iterations > max_iterations) {
    return absl::InvalidArgumentError(absl::StrCat(
        "iterations ", spec.iterations(), " is outside 1..", max_iterations, " for ", spec.test(),
        latency ? " (every latency sample is kept for percentiles)" : ""));
  }
  return shape;
}

}  // namespace clustercert::agent::peer
