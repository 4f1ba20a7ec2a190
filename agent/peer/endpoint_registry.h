#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/peer/peer_endpoint.h"
#include "clustercert/v1/node_agent.pb.h"

namespace clustercert::peer {

struct EndpointLimits {
  absl::Duration min_lease = absl::Seconds(1);
  absl::Duration max_lease = absl::Hours(1);
  absl::Duration max_connect = absl::Minutes(2);
  absl::Duration max_run = absl::Hours(1) + absl::Minutes(5);
  // After a run, the lease covers this much more so the controller can close.
  absl::Duration run_grace = absl::Seconds(30);
  size_t max_endpoints = 64;
};

// The agent's peer-test endpoints, by id, each under a lease.
//
// The controller brokers every test; if it vanishes, nothing it prepared may
// outlive it: an endpoint not touched before its lease runs out is destroyed
// (its engine frees sockets, QPs, MRs and buffers in its destructor). One
// test at a time per device (an RDMA device, or a data IP for tcp): a second
// Prepare for a busy device is refused with the holder's test id. Run blocks
// its caller for the test's duration and is never done under the registry
// lock, so Close and other calls stay responsive.
class EndpointRegistry {
 public:
  EndpointRegistry(std::map<std::string, PeerEngine*> engines, std::function<absl::Time()> now,
                   EndpointLimits limits = {});
  ~EndpointRegistry();

  absl::StatusOr<v1::PrepareEndpointResponse> Prepare(const v1::PrepareEndpointRequest& request);
  absl::Status Connect(const v1::ConnectEndpointRequest& request);
  absl::StatusOr<v1::PeerTestResult> Run(const v1::RunEndpointRequest& request);
  absl::Status Close(const std::string& endpoint_id);
  absl::StatusOr<v1::PeerTestProgress> Progress(const std::string& endpoint_id);

  // Destroys endpoints whose lease has run out; returns how many.
  int ReapExpired();
  // Runs ReapExpired every `period` on a thread of its own until destroyed.
  void StartReaper(absl::Duration period);

  size_t active() const;

 private:
  struct Entry {
    std::shared_ptr<PeerEndpoint> endpoint;
    std::string device;  // "mlx5_0" or "tcp 10.0.0.1": the busy key
    std::string test_id;
    absl::Duration lease;
    absl::Time expires;
    bool running = false;
  };

  absl::StatusOr<std::shared_ptr<PeerEndpoint>> Touch(const std::string& endpoint_id,
                                                      Entry** entry);

  std::map<std::string, PeerEngine*> engines_;
  std::function<absl::Time()> now_;
  EndpointLimits limits_;

  mutable std::mutex mutex_;
  std::map<std::string, Entry> entries_;
  uint64_t next_id_ = 1;

  std::mutex reaper_mutex_;
  std::condition_variable reaper_wake_;
  bool stopping_ = false;
  std::thread reaper_;
};

}  // namespace clustercert::peer
