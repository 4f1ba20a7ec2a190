#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace clustercert::controller::slurm {

// What scontrol prints is read as hostile text: every value is checked
// against a strict character set and a length before it is used in a plan,
// a message or another scontrol argv. The formats are Slurm 22.05's, as
// captured in tests/fixtures/slurm/.

inline constexpr size_t kMaxNameLength = 64;
inline constexpr size_t kMaxNodeListLength = 4096;
inline constexpr size_t kMaxReasonLength = 200;  // the whole reason, prefix included
inline constexpr size_t kMaxNodes = 10'000;
inline constexpr char kReasonPrefix[] = "clustercert: ";

// One node as `scontrol --oneliner show node` describes it.
struct SlurmNode {
  std::string name;                // NodeName
  std::string addr;                // NodeAddr
  std::string hostname;            // NodeHostName
  std::string state;               // the base state: IDLE, ALLOCATED, MIXED, DOWN, UNKNOWN, ...
  std::vector<std::string> flags;  // after '+': DRAIN, NOT_RESPONDING, ...
  std::string reason;              // Reason without Slurm's " [user@time]"; empty when none

  bool HasFlag(absl::string_view flag) const;
  bool Drained() const { return HasFlag("DRAIN"); }
  bool Down() const { return state == "DOWN"; }
  // Drained by clustercert: its reason starts with "clustercert:".
  bool DrainedByClustercert() const;
  // "IDLE+DRAIN", as scontrol prints it.
  std::string StateText() const;
};

// A node or partition name: letters, digits, '.', '_', '-'; 1 to 64 characters.
// The first is a letter or digit, so scontrol never reads one as an option.
bool IsSlurmName(absl::string_view name);

// A hostlist expression as Slurm writes one: names and bracketed ranges
// joined by commas ("gpu[001-016,020],login1"). Brackets hold digits, ',' and
// '-' only and do not nest. InvalidArgument, as a clause, otherwise.
absl::Status ValidateNodeList(absl::string_view list);

// "clustercert: " + `finding`, reduced to printable ASCII (other bytes, tabs
// and newlines become spaces, runs of spaces one), at most kMaxReasonLength
// characters (cut with "...").
std::string ClustercertReason(absl::string_view finding);

// Parses one line of `scontrol --oneliner show node`.
absl::StatusOr<SlurmNode> ParseNodeLine(absl::string_view line);
// Every non-empty line of `text`; at most `max_nodes`.
absl::StatusOr<std::vector<SlurmNode>> ParseNodeLines(absl::string_view text, size_t max_nodes);

// The Nodes= hostlist of `scontrol --oneliner show partition NAME`.
absl::StatusOr<std::string> ParsePartitionNodeList(absl::string_view text);

// The names `scontrol show hostnames LIST` prints, one a line; at most
// `max_names`, each a valid name, none twice.
absl::StatusOr<std::vector<std::string>> ParseHostnames(absl::string_view text, size_t max_names);

}  // namespace clustercert::controller::slurm
