#include "common/command_line.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace clustercert {

CommandLine::CommandLine(std::vector<FlagSpec> specs) : specs_(std::move(specs)) {}

const CommandLine::FlagSpec* CommandLine::Find(const std::string& name) const {
  for (const auto& spec : specs_) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

absl::Status CommandLine::Parse(int argc, const char* const* argv) {
  bool flags_done = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (flags_done || arg.size() < 3 || arg.compare(0, 2, "--") != 0) {
      if (arg == "--") {
        flags_done = true;
        continue;
      }
      positional_.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2);
    std::string value;
    bool inline_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      inline_value = true;
    }
    const FlagSpec* spec = Find(name);
    if (spec == nullptr) {
      std::vector<std::string> known;
      for (const auto& s : specs_) known.push_back("--" + s.name);
      return absl::InvalidArgumentError(
          absl::StrCat("unknown flag --", name, "; known flags: ", absl::StrJoin(known, ", ")));
    }
    if (!spec->takes_value) {
      if (inline_value && value != "true" && value != "false") {
        return absl::InvalidArgumentError(
            absl::StrCat("--", name, " takes no value (or =true/=false), got '", value, "'"));
      }
      values_[name] = inline_value ? value : "true";
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= argc) {
        return absl::InvalidArgumentError(
            absl::StrCat("--", name, " needs a value (", spec->value_name, ")"));
      }
      value = argv[++i];
    }
    values_[name] = value;
  }
  return absl::OkStatus();
}

std::string CommandLine::Get(const std::string& name) const {
  if (auto it = values_.find(name); it != values_.end()) return it->second;
  const FlagSpec* spec = Find(name);
  return spec ? spec->default_value : "";
}

bool CommandLine::Has(const std::string& name) const { return values_.count(name) > 0; }

bool CommandLine::GetBool(const std::string& name) const { return Get(name) == "true"; }

std::string CommandLine::Help() const {
  std::string out;
  for (const auto& spec : specs_) {
    std::string left = absl::StrCat("--", spec.name);
    if (spec.takes_value) absl::StrAppend(&left, " ", spec.value_name);
    absl::StrAppend(&out, absl::StrFormat("  %-26s %s", left, spec.help));
    if (!spec.default_value.empty()) absl::StrAppend(&out, " (default ", spec.default_value, ")");
    out += "\n";
  }
  return out;
}

}  // namespace clustercert
