#include "agent/inventory/iommu_collector.h"

#include <set>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace clustercert::agent::inventory {
namespace {

constexpr char kCmdline[] = "/proc/cmdline";
constexpr char kIommuClass[] = "/sys/class/iommu";
constexpr size_t kMaxWords = 16;
constexpr size_t kMaxWordChars = 64;
constexpr size_t kMaxUnits = 256;

constexpr absl::string_view kPrefixes[] = {
    "intel_iommu=", "amd_iommu=", "iommu=", "iommu.passthrough=", "iommu.strict="};

// The comma-separated options after "<key>=" in `words`, e.g. "on", "sm_on".
std::vector<std::string> OptionsOf(const std::vector<std::string>& words, absl::string_view key) {
  std::vector<std::string> options;
  const std::string prefix = absl::StrCat(key, "=");
  for (const std::string& word : words) {
    if (!absl::StartsWith(word, prefix)) continue;
    for (absl::string_view option : absl::StrSplit(word.substr(prefix.size()), ',')) {
      options.emplace_back(option);
    }
  }
  return options;
}

bool HasOption(const std::vector<std::string>& words, absl::string_view key,
               std::initializer_list<absl::string_view> values) {
  for (const std::string& option : OptionsOf(words, key)) {
    for (absl::string_view value : values) {
      if (option == value) return true;
    }
  }
  return false;
}

}  // namespace

std::vector<std::string> IommuCmdlineWords(absl::string_view cmdline) {
  std::vector<std::string> words;
  for (absl::string_view word :
       absl::StrSplit(cmdline, absl::ByAnyChar(" \t\n"), absl::SkipEmpty())) {
    if (words.size() >= kMaxWords) break;
    for (absl::string_view prefix : kPrefixes) {
      if (absl::StartsWith(word, prefix)) {
        words.emplace_back(word.substr(0, kMaxWordChars));
        break;
      }
    }
  }
  return words;
}

std::string ClassifyIommu(const std::vector<std::string>& cmdline_words, bool cmdline_known,
                          int units, bool units_known,
                          const std::vector<std::string>& group_types) {
  if (HasOption(cmdline_words, "intel_iommu", {"off"}) ||
      HasOption(cmdline_words, "amd_iommu", {"off"}) ||
      HasOption(cmdline_words, "iommu", {"off"})) {
    return "off";
  }
  if (units_known && units == 0) return "off";
  bool translated_group = false;
  bool identity_group = false;
  for (const std::string& type : group_types) {
    if (type == "DMA" || type == "DMA-FQ") translated_group = true;
    if (type == "identity") identity_group = true;
  }
  if (translated_group) return "translated";
  if (identity_group) return "passthrough";
  if (!cmdline_known) return "unknown";
  // iommu.passthrough takes a kernel boolean (kstrtobool: 1/y/Y/on).
  if (HasOption(cmdline_words, "iommu", {"pt"}) ||
      HasOption(cmdline_words, "iommu.passthrough", {"1", "y", "Y", "on"})) {
    return units_known ? "passthrough" : "unknown";
  }
  return units_known ? "translated" : "unknown";
}

v1::Iommu IommuCollector::Collect(const std::vector<v1::PciFunction>& functions) const {
  v1::Iommu iommu;
  std::vector<std::string> sources;

  auto cmdline = view_.ReadText(kCmdline);
  std::vector<std::string> words;
  if (cmdline.ok()) {
    words = IommuCmdlineWords(*cmdline);
    iommu.set_cmdline(absl::StrJoin(words, " "));
    sources.push_back(absl::StrCat(kCmdline, words.empty() ? " (no iommu word)" : ""));
  } else {
    sources.push_back(absl::StrCat(kCmdline, " unreadable: ", ReasonOf(cmdline.status())));
  }

  auto units = view_.ListDir(kIommuClass);
  const bool units_known = units.ok() || absl::IsNotFound(units.status());
  if (units.ok()) {
    for (const std::string& unit : *units) {
      if (iommu.units_size() >= static_cast<int>(kMaxUnits)) break;
      iommu.add_units(unit);
    }
    sources.push_back(absl::StrCat(kIommuClass, " (", iommu.units_size(), " units)"));
  } else if (absl::IsNotFound(units.status())) {
    sources.push_back(absl::StrCat(kIommuClass, " absent"));
  } else {
    sources.push_back(absl::StrCat(kIommuClass, " unreadable: ", ReasonOf(units.status())));
  }

  std::vector<std::string> group_types;
  std::set<std::string> seen_types;
  for (const v1::PciFunction& function : functions) {
    if (function.sysfs_path().empty()) continue;
    auto type = view_.ReadText(absl::StrCat(function.sysfs_path(), "/iommu_group/type"));
    if (!type.ok()) continue;
    std::string value(absl::StripAsciiWhitespace(type->substr(0, kMaxWordChars)));
    group_types.push_back(value);
    seen_types.insert(value);
  }
  if (!group_types.empty()) {
    sources.push_back(
        absl::StrCat("iommu_group/type of the GPUs and NICs: ", absl::StrJoin(seen_types, ", ")));
  }

  iommu.set_mode(ClassifyIommu(words, cmdline.ok(), iommu.units_size(), units_known, group_types));
  iommu.set_source(absl::StrJoin(sources, "; "));
  return iommu;
}

}  // namespace clustercert::agent::inventory
