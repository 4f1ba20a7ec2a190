#include "workers/nccl/nccl_backend.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <sstream>
#include <thread>
#include <utility>

namespace clustercert::workers::nccl_worker {
namespace {

constexpr char kUniqueIdKey[] = "nccl-unique-id";
constexpr char kGpuFix[] = "check the GPU with nvidia-smi and the worker's stderr";

std::string NcclCallFailed(const std::string& call, ncclResult_t result, ncclComm_t comm) {
  std::string text = call + " failed: " + ncclGetErrorString(result);
  const char* last = ncclGetLastError(comm);
  if (last != nullptr && last[0] != '\0') text += std::string(" (") + last + ")";
  return text;
}

// What a failure sentence calls the operation's NCCL call.
std::string NcclCallName(sweep::Operation operation) {
  switch (operation) {
    case sweep::Operation::kAllGather:
      return "ncclAllGather";
    case sweep::Operation::kReduceScatter:
      return "ncclReduceScatter";
    case sweep::Operation::kAlltoAll:
      return "alltoall (grouped ncclSend/ncclRecv)";
    default:
      return "ncclAllReduce";
  }
}

using SteadyClock = std::chrono::steady_clock;

// How long the destructor lets a healthy communicator flush before it gives
// up and aborts it: the sweep already waited for its work.
constexpr std::chrono::seconds kFinalizeWait{10};
// Polling period while a non-blocking call settles: fine enough for an init
// of a few hundred milliseconds, coarse enough not to spin a core.
constexpr std::chrono::milliseconds kSettlePoll{1};

SteadyClock::time_point DeadlineAfter(double seconds) {
  return SteadyClock::now() +
         std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(seconds));
}

// The communicators are non-blocking (config.blocking = 0), so init,
// collectives and finalize may answer ncclInProgress; this polls
// ncclCommGetAsyncError until the call settled and returns its outcome:
// ncclSuccess, NCCL's error, or ncclInProgress when `deadline` came first.
ncclResult_t AwaitCommunicator(ncclComm_t comm, SteadyClock::time_point deadline) {
  while (true) {
    ncclResult_t state = ncclInProgress;
    const ncclResult_t result = ncclCommGetAsyncError(comm, &state);
    if (result != ncclSuccess) return result;
    if (state != ncclInProgress) return state;
    if (SteadyClock::now() >= deadline) return ncclInProgress;
    std::this_thread::sleep_for(kSettlePoll);
  }
}

std::string FormatSeconds(double seconds) {
  std::ostringstream text;
  text << seconds;
  return text.str();
}

}  // namespace

int64_t DeviceBufferCapBytes(int64_t requested_cap_bytes, int64_t free_bytes) {
  int64_t cap = std::max<int64_t>(0, free_bytes / 2 - kDeviceMemoryMarginBytes);
  if (requested_cap_bytes > 0) cap = std::min(cap, requested_cap_bytes);
  return cap;
}

NcclCommunicator::~NcclCommunicator() { Release(); }

void NcclCommunicator::Adopt(ncclComm_t comm) {
  Release();
  comm_ = comm;
}

// A non-blocking communicator is finalized (its last operations flushed)
// before it is destroyed; one that will not settle is aborted instead, so
// the worker exits rather than hangs in its destructor.
void NcclCommunicator::Release() {
  if (comm_ == nullptr) return;
  ncclResult_t result = ncclCommFinalize(comm_);
  if (result == ncclSuccess || result == ncclInProgress) {
    result = AwaitCommunicator(comm_, SteadyClock::now() + kFinalizeWait);
  }
  if (result == ncclSuccess) {
    ncclCommDestroy(comm_);
  } else {
    ncclCommAbort(comm_);
  }
  comm_ = nullptr;
}

void NcclCommunicator::Abort() {
  if (comm_ != nullptr) ncclCommAbort(comm_);
  comm_ = nullptr;
}

NcclCollectiveBackend::NcclCollectiveBackend(const sweep::WorkerOptions& options, int device)
    : rank_(options.rank),
      ranks_(options.ranks),
      operation_(options.operation),
      device_(device),
      timeout_s_(options.timeout_s),
      requested_cap_bytes_(options.memory_cap_bytes) {}

std::string NcclCollectiveBackend::FailureSentence(const std::string& what,
                                                   const std::string& fix) const {
  return "rank " + std::to_string(rank_) + " of " + std::to_string(ranks_) +
         " (nccl cuda:" + std::to_string(device_) + "): " + what + ": " + fix;
}

std::unique_ptr<NcclCollectiveBackend> NcclCollectiveBackend::Create(
    const sweep::WorkerOptions& options, int device, sweep::WorkerChannel* channel,
    std::string& error) {
  std::unique_ptr<NcclCollectiveBackend> backend(new NcclCollectiveBackend(options, device));
  ncclUniqueId unique_id;
  std::string failed = backend->SelectDevice();
  if (failed.empty()) failed = backend->ShareUniqueId(channel, unique_id);
  if (failed.empty()) failed = backend->JoinCommunicator(unique_id);
  if (failed.empty()) failed = backend->SizeBuffers();
  if (!failed.empty()) {
    error = std::move(failed);
    return nullptr;
  }
  return backend;
}

std::string NcclCollectiveBackend::SelectDevice() {
  const cudaError_t cuda_result = cudaSetDevice(device_);
  if (cuda_result != cudaSuccess) {
    return FailureSentence(CudaCallFailed("cudaSetDevice", device_, cuda_result),
                           "check that cuda:" + std::to_string(device_) +
                               " is visible (CUDA_VISIBLE_DEVICES, nvidia-smi)");
  }
  std::string failed = CreateStream(device_, stream_);
  if (failed.empty()) failed = AllocateDeviceMemory(sizeof(float), device_, barrier_word_);
  if (!failed.empty()) return FailureSentence(failed, kGpuFix);
  return "";
}

std::string NcclCollectiveBackend::ShareUniqueId(sweep::WorkerChannel* channel,
                                                 ncclUniqueId& unique_id) const {
  if (rank_ != 0) return ReadUniqueId(channel, unique_id);
  ncclResult_t result = ncclGetUniqueId(&unique_id);
  if (result != ncclSuccess) {
    return FailureSentence(NcclCallFailed("ncclGetUniqueId", result, nullptr),
                           "NCCL could not open its bootstrap socket; check "
                           "NCCL_SOCKET_IFNAME and the worker's stderr");
  }
  if (channel != nullptr) {
    channel->Set(kUniqueIdKey,
                 std::vector<char>(unique_id.internal, unique_id.internal + sizeof(unique_id)));
  }
  return "";
}

std::string NcclCollectiveBackend::ReadUniqueId(sweep::WorkerChannel* channel,
                                                ncclUniqueId& unique_id) const {
  if (channel == nullptr) {
    return FailureSentence("reading the NCCL unique id",
                           "ranks other than 0 need the agent's store; run with the "
                           "agent or with --ranks 1");
  }
  std::optional<std::vector<char>> value = channel->Get(kUniqueIdKey);
  if (!value) {
    return FailureSentence(
        "waiting for '" + std::string(kUniqueIdKey) + "'",
        "the node-agent closed the worker's stdin (the job was cancelled or the agent died); "
        "see the agent's log");
  }
  if (value->size() != sizeof(unique_id)) {
    return FailureSentence(
        "reading '" + std::string(kUniqueIdKey) + "': it holds " + std::to_string(value->size()) +
            " bytes, NCCL's id is " + std::to_string(sizeof(unique_id)),
        "rank 0 runs a different NCCL build; install the same NCCL on every node");
  }
  std::memcpy(unique_id.internal, value->data(), sizeof(unique_id));
  return "";
}

// Non-blocking creation polled against our own deadline: a rank whose peers
// never join fails with NCCL's state and our sentence after --timeout-s,
// before the agent has to kill it at the job's deadline.
std::string NcclCollectiveBackend::JoinCommunicator(const ncclUniqueId& unique_id) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t comm = nullptr;
  const std::string call = "ncclCommInitRankConfig of " + std::to_string(ranks_) + " ranks";
  ncclResult_t result = ncclCommInitRankConfig(&comm, ranks_, unique_id, rank_, &config);
  if (comm != nullptr) communicator_.Adopt(comm);
  if (comm != nullptr && (result == ncclSuccess || result == ncclInProgress)) {
    result = AwaitCommunicator(comm, DeadlineAfter(timeout_s_));
  }
  if (result == ncclInProgress) {
    communicator_.Abort();
    return FailureSentence(call + " not complete after --timeout-s " + FormatSeconds(timeout_s_),
                           "a rank never joined; check that every rank started (the other "
                           "nodes' fail lines) and that the nodes reach each other on "
                           "NCCL_SOCKET_IFNAME");
  }
  if (result != ncclSuccess) {
    std::string failed = NcclCallFailed(call, result, comm);
    communicator_.Abort();
    return FailureSentence(failed,
                           "NCCL's INFO lines on stderr name the step; check that every rank "
                           "started and that the nodes reach each other on NCCL_SOCKET_IFNAME");
  }
  return "";
}

// "" once a call on the communicator settled successfully; otherwise the
// communicator is aborted and the sentence says why.
std::string NcclCollectiveBackend::Settle(ncclResult_t result, const std::string& during) {
  if (result == ncclInProgress) {
    result = AwaitCommunicator(communicator_.get(), DeadlineAfter(timeout_s_));
  }
  if (result == ncclSuccess) return "";
  if (result == ncclInProgress) {
    communicator_.Abort();
    return FailureSentence(during + ": not settled after --timeout-s " + FormatSeconds(timeout_s_),
                           "a peer rank stopped or the network between the GPUs is stalled; "
                           "read the other ranks' fail lines and NCCL's WARN lines on stderr");
  }
  std::string call = NcclCallFailed(during, result, communicator_.get());
  communicator_.Abort();
  return FailureSentence(call, "NCCL's WARN lines on stderr say why");
}

std::string NcclCollectiveBackend::SizeBuffers() {
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  const cudaError_t cuda_result = cudaMemGetInfo(&free_bytes, &total_bytes);
  if (cuda_result != cudaSuccess) {
    return FailureSentence(CudaCallFailed("cudaMemGetInfo", device_, cuda_result), kGpuFix);
  }
  free_bytes_at_start_ = static_cast<int64_t>(free_bytes);
  memory_cap_bytes_ = DeviceBufferCapBytes(requested_cap_bytes_, static_cast<int64_t>(free_bytes));
  return "";
}

void NcclCollectiveBackend::Prepare(const sweep::CollectiveShape& shape,
                                    const std::vector<float>& send_data) {
  const auto bytes = static_cast<size_t>(shape.bytes);
  const size_t send_bytes = send_data.size() * sizeof(float);
  const std::string fix = "lower --memory-cap or the sweep's largest size";
  shape_ = shape;
  if (bytes != buffer_bytes_ || !send_) {
    send_.reset();
    receive_.reset();
    buffer_bytes_ = 0;
    std::string failed = AllocateDeviceMemory(bytes, device_, send_);
    if (failed.empty()) failed = AllocateDeviceMemory(bytes, device_, receive_);
    if (!failed.empty()) throw NcclFailure(FailureSentence(failed, fix));
    buffer_bytes_ = bytes;
  }
  // On the sweep's own stream, then waited for: the stream is non-blocking,
  // so a plain cudaMemset (legacy default stream, asynchronous for device
  // memory) could land after the in-place copy Run queues on it. On the
  // first H200 it did, and 1-rank in-place rows came back all zeros
  // (#wrong = the element count) from a healthy GPU.
  cudaError_t result = cudaMemcpyAsync(send_.get(), send_data.data(), send_bytes,
                                       cudaMemcpyHostToDevice, stream_.get());
  if (result == cudaSuccess) result = cudaMemsetAsync(receive_.get(), 0, bytes, stream_.get());
  if (result == cudaSuccess) result = cudaStreamSynchronize(stream_.get());
  if (result != cudaSuccess) {
    throw NcclFailure(FailureSentence(
        CudaCallFailed("filling the send buffer of " + std::to_string(send_bytes) + " bytes",
                       device_, result),
        "check the GPU with nvidia-smi"));
  }
}

std::string NcclCollectiveBackend::WaitForStream(const std::string& during) {
  const SteadyClock::time_point deadline = DeadlineAfter(timeout_s_);
  while (true) {
    cudaError_t query = cudaStreamQuery(stream_.get());
    if (query == cudaSuccess) return "";
    if (query != cudaErrorNotReady) {
      communicator_.Abort();
      return FailureSentence(during + ": " + CudaCallFailed("cudaStreamQuery", device_, query),
                             "check the GPU with nvidia-smi and dmesg (Xid errors)");
    }
    ncclResult_t async_error = ncclSuccess;
    ncclResult_t result = ncclCommGetAsyncError(communicator_.get(), &async_error);
    if (result != ncclSuccess || (async_error != ncclSuccess && async_error != ncclInProgress)) {
      std::string call =
          NcclCallFailed("ncclCommGetAsyncError", result != ncclSuccess ? result : async_error,
                         communicator_.get());
      communicator_.Abort();
      return FailureSentence(during + ": " + call,
                             "a peer rank died or the network between the GPUs broke; read the "
                             "other ranks' fail lines and NCCL's WARN lines on stderr");
    }
    if (SteadyClock::now() > deadline) {
      communicator_.Abort();
      return FailureSentence(
          during + ": not complete after --timeout-s " + FormatSeconds(timeout_s_),
          "a peer rank stopped or the network between the GPUs is stalled; "
          "read the other ranks' fail lines and NCCL's WARN lines on stderr");
    }
  }
}

ncclResult_t NcclCollectiveBackend::EnqueueAlltoall(const float* input, float* output) {
  const auto count = static_cast<size_t>(shape_.count);
  ncclResult_t result = ncclGroupStart();
  for (int peer = 0; peer < ranks_ && result == ncclSuccess; ++peer) {
    const auto offset = static_cast<size_t>(peer) * count;
    result = ncclSend(input + offset, count, ncclFloat, peer, communicator_.get(), stream_.get());
    if (result == ncclSuccess) {
      result =
          ncclRecv(output + offset, count, ncclFloat, peer, communicator_.get(), stream_.get());
    }
  }
  // The group is always closed, even after a failed call inside it.
  const ncclResult_t ended = ncclGroupEnd();
  return result != ncclSuccess ? result : ended;
}

ncclResult_t NcclCollectiveBackend::Enqueue(const float* input, float* output) {
  const auto count = static_cast<size_t>(shape_.count);
  switch (operation_) {
    case sweep::Operation::kAllGather:
      return ncclAllGather(input, output, count, ncclFloat, communicator_.get(), stream_.get());
    case sweep::Operation::kReduceScatter:
      return ncclReduceScatter(input, output, count, ncclFloat, ncclSum, communicator_.get(),
                               stream_.get());
    case sweep::Operation::kAlltoAll:
      return EnqueueAlltoall(input, output);
    default:
      return ncclAllReduce(input, output, count, ncclFloat, ncclSum, communicator_.get(),
                           stream_.get());
  }
}

std::string NcclCollectiveBackend::Run(int n, bool in_place) {
  // The sweep's sentence already names the operation, size and variant.
  const std::string during = NcclCallName(operation_);
  if (communicator_.get() == nullptr) {
    return FailureSentence(during, "the communicator was aborted after an earlier failure");
  }
  auto* receive = static_cast<float*>(receive_.get());
  const auto* input = static_cast<const float*>(send_.get());
  float* output = receive;
  if (in_place) {
    // nccl-tests' in-place: the input at its offset of the receive buffer,
    // the output at its own (all_gather: rank x count in; reduce_scatter:
    // rank x count out).
    input = receive + shape_.in_place_send_offset;
    output = receive + shape_.in_place_receive_offset;
    cudaError_t result = cudaMemcpyAsync(receive + shape_.in_place_send_offset, send_.get(),
                                         static_cast<size_t>(shape_.send_count) * sizeof(float),
                                         cudaMemcpyDeviceToDevice, stream_.get());
    if (result != cudaSuccess) {
      return FailureSentence(CudaCallFailed("cudaMemcpyAsync of send to receive", device_, result),
                             "check the GPU with nvidia-smi");
    }
  }
  for (int i = 0; i < n; ++i) {
    if (std::string failed = Settle(Enqueue(input, output), during); !failed.empty()) {
      return failed;
    }
  }
  return WaitForStream(during);
}

std::vector<float> NcclCollectiveBackend::Result(bool in_place) {
  const auto count = static_cast<size_t>(shape_.receive_count);
  const size_t offset = in_place ? static_cast<size_t>(shape_.in_place_receive_offset) : 0;
  std::vector<float> host(count);
  // Stream-ordered like Prepare: after every operation Run queued.
  cudaError_t result =
      cudaMemcpyAsync(host.data(), static_cast<const float*>(receive_.get()) + offset,
                      count * sizeof(float), cudaMemcpyDeviceToHost, stream_.get());
  if (result == cudaSuccess) result = cudaStreamSynchronize(stream_.get());
  if (result != cudaSuccess) {
    throw NcclFailure(
        FailureSentence(CudaCallFailed("copying the result back to the host", device_, result),
                        "check the GPU with nvidia-smi"));
  }
  return host;
}

void NcclCollectiveBackend::Barrier() {
  const std::string during = "a barrier (1-element ncclAllReduce)";
  if (communicator_.get() == nullptr) {
    throw NcclFailure(
        FailureSentence(during, "the communicator was aborted after an earlier failure"));
  }
  float* word = static_cast<float*>(barrier_word_.get());
  ncclResult_t result =
      ncclAllReduce(word, word, 1, ncclFloat, ncclSum, communicator_.get(), stream_.get());
  std::string failed = Settle(result, during + ": ncclAllReduce");
  if (!failed.empty()) throw NcclFailure(failed);
  failed = WaitForStream(during);
  if (!failed.empty()) throw NcclFailure(failed);
}

}  // namespace clustercert::workers::nccl_worker
