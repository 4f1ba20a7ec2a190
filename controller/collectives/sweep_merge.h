#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "sweep/sweep_row.h"

namespace clustercert::controller {

struct RankRow {
  int rank = 0;
  sweep::SweepRow row;
};

// One row per size from every rank's rows: a collective ends when its
// slowest rank does, so time is the maximum over ranks and algbw/busbw are
// recomputed from it with `operation`'s bus factor (nccl-tests reports the
// same way); #wrong is the sum over ranks (-1 when no rank checked). Sorted by size.
std::vector<v1::CollectiveRow> MergeRankRows(const std::vector<RankRow>& rows, int ranks,
                                             const std::string& operation = "all_reduce");

// The sweep's operation: its `operation` field, "all_reduce" when empty
// (certificates from before operations).
std::string OperationOf(const v1::CollectiveSweep& sweep);
// A sentence when some rank's rows are not of `operation` (an older worker
// that ignored the request and swept all_reduce), else "".
std::string ForeignOperation(const std::vector<RankRow>& rows, const std::string& operation);

// The busbw figure the floor and the 1 -> 2 node comparison use: the best
// out-of-place busbw among the sizes from 1/8 of the largest size up (the last
// four sizes of a x2 sweep), so one noisy size neither passes nor fails a run.
struct LargeMessageBusbw {
  double busbw_gbytes = 0;
  int64_t from_bytes = 0;
};
LargeMessageBusbw LargeMessageFigure(const std::vector<v1::CollectiveRow>& rows);

// The rows in nccl-tests' column layout, header included.
std::string NcclTestsTable(const std::vector<v1::CollectiveRow>& rows);

sweep::SweepRow ToSweepRow(const v1::CollectiveRow& row);
v1::CollectiveRow ToCollectiveRow(const sweep::SweepRow& row);

// Records `rows` in the sweep with what follows from them: the
// large-message figure and the nccl-tests table.
void SetSweepRows(const std::vector<v1::CollectiveRow>& rows, v1::CollectiveSweep& sweep);

}  // namespace clustercert::controller
