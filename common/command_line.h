#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace clustercert {

// A small GNU-style command-line parser: `--name value`, `--name=value`,
// boolean `--name`, positional arguments in any order, `--` ends flags.
// Flag names keep their dashes (--sysfs-root, --tls-cert): those names are
// the contract scripts rely on, which absl's flags cannot spell.
class CommandLine {
 public:
  struct FlagSpec {
    std::string name;  // without the leading dashes
    bool takes_value = true;
    std::string value_name;  // for help, e.g. HOST:PORT
    std::string help;
    std::string default_value;
  };

  explicit CommandLine(std::vector<FlagSpec> specs);

  // Unknown flags and missing values are errors naming the flag and listing
  // the known ones.
  absl::Status Parse(int argc, const char* const* argv);

  std::string Get(const std::string& name) const;  // value or default
  bool Has(const std::string& name) const;         // given on the command line
  bool GetBool(const std::string& name) const;     // a boolean flag was given
  const std::vector<std::string>& positional() const { return positional_; }

  std::string Help() const;

 private:
  const FlagSpec* Find(const std::string& name) const;

  std::vector<FlagSpec> specs_;
  std::map<std::string, std::string> values_;
  std::vector<std::string> positional_;
};

}  // namespace clustercert
