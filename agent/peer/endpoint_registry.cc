#include "agent/peer/endpoint_registry.h"

#include <vector>

#include "absl/strings/str_cat.h"

namespace clustercert::peer {
namespace {

std::string DeviceOf(const v1::PeerTestSpec& spec) {
  if (spec.engine() == "tcp") return absl::StrCat("tcp ", spec.data_ip());
  return spec.device();
}

absl::Duration Millis(uint32_t ms, absl::Duration fallback) {
  return ms == 0 ? fallback : absl::Milliseconds(ms);
}

}  // namespace

EndpointRegistry::EndpointRegistry(std::map<std::string, PeerEngine*> engines,
                                   std::function<absl::Time()> now, EndpointLimits limits)
    : engines_(std::move(engines)), now_(std::move(now)), limits_(limits) {}

EndpointRegistry::~EndpointRegistry() {
  {
    std::lock_guard<std::mutex> lock(reaper_mutex_);
    stopping_ = true;
  }
  reaper_wake_.notify_all();
  if (reaper_.joinable()) reaper_.join();
}

absl::StatusOr<v1::PrepareEndpointResponse> EndpointRegistry::Prepare(
    const v1::PrepareEndpointRequest& request) {
  const v1::PeerTestSpec& spec = request.spec();
  auto engine = engines_.find(spec.engine());
  if (engine == engines_.end()) {
    std::string known;
    for (const auto& [name, unused] : engines_)
      absl::StrAppend(&known, known.empty() ? "" : ", ", name);
    return absl::InvalidArgumentError(absl::StrCat(
        "engine '", spec.engine(), "' is not available on this agent; it has: ", known));
  }
  const absl::Duration lease = absl::Seconds(request.lease_s());
  if (lease < limits_.min_lease || lease > limits_.max_lease) {
    return absl::InvalidArgumentError(absl::StrCat(
        "lease_s is ", request.lease_s(), "; it must be from ",
        absl::ToInt64Seconds(limits_.min_lease), " to ", absl::ToInt64Seconds(limits_.max_lease)));
  }
  const std::string device = DeviceOf(spec);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [id, entry] : entries_) {
      if (entry.device == device) {
        return absl::ResourceExhaustedError(
            absl::StrCat("busy: ", device, " is in test '", entry.test_id, "' (endpoint ", id,
                         "); one test at a time per device: wait for it or close it"));
      }
    }
    if (entries_.size() >= limits_.max_endpoints) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "busy: ", entries_.size(), " endpoints are open, the most this agent holds"));
    }
  }
  // The engine allocates outside the lock; the device is re-checked after.
  auto endpoint = engine->second->Prepare(spec);
  if (!endpoint.ok()) return endpoint.status();

  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [id, entry] : entries_) {
    if (entry.device == device) {
      return absl::ResourceExhaustedError(
          absl::StrCat("busy: ", device, " was taken by test '", entry.test_id, "' meanwhile"));
    }
  }
  const std::string id = absl::StrCat("ep-", next_id_++);
  v1::PrepareEndpointResponse response;
  response.set_endpoint_id(id);
  *response.mutable_info() = (*endpoint)->local_info();
  Entry entry;
  entry.endpoint = std::shared_ptr<PeerEndpoint>(std::move(*endpoint));
  entry.device = device;
  entry.test_id = request.test_id();
  entry.lease = lease;
  entry.expires = now_() + lease;
  entries_.emplace(id, std::move(entry));
  return response;
}

absl::StatusOr<std::shared_ptr<PeerEndpoint>> EndpointRegistry::Touch(
    const std::string& endpoint_id, Entry** entry) {
  auto it = entries_.find(endpoint_id);
  if (it == entries_.end()) {
    return absl::NotFoundError(absl::StrCat(
        "no endpoint ", endpoint_id,
        " on this agent: it was closed, or its lease ran out (the controller took too long "
        "between calls)"));
  }
  it->second.expires = std::max(it->second.expires, now_() + it->second.lease);
  if (entry) *entry = &it->second;
  return it->second.endpoint;
}

absl::Status EndpointRegistry::Connect(const v1::ConnectEndpointRequest& request) {
  std::shared_ptr<PeerEndpoint> endpoint;
  const absl::Duration timeout = Millis(request.timeout_ms(), absl::Seconds(10));
  if (timeout > limits_.max_connect) {
    return absl::InvalidArgumentError(absl::StrCat("timeout_ms is ", request.timeout_ms(),
                                                   "; the most is ",
                                                   absl::ToInt64Milliseconds(limits_.max_connect)));
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto touched = Touch(request.endpoint_id(), nullptr);
    if (!touched.ok()) return touched.status();
    endpoint = *touched;
  }
  return endpoint->Connect(request.peer(), now_() + timeout);
}

absl::StatusOr<v1::PeerTestResult> EndpointRegistry::Run(const v1::RunEndpointRequest& request) {
  const absl::Duration timeout = Millis(request.timeout_ms(), absl::Minutes(1));
  if (timeout > limits_.max_run) {
    return absl::InvalidArgumentError(absl::StrCat("timeout_ms is ", request.timeout_ms(),
                                                   "; the most is ",
                                                   absl::ToInt64Milliseconds(limits_.max_run)));
  }
  const absl::Time deadline = now_() + timeout;
  std::shared_ptr<PeerEndpoint> endpoint;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Entry* entry = nullptr;
    auto touched = Touch(request.endpoint_id(), &entry);
    if (!touched.ok()) return touched.status();
    if (entry->running) {
      return absl::FailedPreconditionError(
          absl::StrCat("endpoint ", request.endpoint_id(),
                       " is already running: wait for that run's result or close the endpoint"));
    }
    entry->running = true;
    entry->expires = std::max(entry->expires, deadline + limits_.run_grace);
    endpoint = *touched;
  }
  auto result = endpoint->Run(deadline);
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(request.endpoint_id());
  if (it != entries_.end()) {
    it->second.running = false;
    it->second.expires = now_() + it->second.lease;
  }
  return result;
}

absl::Status EndpointRegistry::Close(const std::string& endpoint_id) {
  std::shared_ptr<PeerEndpoint> released;  // destroyed outside the lock
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(endpoint_id);
  if (it == entries_.end()) {
    return absl::NotFoundError(absl::StrCat("no endpoint ", endpoint_id,
                                            " to close: it was closed already or its lease ran "
                                            "out, so nothing is left to free"));
  }
  released = std::move(it->second.endpoint);
  entries_.erase(it);
  return absl::OkStatus();
}

absl::StatusOr<v1::PeerTestProgress> EndpointRegistry::Progress(const std::string& endpoint_id) {
  std::shared_ptr<PeerEndpoint> endpoint;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto touched = Touch(endpoint_id, nullptr);
    if (!touched.ok()) return touched.status();
    endpoint = *touched;
  }
  return endpoint->Progress();
}

int EndpointRegistry::ReapExpired() {
  std::vector<std::shared_ptr<PeerEndpoint>> released;  // destroyed outside the lock
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const absl::Time now = now_();
    for (auto it = entries_.begin(); it != entries_.end();) {
      if (it->second.expires <= now) {
        released.push_back(std::move(it->second.endpoint));
        it = entries_.erase(it);
      } else {
        ++it;
      }
    }
  }
  return static_cast<int>(released.size());
}

void EndpointRegistry::StartReaper(absl::Duration period) {
  reaper_ = std::thread([this, period] {
    std::unique_lock<std::mutex> lock(reaper_mutex_);
    while (!stopping_) {
      reaper_wake_.wait_for(lock, absl::ToChronoMilliseconds(period));
      if (stopping_) break;
      lock.unlock();
      ReapExpired();
      lock.lock();
    }
  });
}

size_t EndpointRegistry::active() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

}  // namespace clustercert::peer
