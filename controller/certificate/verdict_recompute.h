#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"

namespace clustercert::controller {

// What `controller verify` found when it judged a certificate again.
struct VerdictRecheck {
  int checks = 0;   // findings recomputed
  int pairs = 0;    // pair cells re-judged
  int sweeps = 0;   // collective sweeps re-judged
  int carried = 0;  // results taken over from a baseline
  std::vector<std::string>
      differences;  // sentences: what the record says against the recomputation
};

// Re-evaluates every verdict from the values the certificate records, with
// the thresholds of the plan it embeds, through the same functions the run
// used: the inventory checks from each node's inventory and clock, each pair
// cell from its measurement and line rate, the matrix's GPUDirect findings
// and suspects, each sweep from its rows, and the certificate's verdict from
// all of them. Any edit to a value, a verdict or the plan that changes an
// outcome shows up as a difference.
VerdictRecheck RecheckVerdicts(const v1::Certificate& certificate);

// The certificate format that first recorded check `id` (2 for every check
// format 2 had): verify leaves out of an older certificate's recomputation
// the checks its release did not have.
uint32_t FormatVersionIntroducing(const std::string& id);

}  // namespace clustercert::controller
