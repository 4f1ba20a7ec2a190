#include "sweep/nccl_tests_output.h"

#include <cctype>
#include <cmath>
#include <set>
#include <utility>

#include "sweep/numbers.h"

namespace clustercert::sweep {
namespace {

std::vector<std::string> Tokens(const std::string& text) {
  std::vector<std::string> tokens;
  size_t position = 0;
  while (position < text.size()) {
    while (position < text.size() && std::isspace(static_cast<unsigned char>(text[position]))) {
      ++position;
    }
    const size_t start = position;
    while (position < text.size() && !std::isspace(static_cast<unsigned char>(text[position]))) {
      ++position;
    }
    if (position > start) tokens.push_back(text.substr(start, position - start));
  }
  return tokens;
}

bool StartsWithLetter(const std::string& token) {
  return !token.empty() && std::isalpha(static_cast<unsigned char>(token[0]));
}

bool AllDigits(const std::string& token) {
  if (token.empty()) return false;
  for (char c : token) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// The text after the first ':' of a "# Name : value" footer line, tokenised.
std::vector<std::string> FooterValue(const std::string& line) {
  const size_t colon = line.find(':');
  if (colon == std::string::npos) return {};
  return Tokens(line.substr(colon + 1));
}

// Before v2.13 nccl-tests printed the largest difference from the expected
// value ("error", e.g. 0e+00) instead of a count of wrong elements. Its own
// verdict compared that to a per-type tolerance; these are its values.
double OldErrorTolerance(const std::string& type) {
  if (type == "half" || type == "float16" || type == "bfloat16") return 5e-2;
  if (type == "float" || type == "float32") return 1e-5;
  if (type == "double" || type == "float64") return 1e-12;
  return 0;
}

// The table's shape, learnt from its "#  size  count ..." header line.
struct TableLayout {
  bool has_redop = true;        // "redop" column (absent from old all_gather tables)
  bool has_root = true;         // "root" column (v2.13 and later)
  bool wrong_is_delta = false;  // "error" column (max delta) instead of "#wrong"
  int variant_columns = 4;      // time algbw busbw #wrong; 8 with -I per-iteration columns
};

bool ParseVariant(const std::vector<std::string>& tokens, size_t first, const TableLayout& layout,
                  const std::string& type, TimedVariant& variant, std::string& why) {
  if (!ParseFinite(tokens[first], variant.time_us) ||
      !ParseFinite(tokens[first + 1], variant.algbw_gbps) ||
      !ParseFinite(tokens[first + 2], variant.busbw_gbps)) {
    why = "time, algbw or busbw is not a number";
    return false;
  }
  const std::string& wrong = tokens[first + 3];
  if (wrong == "N/A") {
    variant.wrong = -1;
    return true;
  }
  double value = 0;
  if (!ParseFinite(wrong, value) || value < 0) {
    why = "the " + std::string(layout.wrong_is_delta ? "error" : "#wrong") + " column is '" +
          wrong + "'";
    return false;
  }
  if (layout.wrong_is_delta) {
    // The count is unknown; 1 says "at least one element was off".
    variant.wrong = value > OldErrorTolerance(type) ? 1 : 0;
  } else {
    variant.wrong = static_cast<int64_t>(std::llround(value));
  }
  return true;
}

// One line of the output with its line ending and mpirun's tag removed.
std::string UntaggedLine(std::string line) {
  if (!line.empty() && line.back() == '\r') line.pop_back();
  // mpirun --tag-output prefixes "[1,0]<stdout>:".
  if (const size_t tag = line.find("<stdout>:"); tag != std::string::npos) {
    line = line.substr(tag + 9);
  }
  return line;
}

// `tokens` is the header line without its '#': "size count type redop root ...".
TableLayout LayoutFromHeader(const std::vector<std::string>& tokens) {
  TableLayout layout;
  layout.has_redop = false;
  layout.has_root = false;
  for (const std::string& token : tokens) {
    if (token == "redop") layout.has_redop = true;
    if (token == "root") layout.has_root = true;
    if (token == "error") layout.wrong_is_delta = true;
    if (token == "i_min") layout.variant_columns = 8;
  }
  return layout;
}

// A '#' line: the table header, a rank's device line or a footer.
void ReadCommentLine(std::vector<std::string> tokens, const std::string& line, TableLayout& layout,
                     std::set<int64_t>& ranks_seen, std::set<std::string>& hosts_seen,
                     NcclTestsRun& run) {
  // "#" may be glued to the first word or stand alone.
  if (tokens[0] == "#") {
    tokens.erase(tokens.begin());
  } else {
    tokens[0] = tokens[0].substr(1);
  }
  if (tokens.empty()) return;
  if (tokens.size() >= 3 && tokens[0] == "size" && tokens[1] == "count") {
    layout = LayoutFromHeader(tokens);
  } else if (tokens.size() >= 2 && tokens[0] == "Rank" && AllDigits(tokens[1])) {
    int64_t rank = 0;
    if (ParseWhole(tokens[1], rank)) ranks_seen.insert(rank);
    // "Rank  0 [Group  0] Pid 6899 on HOST device 0 ...": the word after "on".
    for (size_t i = 2; i + 1 < tokens.size(); ++i) {
      if (tokens[i] == "on") {
        hosts_seen.insert(tokens[i + 1]);
        break;
      }
    }
  } else if (line.find("Out of bounds values") != std::string::npos) {
    std::vector<std::string> value = FooterValue(line);
    int64_t count = 0;
    if (!value.empty() && ParseWhole(value[0], count)) run.out_of_bounds = count;
  } else if (line.find("Avg bus bandwidth") != std::string::npos) {
    std::vector<std::string> value = FooterValue(line);
    double busbw = 0;
    if (!value.empty() && ParseFinite(value[0], busbw)) run.average_busbw_gbps = busbw;
  }
}

// A data line: false with `why` set when it is not a row of `layout`'s table.
bool ParseRow(const std::vector<std::string>& tokens, const TableLayout& layout, SweepRow& row,
              std::string& why) {
  // Operations without a reduction print "none" in the redop column since
  // v2.13; older alltoall tables leave it blank (one token fewer), and older
  // all_gather tables have no such column. Both read as "none".
  const bool redop_blank = layout.has_redop && tokens.size() > 3 && !StartsWithLetter(tokens[3]);
  const bool redop_read = layout.has_redop && !redop_blank;
  const size_t root_column = redop_read ? 4 : 3;
  const size_t base = root_column + (layout.has_root ? 1 : 0);
  const auto width = static_cast<size_t>(layout.variant_columns);
  // A blank redop is only read so when nothing else is missing or extra.
  if (redop_blank && tokens.size() != base + width && tokens.size() != base + 2 * width) {
    why = "the redop column is '" + tokens[3] + "' and the row has " +
          std::to_string(tokens.size()) + " columns, not " + std::to_string(base + 2 * width) +
          " as a row with a blank redop has";
    return false;
  }
  if (tokens.size() < base + width) {
    why = "expected at least " + std::to_string(base + 2 * width) + " columns, got " +
          std::to_string(tokens.size());
    return false;
  }
  int64_t root = -1;
  if (!ParseWhole(tokens[0], row.bytes) || !ParseWhole(tokens[1], row.count)) {
    why = "size or count is not a whole number";
    return false;
  }
  if (layout.has_root && (!ParseWhole(tokens[root_column], root) || root < -1)) {
    why = "root is '" + tokens[root_column] + "'";
    return false;
  }
  row.type = tokens[2];
  row.redop = redop_read ? tokens[3] : "none";
  row.root = static_cast<int>(root);
  bool parsed = ParseVariant(tokens, base, layout, row.type, row.out_of_place, why);
  // A line cut after the first variant (a run that died mid-size) has
  // no in-place figures; anything longer carries both.
  row.has_in_place = tokens.size() >= base + 2 * width;
  if (parsed && row.has_in_place) {
    parsed = ParseVariant(tokens, base + width, layout, row.type, row.in_place, why);
  }
  return parsed;
}

}  // namespace

NcclTestsRun ParseNcclTestsOutput(const std::string& text) {
  NcclTestsRun run;
  TableLayout layout;
  std::set<int64_t> ranks_seen;
  std::set<std::string> hosts_seen;
  size_t line_start = 0;
  int line_number = 0;
  while (line_start <= text.size()) {
    size_t line_end = text.find('\n', line_start);
    if (line_end == std::string::npos) line_end = text.size();
    const std::string line = UntaggedLine(text.substr(line_start, line_end - line_start));
    line_start = line_end + 1;
    ++line_number;

    std::vector<std::string> tokens = Tokens(line);
    if (tokens.empty()) continue;
    if (tokens[0][0] == '#') {
      ReadCommentLine(std::move(tokens), line, layout, ranks_seen, hosts_seen, run);
      continue;
    }
    // Anything else that does not start with a byte count is not the table's
    // (NCCL INFO/WARN lines, launcher chatter) and is left alone.
    if (!AllDigits(tokens[0])) continue;

    SweepRow row;
    std::string why;
    if (ParseRow(tokens, layout, row, why)) {
      run.rows.push_back(row);
    } else {
      run.errors.push_back("all_reduce_perf output line " + std::to_string(line_number) +
                           " is not a table row (" + why + "): " + line);
    }
  }
  run.ranks = static_cast<int>(ranks_seen.size());
  run.nodes = static_cast<int>(hosts_seen.size());
  return run;
}

std::optional<double> MeanBusBandwidthGbps(const std::vector<SweepRow>& rows) {
  double sum = 0;
  int64_t figures = 0;
  for (const SweepRow& row : rows) {
    sum += row.out_of_place.busbw_gbps;
    ++figures;
    if (row.has_in_place) {
      sum += row.in_place.busbw_gbps;
      ++figures;
    }
  }
  if (figures == 0) return std::nullopt;
  return sum / static_cast<double>(figures);
}

}  // namespace clustercert::sweep
