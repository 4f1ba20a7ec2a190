#include "controller/report/large_cluster.h"

#include <algorithm>
#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "controller/report/pair_summary.h"

namespace clustercert::controller::report {
namespace {

void Count(CheckTally& tally, const v1::Finding& f) {
  switch (OutcomeOf(f)) {
    case CheckOutcome::kPass:
      ++tally.pass;
      return;
    case CheckOutcome::kWarn:
      ++tally.warn;
      break;
    case CheckOutcome::kFail:
      ++tally.fail;
      break;
    case CheckOutcome::kUnknown:
      ++tally.unknown;
      break;
    case CheckOutcome::kSkipped: {
      ++tally.skipped;
      const std::string reason = SharedReason(f.message(), f.node());
      auto it = std::find_if(tally.skip_reasons.begin(), tally.skip_reasons.end(),
                             [&](const auto& r) { return r.first == reason; });
      if (it == tally.skip_reasons.end()) {
        tally.skip_reasons.emplace_back(reason, 1);
      } else {
        ++it->second;
      }
      return;
    }
  }
  tally.not_passing.push_back(&f);
}

// 0: something failed or stayed unknown, 1: only warnings, 2: the rest.
int Urgency(const CheckTally& t) {
  if (t.fail > 0 || t.unknown > 0) return 0;
  return t.warn > 0 ? 1 : 2;
}

// A name split into a prefix and a trailing number ("n0042" -> "n", 42,
// width 4); numbered is false without trailing digits or with too many.
struct NameParts {
  absl::string_view prefix;
  size_t width = 0;
  uint64_t number = 0;
  bool numbered = false;
};

NameParts SplitName(absl::string_view name) {
  size_t i = name.size();
  while (i > 0 && absl::ascii_isdigit(static_cast<unsigned char>(name[i - 1]))) --i;
  NameParts parts{name.substr(0, i), name.size() - i, 0, false};
  if (parts.width == 0 || parts.width > 18) return parts;
  for (char c : name.substr(i)) parts.number = parts.number * 10 + static_cast<uint64_t>(c - '0');
  parts.numbered = true;
  return parts;
}

bool Follows(const NameParts& before, const NameParts& now) {
  return before.numbered && now.numbered && before.prefix == now.prefix &&
         before.width == now.width && now.number == before.number + 1;
}

}  // namespace

bool CondensedForScale(size_t nodes) { return nodes > kMaxNodesForPerNodeDetail; }

CheckOutcome OutcomeOf(const v1::Finding& f) {
  switch (f.status()) {
    case v1::Finding::pass:
      return CheckOutcome::kPass;
    case v1::Finding::skipped:
      return CheckOutcome::kSkipped;
    case v1::Finding::fail:
      return f.severity() == v1::Finding::warning ? CheckOutcome::kWarn : CheckOutcome::kFail;
    default:
      return CheckOutcome::kUnknown;
  }
}

std::vector<CheckTally> TallyChecks(const std::vector<const v1::Finding*>& checks) {
  std::vector<CheckTally> tallies;
  absl::flat_hash_map<std::string, size_t> index;
  std::vector<absl::flat_hash_set<std::string>> nodes;
  for (const v1::Finding* f : checks) {
    auto [it, added] = index.try_emplace(f->id(), tallies.size());
    if (added) {
      tallies.emplace_back();
      tallies.back().id = f->id();
      nodes.emplace_back();
    }
    Count(tallies[it->second], *f);
    nodes[it->second].insert(f->node());
  }
  for (size_t i = 0; i < tallies.size(); ++i) tallies[i].nodes = nodes[i].size();
  std::stable_sort(tallies.begin(), tallies.end(),
                   [](const auto& a, const auto& b) { return Urgency(a) < Urgency(b); });
  return tallies;
}

std::vector<CheckTally> TallyChecks(const google::protobuf::RepeatedPtrField<v1::Finding>& checks) {
  std::vector<const v1::Finding*> pointers;
  pointers.reserve(checks.size());
  for (const auto& f : checks) pointers.push_back(&f);
  return TallyChecks(pointers);
}

std::string SharedReason(const std::string& reason, const std::string& node) {
  if (node.empty() || !absl::StartsWith(reason, node)) return reason;
  // Only a whole name: "node1" must not take the prefix off "node10: ...".
  if (reason.size() > node.size() && reason[node.size()] != ' ' && reason[node.size()] != ':') {
    return reason;
  }
  const size_t colon = reason.find(": ", node.size());
  return colon == std::string::npos ? reason : reason.substr(colon + 2);
}

std::vector<SkipGroup> GroupSkipped(const google::protobuf::RepeatedPtrField<v1::SkippedTest>& in) {
  std::vector<SkipGroup> groups;
  absl::flat_hash_map<std::string, size_t> index;
  std::vector<absl::flat_hash_set<std::string>> nodes;
  for (const auto& s : in) {
    // A finding key: "<id>@<node>/<device>:<port>"; anything else has no node.
    const size_t at = s.key().find('@');
    const std::string what = s.key().substr(0, at);
    const std::string subject = at == std::string::npos ? "" : s.key().substr(at + 1);
    const std::string node = subject.substr(0, subject.find_first_of("/:"));
    std::string reason = SharedReason(s.reason(), node);
    auto [it, added] =
        index.try_emplace(absl::StrCat(s.kind(), "\n", what, "\n", reason), groups.size());
    if (added) {
      groups.emplace_back();
      groups.back().kind = s.kind();
      groups.back().what = what;
      groups.back().reason = std::move(reason);
      nodes.emplace_back();
    }
    if (!subject.empty()) groups[it->second].subjects.push_back(subject);
    if (!node.empty()) nodes[it->second].insert(node);
  }
  for (size_t i = 0; i < groups.size(); ++i) groups[i].nodes = nodes[i].size();
  return groups;
}

std::string NodeRanges(const std::vector<std::string>& names, size_t cap) {
  // Each item is a run [first, last] of names; two names are not worth a dash.
  std::vector<std::string> items;
  size_t shown = 0;
  for (size_t i = 0; i < names.size();) {
    if (cap > 0 && items.size() == cap) break;
    size_t j = i;
    while (j + 1 < names.size() && Follows(SplitName(names[j]), SplitName(names[j + 1]))) ++j;
    if (j - i >= 2) {
      items.push_back(absl::StrCat(names[i], "\xE2\x80\x93", names[j]));
      shown += j - i + 1;
      i = j + 1;
    } else {
      items.push_back(names[i]);
      ++shown;
      ++i;
    }
  }
  std::string out = absl::StrJoin(items, ", ");
  if (shown < names.size()) {
    absl::StrAppend(&out, ", \xE2\x80\xA6 and ", names.size() - shown, " more");
  }
  return out;
}

}  // namespace clustercert::controller::report
