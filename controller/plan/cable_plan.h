#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "controller/plan/field_reader.h"
#include "controller/plan/plan.h"

namespace clustercert::controller::plan {

// The cable plan (issue 36): where each rail port's cable should land, as
// operators keep it in a CSV (fabric.cabling) and/or on the plan's
// nodes[].rails[] entries ({name, switch, port}) and, on fabric.type
// ethernet, nodes[].cable ({switch, port}) for the node's one data port.
// Everything here is checked when the plan is read, so `controller plan
// check` reports a wrong cable plan with its file:line before anything runs.

// Bounds on a cable plan CSV: far above one row per port of 100,000 nodes
// with 8 rails, and kept so a hostile or mistaken file (a log, /dev/zero's
// worth of commas) costs bounded time and memory.
inline constexpr size_t kMaxCablePlanBytes = 64u << 20;
inline constexpr size_t kMaxCablePlanLines = 1'000'000;
inline constexpr size_t kMaxCablePlanFields = 64;  // columns in one line
inline constexpr size_t kMaxSwitchPortLength = 64;

// One row of the CSV, its fields trimmed and unquoted.
struct CableRow {
  int line = 0;  // 1-based, in the CSV
  std::string node;
  std::string device;
  std::string switch_name;
  std::string port;
};

// Parses a cable plan's text: a header line naming the columns node,
// device, switch and port (in any order, any case; other columns are
// ignored), then one row per port. Accepts a UTF-8 byte-order mark, CRLF
// line ends, fields in double quotes ("" inside is one quote), blank lines
// and lines starting with '#'. Calls `report(line, sentence)` for each
// mistake (a missing column, an empty field, a wrong field count, a bad
// name) and leaves that row out. Linear in the text; stops with one report
// past `max_lines` lines.
std::vector<CableRow> ParseCableCsv(absl::string_view text, size_t max_lines,
                                    const std::function<void(int, std::string)>& report);

// A far end given in the YAML, before it is merged with the CSV.
struct YamlCableEnd {
  std::string node;
  std::string device;  // "" for nodes[].cable: the ethernet data port
  CableEnd end;        // end.source is the key path, "nodes[0].rails[1]"
  SourceLocation at;
};

// Whether `port` may name a switch port: printable ASCII, no leading or
// trailing space, 1..kMaxSwitchPortLength characters ("swp1", "Ethernet1/14",
// "1/1/3").
bool IsSwitchPortName(absl::string_view port);

// Reads fabric.cabling (relative to the plan file's directory unless
// absolute) when the plan names one, and merges its rows with `from_yaml`
// into plan->cables, reporting through `reader`: errors in the CSV carry
// "FILE:LINE: " and sit at fabric.cabling's position in the plan. A row's
// node must be a plan node and its device one of that node's rails (any
// netdev name on fabric.type ethernet, one per node); a port may appear once
// and a switch port hold one cable; a port given in both places must agree.
// Sets plan->cabling_sha256. Linear in the rows and nodes.
void ResolveCabling(FieldReader& reader, const std::vector<YamlCableEnd>& from_yaml, Plan* plan);

// Whether the run reads every rail's far end (GetInventoryRequest.cabling):
// the plan has a cable plan (fabric.cabling, switch/port on a rail or
// node), says fabric.topology: rail-optimized, or sets fabric.lldp_wait_s.
bool AsksForCabling(const Plan& plan);

// "unspecified" | "rail-optimized", as the plan spells them.
const char* FabricTopologyName(FabricTopology topology);

}  // namespace clustercert::controller::plan
