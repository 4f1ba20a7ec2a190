#pragma once

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "clustercert/v1/certificate.pb.h"
#include "common/text_escape.h"

namespace clustercert::controller::report {

// Number, size and age formats every report uses, so a value reads the same
// in the HTML, Markdown and JUnit reports. Escaping for each of them lives in
// common/text_escape.h (HtmlEscape, XmlEscape, MarkdownCell, ...), included
// here because every renderer needs both.

// Five significant digits, never an exponent above 1e-4 (92.4, 0.048726,
// 7403.6, 171022); "0" for zero. The same figures pairwise verdicts print.
std::string FormatNumber(double value);

// At most four characters of digits for a heatmap cell: 7404, 12.3, 0.085.
std::string ShortNumber(double value);

// Message sizes as nccl-tests labels them, in powers of 1024: 8B, 4K, 256M, 8G.
std::string FormatBytes(int64_t bytes);

// 850 ms, 4.2 s, 3 min 20 s, 2 h 5 min.
std::string FormatDurationMs(int64_t ms);

// How old a carried result is: 45 s, 12 min, 3 h 10 min, 2 d 4 h.
std::string FormatAge(int64_t seconds);

// True when a result was taken over from a baseline certificate.
bool IsCarried(const v1::Carried& carried);

// "carried from the baseline of 2026-11-30T10:00:00Z (1 d 3 h old)"; empty
// when not carried.
std::string CarriedText(const v1::Carried& carried);

// The finding's stable key: the recorded one (schema 2) or the one derived
// from id, node, device and port.
std::string KeyOf(const v1::Finding& finding);

// Milliseconds between two RFC 3339 instants, or -1 when either does not parse.
int64_t MillisBetween(const std::string& from, const std::string& to);

// Triage order: fail before unknown before skipped before pass; errors
// before warnings within a status.
int TriageRank(const v1::Finding& finding);

}  // namespace clustercert::controller::report
