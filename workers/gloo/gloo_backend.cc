#include "workers/gloo/gloo_backend.h"

#include <gloo/allreduce.h>
#include <gloo/allreduce_ring.h>
#include <gloo/barrier.h>
#include <gloo/barrier_all_to_all.h>
#include <gloo/common/error.h>
#include <gloo/common/logging.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/ibverbs/device.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <utility>

namespace clustercert::workers::gloo_worker {
namespace {

using ReduceFunction = void (*)(void*, const void*, const void*, size_t);
// gloo::sum is overloaded; this picks the untyped float kernel AllreduceOptions takes.
const ReduceFunction kFloatSum = &::gloo::sum<float>;

std::chrono::milliseconds TimeoutOf(double timeout_s) {
  return std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
}

std::string FormatSeconds(double seconds) {
  std::ostringstream text;
  text << seconds;
  return text.str();
}

std::string ConnectFailure(const std::string& who, const std::string& description,
                           const std::string& what, double timeout_s) {
  return who + " could not connect the gloo " + description + " full mesh: " + what +
         ": check that every rank started, that the ranks reach each other's data address "
         "(firewall, routes, RDMA link) and that they met within --timeout-s " +
         FormatSeconds(timeout_s);
}

}  // namespace

int64_t HostBufferCapBytes(int64_t requested_cap_bytes, int64_t mem_available_bytes) {
  int64_t cap = requested_cap_bytes > 0 ? requested_cap_bytes : kDefaultHostBufferCapBytes;
  if (mem_available_bytes > 0) cap = std::min(cap, mem_available_bytes / 2 / 4);
  return cap;
}

int64_t ReadMemAvailableBytes(const std::string& meminfo_path) {
  std::ifstream meminfo(meminfo_path);
  std::string name;
  int64_t kib = 0;
  std::string unit;
  while (meminfo >> name >> kib) {
    std::getline(meminfo, unit);
    if (name == "MemAvailable:") return kib * 1024;
  }
  return 0;
}

std::unique_ptr<GlooAllreduceBackend> GlooAllreduceBackend::Connect(
    const sweep::WorkerOptions& options, ::gloo::rendezvous::Store& store, std::string& error) {
  const std::string who =
      "rank " + std::to_string(options.rank) + " of " + std::to_string(options.ranks);
  std::string description;
  std::string fix;
  std::shared_ptr<::gloo::transport::Device> device;
  try {
    if (options.transport == "tcp") {
      if (options.bind_ip.empty()) {
        error = who +
                ": gloo tcp needs the node's data-plane address and --bind-ip is empty: the "
                "agent must pass the address of the interface under test (the management "
                "address is never guessed)";
        return nullptr;
      }
      description = "tcp " + options.bind_ip;
      fix = options.bind_ip + " must be an address of this node's data interface (check `ip addr`)";
      ::gloo::transport::tcp::attr attr;
      attr.hostname = options.bind_ip;
      device = ::gloo::transport::tcp::CreateDevice(attr);
    } else if (options.transport == "ibverbs") {
      if (options.ib_device.empty()) {
        error = who +
                ": gloo ibverbs needs an RDMA device and --ib-device is empty: pass the "
                "device under test, e.g. --ib-device mlx5_0";
        return nullptr;
      }
      description = "ibverbs " + options.ib_device + " port " + std::to_string(options.ib_port) +
                    " gid " + std::to_string(options.gid_index);
      fix = "check that " + options.ib_device + " exists (ibv_devices), port " +
            std::to_string(options.ib_port) + " is ACTIVE (ibv_devinfo) and gid index " +
            std::to_string(options.gid_index) + " is populated (show_gids)";
      ::gloo::transport::ibverbs::attr attr;
      attr.name = options.ib_device;
      attr.port = options.ib_port;
      attr.index = options.gid_index;
      device = ::gloo::transport::ibverbs::CreateDevice(attr);
    } else {
      error = who + ": gloo transport '" + options.transport +
              "' is not one this worker has: use tcp or ibverbs";
      return nullptr;
    }
  } catch (const std::exception& failure) {
    error = who + " could not open gloo " + description + ": " + failure.what() + ": " + fix;
    return nullptr;
  }

  auto context = std::make_shared<::gloo::rendezvous::Context>(options.rank, options.ranks);
  try {
    context->setTimeout(TimeoutOf(options.timeout_s));
    // gloo's keys (rank_0, ...) are generic; the prefix keeps them apart
    // from anything else the job's store holds.
    ::gloo::rendezvous::PrefixStore prefixed("gloo", store);
    context->connectFullMesh(prefixed, device);
  } catch (const ::gloo::Exception& failure) {
    error = ConnectFailure(who, description, failure.what(), options.timeout_s);
    return nullptr;
  } catch (const ::gloo::EnforceNotMet& failure) {
    // Only gloo's own errors are about the mesh; the store's (the agent
    // went away) carry their own sentence up to the worker's main.
    error = ConnectFailure(who, description, failure.what(), options.timeout_s);
    return nullptr;
  }
  return std::unique_ptr<GlooAllreduceBackend>(new GlooAllreduceBackend(
      options, std::move(description), std::move(device), std::move(context)));
}

GlooAllreduceBackend::GlooAllreduceBackend(const sweep::WorkerOptions& options,
                                           std::string transport_description,
                                           std::shared_ptr<::gloo::transport::Device> device,
                                           std::shared_ptr<::gloo::Context> context)
    : rank_(options.rank),
      ranks_(options.ranks),
      timeout_s_(options.timeout_s),
      memory_cap_bytes_(HostBufferCapBytes(options.memory_cap_bytes, ReadMemAvailableBytes())),
      transport_description_(std::move(transport_description)),
      device_(std::move(device)),
      context_(std::move(context)),
      bound_buffers_(options.transport == "ibverbs") {}

std::string GlooAllreduceBackend::FailureSentence(const std::string& what) const {
  return "rank " + std::to_string(rank_) + " of " + std::to_string(ranks_) + " (gloo " +
         transport_description_ + "): " + what +
         ": if this is a timeout or a closed connection, a peer rank died or the data network "
         "between the ranks broke (--timeout-s " +
         FormatSeconds(timeout_s_) + "); read the other ranks' fail lines and check the links";
}

void GlooAllreduceBackend::Prepare(const std::vector<float>& host_data) {
  try {
    send_ = host_data;
    receive_.assign(host_data.size(), 0.0f);
    if (bound_buffers_) {
      // The sweep prepares each size more than once: reuse its ring.
      if (bound_ == nullptr || bound_->buffer.size() != host_data.size()) {
        auto size = std::make_unique<BoundSize>();
        size->buffer.assign(host_data.size(), 0.0f);
        size->ring = std::make_unique<::gloo::AllreduceRing<float>>(
            context_, std::vector<float*>{size->buffer.data()},
            static_cast<int>(size->buffer.size()));
        bound_ = size.get();
        bound_sizes_.push_back(std::move(size));
      }
    }
  } catch (const std::bad_alloc&) {
    throw GlooFailure("rank " + std::to_string(rank_) + " could not allocate two buffers of " +
                      std::to_string(host_data.size() * sizeof(float)) +
                      " bytes on the host: lower --memory-cap or the sweep's largest size");
  }
}

std::string GlooAllreduceBackend::Run(int n, bool in_place) {
  const size_t count = receive_.size();
  try {
    if (bound_buffers_) {
      // The ring reduces in place on its own buffer; out-of-place starts
      // each operation from a copy of the input (a host memcpy, inside the
      // time), in-place from the running result.
      std::vector<float>& buffer = bound_->buffer;
      if (in_place) std::copy(send_.begin(), send_.end(), buffer.begin());
      for (int i = 0; i < n; ++i) {
        if (!in_place) std::copy(send_.begin(), send_.end(), buffer.begin());
        bound_->ring->run();
      }
      std::copy(buffer.begin(), buffer.end(), receive_.begin());
      return "";
    }
    ::gloo::AllreduceOptions options(context_);
    if (in_place) {
      std::copy(send_.begin(), send_.end(), receive_.begin());
      options.setInput(receive_.data(), count);
    } else {
      options.setInput(send_.data(), count);
    }
    options.setOutput(receive_.data(), count);
    options.setReduceFunction(kFloatSum);
    for (int i = 0; i < n; ++i) ::gloo::allreduce(options);
  } catch (const std::exception& failure) {
    // The sweep's sentence already names the size and the variant.
    return FailureSentence(failure.what());
  }
  return "";
}

std::vector<float> GlooAllreduceBackend::Result() { return receive_; }

GlooAllreduceBackend::~GlooAllreduceBackend() {
  if (!bound_buffers_) return;
  // Deliberately not destroyed (see bound_sizes_): the worker exits next.
  for (auto& size : bound_sizes_) {
    (void)size->ring.release();
    (void)size.release();
  }
  (void)barrier_.release();
  (void)new std::shared_ptr<::gloo::Context>(std::move(context_));
  (void)new std::shared_ptr<::gloo::transport::Device>(std::move(device_));
}

void GlooAllreduceBackend::Barrier() {
  try {
    if (bound_buffers_) {
      if (!barrier_) barrier_ = std::make_unique<::gloo::BarrierAllToAll>(context_);
      barrier_->run();
      return;
    }
    ::gloo::BarrierOptions options(context_);
    options.setTimeout(TimeoutOf(timeout_s_));
    ::gloo::barrier(options);
  } catch (const std::exception& failure) {
    throw GlooFailure(FailureSentence(std::string("barrier: ") + failure.what()));
  }
}

}  // namespace clustercert::workers::gloo_worker
