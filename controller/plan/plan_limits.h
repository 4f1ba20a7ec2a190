#pragma once

#include <cstddef>

#include "controller/plan/yaml_document.h"

namespace clustercert::controller::plan {

// What one plan file may cost to check (docs/plan.md, "Limits"). Each bound
// is far above a real cluster's plan and keeps a hostile or mistaken file
// from taking the controller's time or memory: checking stays linear in the
// file's size. Tests pass smaller values.
struct PlanLimits {
  size_t max_bytes = 64u << 20;  // the file itself
  size_t max_nodes = 100'000;    // entries under nodes
  size_t max_errors = 100;       // errors listed; the rest are counted in one last line
  YamlLimits yaml;               // values after alias expansion, keys in one map
};

}  // namespace clustercert::controller::plan
