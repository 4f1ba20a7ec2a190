#include "controller/plan/plan.h"

namespace clustercert::controller::plan {

const char* FabricTypeName(FabricType type) {
  switch (type) {
    case FabricType::kRoce:
      return "roce";
    case FabricType::kInfiniband:
      return "infiniband";
    case FabricType::kEthernet:
      return "ethernet";
  }
  return "unknown";
}

}  // namespace clustercert::controller::plan
