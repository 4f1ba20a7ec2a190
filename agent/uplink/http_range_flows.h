#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/uplink/uplink_flows.h"

// The http flavour of the uplink measurement: N flows GET contiguous parts
// of one large object with Range requests, the way dataloaders read shards
// from object storage. The object's size comes from a `Range: bytes=0-0`
// probe (206 + Content-Range), which also proves the server honours ranges;
// servers that answer 200 give it through Content-Length, or a HEAD.
// Each flow re-requests its part (keep-alive) until the duration ends, so a
// small object still yields a duration-long measurement, and the duration
// stops flows mid-transfer: the bytes received so far count.
namespace clustercert::agent::uplink {

// An inclusive byte range, as in "Range: bytes=first-last".
struct ByteRange {
  uint64_t first = 0;
  uint64_t last = 0;

  uint64_t size() const { return last - first + 1; }
  bool operator==(const ByteRange&) const = default;
};

// Splits [0, object_bytes) into min(flows, object_bytes) contiguous ranges
// whose sizes differ by at most one byte; never an empty range (none at all
// for an empty object or flows < 1).
std::vector<ByteRange> SplitRanges(uint64_t object_bytes, int flows);

// The total size in a Content-Range value: "bytes 0-0/1048576" -> 1048576,
// "bytes */0" (a 416 answer) -> 0. InvalidArgument when the value is not of
// that form or the size is unknown ("bytes 0-0/*").
absl::StatusOr<uint64_t> ParseContentRangeTotal(absl::string_view value);

// Runs spec.flows range-GET flows against `url` for spec.duration, adding
// received bytes to `moved` (may be null) as they arrive. Only what
// ParseUplinkUrl accepts is fetched (http or https, no credentials, a valid
// host and port), libcurl may speak nothing else, redirects are not
// followed, and every connection's address passes CheckDestination, also
// when a DNS name resolved to it. Errors: InvalidArgument for a bad spec or
// URL or a refused address, FailedPrecondition for a 3xx answer,
// Unavailable when the server cannot be reached or drops a flow,
// DeadlineExceeded when the deadline cannot hold the duration or the server
// does not answer in time, FailedPrecondition for an empty object or a
// server that ignores Range with flows > 1, NotFound/PermissionDenied/
// Unavailable/FailedPrecondition for HTTP statuses other than 200/206.
absl::StatusOr<FlowsResult> RunHttpRangeFlows(const std::string& url, const FlowSpec& spec,
                                              std::atomic<uint64_t>* moved);

}  // namespace clustercert::agent::uplink
