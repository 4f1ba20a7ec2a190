#include "workers/nccl/nccl_backend.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <sstream>
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

NcclCommunicator::~NcclCommunicator() {
  if (comm_ != nullptr) ncclCommDestroy(comm_);
}

void NcclCommunicator::Adopt(ncclComm_t comm) {
  if (comm_ != nullptr) ncclCommDestroy(comm_);
  comm_ = comm;
}

void NcclCommunicator::Abort() {
  if (comm_ != nullptr) ncclCommAbort(comm_);
  comm_ = nullptr;
}

NcclAllreduceBackend::NcclAllreduceBackend(const sweep::WorkerOptions& options, int device)
    : rank_(options.rank),
      ranks_(options.ranks),
      device_(device),
      timeout_s_(options.timeout_s),
      requested_cap_bytes_(options.memory_cap_bytes) {}

std::string NcclAllreduceBackend::FailureSentence(const std::string& what,
                                                  const std::string& fix) const {
  return "rank " + std::to_string(rank_) + " of " + std::to_string(ranks_) +
         " (nccl cuda:" + std::to_string(device_) + "): " + what + ": " + fix;
}

std::unique_ptr<NcclAllreduceBackend> NcclAllreduceBackend::Create(
    const sweep::WorkerOptions& options, int device, sweep::WorkerChannel* channel,
    std::string& error) {
  std::unique_ptr<NcclAllreduceBackend> backend(new NcclAllreduceBackend(options, device));
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

std::string NcclAllreduceBackend::SelectDevice() {
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

std::string NcclAllreduceBackend::ShareUniqueId(sweep::WorkerChannel* channel,
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

std::string NcclAllreduceBackend::ReadUniqueId(sweep::WorkerChannel* channel,
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

std::string NcclAllreduceBackend::JoinCommunicator(const ncclUniqueId& unique_id) {
  ncclComm_t comm = nullptr;
  ncclResult_t result = ncclCommInitRank(&comm, ranks_, unique_id, rank_);
  if (result != ncclSuccess) {
    return FailureSentence(
        NcclCallFailed("ncclCommInitRank of " + std::to_string(ranks_) + " ranks", result, comm),
        "NCCL's INFO lines on stderr name the step; check that every rank started and that the "
        "nodes reach each other on NCCL_SOCKET_IFNAME");
  }
  communicator_.Adopt(comm);
  return "";
}

std::string NcclAllreduceBackend::SizeBuffers() {
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

void NcclAllreduceBackend::Prepare(const std::vector<float>& host_data) {
  const size_t bytes = host_data.size() * sizeof(float);
  const std::string fix = "lower --memory-cap or the sweep's largest size";
  if (host_data.size() != count_ || !send_) {
    send_.reset();
    receive_.reset();
    count_ = 0;
    std::string failed = AllocateDeviceMemory(bytes, device_, send_);
    if (failed.empty()) failed = AllocateDeviceMemory(bytes, device_, receive_);
    if (!failed.empty()) throw NcclFailure(FailureSentence(failed, fix));
    count_ = host_data.size();
  }
  cudaError_t result = cudaMemcpy(send_.get(), host_data.data(), bytes, cudaMemcpyHostToDevice);
  if (result == cudaSuccess) result = cudaMemset(receive_.get(), 0, bytes);
  if (result != cudaSuccess) {
    throw NcclFailure(FailureSentence(
        CudaCallFailed("filling the send buffer of " + std::to_string(bytes) + " bytes", device_,
                       result),
        "check the GPU with nvidia-smi"));
  }
}

std::string NcclAllreduceBackend::WaitForStream(const std::string& during) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                        std::chrono::duration<double>(timeout_s_));
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
    if (Clock::now() > deadline) {
      communicator_.Abort();
      return FailureSentence(
          during + ": not complete after --timeout-s " + FormatSeconds(timeout_s_),
          "a peer rank stopped or the network between the GPUs is stalled; "
          "read the other ranks' fail lines and NCCL's WARN lines on stderr");
    }
  }
}

std::string NcclAllreduceBackend::Run(int n, bool in_place) {
  const size_t bytes = count_ * sizeof(float);
  // The sweep's sentence already names the size and the variant.
  const std::string during = "ncclAllReduce";
  if (communicator_.get() == nullptr) {
    return FailureSentence(during, "the communicator was aborted after an earlier failure");
  }
  if (in_place) {
    cudaError_t result = cudaMemcpyAsync(receive_.get(), send_.get(), bytes,
                                         cudaMemcpyDeviceToDevice, stream_.get());
    if (result != cudaSuccess) {
      return FailureSentence(CudaCallFailed("cudaMemcpyAsync of send to receive", device_, result),
                             "check the GPU with nvidia-smi");
    }
  }
  const void* input = in_place ? receive_.get() : send_.get();
  for (int i = 0; i < n; ++i) {
    ncclResult_t result = ncclAllReduce(input, receive_.get(), count_, ncclFloat, ncclSum,
                                        communicator_.get(), stream_.get());
    if (result != ncclSuccess) {
      std::string call = NcclCallFailed("ncclAllReduce", result, communicator_.get());
      communicator_.Abort();
      return FailureSentence(call, "NCCL's WARN lines on stderr say why");
    }
  }
  return WaitForStream(during);
}

std::vector<float> NcclAllreduceBackend::Result() {
  std::vector<float> host(count_);
  cudaError_t result =
      cudaMemcpy(host.data(), receive_.get(), count_ * sizeof(float), cudaMemcpyDeviceToHost);
  if (result != cudaSuccess) {
    throw NcclFailure(
        FailureSentence(CudaCallFailed("copying the result back to the host", device_, result),
                        "check the GPU with nvidia-smi"));
  }
  return host;
}

void NcclAllreduceBackend::Barrier() {
  const std::string during = "a barrier (1-element ncclAllReduce)";
  if (communicator_.get() == nullptr) {
    throw NcclFailure(
        FailureSentence(during, "the communicator was aborted after an earlier failure"));
  }
  float* word = static_cast<float*>(barrier_word_.get());
  ncclResult_t result =
      ncclAllReduce(word, word, 1, ncclFloat, ncclSum, communicator_.get(), stream_.get());
  if (result != ncclSuccess) {
    std::string call = NcclCallFailed("ncclAllReduce", result, communicator_.get());
    communicator_.Abort();
    throw NcclFailure(FailureSentence(during + ": " + call, "NCCL's WARN lines on stderr say why"));
  }
  std::string failed = WaitForStream(during);
  if (!failed.empty()) throw NcclFailure(failed);
}

}  // namespace clustercert::workers::nccl_worker
