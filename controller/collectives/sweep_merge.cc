#include "controller/collectives/sweep_merge.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "sweep/bus_bandwidth.h"
#include "sweep/collective_operation.h"

namespace clustercert::controller {
namespace {

struct Accumulated {
  sweep::SweepRow first;
  double oop_max_us = 0;
  double ip_max_us = 0;
  int64_t oop_wrong = -1;
  int64_t ip_wrong = -1;
  bool has_in_place = true;
};

void AddWrong(int64_t wrong, int64_t& total) {
  if (wrong < 0) return;
  total = total < 0 ? wrong : total + wrong;
}

}  // namespace

std::string OperationOf(const v1::CollectiveSweep& sweep) {
  return sweep.operation().empty() ? "all_reduce" : sweep.operation();
}

std::string ForeignOperation(const std::vector<RankRow>& rows, const std::string& operation) {
  for (const RankRow& row : rows) {
    if (row.row.operation == operation) continue;
    return absl::StrCat("rank ", row.rank, "'s worker swept ", row.row.operation, ", not ",
                        operation,
                        ": its node-agent or collective worker predates collectives.operations; "
                        "install the controller's release on every node");
  }
  return "";
}

std::vector<v1::CollectiveRow> MergeRankRows(const std::vector<RankRow>& rows, int ranks,
                                             const std::string& operation) {
  const sweep::Operation op =
      sweep::ParseOperation(operation).value_or(sweep::Operation::kAllReduce);
  std::map<int64_t, Accumulated> by_size;
  for (const RankRow& rank_row : rows) {
    const sweep::SweepRow& row = rank_row.row;
    auto [it, inserted] = by_size.try_emplace(row.bytes);
    Accumulated& acc = it->second;
    if (inserted) acc.first = row;
    acc.oop_max_us = std::max(acc.oop_max_us, row.out_of_place.time_us);
    AddWrong(row.out_of_place.wrong, acc.oop_wrong);
    acc.has_in_place = acc.has_in_place && row.has_in_place;
    if (row.has_in_place) {
      acc.ip_max_us = std::max(acc.ip_max_us, row.in_place.time_us);
      AddWrong(row.in_place.wrong, acc.ip_wrong);
    }
  }
  std::vector<v1::CollectiveRow> merged;
  for (const auto& [bytes, acc] : by_size) {
    v1::CollectiveRow row;
    row.set_bytes(bytes);
    row.set_count(acc.first.count);
    row.set_type(acc.first.type);
    row.set_redop(acc.first.redop);
    row.set_root(acc.first.root);
    row.set_oop_time_us(acc.oop_max_us);
    row.set_oop_algbw_gbytes(sweep::AlgorithmBandwidthGBps(bytes, acc.oop_max_us * 1e-6));
    row.set_oop_busbw_gbytes(sweep::BusBandwidthGBps(op, bytes, acc.oop_max_us * 1e-6, ranks));
    row.set_oop_wrong(acc.oop_wrong);
    row.set_has_in_place(acc.has_in_place);
    if (acc.has_in_place) {
      row.set_ip_time_us(acc.ip_max_us);
      row.set_ip_algbw_gbytes(sweep::AlgorithmBandwidthGBps(bytes, acc.ip_max_us * 1e-6));
      row.set_ip_busbw_gbytes(sweep::BusBandwidthGBps(op, bytes, acc.ip_max_us * 1e-6, ranks));
      row.set_ip_wrong(acc.ip_wrong);
    }
    merged.push_back(std::move(row));
  }
  return merged;
}

LargeMessageBusbw LargeMessageFigure(const std::vector<v1::CollectiveRow>& rows) {
  LargeMessageBusbw figure;
  if (rows.empty()) return figure;
  int64_t largest = 0;
  for (const auto& row : rows) largest = std::max(largest, row.bytes());
  figure.from_bytes = std::max<int64_t>(1, largest / 8);
  for (const auto& row : rows) {
    if (row.bytes() >= figure.from_bytes) {
      figure.busbw_gbytes = std::max(figure.busbw_gbytes, row.oop_busbw_gbytes());
    }
  }
  return figure;
}

sweep::SweepRow ToSweepRow(const v1::CollectiveRow& row) {
  sweep::SweepRow out;
  out.bytes = row.bytes();
  out.count = row.count();
  out.type = row.type();
  out.redop = row.redop();
  out.root = row.root();
  out.out_of_place = {row.oop_time_us(), row.oop_algbw_gbytes(), row.oop_busbw_gbytes(),
                      row.oop_wrong()};
  out.has_in_place = row.has_in_place();
  out.in_place = {row.ip_time_us(), row.ip_algbw_gbytes(), row.ip_busbw_gbytes(), row.ip_wrong()};
  return out;
}

v1::CollectiveRow ToCollectiveRow(const sweep::SweepRow& row) {
  v1::CollectiveRow out;
  out.set_bytes(row.bytes);
  out.set_count(row.count);
  out.set_type(row.type);
  out.set_redop(row.redop);
  out.set_root(row.root);
  out.set_oop_time_us(row.out_of_place.time_us);
  out.set_oop_algbw_gbytes(row.out_of_place.algbw_gbps);
  out.set_oop_busbw_gbytes(row.out_of_place.busbw_gbps);
  out.set_oop_wrong(row.out_of_place.wrong);
  out.set_has_in_place(row.has_in_place);
  out.set_ip_time_us(row.in_place.time_us);
  out.set_ip_algbw_gbytes(row.in_place.algbw_gbps);
  out.set_ip_busbw_gbytes(row.in_place.busbw_gbps);
  out.set_ip_wrong(row.in_place.wrong);
  return out;
}

void SetSweepRows(const std::vector<v1::CollectiveRow>& rows, v1::CollectiveSweep& sweep) {
  sweep.clear_rows();
  for (const auto& row : rows) *sweep.add_rows() = row;
  const LargeMessageBusbw figure = LargeMessageFigure(rows);
  sweep.set_large_busbw_gbytes(figure.busbw_gbytes);
  sweep.set_large_from_bytes(figure.from_bytes);
  // nccl-tests' title line only for the operations that came later, so an
  // all_reduce sweep's table reads as it always did.
  const std::string operation = OperationOf(sweep);
  sweep.set_table((operation == "all_reduce" ? "" : sweep::NcclTestsTitle(operation)) +
                  NcclTestsTable(rows));
}

std::string NcclTestsTable(const std::vector<v1::CollectiveRow>& rows) {
  std::string table = sweep::NcclTestsHeader();
  for (const auto& row : rows) table += sweep::NcclTestsRowLine(ToSweepRow(row));
  return table;
}

}  // namespace clustercert::controller
