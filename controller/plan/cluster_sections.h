#pragma once

#include "controller/plan/map_reader.h"
#include "controller/plan/plan.h"

namespace clustercert::controller::plan {

// Parsers for the sections that describe the cluster and how to reach it:
// fabric, nodes, expect, agents and certificate. Each reads its section from
// the plan's top-level map, stores what is valid into the Plan (absent keys
// keep plan.h's defaults), reports everything else, and checks the section's
// own keys. Rules that span sections live in plan_validator.h.

void ParseFabricSection(MapReader& top, Fabric* fabric);
// Also reads the cable plan (fabric.cabling, after the fabric section) and
// merges it with the nodes' own switch/port into Plan::cables.
void ParseNodesSection(MapReader& top, Plan* plan);
void ParseExpectSection(MapReader& top, Expectations* expect);
void ParseAgentsSection(MapReader& top, AgentSettings* agents);
void ParseCertificateSection(MapReader& top, CertificateSettings* certificate);

}  // namespace clustercert::controller::plan
