#include "sweep/collective_operation.h"

#include <algorithm>

namespace clustercert::sweep {
namespace {

// The repeat of the pattern: 7 keeps values small (sums stay exact in float
// up to about 2,000 ranks) while still catching shifted or swapped blocks.
constexpr int64_t kPatternPeriod = 7;
// nccl-tests rounds a rank's chunk down to 16 bytes: 4 floats.
constexpr int64_t kChunkAlignElements = 16 / static_cast<int64_t>(sizeof(float));
// A prime below 2^23: alltoall's values stay exact in float and distinct for
// every (source, destination) pair up to about 1,000 ranks.
constexpr int64_t kAlltoallModulus = 8388593;

struct OperationInfo {
  Operation operation;
  const char* name;
};
constexpr OperationInfo kInfo[] = {{Operation::kAllReduce, "all_reduce"},
                                   {Operation::kAllGather, "all_gather"},
                                   {Operation::kReduceScatter, "reduce_scatter"},
                                   {Operation::kAlltoAll, "alltoall"}};

// What rank `source` sends to rank `destination` at element j of its block.
float AlltoallValue(int source, int destination, int ranks, int64_t j) {
  const int64_t pair = static_cast<int64_t>(source) * ranks + destination;
  return static_cast<float>((pair * kPatternPeriod + j % kPatternPeriod) % kAlltoallModulus + 1);
}

}  // namespace

std::string OperationName(Operation operation) {
  for (const OperationInfo& info : kInfo) {
    if (info.operation == operation) return info.name;
  }
  return "all_reduce";
}

std::optional<Operation> ParseOperation(const std::string& name) {
  for (const OperationInfo& info : kInfo) {
    if (name == info.name) return info.operation;
  }
  return std::nullopt;
}

std::string OperationNamesText() {
  std::string text;
  for (const OperationInfo& info : kInfo)
    text += (text.empty() ? "" : ", ") + std::string(info.name);
  return text;
}

std::string NcclTestsBinary(Operation operation) { return OperationName(operation) + "_perf"; }

std::string RedopName(Operation operation) {
  return operation == Operation::kAllReduce || operation == Operation::kReduceScatter ? "sum"
                                                                                      : "none";
}

bool HasInPlace(Operation operation) { return operation != Operation::kAlltoAll; }

double BusFactor(Operation operation, int ranks) {
  if (ranks <= 1) return 0;
  const double factor = static_cast<double>(ranks - 1) / ranks;
  return operation == Operation::kAllReduce ? 2 * factor : factor;
}

double BusBandwidthGBps(Operation operation, int64_t bytes, double seconds, int ranks) {
  if (!(seconds > 0)) return 0;  // also catches NaN
  return static_cast<double>(bytes) / seconds / 1e9 * BusFactor(operation, ranks);
}

std::optional<CollectiveShape> ShapeOf(Operation operation, int64_t requested_bytes, int ranks,
                                       int rank) {
  const int64_t count = requested_bytes / static_cast<int64_t>(sizeof(float));
  const int64_t n = ranks < 1 ? 1 : ranks;
  CollectiveShape shape;
  shape.operation = operation;
  if (operation == Operation::kAllReduce) {
    shape.count = shape.send_count = shape.receive_count = count;
  } else {
    const int64_t base = (count / n) & ~(kChunkAlignElements - 1);
    shape.count = base;
    shape.send_count = operation == Operation::kAllGather ? base : n * base;
    shape.receive_count = operation == Operation::kReduceScatter ? base : n * base;
    if (operation == Operation::kAllGather) shape.in_place_send_offset = rank * base;
    if (operation == Operation::kReduceScatter) shape.in_place_receive_offset = rank * base;
  }
  if (shape.count <= 0) return std::nullopt;
  const int64_t largest = std::max(shape.send_count, shape.receive_count);
  shape.bytes = largest * static_cast<int64_t>(sizeof(float));
  return shape;
}

std::vector<float> SendData(const CollectiveShape& shape, int rank, int ranks) {
  std::vector<float> data(static_cast<size_t>(shape.send_count));
  for (int64_t i = 0; i < shape.send_count; ++i) {
    float value = InitialValue(rank, i);
    if (shape.operation == Operation::kAlltoAll) {
      value = AlltoallValue(rank, static_cast<int>(i / shape.count), ranks, i % shape.count);
    }
    data[static_cast<size_t>(i)] = value;
  }
  return data;
}

float ExpectedValue(const CollectiveShape& shape, int rank, int ranks, int64_t index) {
  switch (shape.operation) {
    case Operation::kAllReduce:
      return ExpectedSum(ranks, index);
    case Operation::kAllGather:  // block s is rank s's send buffer
      return InitialValue(static_cast<int>(index / shape.count), index % shape.count);
    case Operation::kReduceScatter:  // this rank's block of the sum
      return ExpectedSum(ranks, rank * shape.count + index);
    case Operation::kAlltoAll:  // block s is what rank s sent to this rank
      return AlltoallValue(static_cast<int>(index / shape.count), rank, ranks, index % shape.count);
  }
  return 0;
}

int64_t CountWrong(const CollectiveShape& shape, int rank, int ranks,
                   const std::vector<float>& result) {
  const int64_t expected = shape.receive_count;
  const auto held = static_cast<int64_t>(result.size());
  int64_t wrong = held < expected ? expected - held : 0;
  const int64_t checked = held < expected ? held : expected;
  for (int64_t i = 0; i < checked; ++i) {
    if (result[static_cast<size_t>(i)] != ExpectedValue(shape, rank, ranks, i)) ++wrong;
  }
  return wrong;
}

float InitialValue(int rank, int64_t element) {
  return static_cast<float>((static_cast<int64_t>(rank) + 1) * (element % kPatternPeriod + 1));
}

float ExpectedSum(int ranks, int64_t element) {
  // Sum over r of (r + 1) * k = k * n(n + 1) / 2.
  const int64_t n = ranks;
  const int64_t triangle = n * (n + 1) / 2;  // exact: n(n + 1) is even
  return static_cast<float>(triangle * (element % kPatternPeriod + 1));
}

}  // namespace clustercert::sweep
