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

const char* FabricRoutingName(FabricRouting routing) {
  switch (routing) {
    case FabricRouting::kAuto:
      return "auto";
    case FabricRouting::kBgp:
      return "bgp";
    case FabricRouting::kL2:
      return "l2";
  }
  return "unknown";
}

int RoceTrafficClass(const RoceSettings& roce) {
  constexpr int kEct0 = 0b10;  // RFC 3168: ECN-capable transport, codepoint ECT(0)
  return (roce.dscp << 2) | (roce.ecn ? kEct0 : 0);
}

const char* PairwisePatternName(PairwisePattern pattern) {
  switch (pattern) {
    case PairwisePattern::kAllPairs:
      return "all-pairs";
    case PairwisePattern::kRing:
      return "ring";
    case PairwisePattern::kKBatch:
      return "k-batch";
    case PairwisePattern::kLeaf:
      return "leaf";
  }
  return "unknown";
}

}  // namespace clustercert::controller::plan
