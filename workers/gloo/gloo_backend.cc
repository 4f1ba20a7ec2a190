#include "workers/gloo/gloo_backend.h"

#include <gloo/allgather.h>
#include <gloo/allgather_ring.h>
#include <gloo/allreduce.h>
#include <gloo/allreduce_ring.h>
#include <gloo/alltoall.h>
#include <gloo/barrier.h>
#include <gloo/barrier_all_to_all.h>
#include <gloo/common/error.h>
#include <gloo/common/logging.h>
#include <gloo/math.h>
#include <gloo/reduce_scatter.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/address.h>
#include <gloo/transport/ibverbs/device.h>
#include <gloo/transport/pair.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <utility>

#include "sweep/device_report.h"

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

std::unique_ptr<GlooCollectiveBackend> GlooCollectiveBackend::Connect(
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
      if (options.operation == sweep::Operation::kAlltoAll) {
        error = who +
                ": gloo's ibverbs transport has no alltoall (gloo's alltoall needs unbound "
                "buffers, which its ibverbs transport lacks): run alltoall with "
                "collectives.transport: tcp, or with the nccl backend";
        return nullptr;
      }
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
  return std::unique_ptr<GlooCollectiveBackend>(new GlooCollectiveBackend(
      options, std::move(description), std::move(device), std::move(context)));
}

GlooCollectiveBackend::GlooCollectiveBackend(const sweep::WorkerOptions& options,
                                             std::string transport_description,
                                             std::shared_ptr<::gloo::transport::Device> device,
                                             std::shared_ptr<::gloo::Context> context)
    : rank_(options.rank),
      ranks_(options.ranks),
      operation_(options.operation),
      timeout_s_(options.timeout_s),
      memory_cap_bytes_(HostBufferCapBytes(options.memory_cap_bytes, ReadMemAvailableBytes())),
      transport_description_(std::move(transport_description)),
      device_(std::move(device)),
      context_(std::move(context)),
      bound_buffers_(options.transport == "ibverbs") {}

std::string GlooCollectiveBackend::DeviceNote() const {
  std::string bound;
  // Any connected pair shows the socket address gloo bound (rank 0 alone has
  // none); ibverbs pairs hold a QP address, not an interface, so only tcp's.
  if (!bound_buffers_ && ranks_ > 1) {
    const auto& pair = context_->getPair((rank_ + 1) % ranks_);
    if (pair) bound = pair->address().str();
  }
  return sweep::DeviceNote(device_->str(), bound);
}

std::string GlooCollectiveBackend::FailureSentence(const std::string& what) const {
  return "rank " + std::to_string(rank_) + " of " + std::to_string(ranks_) + " (gloo " +
         transport_description_ + "): " + what +
         ": if this is a timeout or a closed connection, a peer rank died or the data network "
         "between the ranks broke (--timeout-s " +
         FormatSeconds(timeout_s_) + "); read the other ranks' fail lines and check the links";
}

int64_t GlooCollectiveBackend::MemoryCapBytes() const {
  if (bound_buffers_) return memory_cap_bytes_ / 4;
  return operation_ == sweep::Operation::kReduceScatter ? memory_cap_bytes_ / 2 : memory_cap_bytes_;
}

bool GlooCollectiveBackend::UsesBoundAlgorithm() const {
  return bound_buffers_ || operation_ == sweep::Operation::kReduceScatter;
}

std::unique_ptr<::gloo::Algorithm> GlooCollectiveBackend::MakeBoundAlgorithm(
    BoundSize& size) const {
  const int count = static_cast<int>(shape_.count);
  switch (operation_) {
    case sweep::Operation::kAllGather:
      size.output.assign(static_cast<size_t>(shape_.receive_count), 0.0f);
      return std::make_unique<::gloo::AllgatherRing<float>>(
          context_, std::vector<const float*>{size.buffer.data()}, size.output.data(), count);
    case sweep::Operation::kReduceScatter:
      // Rank r's block of the sum lands at the start of the buffer (RunBound).
      return std::make_unique<::gloo::ReduceScatterHalvingDoubling<float>>(
          context_, std::vector<float*>{size.buffer.data()}, static_cast<int>(size.buffer.size()),
          std::vector<int>(ranks_, count));
    default:
      return std::make_unique<::gloo::AllreduceRing<float>>(
          context_, std::vector<float*>{size.buffer.data()}, static_cast<int>(size.buffer.size()));
  }
}

void GlooCollectiveBackend::Prepare(const sweep::CollectiveShape& shape,
                                    const std::vector<float>& send_data) {
  try {
    shape_ = shape;
    send_ = send_data;
    receive_.assign(static_cast<size_t>(std::max(shape.send_count, shape.receive_count)), 0.0f);
    if (!UsesBoundAlgorithm()) return;
    // The sweep prepares each size more than once: reuse its algorithm.
    if (bound_ != nullptr && bound_->buffer.size() == send_data.size()) return;
    auto size = std::make_unique<BoundSize>();
    size->buffer.assign(send_data.size(), 0.0f);
    size->algorithm = MakeBoundAlgorithm(*size);
    bound_ = size.get();
    // Over tcp a finished size's buffers may go (see bound_sizes_ for ibverbs).
    if (!bound_buffers_) bound_sizes_.clear();
    bound_sizes_.push_back(std::move(size));
  } catch (const std::bad_alloc&) {
    throw GlooFailure("rank " + std::to_string(rank_) + " could not allocate two buffers of " +
                      std::to_string(shape.bytes) +
                      " bytes on the host: lower --memory-cap or the sweep's largest size");
  } catch (const std::exception& failure) {
    throw GlooFailure(FailureSentence(std::string("setting up gloo's ") +
                                      sweep::OperationName(operation_) + ": " + failure.what()));
  }
}

void GlooCollectiveBackend::RunUnbound(bool in_place) {
  const auto count = static_cast<size_t>(shape_.count);
  const auto all = static_cast<size_t>(shape_.receive_count);
  float* input = in_place ? receive_.data() + shape_.in_place_send_offset : send_.data();
  if (operation_ == sweep::Operation::kAllGather) {
    ::gloo::AllgatherOptions options(context_);
    // gloo's in-place allgather: no input, the chunk already at its offset.
    if (!in_place) options.setInput(input, count);
    options.setOutput(receive_.data(), all);
    ::gloo::allgather(options);
  } else if (operation_ == sweep::Operation::kAlltoAll) {
    ::gloo::AlltoallOptions options(context_);
    options.setInput(input, all);
    options.setOutput(receive_.data(), all);
    ::gloo::alltoall(options);
  } else {
    ::gloo::AllreduceOptions options(context_);
    options.setInput(input, count);
    options.setOutput(receive_.data(), count);
    options.setReduceFunction(kFloatSum);
    ::gloo::allreduce(options);
  }
}

void GlooCollectiveBackend::RunBound(int n, bool in_place) {
  // The algorithms work in place on their own buffer: out-of-place starts
  // each operation from a copy of the input (a host memcpy, inside the
  // time), in-place from the running result.
  std::vector<float>& buffer = bound_->buffer;
  if (in_place) std::copy(send_.begin(), send_.end(), buffer.begin());
  for (int i = 0; i < n; ++i) {
    if (!in_place) std::copy(send_.begin(), send_.end(), buffer.begin());
    bound_->algorithm->run();
  }
  if (operation_ == sweep::Operation::kReduceScatter) {
    // gloo's distribution phase leaves this rank's block of the sum at the
    // start of the buffer; nccl-tests' in-place puts it at rank x count.
    const int64_t to = in_place ? shape_.in_place_receive_offset : 0;
    std::copy(buffer.begin(), buffer.begin() + shape_.count, receive_.begin() + to);
    return;
  }
  const std::vector<float>& result =
      operation_ == sweep::Operation::kAllGather ? bound_->output : buffer;
  std::copy(result.begin(), result.begin() + shape_.receive_count, receive_.begin());
}

std::string GlooCollectiveBackend::Run(int n, bool in_place) {
  try {
    if (UsesBoundAlgorithm()) {
      RunBound(n, in_place);
      return "";
    }
    if (in_place) {
      std::copy(send_.begin(), send_.end(), receive_.begin() + shape_.in_place_send_offset);
    }
    for (int i = 0; i < n; ++i) RunUnbound(in_place);
  } catch (const std::exception& failure) {
    // The sweep's sentence already names the operation, size and variant.
    return FailureSentence(failure.what());
  }
  return "";
}

std::vector<float> GlooCollectiveBackend::Result(bool in_place) {
  const int64_t from = in_place ? shape_.in_place_receive_offset : 0;
  const int64_t end = std::min<int64_t>(from + shape_.receive_count, receive_.size());
  return std::vector<float>(receive_.begin() + from, receive_.begin() + end);
}

GlooCollectiveBackend::~GlooCollectiveBackend() {
  if (!bound_buffers_) return;
  // Deliberately not destroyed (see bound_sizes_): the worker exits next.
  for (auto& size : bound_sizes_) {
    (void)size->algorithm.release();
    (void)size.release();
  }
  (void)barrier_.release();
  (void)new std::shared_ptr<::gloo::Context>(std::move(context_));
  (void)new std::shared_ptr<::gloo::transport::Device>(std::move(device_));
}

void GlooCollectiveBackend::Barrier() {
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
