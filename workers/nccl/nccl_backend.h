#pragma once

// NcclCollectiveBackend: the collective of collective-worker-nccl (one
// operation per process: ncclAllReduce, ncclAllGather, ncclReduceScatter,
// or alltoall as grouped ncclSend/ncclRecv to every peer, as nccl-tests
// runs it), one GPU per rank. Rank 0 makes the NCCL unique id and publishes it as "nccl-unique-id"
// in the job's store (sweep/worker_protocol.h); the others read it, and
// every rank joins a non-blocking communicator (ncclCommInitRankConfig with
// blocking = 0, polled against --timeout-s). Buffers live on the GPU;
// RunCollectiveSweep does the timing and checking.
//
// Waiting for the stream polls cudaStreamQuery and ncclCommGetAsyncError
// (as nccl-tests does) so a dead peer ends in a sentence after --timeout-s
// and an aborted communicator instead of a hang. Run returns failures as
// sentences; Prepare, Barrier and Result throw NcclFailure with one.

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "sweep/collective_sweep.h"
#include "sweep/worker_failure.h"
#include "sweep/worker_options.h"
#include "sweep/worker_protocol.h"
#include "workers/nccl/cuda_resources.h"

namespace clustercert::workers::nccl_worker {

class NcclFailure : public sweep::RankFailure {
 public:
  using sweep::RankFailure::RankFailure;
};

// NCCL's own buffers and the CUDA context need room beside the sweep's two.
inline constexpr int64_t kDeviceMemoryMarginBytes = int64_t{256} << 20;
// Largest buffer that fits twice in `free_bytes`, less the margin, and no
// more than `requested_cap_bytes` when that is set; 0 when nothing fits.
int64_t DeviceBufferCapBytes(int64_t requested_cap_bytes, int64_t free_bytes);

// Owns one communicator; destroys it, or aborts it once a wait gave up on it
// (ncclCommDestroy would wait for work that will never finish).
class NcclCommunicator {
 public:
  NcclCommunicator() = default;
  explicit NcclCommunicator(ncclComm_t comm) : comm_(comm) {}
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;
  ~NcclCommunicator();
  ncclComm_t get() const { return comm_; }
  // Takes ownership of a communicator ncclCommInitRankConfig made.
  void Adopt(ncclComm_t comm);
  void Abort();

 private:
  // Finalizes and destroys, or aborts one that does not settle.
  void Release();

  ncclComm_t comm_ = nullptr;
};

class NcclCollectiveBackend : public sweep::CollectiveBackend {
 public:
  // Joins the communicator of options.ranks ranks on cuda:`device`. `channel`
  // carries the unique id; it may be null only when options.ranks is 1.
  // nullptr with `error` set to a sentence on failure.
  static std::unique_ptr<NcclCollectiveBackend> Create(const sweep::WorkerOptions& options,
                                                       int device, sweep::WorkerChannel* channel,
                                                       std::string& error);

  int rank() const override { return rank_; }
  int ranks() const override { return ranks_; }
  int64_t MemoryCapBytes() const override { return memory_cap_bytes_; }
  void Prepare(const sweep::CollectiveShape& shape, const std::vector<float>& send_data) override;
  std::string Run(int n, bool in_place) override;
  std::vector<float> Result(bool in_place) override;
  void Barrier() override;

  int device() const { return device_; }
  // cudaMemGetInfo's free bytes once the communicator was up.
  int64_t free_bytes_at_start() const { return free_bytes_at_start_; }

 private:
  NcclCollectiveBackend(const sweep::WorkerOptions& options, int device);

  // "rank 1 of 8 (nccl cuda:1): <what failed>: <fix>".
  std::string FailureSentence(const std::string& what, const std::string& fix) const;
  // The steps of Create, in order; each returns "" or a FailureSentence.
  std::string SelectDevice();
  // Rank 0 makes the unique id and publishes it; the others read it.
  std::string ShareUniqueId(sweep::WorkerChannel* channel, ncclUniqueId& unique_id) const;
  std::string ReadUniqueId(sweep::WorkerChannel* channel, ncclUniqueId& unique_id) const;
  std::string JoinCommunicator(const ncclUniqueId& unique_id);
  // Records the free device memory and caps the sweep's buffers by it.
  std::string SizeBuffers();
  // "" once every operation queued on the stream finished, else a sentence
  // (and the communicator aborted) on an error or after the timeout.
  std::string WaitForStream(const std::string& during);
  // "" once a call that answered `result` settled; else a sentence, with
  // the communicator aborted (NCCL's error, or not settled in time).
  std::string Settle(ncclResult_t result, const std::string& during);
  // Queues one operation of shape_ from `input` to `output` on the stream.
  ncclResult_t Enqueue(const float* input, float* output);
  // alltoall: one grouped send and receive of shape_.count to every peer.
  ncclResult_t EnqueueAlltoall(const float* input, float* output);

  int rank_;
  int ranks_;
  sweep::Operation operation_;
  sweep::CollectiveShape shape_;
  int device_;
  double timeout_s_;
  int64_t requested_cap_bytes_;
  int64_t memory_cap_bytes_ = 0;
  int64_t free_bytes_at_start_ = 0;
  size_t buffer_bytes_ = 0;  // each of send_ and receive_
  // Declared in creation order: buffers go first, then the communicator,
  // then the stream it ran on.
  CudaStream stream_;
  NcclCommunicator communicator_;
  DeviceMemory barrier_word_;
  DeviceMemory send_;
  DeviceMemory receive_;
};

}  // namespace clustercert::workers::nccl_worker
