#pragma once

#include <functional>
#include <vector>

#include "absl/time/time.h"
#include "clustercert/v1/certificate.pb.h"
#include "common/clock.h"
#include "controller/phases/node_state.h"
#include "controller/phases/phase_journal.h"
#include "controller/phases/progress.h"
#include "controller/phases/rerun_scope.h"
#include "controller/phases/run_stop.h"
#include "controller/plan/plan.h"

namespace clustercert::controller {

// The phases of `controller run` in order, without any printing or files:
// connect, inventory, pairwise (with pairwise.incast's rounds after the
// matrix), collectives, uplink (each skipped with its reason when the plan
// has no section for it), then the certificate. Tests
// drive it with fake clients (tests/support/fake_agent_client.h) on a
// simulated clock; `clock` times the phases, the retries and the polling.
//
// Every agent call goes through a GuardedAgentClient for the run: a node
// that stops answering costs one call deadline per phase (NodeHealth; each
// phase tries it once more), and once `stop` is requested the phase under
// way winds down, its leases released, the later phases are skipped and the
// certificate records `interrupted` (never certified).
//
// `journal` (may be null) takes each pair cell and sweep as it completes;
// when it resumes a killed run's journal, what that run completed is taken
// over instead of measured, and the certificate records `resumed`.
struct CertificationResult {
  v1::Certificate certificate;
  std::vector<v1::Finding> checks;
  int reachable = 0;
};

// Which phases to run: `inventory` stops after the inventory phase.
enum class PhaseScope { kInventoryOnly, kAll };

CertificationResult RunCertification(const plan::Plan& plan, std::vector<NodeState>& nodes,
                                     Progress& progress, Clock& clock,
                                     PhaseScope scope = PhaseScope::kAll,
                                     const RerunScope* rerun = nullptr,
                                     const v1::Baseline* baseline = nullptr,
                                     std::vector<NodeState>* sinks = nullptr,
                                     RunStop* stop = nullptr, PhaseJournal* journal = nullptr);

// The exit status for a finished run (0, 1 or 3).
int ExitCodeFor(const CertificationResult& result, size_t node_count);

}  // namespace clustercert::controller
