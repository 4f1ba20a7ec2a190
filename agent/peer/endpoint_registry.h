#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/peer/peer_endpoint.h"
#include "clustercert/v1/node_agent.pb.h"
#include "common/lease_table.h"
#include "common/periodic_thread.h"

namespace clustercert::agent::peer {

struct EndpointLimits {
  // The controller asks for 10 s and renews it with every call and, while it
  // waits on the other end, once a second; ten minutes is room for a slow
  // controller, and the longest an endpoint nobody uses holds its device,
  // sockets and memory. A lease never runs out under a call in flight: a
  // connect or a run holds it to its own deadline.
  absl::Duration min_lease = absl::Seconds(1);
  absl::Duration max_lease = absl::Seconds(600);
  absl::Duration max_connect = absl::Minutes(2);
  absl::Duration max_run = absl::Hours(1) + absl::Minutes(5);
  // After a run, the lease covers this much more so the controller can close.
  absl::Duration run_grace = absl::Seconds(30);
  size_t max_endpoints = 64;
  // Incast: how many endpoints of one share group may hold one device at
  // once (the plan's pairwise.incast.senders is at most 64).
  size_t max_sharing = 64;
  // The verbs engine's own cap (VerbsTestOptions::kMaxQueueDepth), held for
  // every engine: a value no engine can use is refused before one sees it.
  uint32_t max_queue_depth = 4096;
};

// The agent's peer-test endpoints, by id, each under a lease.
//
// The controller brokers every test; if it vanishes, nothing it prepared may
// outlive it: an endpoint not touched before its lease runs out is destroyed
// (its engine frees sockets, QPs, MRs and buffers in its destructor), and one
// whose connect or run call is cancelled (the controller's connection closed,
// or it gave up) is closed at once by the service (NodeAgentService). One
// test at a time per device (an RDMA device, or a data IP for tcp): a second
// Prepare for a busy device is refused with the holder's test id, except
// within a share group: endpoints the same caller prepares with the same
// non-empty share_group (an incast round's receiving ends) hold the device
// together, up to max_sharing of them. Run blocks
// its caller for the test's duration and is never done under the registry
// lock, so Close and other calls stay responsive.
//
// Ids are 128 random bits ("ep-" + 32 hex digits, common/random_id.h), and
// each endpoint belongs to the caller that prepared it (`caller`, from
// agent/service/caller_identity.h): another caller's Connect, Run, Close or
// Progress gets the same NotFound as an id that never existed.
class EndpointRegistry {
 public:
  EndpointRegistry(std::map<std::string, PeerEngine*> engines, std::function<absl::Time()> now,
                   EndpointLimits limits = {});
  ~EndpointRegistry();

  absl::StatusOr<v1::PrepareEndpointResponse> Prepare(const v1::PrepareEndpointRequest& request,
                                                      const std::string& caller);
  // Connects the endpoint to its peer; the answer carries the path MTU it
  // measured meanwhile (PeerEndpoint::path_mtu).
  absl::StatusOr<v1::ConnectEndpointResponse> Connect(const v1::ConnectEndpointRequest& request,
                                                      const std::string& caller);
  absl::StatusOr<v1::PeerTestResult> Run(const v1::RunEndpointRequest& request,
                                         const std::string& caller);
  absl::Status Close(const std::string& endpoint_id, const std::string& caller);
  // Closes every endpoint `caller` prepared for `test_id` (the controller
  // lost a prepare's answer and so its id); returns how many.
  size_t CloseTest(const std::string& test_id, const std::string& caller);
  absl::StatusOr<v1::PeerTestProgress> Progress(const std::string& endpoint_id,
                                                const std::string& caller);

  // Destroys endpoints whose lease has run out; returns how many.
  int ReapExpired();
  // Runs ReapExpired every `period` on a thread of its own until destroyed.
  void StartReaper(absl::Duration period);

  size_t active() const;

 private:
  struct Held {
    std::shared_ptr<PeerEndpoint> endpoint;
    std::string device;       // "mlx5_0" or "tcp 10.0.0.1": the busy key
    std::string test_id;      // clipped for messages
    std::string share_group;  // empty: holds the device alone
    bool running = false;
  };
  using Entry = LeaseTable<Held>::Entry;

  // Under mutex_: why `device` cannot be taken now by `caller` for
  // `share_group` (ResourceExhausted naming the holder), or OK.
  absl::Status CheckDeviceFree(const std::string& device, const std::string& share_group,
                               const std::string& caller, const char* verb) const;

  // Under mutex_: the caller's endpoint, its lease renewed; NotFound alike
  // for a missing id and another caller's.
  absl::StatusOr<std::shared_ptr<PeerEndpoint>> Touch(const std::string& endpoint_id,
                                                      const std::string& caller, Entry** entry);

  std::map<std::string, PeerEngine*> engines_;
  std::function<absl::Time()> now_;
  EndpointLimits limits_;

  mutable std::mutex mutex_;
  LeaseTable<Held> table_;

  PeriodicThread reaper_;  // last: stopped before the rest goes
};

}  // namespace clustercert::agent::peer
