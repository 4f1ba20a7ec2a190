#include "controller/pairwise/phase/counter_reads.h"

#include <memory>

#include "absl/time/time.h"
#include "clustercert/v1/node_agent.pb.h"

namespace clustercert::controller {
namespace {

// A counter read is a sysfs and ethtool read on the agent: it answers in
// milliseconds, so this bounds a stuck agent, not a slow one.
constexpr absl::Duration kCounterReadDeadline = absl::Seconds(10);

struct PendingReads {
  size_t left = 0;
  std::function<void()> then;
};

}  // namespace

void ReadCountersOf(CallLoop& loop, const std::vector<CounterRead>& reads,
                    std::function<void()> then) {
  if (reads.empty()) {
    then();
    return;
  }
  auto pending = std::make_shared<PendingReads>();
  pending->left = reads.size();
  pending->then = std::move(then);
  for (const auto& [side, out] : reads) {
    v1::ReadPortCountersRequest request;
    request.set_device(side->device);
    request.set_port(side->device.empty() ? 0 : 1);
    request.set_netdev(side->netdev);
    side->state->client->ReadPortCounters(
        request, kCounterReadDeadline,
        loop.Bind<v1::ReadPortCountersResponse>(
            [pending, out = out](absl::StatusOr<v1::ReadPortCountersResponse> answer) {
              if (answer.ok()) *out = answer->counters();
              if (--pending->left == 0) std::exchange(pending->then, nullptr)();
            }));
  }
}

}  // namespace clustercert::controller
