#pragma once

#include <string>

#include "clustercert/v1/inventory.pb.h"

namespace clustercert::controller::checks::testing {

// The inventory the real InventoryCollector reads from the fixture host tree
// at `root` (absolute, or a name under tests/fixtures/sysfs/), with fakes
// for what a tree cannot hold: an NTP-synchronised clock, the management
// address `management_ip` on eno1 (what the plan dials), and no command
// runs (a fixture's command outputs come from clustercert-capture/).
v1::Inventory CollectFixtureHost(const std::string& root,
                                 const std::string& management_ip = "192.168.100.11");

}  // namespace clustercert::controller::checks::testing
