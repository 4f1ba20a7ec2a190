#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "common/uplink_target.h"

// Uplink throughput: bytes between this host and a storage target over one
// flow, then over N flows at once. One TCP flow is pinned to one NIC (and one
// server-side queue), so a single flow shows the per-connection ceiling while
// parallel flows — what dataloaders such as DALI or WebDataset open as
// parallel range GETs — show the aggregate the node can really reach. The
// types here are shared by the http and tcp flavours of the measurement.
namespace clustercert::agent::uplink {

inline constexpr int kMaxFlows = kMaxUplinkFlows;
inline constexpr absl::Duration kMaxDuration = absl::Seconds(kMaxUplinkDurationS);

// What to run: how many flows, for how long, before when, from where.
struct FlowSpec {
  int flows = 1;                                 // parallel flows, 1..kMaxFlows
  absl::Duration duration = absl::Seconds(5);    // how long the flows run, (0, kMaxDuration]
  absl::Time deadline = absl::InfiniteFuture();  // hard stop for everything, probes included
  std::string bind_ip;                           // local data-plane address; empty: any
};

// What one flow moved.
struct FlowTally {
  uint64_t bytes = 0;
  double seconds = 0;     // this flow's first byte to its last
  uint32_t requests = 0;  // http: GETs issued; tcp: 1
};

struct FlowsResult {
  std::vector<FlowTally> flows;  // one per flow, in order
  uint64_t total_bytes = 0;
  double seconds = 0;         // earliest first byte to latest last byte
  double aggregate_gbps = 0;  // total_bytes * 8 / seconds / 1e9
  uint64_t object_bytes = 0;  // http: the object's size (0 when unknown); tcp: 0
  std::string detail;         // one line saying what ran
};

// Flow windows are measured on the steady clock, not absl::Now(): a wall
// clock step (NTP) in the middle of a run must not change a rate.
using SteadyClock = std::chrono::steady_clock;

// When one flow moved its first and its last byte; meaningless for a flow
// that moved none.
struct FlowWindow {
  SteadyClock::time_point first{};
  SteadyClock::time_point last{};
};

// The flow's own rate in Gb/s; 0 when it has no measured time.
double FlowGbps(const FlowTally& tally);

// Fills every flow's `seconds` from its window (`windows[i]` belongs to
// `result.flows[i]`; a flow with no bytes or no window gets 0), then
// total_bytes, seconds (earliest first byte to latest last byte of the flows
// that moved bytes) and aggregate_gbps.
void Summarise(FlowsResult& result, absl::Span<const FlowWindow> windows);

// InvalidArgument unless flows is in 1..kMaxFlows, duration is positive and
// at most kMaxDuration and bind_ip is empty or a literal IPv4/IPv6 address.
// `target` names the URL or address in the message.
absl::Status ValidateFlowSpec(const FlowSpec& spec, absl::string_view target);

// Refuses (InvalidArgument, with a clause) a destination the agent must not
// connect to: what CheckUplinkSockaddr refuses, and the directed broadcast
// address of one of this host's interfaces (10.10.9.255 on a /24), which
// only the host knows. Checked for every connection, after name resolution.
absl::Status CheckDestination(const sockaddr* address);

// DeadlineExceeded when flows started at `now` for spec.duration would end
// after spec.deadline. `what` names the measurement ("GET http://…").
absl::Status CheckDurationFits(const FlowSpec& spec, absl::Time now, absl::string_view what);

// The threads that share `flows` flows: one per core, never more than flows.
// Each thread multiplexes its flows, so 64 flows do not need 64 threads.
int WorkerCount(int flows);

// Splits `flows` round-robin over WorkerCount threads, runs work(share) on
// each and waits for all. The first failure is returned and sets `stop`, so
// the other workers (which watch it) end early instead of running out their
// duration.
template <typename Flow, typename Work>
absl::Status RunOnWorkers(const std::vector<Flow*>& flows, std::atomic<bool>& stop, Work work) {
  const int workers = WorkerCount(static_cast<int>(flows.size()));
  std::vector<std::vector<Flow*>> shares(workers);
  for (size_t i = 0; i < flows.size(); ++i) shares[i % workers].push_back(flows[i]);
  std::mutex failure_mutex;
  absl::Status failure;
  {
    std::vector<std::jthread> threads;
    threads.reserve(workers);
    for (const std::vector<Flow*>& share : shares) {
      threads.emplace_back([&, share] {
        absl::Status status = work(share);
        if (status.ok()) return;
        stop.store(true, std::memory_order_relaxed);
        std::lock_guard<std::mutex> lock(failure_mutex);
        if (failure.ok()) failure = std::move(status);  // the first failure is the cause
      });
    }
  }
  return failure;
}

}  // namespace clustercert::agent::uplink
