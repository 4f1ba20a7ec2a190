#pragma once

#include <string>

#include "absl/strings/string_view.h"
#include "clustercert/v1/certificate.pb.h"

namespace clustercert::controller::report {

// Every pair cell of a certificate as one CSV table, for the clusters whose
// matrices the reports only summarise per node (pair_summary.h) and for
// anyone who wants the figures in a spreadsheet or a script. One row per
// pair result in certificate order, retests included (retest_of says what
// they re-check); nothing is written for a pair that was not scheduled.

// The columns, in order: test, rail, memory, client, server, value (empty
// when the test did not run to the end; exact, the shortest text that reads
// back to the recorded double), unit, ratio (value over reference; empty when
// unknown), reference (line rate in Gb/s or latency bound in us; empty when
// unknown), status (pass | fail | unknown | skipped), round, retest_of,
// carried_from (the baseline's started_at when carried), client_gpu,
// server_gpu, detail (why a cell that did not pass did not: the error or
// the verdict's message; empty for a pass).
inline constexpr char kPairCsvHeader[] =
    "test,rail,memory,client,server,value,unit,ratio,reference,status,round,retest_of,"
    "carried_from,client_gpu,server_gpu,detail";

// RFC 4180 text: the header row, then one row per cell, each ending in CRLF.
std::string RenderPairCsv(const v1::Certificate& certificate);

// One CSV field from text that did not come from us (node names come from a
// plan, errors from agents). Controls other than '\n' and '\t' and invalid
// UTF-8 are made visible as for a terminal block (common/text_escape.h), so
// `cat pairs.csv` moves no cursor; a field that would start with '=', '+',
// '-', '@' or a tab gets a leading "'" so a spreadsheet shows it instead of
// evaluating it as a formula (OWASP's CSV injection advice); then, per RFC
// 4180, a field holding a comma, a double quote or a line break is quoted
// with its quotes doubled.
std::string CsvField(absl::string_view text);

}  // namespace clustercert::controller::report
