#pragma once

#include "controller/plan/map_reader.h"
#include "controller/plan/plan.h"

namespace clustercert::controller::plan {

// other_fabrics: the fabrics (inference, storage) the training data netdevs
// must not reach, each a name, its subnets and optional probe targets inside
// them. Needs the nodes already parsed: a node's data_ip inside another
// fabric's subnet, or a probe target outside its own fabric's subnets, is a
// plan error (the probe would test nothing, or the wrong network).
void ParseOtherFabricsSection(MapReader& top, Plan* plan);

}  // namespace clustercert::controller::plan
