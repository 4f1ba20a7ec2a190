#pragma once

#include <map>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "controller/certificate/certificate_diff.h"

namespace clustercert::controller {

// Pieces every section of the certificate diff shares (inventory_diff.cc,
// collective_diff.cc, certificate_diff.cc): one way of pairing items up and
// of building and wording entries, so the sections read alike.

// Visits the items of two lists matched by a string key, in OLD's order and
// then NEW's additions: visit(key, old_item_or_null, new_item_or_null). An
// item whose key is empty is skipped; of items sharing a key the first one
// counts.
template <typename List, typename KeyFn, typename Visit>
void MatchByKey(const List& old_items, const List& new_items, KeyFn key, Visit visit) {
  using Item = std::remove_cvref_t<decltype(*old_items.begin())>;
  std::map<std::string, const Item*> by_key;
  for (const Item& item : new_items) {
    std::string k = key(item);
    if (!k.empty()) by_key.emplace(std::move(k), &item);
  }
  std::set<std::string> seen;
  for (const Item& item : old_items) {
    const std::string k = key(item);
    if (k.empty() || !seen.insert(k).second) continue;
    auto it = by_key.find(k);
    visit(k, &item, it == by_key.end() ? nullptr : it->second);
  }
  for (const Item& item : new_items) {
    const std::string k = key(item);
    if (!k.empty() && seen.insert(k).second) visit(k, nullptr, &item);
  }
}

inline DiffEntry MakeDiffEntry(DiffKind kind, std::string subject, std::string field,
                               std::string old_value, std::string new_value,
                               std::vector<std::string> nodes) {
  DiffEntry entry;
  entry.kind = kind;
  entry.subject = std::move(subject);
  entry.field = std::move(field);
  entry.old_value = std::move(old_value);
  entry.new_value = std::move(new_value);
  entry.nodes = std::move(nodes);
  return entry;
}

inline void SetDiffNumbers(DiffEntry& entry, double old_number, double new_number,
                           std::string unit) {
  entry.has_numbers = true;
  entry.old_number = old_number;
  entry.new_number = new_number;
  entry.unit = std::move(unit);
}

// "-30.0 %" for a relative change of -0.3.
inline std::string ChangePercent(double fraction) {
  return absl::StrFormat("%+.1f %%", fraction * 100);
}

// Long agent errors cut to fit one line ("...": the JSON keeps them whole
// where the entry's value carries them).
inline std::string ClipText(const std::string& text, size_t width = 200) {
  if (text.size() <= width) return text;
  return text.substr(0, width - 3) + "...";
}

}  // namespace clustercert::controller
