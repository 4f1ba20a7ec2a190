#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/inventory/lldpcli_json.h"
#include "common/process/command_runner.h"

namespace clustercert::agent::inventory {

// Asks lldpd on this host for the neighbours it heard:
// `lldpcli -f json show neighbors details`, fixed argv, no shell, within the
// timeout given (at most kTimeout), output parsed as hostile text
// (lldpcli_json.h). lldpd absent or stopped is an answer the caller falls
// back from (the agent then receives the frames itself), so each error says
// which it was.
class LldpcliReader {
 public:
  static constexpr absl::Duration kTimeout = absl::Seconds(2);

  // `runner` must outlive the reader.
  explicit LldpcliReader(process::CommandRunner& runner) : runner_(runner) {}

  static std::vector<std::string> Argv();

  // NotFound: lldpcli is not installed. FailedPrecondition: lldpd is not
  // running, or its socket refused the agent. Another code: lldpcli hung,
  // failed otherwise, or printed what is not its JSON.
  absl::StatusOr<LldpcliNeighbors> Read(absl::Duration timeout) const;

 private:
  process::CommandRunner& runner_;
};

}  // namespace clustercert::agent::inventory
