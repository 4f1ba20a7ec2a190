#pragma once

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "grpcpp/support/status.h"

namespace clustercert {

// The most bytes of an error message that travel to the caller. gRPC carries
// the message in a trailer and drops trailers past its metadata limit (8 KiB by
// default), replacing the real error with one about the metadata; a message
// echoing a megabyte request field must still arrive, so the rest is cut.
inline constexpr size_t kMaxStatusMessageBytes = 2048;
// The most bytes of a request field quoted in an error sentence (ClipValue).
inline constexpr size_t kMaxEchoedValueBytes = 80;

// absl and gRPC share the canonical codes; the message is kept up to
// kMaxStatusMessageBytes, then "... (N bytes cut)" says how much was left out.
grpc::Status ToGrpcStatus(const absl::Status& status);
absl::Status FromGrpcStatus(const grpc::Status& status);

// `message` cut to at most `max_bytes` (never inside a UTF-8 sequence) plus
// "... (N bytes cut)", or unchanged when it fits.
std::string TruncateMessage(absl::string_view message, size_t max_bytes = kMaxStatusMessageBytes);

// A request field as an error sentence quotes it: control and non-ASCII bytes
// escaped (\n, \000), at most kMaxEchoedValueBytes of it, then
// "... (N bytes)" with the field's full length. A caller's value is never
// trusted to be short or printable.
std::string ClipValue(absl::string_view value);

}  // namespace clustercert
