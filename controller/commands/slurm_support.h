#pragma once

#include <cstdio>
#include <string>

#include "clustercert/v1/certificate.pb.h"
#include "common/process/command_runner.h"
#include "controller/commands/command_support.h"
#include "controller/plan/plan.h"

namespace clustercert::controller {

// run --slurm-nodes: the plan with the nodes Slurm lists for
// options.slurm_nodes (PlanWithSlurmNodes), the list printed on stderr. A
// Slurm that cannot be asked exits 3; a bad value or a plan that does not fit
// Slurm's nodes exits 2.
PlanResolver SlurmPlanResolver(const CommandOptions& options, process::CommandRunner& runner);

// --slurm-drain after a run: drains the nodes `certificate` fails and resumes
// the ones clustercert drained that pass now (slurm_drain.h), one line per
// node on `out`. Nothing is touched when the run was interrupted or reached
// no node (the fault is then the controller's own). 0, or kExitSlurmFailed
// when Slurm could not be asked or refused an action.
int UpdateSlurm(const plan::Plan& plan, const v1::Certificate& certificate,
                process::CommandRunner& runner, std::FILE* out);

}  // namespace clustercert::controller
