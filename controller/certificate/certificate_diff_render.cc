#include "controller/certificate/certificate_diff_render.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/text_escape.h"

namespace clustercert::controller {
namespace {

constexpr const char* kRed = "\033[31m";
constexpr const char* kGreen = "\033[32m";
constexpr const char* kBold = "\033[1m";
constexpr const char* kReset = "\033[0m";

constexpr DiffSection kSections[] = {DiffSection::kInventory, DiffSection::kFindings,
                                     DiffSection::kPairs,     DiffSection::kCollectives,
                                     DiffSection::kUplink,    DiffSection::kSummary};

// Both certificates are files anyone may hand us, and their entries quote
// what agents reported: every line is neutralised for the terminal before our
// own colours are put around it.
std::string SideLine(const char* label, const DiffSide& side) {
  return absl::StrCat(
      "  ", label, " ",
      TerminalText(absl::StrCat(side.cluster.empty() ? "(no cluster)" : side.cluster, ", started ",
                                side.started_at.empty() ? "?" : side.started_at, ", ",
                                side.verdict.empty() ? "no verdict" : side.verdict)),
      "\n");
}

std::string Line(const char* marker, const char* color_code, const std::string& text, bool color) {
  const std::string padded = absl::StrFormat("%-10s", marker);
  const std::string shown = TerminalText(text);
  if (!color || color_code == nullptr) return absl::StrCat("  ", padded, " ", shown, "\n");
  return absl::StrCat("  ", color_code, padded, kReset, " ", shown, "\n");
}

// A minimal JSON writer: objects and arrays with commas placed for us,
// strings escaped by JsonEscape (RFC 8259, valid UTF-8, no control a terminal
// would obey), non-finite numbers as null.
class JsonWriter {
 public:
  void BeginObject() { Open('{'); }
  void EndObject() { Close('}'); }
  void BeginArray() { Open('['); }
  void EndArray() { Close(']'); }

  void Key(const std::string& key) {
    Separate();
    String(key);
    out_ += ':';
    after_key_ = true;
  }
  void Value(const std::string& value) {
    Separate();
    String(value);
  }
  void Value(const char* value) { Value(std::string(value)); }
  void Value(bool value) {
    Separate();
    out_ += value ? "true" : "false";
  }
  void Value(int value) {
    Separate();
    absl::StrAppend(&out_, value);
  }
  void Value(double value) {
    Separate();
    if (!std::isfinite(value)) {
      out_ += "null";
    } else {
      out_ += absl::StrFormat("%.17g", value);
    }
  }
  template <typename T>
  void Field(const std::string& key, const T& value) {
    Key(key);
    Value(value);
  }
  void Strings(const std::string& key, const std::vector<std::string>& values) {
    Key(key);
    BeginArray();
    for (const auto& value : values) Value(value);
    EndArray();
  }

  const std::string& str() const { return out_; }

 private:
  void Open(char c) {
    Separate();
    out_ += c;
    first_.push_back(true);
  }
  void Close(char c) {
    out_ += c;
    first_.pop_back();
  }
  // A comma before every element but the first; none right after a key.
  void Separate() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (first_.empty()) return;
    if (!first_.back()) out_ += ',';
    first_.back() = false;
  }
  void String(const std::string& text) { absl::StrAppend(&out_, "\"", JsonEscape(text), "\""); }

  std::string out_;
  std::vector<bool> first_;
  bool after_key_ = false;
};

void WriteSide(JsonWriter& json, const char* key, const DiffSide& side) {
  json.Key(key);
  json.BeginObject();
  json.Field("cluster", side.cluster);
  json.Field("plan_sha256", side.plan_sha256);
  json.Field("started_at", side.started_at);
  json.Field("verdict", side.verdict);
  json.EndObject();
}

void WriteEntry(JsonWriter& json, const DiffEntry& entry) {
  json.BeginObject();
  json.Field("section", DiffSectionName(SectionOf(entry.kind)));
  json.Field("kind", DiffKindName(entry.kind));
  json.Field("subject", entry.subject);
  json.Field("field", entry.field);
  json.Field("old", entry.old_value);
  json.Field("new", entry.new_value);
  if (entry.has_numbers) {
    json.Field("old_number", entry.old_number);
    json.Field("new_number", entry.new_number);
    if (entry.old_number != 0)
      json.Field("change_fraction", entry.new_number / entry.old_number - 1);
    json.Field("unit", entry.unit);
  }
  json.Strings("nodes", entry.nodes);
  json.Field("regression", entry.regression);
  json.Field("improvement", entry.improvement);
  json.Field("text", entry.text);
  json.EndObject();
}

}  // namespace

std::string RenderDiffText(const CertificateDiff& diff, bool color) {
  std::string out =
      absl::StrFormat("certificate diff (noise band +-%.4g %%)\n", diff.noise_fraction * 100);
  out += SideLine("OLD", diff.old_side);
  out += SideLine("NEW", diff.new_side);
  for (DiffSection section : kSections) {
    std::string lines;
    if (section == DiffSection::kSummary) {
      for (const HostImplication& host : diff.hosts) {
        lines += Line("hosts", nullptr,
                      absl::StrCat(host.node, " is in ", host.regressed_pairs, " of ",
                                   host.total_regressed_pairs, " regressed pairs"),
                      color);
      }
    }
    for (const DiffEntry& entry : diff.entries) {
      if (SectionOf(entry.kind) != section) continue;
      if (entry.regression) {
        lines += Line("REGRESSION", kRed, entry.text, color);
      } else if (entry.improvement) {
        lines += Line("better", kGreen, entry.text, color);
      } else {
        lines += Line("changed", nullptr, entry.text, color);
      }
    }
    if (section == DiffSection::kSummary && lines.empty()) continue;
    out += absl::StrCat(color ? kBold : "", DiffSectionName(section), color ? kReset : "", "\n");
    out += lines.empty() ? "  no change\n" : lines;
  }
  const std::string summary = TerminalText(diff.Summary());
  if (color) {
    out += absl::StrCat(diff.regressed() ? kRed : kGreen, summary, kReset, "\n");
  } else {
    out += summary + "\n";
  }
  return out;
}

std::string RenderDiffJson(const CertificateDiff& diff) {
  JsonWriter json;
  json.BeginObject();
  WriteSide(json, "old", diff.old_side);
  WriteSide(json, "new", diff.new_side);
  json.Field("noise_fraction", diff.noise_fraction);
  json.Strings("warnings", diff.warnings);
  json.Field("regressed", diff.regressed());
  json.Field("regressions", diff.regression_count());
  json.Key("entries");
  json.BeginArray();
  for (const DiffEntry& entry : diff.entries) WriteEntry(json, entry);
  json.EndArray();
  json.Key("hosts");
  json.BeginArray();
  for (const HostImplication& host : diff.hosts) {
    json.BeginObject();
    json.Field("node", host.node);
    json.Field("regressed_pairs", host.regressed_pairs);
    json.Field("total_regressed_pairs", host.total_regressed_pairs);
    json.EndObject();
  }
  json.EndArray();
  json.Field("summary", diff.Summary());
  json.EndObject();
  return json.str() + "\n";
}

}  // namespace clustercert::controller
