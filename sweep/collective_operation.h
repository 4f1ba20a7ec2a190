#pragma once

// The collectives a sweep can time, named as nccl-tests names its binaries
// without "_perf" (all_reduce_perf, all_gather_perf, reduce_scatter_perf,
// alltoall_perf), and nccl-tests' arithmetic for each (src/<op>.cu, v2.19):
//
//   op              size column          count column   busbw factor
//   all_reduce      count x 4            count          2(n-1)/n
//   all_gather      n x base x 4 (recv)  base           (n-1)/n
//   reduce_scatter  n x base x 4 (send)  base           (n-1)/n
//   alltoall        n x base x 4         base (a peer)  (n-1)/n
//
// base = (count / n) rounded down to 16 bytes of elements, count = the
// requested size / 4; algbw = size / time for every operation.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace clustercert::sweep {

enum class Operation { kAllReduce, kAllGather, kReduceScatter, kAlltoAll };

inline constexpr Operation kOperations[] = {Operation::kAllReduce, Operation::kAllGather,
                                            Operation::kReduceScatter, Operation::kAlltoAll};

// "all_reduce", "all_gather", "reduce_scatter", "alltoall".
std::string OperationName(Operation operation);
// The same names; nullopt for anything else.
std::optional<Operation> ParseOperation(const std::string& name);
// "all_reduce, all_gather, reduce_scatter, alltoall", for error sentences.
std::string OperationNamesText();
// nccl-tests' executable for it: "all_gather_perf".
std::string NcclTestsBinary(Operation operation);
// nccl-tests' redop column: "sum" for the reductions, "none" otherwise.
std::string RedopName(Operation operation);
// nccl-tests times alltoall in place on one buffer but never checks it ("We
// don't support in-place alltoall"); we leave that variant out.
bool HasInPlace(Operation operation);

// nccl-tests' busbw factor for n ranks; 0 for n <= 1 (nothing crosses a bus).
double BusFactor(Operation operation, int ranks);
double BusBandwidthGBps(Operation operation, int64_t bytes, double seconds, int ranks);

// One size of one operation on one rank, in float elements. In place, the
// input sits at in_place_send_offset of the receive buffer and the output at
// in_place_receive_offset (nccl-tests' offsets x rank): all_gather's chunk
// at rank x base, reduce_scatter's result at rank x base.
struct CollectiveShape {
  Operation operation = Operation::kAllReduce;
  int64_t bytes = 0;  // nccl-tests' size: the larger of the two buffers
  int64_t count = 0;  // nccl-tests' count: what the call is given
  int64_t send_count = 0;
  int64_t receive_count = 0;
  int64_t in_place_send_offset = 0;
  int64_t in_place_receive_offset = 0;
};

// The shape nccl-tests gives a requested size; nullopt when the size holds
// no element per rank after its 16-byte rounding (nccl-tests prints such a
// row as size 0; we skip it).
std::optional<CollectiveShape> ShapeOf(Operation operation, int64_t requested_bytes, int ranks,
                                       int rank);

// What `rank` sends, and what element `index` of its result must hold.
// Small integers, exact in float; every rank's and every destination's
// block differs, so a misplaced block is counted wrong.
std::vector<float> SendData(const CollectiveShape& shape, int rank, int ranks);
float ExpectedValue(const CollectiveShape& shape, int rank, int ranks, int64_t index);

// Elements of `result` (receive_count expected) that differ from
// ExpectedValue; a short result is wrong in every element it lacks.
int64_t CountWrong(const CollectiveShape& shape, int rank, int ranks,
                   const std::vector<float>& result);

// The allreduce pattern the others build on: rank r holds (r + 1) x (i % 7 + 1).
float InitialValue(int rank, int64_t element);
float ExpectedSum(int ranks, int64_t element);

}  // namespace clustercert::sweep
