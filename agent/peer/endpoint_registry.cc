#include "agent/peer/endpoint_registry.h"

#include <algorithm>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"
#include "common/host_port.h"
#include "common/printable.h"
#include "common/random_id.h"
#include "spdlog/spdlog.h"

namespace clustercert::agent::peer {
namespace {

// The busy key; the request's own text, so clipped before it is kept or quoted.
std::string DeviceOf(const v1::PeerTestSpec& spec) {
  if (spec.engine() == "tcp") return absl::StrCat("tcp ", ClipValue(spec.data_ip()));
  return ClipValue(spec.device());
}

absl::Status NoSuchEndpoint(const std::string& endpoint_id) {
  return absl::NotFoundError(absl::StrCat(
      "no endpoint ", ClipValue(endpoint_id),
      " on this agent for this caller: it was closed, or its lease ran out (the controller took "
      "too long between calls)"));
}

// A share group is the controller's name for an incast round: kept and
// compared, never put in a path or a command; bounded and plain.
bool IsValidShareGroup(const std::string& group) {
  if (group.size() > 64) return false;
  return std::all_of(group.begin(), group.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == ':' ||
           c == '-';
  });
}

absl::Duration Millis(uint32_t ms, absl::Duration fallback) {
  return ms == 0 ? fallback : absl::Milliseconds(ms);
}

}  // namespace

EndpointRegistry::EndpointRegistry(std::map<std::string, PeerEngine*> engines,
                                   std::function<absl::Time()> now, EndpointLimits limits)
    : engines_(std::move(engines)), now_(std::move(now)), limits_(limits) {}

EndpointRegistry::~EndpointRegistry() { reaper_.Stop(); }

absl::StatusOr<v1::PrepareEndpointResponse> EndpointRegistry::Prepare(
    const v1::PrepareEndpointRequest& request, const std::string& caller) {
  const v1::PeerTestSpec& spec = request.spec();
  auto engine = engines_.find(spec.engine());
  if (engine == engines_.end()) {
    std::string known;
    for (const auto& [name, unused] : engines_)
      absl::StrAppend(&known, known.empty() ? "" : ", ", name);
    return absl::InvalidArgumentError(absl::StrCat(
        "engine '", ClipValue(spec.engine()), "' is not available on this agent; it has: ", known));
  }
  if (spec.queue_depth() > limits_.max_queue_depth) {
    return absl::InvalidArgumentError(absl::StrCat("queue_depth is ", spec.queue_depth(),
                                                   "; it must be 0 (the engine's default) to ",
                                                   limits_.max_queue_depth));
  }
  const absl::Duration lease = absl::Seconds(request.lease_s());
  if (lease < limits_.min_lease || lease > limits_.max_lease) {
    return absl::InvalidArgumentError(absl::StrCat(
        "lease_s is ", request.lease_s(), "; it must be from ",
        absl::ToInt64Seconds(limits_.min_lease), " to ", absl::ToInt64Seconds(limits_.max_lease),
        " (the controller renews it with every call)"));
  }
  const std::string device = DeviceOf(spec);
  if (!IsValidShareGroup(request.share_group())) {
    return absl::InvalidArgumentError(
        absl::StrCat("share_group '", ClipValue(request.share_group()),
                     "' is not a group name: use up to 64 letters, digits, '.', '_', ':' or '-'"));
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (absl::Status free = CheckDeviceFree(device, request.share_group(), caller, "is in");
        !free.ok()) {
      return free;
    }
  }
  absl::StatusOr<std::string> id = RandomId("ep-");
  if (!id.ok()) return id.status();
  // The engine allocates outside the lock; the device is re-checked after.
  auto endpoint = engine->second->Prepare(spec);
  if (!endpoint.ok()) return endpoint.status();

  std::lock_guard<std::mutex> lock(mutex_);
  if (absl::Status free =
          CheckDeviceFree(device, request.share_group(), caller, "was taken meanwhile by");
      !free.ok()) {
    return free;
  }
  v1::PrepareEndpointResponse response;
  response.set_endpoint_id(*id);
  *response.mutable_info() = (*endpoint)->local_info();
  Held held{std::shared_ptr<PeerEndpoint>(std::move(*endpoint)), device,
            ClipValue(request.test_id()), request.share_group()};
  spdlog::info("endpoint {} prepared for {} on {} (test {}, lease {} s{})", *id,
               PrintableText(caller), PrintableText(held.device), PrintableText(held.test_id),
               absl::ToInt64Seconds(lease),
               held.share_group.empty() ? "" : ", share group " + held.share_group);
  table_.Add(*std::move(id), std::move(held), caller, lease, now_());
  return response;
}

absl::Status EndpointRegistry::CheckDeviceFree(const std::string& device,
                                               const std::string& share_group,
                                               const std::string& caller, const char* verb) const {
  size_t sharing = 0;
  for (const auto& [id, entry] : table_.entries()) {
    if (entry.value.device != device) continue;
    const bool shares =
        !share_group.empty() && entry.value.share_group == share_group && entry.owner == caller;
    if (shares) {
      ++sharing;
      continue;
    }
    // The holder's endpoint id is named only to its own caller: ids are the
    // capability to drive an endpoint.
    return absl::ResourceExhaustedError(absl::StrCat(
        "busy: ", device, " ", verb, " test '", entry.value.test_id, "'",
        entry.owner == caller ? absl::StrCat(" (endpoint ", id, ")") : " (another caller's)",
        "; one test at a time per device: wait for it or close it"));
  }
  if (sharing >= limits_.max_sharing) {
    return absl::ResourceExhaustedError(
        absl::StrCat("busy: ", device, " already holds ", sharing, " endpoints of share group '",
                     share_group, "', the most one device is shared by: use fewer incast senders"));
  }
  if (table_.size() >= limits_.max_endpoints) {
    return absl::ResourceExhaustedError(
        absl::StrCat("busy: ", table_.size(),
                     " endpoints are open, the most this agent holds: close finished tests' "
                     "endpoints, or wait for their leases to run out"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<PeerEndpoint>> EndpointRegistry::Touch(
    const std::string& endpoint_id, const std::string& caller, Entry** entry) {
  Entry* found = table_.Touch(endpoint_id, caller, now_());
  if (found == nullptr) return NoSuchEndpoint(endpoint_id);
  if (entry) *entry = found;
  return found->value.endpoint;
}

absl::StatusOr<v1::ConnectEndpointResponse> EndpointRegistry::Connect(
    const v1::ConnectEndpointRequest& request, const std::string& caller) {
  std::shared_ptr<PeerEndpoint> endpoint;
  const absl::Duration timeout = Millis(request.timeout_ms(), absl::Seconds(10));
  if (timeout > limits_.max_connect) {
    return absl::InvalidArgumentError(absl::StrCat("timeout_ms is ", request.timeout_ms(),
                                                   "; the most is ",
                                                   absl::ToInt64Milliseconds(limits_.max_connect)));
  }
  // The peer's address is dialled from this host: an IP literal and a port,
  // never a name to resolve or text an engine might pass on.
  const v1::EndpointInfo& peer = request.peer();
  if (!peer.address().empty() && !IsIpAddress(peer.address())) {
    return absl::InvalidArgumentError(
        absl::StrCat("the peer's address is '", ClipValue(peer.address()),
                     "'; it must be the peer's data IP as a literal (e.g. 10.0.0.2 or fd00::2)"));
  }
  if (peer.tcp_port() > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("the peer's tcp_port is ", peer.tcp_port(), "; it must be 1 to 65535"));
  }
  const absl::Time deadline = now_() + timeout;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Entry* entry = nullptr;
    auto touched = Touch(request.endpoint_id(), caller, &entry);
    if (!touched.ok()) return touched.status();
    // A lease shorter than the connect's own wait must not run out under it.
    entry->expires = std::max(entry->expires, deadline + entry->lease);
    endpoint = *touched;
  }
  absl::Status connected = endpoint->Connect(request.peer(), deadline);
  std::lock_guard<std::mutex> lock(mutex_);
  if (Entry* entry = table_.Find(request.endpoint_id(), caller);
      entry != nullptr && !entry->value.running) {
    entry->expires = now_() + entry->lease;  // the lease runs from the call's end
  }
  if (!connected.ok()) return connected;
  v1::ConnectEndpointResponse response;
  *response.mutable_path_mtu() = endpoint->path_mtu();
  return response;
}

absl::StatusOr<v1::PeerTestResult> EndpointRegistry::Run(const v1::RunEndpointRequest& request,
                                                         const std::string& caller) {
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
    auto touched = Touch(request.endpoint_id(), caller, &entry);
    if (!touched.ok()) return touched.status();
    if (entry->value.running) {
      return absl::FailedPreconditionError(
          absl::StrCat("endpoint ", ClipValue(request.endpoint_id()),
                       " is already running: wait for that run's result or close the endpoint"));
    }
    entry->value.running = true;
    entry->expires = std::max(entry->expires, deadline + limits_.run_grace);
    endpoint = *touched;
  }
  auto result = endpoint->Run(deadline);
  std::lock_guard<std::mutex> lock(mutex_);
  if (Entry* entry = table_.Find(request.endpoint_id(), caller); entry != nullptr) {
    entry->value.running = false;
    entry->expires = now_() + entry->lease;  // the run's extension ends with the run
  }
  return result;
}

absl::Status EndpointRegistry::Close(const std::string& endpoint_id, const std::string& caller) {
  std::shared_ptr<PeerEndpoint> released;  // destroyed outside the lock
  std::lock_guard<std::mutex> lock(mutex_);
  Entry removed;
  if (!table_.Remove(endpoint_id, caller, &removed)) {
    return absl::NotFoundError(absl::StrCat("no endpoint ", ClipValue(endpoint_id),
                                            " to close for this caller: it was closed already or "
                                            "its lease ran out, so nothing is left to free"));
  }
  released = std::move(removed.value.endpoint);
  if (removed.value.running) {
    spdlog::info("endpoint {} on {} closed while running: its run is cancelled", endpoint_id,
                 PrintableText(removed.value.device));
  }
  // A Run in progress holds its own reference and would go on to its
  // deadline; closing means "stop now".
  released->Cancel();
  return absl::OkStatus();
}

size_t EndpointRegistry::CloseTest(const std::string& test_id, const std::string& caller) {
  const std::string clipped = ClipValue(test_id);  // as Prepare kept it
  std::vector<std::string> ids;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [id, entry] : table_.entries()) {
      if (entry.owner == caller && entry.value.test_id == clipped) ids.push_back(id);
    }
  }
  size_t closed = 0;
  for (const std::string& id : ids) {
    if (!Close(id, caller).ok()) continue;  // closed meanwhile
    spdlog::info("endpoint {} of test {} closed by test id: its prepare's caller gave up", id,
                 PrintableText(clipped));
    ++closed;
  }
  return closed;
}

absl::StatusOr<v1::PeerTestProgress> EndpointRegistry::Progress(const std::string& endpoint_id,
                                                                const std::string& caller) {
  std::shared_ptr<PeerEndpoint> endpoint;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto touched = Touch(endpoint_id, caller, nullptr);
    if (!touched.ok()) return touched.status();
    endpoint = *touched;
  }
  return endpoint->Progress();
}

int EndpointRegistry::ReapExpired() {
  std::vector<std::pair<std::string, Entry>> expired;  // destroyed outside the lock
  {
    std::lock_guard<std::mutex> lock(mutex_);
    expired = table_.TakeExpired(now_());
  }
  for (const auto& [id, entry] : expired) {
    spdlog::warn(
        "endpoint {} on {} (test {}, prepared by {}) freed: its {} s lease ran out without a "
        "call from the controller",
        id, PrintableText(entry.value.device), PrintableText(entry.value.test_id),
        PrintableText(entry.owner), absl::ToInt64Seconds(entry.lease));
  }
  return static_cast<int>(expired.size());
}

void EndpointRegistry::StartReaper(absl::Duration period) {
  reaper_.Start(period, [this] { ReapExpired(); });
}

size_t EndpointRegistry::active() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return table_.size();
}

}  // namespace clustercert::agent::peer
