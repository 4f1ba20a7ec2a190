#pragma once

#include "controller/plan/map_reader.h"
#include "controller/plan/plan.h"

namespace clustercert::controller::plan {

// Parses the plan's optional `slurm:` section (docs/plan.md, "slurm"): the
// agent and data_ip patterns, node_defaults and timeout_s. Each pattern is
// checked by expanding it for a sample node, so a pattern that could never
// give a host:port (or an address) is a plan error, at its line, before
// Slurm is asked anything.
void ParseSlurmSection(MapReader& top, SlurmSettings* slurm);

}  // namespace clustercert::controller::plan
