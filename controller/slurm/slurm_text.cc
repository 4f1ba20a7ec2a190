#include "controller/slurm/slurm_text.h"

#include <unordered_set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace clustercert::controller::slurm {
namespace {

constexpr size_t kMaxAddressLength = 253;  // a DNS name at most
constexpr size_t kMaxFreeTextLength = 1024;
constexpr size_t kMaxLineBytes = size_t{64} << 10;

bool IsNameCharacter(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
}

// NodeAddr / NodeHostName: a host name, an IPv4 or an IPv6 address.
bool IsAddress(absl::string_view text) {
  if (text.empty() || text.size() > kMaxAddressLength) return false;
  for (char c : text) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != ':') {
      return false;
    }
  }
  return true;
}

bool IsStateWord(absl::string_view word) {
  if (word.empty() || word.size() > kMaxNameLength) return false;
  for (char c : word) {
    if (!absl::ascii_isupper(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

bool IsPrintable(absl::string_view text) {
  for (char c : text) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

// The first "Key=value" token of `fields` (whitespace-separated).
std::string FirstValue(absl::string_view fields, absl::string_view key) {
  const std::string prefix = absl::StrCat(key, "=");
  for (absl::string_view token : absl::StrSplit(fields, ' ', absl::SkipEmpty())) {
    if (absl::ConsumePrefix(&token, prefix)) return std::string(token);
  }
  return "";
}

// Reason= is the last field scontrol prints, and the only one of the node's
// own with spaces at its end; it ends in " [user@time]", which is dropped.
std::string SplitReason(absl::string_view* line) {
  const size_t at = line->rfind(" Reason=");
  if (at == absl::string_view::npos) return "";
  absl::string_view reason = line->substr(at + 8);
  *line = line->substr(0, at);
  const size_t stamp = reason.rfind(" [");
  if (stamp != absl::string_view::npos && absl::EndsWith(reason, "]")) {
    reason = reason.substr(0, stamp);
  }
  return std::string(absl::StripAsciiWhitespace(reason));
}

absl::Status CheckState(const std::string& name, absl::string_view state, SlurmNode* node) {
  std::vector<std::string> words = absl::StrSplit(state, '+');
  for (const std::string& word : words) {
    if (!IsStateWord(word)) {
      return absl::InvalidArgumentError(
          absl::StrCat("node ", name, " has State=", state.substr(0, kMaxNameLength),
                       ", not words of capitals joined by '+' (e.g. IDLE+DRAIN)"));
    }
  }
  node->state = words.front();
  node->flags.assign(words.begin() + 1, words.end());
  return absl::OkStatus();
}

}  // namespace

bool SlurmNode::HasFlag(absl::string_view flag) const {
  for (const std::string& f : flags) {
    if (f == flag) return true;
  }
  return false;
}

bool SlurmNode::DrainedByClustercert() const {
  return Drained() && absl::StartsWith(reason, "clustercert:");
}

std::string SlurmNode::StateText() const {
  return flags.empty() ? state : absl::StrCat(state, "+", absl::StrJoin(flags, "+"));
}

bool IsSlurmName(absl::string_view name) {
  if (name.empty() || name.size() > kMaxNameLength) return false;
  if (!absl::ascii_isalnum(static_cast<unsigned char>(name[0]))) return false;  // not an option
  for (char c : name) {
    if (!IsNameCharacter(c)) return false;
  }
  return true;
}

absl::Status ValidateNodeList(absl::string_view list) {
  if (list.empty() || list.size() > kMaxNodeListLength) {
    return absl::InvalidArgumentError(
        absl::StrCat("a node list must have 1 to ", kMaxNodeListLength, " characters"));
  }
  bool in_brackets = false;
  bool name_before = false;  // a '[' must follow part of a name
  for (char c : list) {
    if (c == '[') {
      if (in_brackets || !name_before) {
        return absl::InvalidArgumentError("a '[' must follow a name and may not nest");
      }
      in_brackets = true;
    } else if (c == ']') {
      if (!in_brackets) return absl::InvalidArgumentError("a ']' closes no '['");
      in_brackets = false;
    } else if (in_brackets) {
      if (!absl::ascii_isdigit(static_cast<unsigned char>(c)) && c != ',' && c != '-') {
        return absl::InvalidArgumentError(
            "brackets may hold only digits, ',' and '-' (e.g. gpu[001-016,020])");
      }
    } else if (c == ',') {
      name_before = false;
      continue;
    } else if (!IsNameCharacter(c)) {
      return absl::InvalidArgumentError(
          "a node list holds names of letters, digits, '.', '_', '-', bracketed ranges and commas");
    } else if (!name_before && !absl::ascii_isalnum(static_cast<unsigned char>(c))) {
      // scontrol would read "-h" as its own option.
      return absl::InvalidArgumentError("each name in a node list starts with a letter or digit");
    }
    name_before = true;
  }
  if (in_brackets) return absl::InvalidArgumentError("a '[' is not closed");
  return absl::OkStatus();
}

std::string ClustercertReason(absl::string_view finding) {
  std::string reason = kReasonPrefix;
  bool last_space = true;
  for (char c : finding) {
    const bool printable = c >= 0x21 && c <= 0x7e;
    if (!printable) {
      if (!last_space) reason.push_back(' ');
      last_space = true;
      continue;
    }
    reason.push_back(c);
    last_space = false;
  }
  while (!reason.empty() && reason.back() == ' ') reason.pop_back();
  if (reason.size() > kMaxReasonLength) reason = reason.substr(0, kMaxReasonLength - 3) + "...";
  return reason;
}

absl::StatusOr<SlurmNode> ParseNodeLine(absl::string_view line) {
  if (line.size() > kMaxLineBytes || !IsPrintable(line)) {
    return absl::InvalidArgumentError(
        "a line of scontrol show node is over 64 KiB or holds unprintable bytes");
  }
  SlurmNode node;
  node.reason = SplitReason(&line);
  if (!absl::StartsWith(line, "NodeName=")) {
    return absl::InvalidArgumentError(absl::StrCat("a line of scontrol show node starts with '",
                                                   line.substr(0, 40), "', not NodeName="));
  }
  node.name = FirstValue(line, "NodeName");
  if (!IsSlurmName(node.name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("scontrol show node names a node '", node.name.substr(0, kMaxNameLength),
                     "', which is not a name of letters, digits, '.', '_' and '-'"));
  }
  node.addr = FirstValue(line, "NodeAddr");
  node.hostname = FirstValue(line, "NodeHostName");
  for (const std::string* value : {&node.addr, &node.hostname}) {
    if (!IsAddress(*value)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "node ", node.name, " has NodeAddr/NodeHostName '", value->substr(0, 64),
          "', which is not a host name or address: fix the node's NodeAddr in slurm.conf"));
    }
  }
  if (absl::Status state = CheckState(node.name, FirstValue(line, "State"), &node); !state.ok()) {
    return state;
  }
  if (node.reason.size() > kMaxFreeTextLength) node.reason.resize(kMaxFreeTextLength);
  return node;
}

absl::StatusOr<std::vector<SlurmNode>> ParseNodeLines(absl::string_view text, size_t max_nodes) {
  std::vector<SlurmNode> nodes;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipWhitespace())) {
    if (nodes.size() == max_nodes) {
      return absl::ResourceExhaustedError(
          absl::StrCat("scontrol show node listed more than the ", max_nodes, " nodes asked for"));
    }
    absl::StatusOr<SlurmNode> node = ParseNodeLine(absl::StripAsciiWhitespace(line));
    if (!node.ok()) return node.status();
    nodes.push_back(*std::move(node));
  }
  return nodes;
}

absl::StatusOr<std::string> ParsePartitionNodeList(absl::string_view text) {
  const std::string list = FirstValue(absl::StripAsciiWhitespace(text), "Nodes");
  if (list.empty() || list == "(null)") {
    return absl::NotFoundError("the partition has no nodes (Nodes= is empty)");
  }
  if (absl::Status valid = ValidateNodeList(list); !valid.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the partition's Nodes= is '", list.substr(0, 80), "': ", valid.message()));
  }
  return list;
}

absl::StatusOr<std::vector<std::string>> ParseHostnames(absl::string_view text, size_t max_names) {
  std::vector<std::string> names;
  std::unordered_set<std::string> seen;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipWhitespace())) {
    const std::string name(absl::StripAsciiWhitespace(line));
    if (!IsSlurmName(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("scontrol show hostnames gave '", name.substr(0, kMaxNameLength),
                       "', which is not a node name of letters, digits, '.', '_' and '-'"));
    }
    if (names.size() == max_names) {
      return absl::ResourceExhaustedError(
          absl::StrCat("the node list expands to more than ", max_names,
                       " nodes; certify a larger cluster one partition at a time"));
    }
    if (seen.insert(name).second) names.push_back(name);
  }
  if (names.empty()) return absl::NotFoundError("the node list expands to no node");
  return names;
}

}  // namespace clustercert::controller::slurm
