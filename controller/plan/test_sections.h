#pragma once

#include "controller/plan/map_reader.h"
#include "controller/plan/plan.h"

namespace clustercert::controller::plan {

// Parsers for the sections that choose the measurements: pairwise,
// collectives and uplink. A section that is present (even empty) enables its
// phase with plan.h's defaults for the keys it leaves out; an absent section
// leaves the phase off. Rules that need other sections (nodes' GPUs, node
// names) live in plan_validator.h.

void ParsePairwiseSection(MapReader& top, Pairwise* pairwise);
void ParseCollectivesSection(MapReader& top, Collectives* collectives);
void ParseUplinkSection(MapReader& top, Uplink* uplink);

}  // namespace clustercert::controller::plan
