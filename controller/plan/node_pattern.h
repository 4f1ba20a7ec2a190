#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace clustercert::controller::plan {

// What a node pattern (slurm.agent, slurm.data_ip) is expanded with: the
// facts Slurm gives about one node, already validated by the caller.
struct NodeFacts {
  std::string name;      // {name}: Slurm's NodeName, e.g. gpu017
  std::string addr;      // {addr}: its NodeAddr, e.g. 10.0.1.17
  std::string hostname;  // {hostname}: its NodeHostName
  std::string number;    // {n}: the digits ending the name, leading zeros dropped ("17"); may be
                         // empty
};

// The digits that end `name` without leading zeros ("gpu017" -> "17",
// "node0" -> "0"); empty when the name ends in something else.
std::string TrailingNumber(absl::string_view name);

// Replaces {name}, {addr}, {hostname} and {n} in `pattern`. The text between
// placeholders may hold only letters, digits and . : - _ [ ] (a host, an
// address, a port). InvalidArgument, as a clause naming what is wrong, for
// an unknown placeholder, an unclosed brace, another character, or a
// placeholder whose fact is empty.
absl::StatusOr<std::string> ExpandNodePattern(absl::string_view pattern, const NodeFacts& facts);

}  // namespace clustercert::controller::plan
