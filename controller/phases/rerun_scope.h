#pragma once

#include <set>
#include <string>

#include "clustercert/v1/certificate.pb.h"

namespace clustercert::controller {

// A partial re-certification (`run --baseline OLD.json --only node3`): the
// phases measure again only what touches `only` (that node's inventory, the
// pair cells with it at either end, the sweeps that include it) and take the
// rest over from `baseline`, stamped with `carried`. Every verdict is then
// judged again over the merged results, so the certificate reads as one run.
struct RerunScope {
  std::set<std::string> only;
  const v1::Certificate* baseline = nullptr;
  v1::Carried carried;  // when the taken-over results were measured, and their age

  bool Measures(const std::string& node) const { return only.count(node) > 0; }
};

}  // namespace clustercert::controller
