#pragma once

// One size of an allreduce sweep, as nccl-tests prints a row, plus the line
// codec workers use to hand rows to the agent and the nccl-tests table layout.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace clustercert::sweep {

struct TimedVariant {
  double time_us = 0;     // mean time per operation
  double algbw_gbps = 0;  // GB/s
  double busbw_gbps = 0;  // GB/s
  int64_t wrong = 0;      // elements that did not hold the expected sum; -1: not checked
};

struct SweepRow {
  std::string operation = "all_reduce";  // sweep/collective_operation.h's name
  int64_t bytes = 0;
  int64_t count = 0;  // elements
  std::string type = "float";
  std::string redop = "sum";
  int root = -1;
  TimedVariant out_of_place;
  TimedVariant in_place;
  bool has_in_place = true;
};

// "row bytes=8 count=2 type=float redop=sum root=-1 oop_us=... oop_algbw=...
// oop_busbw=... oop_wrong=0 ip_us=... ip_algbw=... ip_busbw=... ip_wrong=0"
// (ip_* absent when !has_in_place; " op=NAME" after "row" for every
// operation but all_reduce, so an all_reduce line reads as it always did). Doubles printed with
// enough digits to round-trip.
std::string EncodeRowLine(const SweepRow& row);
// nullopt when the line is not a well-formed row line (wrong prefix, missing
// or non-numeric field).
std::optional<SweepRow> DecodeRowLine(const std::string& line);

// nccl-tests' table: the three '#' header lines (its v2.13-v2.17 layout) and
// one line per row, in its column layout (size, count, type, redop, root, then
// time/algbw/busbw/#wrong for out-of-place and in-place). Each line ends with '\n'.
std::string NcclTestsHeader();
// "# Collective test starting: all_gather_perf\n", nccl-tests' first line
// for `operation` (an operation name, "all_reduce" when empty).
std::string NcclTestsTitle(const std::string& operation);
std::string NcclTestsRowLine(const SweepRow& row);

}  // namespace clustercert::sweep
