#include "controller/plan/cable_plan.h"

#include <algorithm>
#include <array>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "common/regular_file.h"
#include "common/sha256.h"
#include "controller/plan/closest_key.h"

namespace clustercert::controller::plan {
namespace {

constexpr absl::string_view kByteOrderMark = "\xEF\xBB\xBF";
enum Column { kNode, kDevice, kSwitch, kPort, kColumnCount };
constexpr std::array<absl::string_view, kColumnCount> kColumnNames = {"node", "device", "switch",
                                                                      "port"};
// "did you mean" costs a pass over the nodes: offered for this many unknown
// nodes, so a file of a million wrong rows stays linear.
constexpr int kMaxSuggestions = 20;
constexpr size_t kMaxRailsShown = 8;
constexpr size_t kMaxNetdevNameLength = 15;  // IFNAMSIZ - 1

bool IsNameChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
}

bool IsName(absl::string_view text) {
  return !text.empty() && text.size() <= 255 && std::all_of(text.begin(), text.end(), IsNameChar);
}

// A value as messages show it: quoted, escaped, at most 64 characters.
std::string Shown(absl::string_view value) {
  std::string shown = absl::CHexEscape(value.substr(0, 64));
  return absl::StrCat("\"", shown, value.size() > 64 ? "...\"" : "\"");
}

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

// One quoted field from line[*i] (the opening quote); *i ends past the
// closing quote and any blanks after it.
bool QuotedField(absl::string_view line, size_t* i, std::string* field, std::string* why) {
  const size_t open = (*i)++;
  while (*i < line.size()) {
    const char c = line[(*i)++];
    if (c != '"') {
      field->push_back(c);
    } else if (*i < line.size() && line[*i] == '"') {
      field->push_back('"');
      ++*i;
    } else {
      while (*i < line.size() && IsBlank(line[*i])) ++*i;
      if (*i < line.size() && line[*i] != ',') {
        *why = absl::StrCat("column ", *i + 1,
                            " has text after a closing quote; quote the whole field");
        return false;
      }
      return true;
    }
  }
  *why = absl::StrCat("the quote at column ", open + 1,
                      " is not closed on this line (a field may not span lines)");
  return false;
}

// Splits one line into trimmed, unquoted fields.
bool SplitLine(absl::string_view line, std::vector<std::string>* fields, std::string* why) {
  fields->clear();
  size_t i = 0;
  while (true) {
    if (fields->size() == kMaxCablePlanFields) {
      *why = absl::StrCat("it has more than ", kMaxCablePlanFields, " fields");
      return false;
    }
    while (i < line.size() && IsBlank(line[i])) ++i;
    std::string field;
    if (i < line.size() && line[i] == '"') {
      if (!QuotedField(line, &i, &field, why)) return false;
    } else {
      const size_t end = std::min(line.find(',', i), line.size());
      field = std::string(absl::StripTrailingAsciiWhitespace(line.substr(i, end - i)));
      i = end;
    }
    fields->push_back(std::move(field));
    if (i >= line.size()) return true;
    ++i;  // the comma
  }
}

// The header's column of each of node, device, switch and port.
bool ReadHeader(const std::vector<std::string>& fields, std::array<int, kColumnCount>* column_of,
                const std::function<void(std::string)>& report) {
  column_of->fill(-1);
  bool ok = true;
  for (size_t i = 0; i < fields.size(); ++i) {
    const std::string name = absl::AsciiStrToLower(fields[i]);
    for (int c = 0; c < kColumnCount; ++c) {
      if (name != kColumnNames[c]) continue;
      if ((*column_of)[c] >= 0) {
        report(absl::StrCat("the header names the column ", kColumnNames[c], " twice (columns ",
                            (*column_of)[c] + 1, " and ", i + 1, "); name each column once."));
        ok = false;
      }
      (*column_of)[c] = static_cast<int>(i);
    }
  }
  for (int c = 0; c < kColumnCount; ++c) {
    if ((*column_of)[c] >= 0) continue;
    report(absl::StrCat("the header has no ", kColumnNames[c],
                        " column; the first line must name the columns node, device, switch "
                        "and port, in any order (e.g. node,device,switch,port)."));
    ok = false;
  }
  return ok;
}

// The row's fields, checked; nullopt after reporting.
std::optional<CableRow> RowOf(const std::vector<std::string>& fields,
                              const std::array<int, kColumnCount>& column_of, int line,
                              const std::function<void(std::string)>& report) {
  CableRow row;
  row.line = line;
  std::array<std::string*, kColumnCount> out = {&row.node, &row.device, &row.switch_name,
                                                &row.port};
  for (int c = 0; c < kColumnCount; ++c) {
    *out[c] = fields[column_of[c]];
    if (out[c]->empty()) {
      report(absl::StrCat("the ", kColumnNames[c],
                          " field is empty; every row gives node, device, switch and port."));
      return std::nullopt;
    }
  }
  struct Named {
    const std::string* value;
    const char* what;
    const char* example;
  };
  for (const Named& named :
       {Named{&row.node, "node", "node1"}, Named{&row.device, "device", "mlx5_0"},
        Named{&row.switch_name, "switch", "leaf1"}}) {
    if (IsName(*named.value)) continue;
    report(absl::StrCat("the ", named.what, " is ", Shown(*named.value),
                        "; it must be a name of letters, digits, '.', '_' and '-' (e.g. ",
                        named.example, ")."));
    return std::nullopt;
  }
  if (!IsSwitchPortName(row.port)) {
    report(absl::StrCat("the port is ", Shown(row.port),
                        "; it must be the switch's name for the port in printable ASCII, at most ",
                        kMaxSwitchPortLength, " characters (e.g. swp1, Ethernet14)."));
    return std::nullopt;
  }
  return row;
}

// "leaf1/swp1", compared without case.
std::string PortKey(absl::string_view switch_name, absl::string_view port) {
  return absl::StrCat(absl::AsciiStrToLower(switch_name), "\n", absl::AsciiStrToLower(port));
}

bool SameEnd(const CableEnd& a, const CableEnd& b) {
  return PortKey(a.switch_name, a.port) == PortKey(b.switch_name, b.port);
}

std::string EndText(const CableEnd& end) { return absl::StrCat(end.switch_name, "/", end.port); }

std::string PortText(absl::string_view node, absl::string_view device) {
  return device.empty() ? absl::StrCat(node, "'s data port") : absl::StrCat(node, " ", device);
}

// True when some node may be missing or misnamed, or its rails misread
// (already reported): a row naming it is then not judged.
bool NodesUncertain(const PlanErrorList& errors) {
  return errors.AnyErrorPath([](absl::string_view path) {
    if (path == "nodes") return true;
    if (!absl::ConsumePrefix(&path, "nodes[")) return false;
    const size_t close = path.find(']');
    if (close == absl::string_view::npos) return true;
    path.remove_prefix(close + 1);
    return path.empty() || path == ".name" || absl::StartsWith(path, ".rails");
  });
}

// Merges the cable ends of the YAML and the CSV, one at a time, in linear
// time: every question (is this a node, a rail of it, is the port taken)
// is a hash lookup.
class CableMerge {
 public:
  CableMerge(FieldReader* reader, Plan* plan) : reader_(reader), plan_(plan) {
    ethernet_ = plan->fabric.type == FabricType::kEthernet;
    uncertain_ = NodesUncertain(*reader->context().errors);
    for (const Node& node : plan->nodes) {
      if (node.name.empty()) continue;
      node_names_.push_back(node.name);
      for (const std::string& rail : node.rails) rails_.insert(absl::StrCat(node.name, "\n", rail));
      rails_of_.emplace(node.name, &node);
    }
  }

  void AddYaml(const YamlCableEnd& given) {
    const auto report = [&](std::string message) {
      reader_->ReportAt(given.at, given.end.source, std::move(message));
    };
    if (!TakePort(given.node, given.device, given.end, report)) return;
    plan_->cables.emplace(std::pair{given.node, given.device}, given.end);
  }

  void AddRow(const CableRow& row, const std::string& source,
              const std::function<void(std::string)>& report) {
    if (!Known(row, report)) return;
    CableEnd end{row.switch_name, row.port, source};
    const std::pair<std::string, std::string> key{row.node, row.device};
    if (auto it = plan_->cables.find(key); it != plan_->cables.end()) {
      Conflict(row, end, it->second, report);
      return;
    }
    if (ethernet_) {
      // nodes[].cable names the data port without its netdev: the row's
      // device names it.
      if (auto it = plan_->cables.find({row.node, ""}); it != plan_->cables.end()) {
        if (!SameEnd(it->second, end)) {
          Conflict(row, end, it->second, report);
          return;
        }
        plan_->cables.erase(it);
        plan_->cables.emplace(key, end);
        return;
      }
    }
    if (!TakePort(row.node, row.device, end, report)) return;
    plan_->cables.emplace(key, std::move(end));
  }

 private:
  // Whether the row's node and device are the plan's; reports otherwise.
  bool Known(const CableRow& row, const std::function<void(std::string)>& report) {
    if (uncertain_ || plan_->nodes.empty()) return false;
    auto node = rails_of_.find(row.node);
    if (node == rails_of_.end()) {
      std::string suggestion;
      if (suggestions_left_ > 0) {
        --suggestions_left_;
        suggestion = ClosestKey(row.node, node_names_);
      }
      report(
          absl::StrCat(row.node, " is not in the plan's nodes",
                       suggestion.empty() ? "" : absl::StrCat(" (did you mean ", suggestion, "?)"),
                       "; name each cable's node as the plan's nodes[].name does, or add the "
                       "node to the plan."));
      return false;
    }
    if (ethernet_) return KnownEthernetDevice(row, report);
    if (rails_.contains(absl::StrCat(row.node, "\n", row.device))) return true;
    const std::vector<std::string>& rails = node->second->rails;
    std::vector<std::string> shown(rails.begin(),
                                   rails.begin() + std::min(rails.size(), kMaxRailsShown));
    report(absl::StrCat(row.node, " has no rail ", row.device, " (its rails are ",
                        rails.empty() ? "none" : absl::StrJoin(shown, ", "),
                        rails.size() > kMaxRailsShown ? ", ..." : "",
                        "); give the RDMA device as the node's rails list it, or add it there."));
    return false;
  }

  // On ethernet the device is the data netdev's name, one per node.
  bool KnownEthernetDevice(const CableRow& row, const std::function<void(std::string)>& report) {
    if (row.device.size() > kMaxNetdevNameLength) {
      report(absl::StrCat("the device ", Shown(row.device), " is longer than a netdev name (",
                          kMaxNetdevNameLength,
                          " characters); on fabric.type ethernet the device is the netdev that "
                          "holds the node's data_ip (e.g. eth1)."));
      return false;
    }
    const auto [first, inserted] = data_port_.try_emplace(row.node, row.device, row.line);
    if (inserted || first->second.first == row.device) return true;
    report(absl::StrCat(row.node, " already has its data port ", first->second.first, " at line ",
                        first->second.second,
                        "; on fabric.type ethernet a node has one data port (the netdev holding "
                        "its data_ip): keep one row for it."));
    return false;
  }

  void Conflict(const CableRow& row, const CableEnd& end, const CableEnd& planned,
                const std::function<void(std::string)>& report) {
    if (!absl::StartsWith(planned.source, "nodes[")) {  // an earlier row of the file
      report(absl::StrCat(PortText(row.node, row.device), " already has a row (", planned.source,
                          "); give each port one row."));
      return;
    }
    if (SameEnd(planned, end)) return;
    report(absl::StrCat(PortText(row.node, row.device), " is on ", EndText(end), " here but ",
                        planned.source, " puts it on ", EndText(planned),
                        "; make the two agree, or keep one of them."));
  }

  // Records that `end` holds this port's cable; false (reported) when
  // another port already holds it.
  bool TakePort(const std::string& node, const std::string& device, const CableEnd& end,
                const std::function<void(std::string)>& report) {
    const auto [it, inserted] =
        port_owner_.try_emplace(PortKey(end.switch_name, end.port),
                                absl::StrCat(PortText(node, device), " (", end.source, ")"));
    if (inserted) return true;
    report(absl::StrCat(EndText(end), " already holds ", it->second,
                        "; one switch port takes one cable: fix the switch or port of one of "
                        "them."));
    return false;
  }

  FieldReader* reader_;
  Plan* plan_;
  bool ethernet_ = false;
  bool uncertain_ = false;
  int suggestions_left_ = kMaxSuggestions;
  std::vector<std::string> node_names_;
  std::unordered_map<std::string, const Node*> rails_of_;
  absl::flat_hash_set<std::string> rails_;                    // "node\nrail"
  absl::flat_hash_map<std::string, std::string> port_owner_;  // "switch\nport" -> who
  // ethernet: node -> its data netdev and the line that named it
  absl::flat_hash_map<std::string, std::pair<std::string, int>> data_port_;
};

// The CSV's path: the plan file's directory holds a relative one.
std::string CablingPath(const Plan& plan) {
  const std::string& cabling = plan.fabric.cabling;
  if (absl::StartsWith(cabling, "/")) return cabling;
  const size_t slash = plan.path.rfind('/');
  if (slash == std::string::npos) return cabling;
  return absl::StrCat(plan.path.substr(0, slash + 1), cabling);
}

void LoadCsv(FieldReader& reader, Plan* plan, CableMerge& merge) {
  auto located = plan->locations.find("fabric.cabling");
  const SourceLocation at =
      located == plan->locations.end() ? SourceLocation{1, 1} : located->second;
  const std::string& label = plan->fabric.cabling;
  const std::string path = CablingPath(*plan);
  absl::StatusOr<std::string> text = plan->attached_cabling.has_value()
                                         ? absl::StatusOr<std::string>(*plan->attached_cabling)
                                         : ReadRegularFile(path, kMaxCablePlanBytes, "cable plan");
  if (!text.ok()) {
    reader.ReportAt(at, "fabric.cabling",
                    absl::StrCat("fabric.cabling is ", label, ", which cannot be read (",
                                 text.status().message(),
                                 "); give the path of the cable plan's CSV, relative to the "
                                 "plan's directory or absolute."));
    return;
  }
  plan->cabling_sha256 = Sha256Hex(*text);
  plan->cabling_text = *text;
  int line = 0;
  const std::function<void(const std::string&)> report = [&](const std::string& message) {
    reader.ReportAt(at, "fabric.cabling", absl::StrCat(label, ":", line, ": ", message));
  };
  const std::vector<CableRow> rows =
      ParseCableCsv(*text, kMaxCablePlanLines, [&](int at_line, const std::string& message) {
        line = at_line;
        report(message);
      });
  for (const CableRow& row : rows) {
    line = row.line;
    merge.AddRow(row, absl::StrCat(label, ":", row.line), report);
  }
}

}  // namespace

bool IsSwitchPortName(absl::string_view port) {
  if (port.empty() || port.size() > kMaxSwitchPortLength) return false;
  if (IsBlank(port.front()) || IsBlank(port.back())) return false;
  return std::all_of(port.begin(), port.end(), [](char c) { return c >= 0x20 && c <= 0x7e; });
}

std::vector<CableRow> ParseCableCsv(absl::string_view text, size_t max_lines,
                                    const std::function<void(int, std::string)>& report) {
  absl::ConsumePrefix(&text, kByteOrderMark);
  std::vector<CableRow> rows;
  std::array<int, kColumnCount> column_of{};
  size_t header_fields = 0;
  int header_line = 0;
  std::vector<std::string> fields;
  std::string why;
  int line = 0;
  const std::function<void(std::string)> here = [&](std::string m) { report(line, std::move(m)); };
  for (size_t pos = 0; pos < text.size();) {
    const size_t end = std::min(text.find('\n', pos), text.size());
    absl::string_view content = text.substr(pos, end - pos);
    pos = end + 1;
    if (static_cast<size_t>(++line) > max_lines) {
      here(absl::StrCat("the cable plan has more than ", max_lines,
                        " lines; it holds one line per port (split the plan, or check that "
                        "fabric.cabling names the cable plan)."));
      return rows;
    }
    absl::ConsumeSuffix(&content, "\r");
    const absl::string_view trimmed = absl::StripAsciiWhitespace(content);
    if (trimmed.empty() || trimmed.front() == '#') continue;
    if (!SplitLine(content, &fields, &why)) {
      here(absl::StrCat("this line cannot be read: ", why, "."));
      if (header_line == 0) return rows;
      continue;
    }
    if (header_line == 0) {
      if (!ReadHeader(fields, &column_of, here)) return rows;
      header_line = line;
      header_fields = fields.size();
      continue;
    }
    if (fields.size() != header_fields) {
      here(absl::StrCat("this row has ", fields.size(), " fields but the header (line ",
                        header_line, ") has ", header_fields,
                        "; give every row the header's columns (quote a field that holds a "
                        "comma)."));
      continue;
    }
    if (std::optional<CableRow> row = RowOf(fields, column_of, line, here)) {
      rows.push_back(*std::move(row));
    }
  }
  if (header_line == 0) {
    line = std::max(line, 1);
    here(
        "the cable plan is empty; it needs a header line node,device,switch,port and then one row "
        "per port.");
  }
  return rows;
}

void ResolveCabling(FieldReader& reader, const std::vector<YamlCableEnd>& from_yaml, Plan* plan) {
  CableMerge merge(&reader, plan);
  for (const YamlCableEnd& given : from_yaml) merge.AddYaml(given);
  if (!plan->fabric.cabling.empty()) LoadCsv(reader, plan, merge);
}

bool AsksForCabling(const Plan& plan) {
  return !plan.fabric.cabling.empty() || !plan.cables.empty() ||
         plan.fabric.topology == FabricTopology::kRailOptimized ||
         plan.locations.count("fabric.lldp_wait_s") != 0;
}

const char* FabricTopologyName(FabricTopology topology) {
  switch (topology) {
    case FabricTopology::kUnspecified:
      return "unspecified";
    case FabricTopology::kRailOptimized:
      return "rail-optimized";
  }
  return "unknown";
}

}  // namespace clustercert::controller::plan
