#include "sweep/sweep_row.h"

#include <cstdio>
#include <map>

#include "sweep/numbers.h"

namespace clustercert::sweep {
namespace {

void AppendVariant(std::string& line, const char* prefix, const TimedVariant& variant) {
  const std::string p(prefix);
  line += " " + p + "_us=" + ShortestText(variant.time_us);
  line += " " + p + "_algbw=" + ShortestText(variant.algbw_gbps);
  line += " " + p + "_busbw=" + ShortestText(variant.busbw_gbps);
  line += " " + p + "_wrong=" + std::to_string(variant.wrong);
}

// Reads the four fields of one variant; false when any is missing or bad.
bool TakeVariant(const std::map<std::string, std::string>& fields, const std::string& prefix,
                 TimedVariant& variant) {
  auto us = fields.find(prefix + "_us");
  auto algbw = fields.find(prefix + "_algbw");
  auto busbw = fields.find(prefix + "_busbw");
  auto wrong = fields.find(prefix + "_wrong");
  if (us == fields.end() || algbw == fields.end() || busbw == fields.end() ||
      wrong == fields.end()) {
    return false;
  }
  return ParseWhole(us->second, variant.time_us) && ParseWhole(algbw->second, variant.algbw_gbps) &&
         ParseWhole(busbw->second, variant.busbw_gbps) && ParseWhole(wrong->second, variant.wrong);
}

bool HasAnyVariantField(const std::map<std::string, std::string>& fields,
                        const std::string& prefix) {
  for (const char* suffix : {"_us", "_algbw", "_busbw", "_wrong"}) {
    if (fields.count(prefix + suffix) != 0) return true;
  }
  return false;
}

// nccl-tests (src/common.cu, v2.13 to v2.17) keeps time within 7 columns by
// dropping decimals as it grows: 2 below 100 us, 1 below 10 ms, none above.
std::string NcclTestsTime(double time_us) {
  char buffer[64];
  if (time_us >= 10000.0) {
    std::snprintf(buffer, sizeof(buffer), "%7.0f", time_us);
  } else if (time_us >= 100.0) {
    std::snprintf(buffer, sizeof(buffer), "%7.1f", time_us);
  } else {
    std::snprintf(buffer, sizeof(buffer), "%7.2f", time_us);
  }
  return buffer;
}

std::string NcclTestsVariant(const TimedVariant& variant) {
  char buffer[160];
  const std::string time = NcclTestsTime(variant.time_us);
  if (variant.wrong < 0) {
    std::snprintf(buffer, sizeof(buffer), "  %7s  %6.2f  %6.2f  %5s", time.c_str(),
                  variant.algbw_gbps, variant.busbw_gbps, "N/A");
  } else {
    std::snprintf(buffer, sizeof(buffer), "  %7s  %6.2f  %6.2f  %5g", time.c_str(),
                  variant.algbw_gbps, variant.busbw_gbps, static_cast<double>(variant.wrong));
  }
  return buffer;
}

}  // namespace

std::string EncodeRowLine(const SweepRow& row) {
  std::string line = "row";
  if (!row.operation.empty() && row.operation != "all_reduce") line += " op=" + row.operation;
  line += " bytes=" + std::to_string(row.bytes);
  line += " count=" + std::to_string(row.count);
  line += " type=" + row.type;
  line += " redop=" + row.redop;
  line += " root=" + std::to_string(row.root);
  AppendVariant(line, "oop", row.out_of_place);
  if (row.has_in_place) AppendVariant(line, "ip", row.in_place);
  return line;
}

std::optional<SweepRow> DecodeRowLine(const std::string& line) {
  std::string text = line;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  if (text.rfind("row ", 0) != 0) return std::nullopt;

  // Unknown keys are skipped so that a newer worker's extra fields do not
  // break an older agent; every field this version needs must be present.
  std::map<std::string, std::string> fields;
  size_t position = 4;
  while (position < text.size()) {
    size_t end = text.find(' ', position);
    if (end == std::string::npos) end = text.size();
    if (end > position) {
      const std::string token = text.substr(position, end - position);
      const size_t equals = token.find('=');
      if (equals == std::string::npos || equals == 0) return std::nullopt;
      fields[token.substr(0, equals)] = token.substr(equals + 1);
    }
    position = end + 1;
  }

  SweepRow row;
  auto bytes = fields.find("bytes");
  auto count = fields.find("count");
  auto type = fields.find("type");
  auto redop = fields.find("redop");
  auto root = fields.find("root");
  if (bytes == fields.end() || count == fields.end() || type == fields.end() ||
      redop == fields.end() || root == fields.end()) {
    return std::nullopt;
  }
  int64_t root_value = 0;
  if (!ParseWhole(bytes->second, row.bytes) || !ParseWhole(count->second, row.count) ||
      !ParseWhole(root->second, root_value) || type->second.empty() || redop->second.empty()) {
    return std::nullopt;
  }
  if (root_value < -1 || root_value > 1'000'000'000) return std::nullopt;
  row.root = static_cast<int>(root_value);
  row.type = type->second;
  row.redop = redop->second;
  if (auto op = fields.find("op"); op != fields.end()) {
    if (op->second.empty()) return std::nullopt;
    row.operation = op->second;
  }
  if (!TakeVariant(fields, "oop", row.out_of_place)) return std::nullopt;
  row.has_in_place = HasAnyVariantField(fields, "ip");
  if (row.has_in_place && !TakeVariant(fields, "ip", row.in_place)) return std::nullopt;
  return row;
}

std::string NcclTestsHeader() {
  // Widths as nccl-tests v2.13+ prints them for all_reduce_perf, so tools that
  // scrape its table read ours too.
  char line1[256];
  char line2[256];
  char line3[256];
  std::snprintf(line1, sizeof(line1),
                "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place"
                "          \n",
                "", "", "", "", "");
  std::snprintf(line2, sizeof(line2),
                "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s\n", "size",
                "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time",
                "algbw", "busbw", "#wrong");
  std::snprintf(line3, sizeof(line3),
                "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s\n", "(B)",
                "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)",
                "(GB/s)", "");
  return std::string(line1) + line2 + line3;
}

std::string NcclTestsTitle(const std::string& operation) {
  return "# Collective test starting: " +
         (operation.empty() ? std::string("all_reduce") : operation) + "_perf\n";
}

std::string NcclTestsRowLine(const SweepRow& row) {
  char preamble[160];
  std::snprintf(preamble, sizeof(preamble), "%12lld  %12lld  %8s  %6s  %6i",
                static_cast<long long>(row.bytes), static_cast<long long>(row.count),
                row.type.c_str(), row.redop.c_str(), row.root);
  std::string line = preamble;
  line += NcclTestsVariant(row.out_of_place);
  // nccl-tests always times both; a sweep run without in-place ends the line
  // after the out-of-place columns rather than printing made-up figures.
  if (row.has_in_place) line += NcclTestsVariant(row.in_place);
  line += "\n";
  return line;
}

}  // namespace clustercert::sweep
