#pragma once

// GlooCollectiveBackend: the collective of collective-worker-gloo (one
// operation per process: --operation), over gloo's tcp or ibverbs transport
// on host memory. It owns the transport device, the connected full-mesh
// context and the two float buffers; RunCollectiveSweep
// (sweep/collective_sweep.h) does all the timing and checking.
//
// gloo calls per operation: all_reduce gloo::allreduce, all_gather
// gloo::allgather (in place: no input, the rank's chunk already at its
// offset of the output), alltoall gloo::alltoall, reduce_scatter gloo's
// ReduceScatterHalvingDoubling (gloo has no unbound-buffer reduce-scatter).
// Over ibverbs (bound buffers only) all_reduce runs AllreduceRing and
// all_gather AllgatherRing; gloo has no bound alltoall, so Connect refuses it.
//
// Failures come back as sentences naming the rank, the transport, the address
// and what to check: Connect and Run return them, and Prepare, Barrier and
// Result throw GlooFailure carrying one (the interface gives them no return
// value), which the worker's main turns into its `fail` line.

#include <gloo/algorithm.h>
#include <gloo/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/device.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "sweep/collective_sweep.h"
#include "sweep/worker_failure.h"
#include "sweep/worker_options.h"

namespace clustercert::workers::gloo_worker {

class GlooFailure : public sweep::RankFailure {
 public:
  using sweep::RankFailure::RankFailure;
};

// The default and the ceiling of one buffer's size on the host. The sweep
// holds four host copies of a size (send, receive, its pattern and its copy
// of the result), so at most half of MemAvailable is spread over four.
inline constexpr int64_t kDefaultHostBufferCapBytes = int64_t{1} << 30;
int64_t HostBufferCapBytes(int64_t requested_cap_bytes, int64_t mem_available_bytes);
// MemAvailable from /proc/meminfo in bytes; 0 when it cannot be read.
int64_t ReadMemAvailableBytes(const std::string& meminfo_path = "/proc/meminfo");

class GlooCollectiveBackend : public sweep::CollectiveBackend {
 public:
  // Opens the transport named by options.transport (tcp on options.bind_ip,
  // or ibverbs on options.ib_device/ib_port/gid_index) and connects all
  // options.ranks ranks through `store`, with options.timeout_s as the
  // context's timeout. nullptr with `error` set to a sentence when gloo
  // fails; what `store` throws (WorkerStore's StoreClosed) passes through.
  // Refuses an operation the transport cannot run (alltoall over ibverbs).
  static std::unique_ptr<GlooCollectiveBackend> Connect(const sweep::WorkerOptions& options,
                                                        ::gloo::rendezvous::Store& store,
                                                        std::string& error);

  int rank() const override { return rank_; }
  int ranks() const override { return ranks_; }
  // With ibverbs every size's buffers stay registered (see bound_sizes_):
  // about 8x the largest size in all, so the cap is a quarter of tcp's; a
  // bound reduce-scatter over tcp holds three more copies of its size.
  int64_t MemoryCapBytes() const override;
  void Prepare(const sweep::CollectiveShape& shape, const std::vector<float>& send_data) override;
  std::string Run(int n, bool in_place) override;
  std::vector<float> Result(bool in_place) override;
  void Barrier() override;

  // "tcp 10.0.0.1" or "ibverbs mlx5_0 port 1 gid 3", for the worker's note:
  // what the rank was asked to open.
  const std::string& transport_description() const { return transport_description_; }
  // What the device gloo created says it is (sweep/device_report.h's note):
  // its Device::str(), and over tcp the address a connected pair's socket
  // bound, so the controller judges what ran rather than the arguments.
  std::string DeviceNote() const;
  // The connected context, for bench/gloo_overhead.cc's bare gloo::allreduce loop.
  const std::shared_ptr<::gloo::Context>& context() const { return context_; }

 private:
  struct BoundSize;
  GlooCollectiveBackend(const sweep::WorkerOptions& options, std::string transport_description,
                        std::shared_ptr<::gloo::transport::Device> device,
                        std::shared_ptr<::gloo::Context> context);

  // "rank 1 of 4 (gloo tcp 10.0.0.1): <what>: <fix>".
  std::string FailureSentence(const std::string& what) const;
  // Whether this operation runs a bound-buffer algorithm class.
  bool UsesBoundAlgorithm() const;
  // The bound algorithm of the current shape over bound_->buffer.
  std::unique_ptr<::gloo::Algorithm> MakeBoundAlgorithm(BoundSize& size) const;
  // One operation through gloo's unbound-buffer calls (tcp).
  void RunUnbound(bool in_place);
  // `n` operations of the bound algorithm, then the result into receive_.
  void RunBound(int n, bool in_place);

  int rank_;
  int ranks_;
  sweep::Operation operation_;
  sweep::CollectiveShape shape_;
  double timeout_s_;
  int64_t memory_cap_bytes_;
  std::string transport_description_;
  // The device outlives the context that holds pairs on it.
  std::shared_ptr<::gloo::transport::Device> device_;
  std::shared_ptr<::gloo::Context> context_;
  std::vector<float> send_;
  std::vector<float> receive_;
  // gloo's ibverbs transport has no unbound buffers, so gloo::allreduce()
  // refuses it ("Unbound buffers not supported yet for ibverbs transport"):
  // there the backend runs the bound-buffer algorithm classes instead, a ring
  // per size on that size's own buffer and an all-to-all barrier. A gloo
  // ibverbs buffer destroyed while its last send completion is still in
  // flight aborts the process ("Destructing buffer expecting completions"),
  // so every size's ring and buffer stay registered until the worker exits,
  // and are not destroyed even then (the process ends right after); the
  // memory cap is divided accordingly (see MemoryCapBytes).
  bool bound_buffers_ = false;
  struct BoundSize {
    std::vector<float> buffer;  // all_gather's input; the others' data
    std::vector<float> output;  // all_gather's output
    std::unique_ptr<::gloo::Algorithm> algorithm;
  };
  std::vector<std::unique_ptr<BoundSize>> bound_sizes_;
  BoundSize* bound_ = nullptr;  // the current size's
  std::unique_ptr<::gloo::Algorithm> barrier_;

 public:
  ~GlooCollectiveBackend() override;
};

}  // namespace clustercert::workers::gloo_worker
