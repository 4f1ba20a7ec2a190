#include "controller/checks/cable_checks.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "controller/checks/finding_builder.h"

namespace clustercert::controller::checks {
namespace {

constexpr char kPresentId[] = "cable.present";
constexpr char kDomId[] = "cable.dom";
constexpr char kConsistencyId[] = "cable.consistency";
constexpr char kNotAsked[] = "the plan did not ask for cabling";
// How many breaches one cable.dom message spells out before "and N more".
constexpr size_t kMaxBreachesNamed = 4;

bool PlanAsksForCabling(const plan::Plan& plan) {
  return !plan.cables.empty() || !plan.fabric.cabling.empty();
}

// "QSFP28 AOC Mellanox MFA1A00-C003 serial MT2012FT01234".
std::string ModuleText(const v1::CableModule& module) {
  std::vector<std::string> parts;
  for (const std::string* part :
       {&module.identifier(), &module.media(), &module.vendor(), &module.part_number()}) {
    if (!part->empty()) parts.push_back(*part);
  }
  if (!module.serial().empty()) parts.push_back(absl::StrCat("serial ", module.serial()));
  return parts.empty() ? std::string("a module with no readable identity")
                       : absl::StrJoin(parts, " ");
}

v1::Finding PresentFinding(const std::string& node, const v1::RailPort& port) {
  FindingBuilder builder(kPresentId, v1::Finding::warning, node, port.rail());
  if (port.has_module()) {
    const std::string text = ModuleText(port.module());
    return builder.Pass(text, "a module read from its EEPROM",
                        absl::StrCat(builder.subject(), " holds ", text, "."));
  }
  const MissingFact fact =
      HasUnknown(port, {"module"})
          ? ExplainMissing(port, {"module"})
          : MissingBecause("the node-agent reported neither a module nor why there is none");
  const std::string netdev = port.netdev().empty() ? std::string("<netdev>") : port.netdev();
  return builder.Unknown(
      fact, "cable/transceiver", "a module read from its EEPROM",
      absl::StrCat("Read it by hand (sudo ethtool -m ", netdev,
                   "): a virtual or on-board port has no module, an empty cage needs its cable, "
                   "and a module that does not answer needs reseating."));
}

v1::Finding NoRailPortsFinding(const NodeEvidence& evidence) {
  FindingBuilder builder(kPresentId, v1::Finding::warning, evidence.node->name);
  const MissingFact fact =
      HasUnknown(*evidence.inventory, {"rail_ports"})
          ? ExplainMissing(*evidence.inventory, {"rail_ports"})
          : MissingBecause("the node-agent sent no rail ports (an agent older than cabling?)");
  return builder.Unknown(fact, "rail ports' cables", "a module on every rail port",
                         "Run a node-agent that reads cabling (issue 36) and re-run.");
}

enum class Quantity { kTemperature, kVoltage, kTxBias, kTxPower, kRxPower };

// One monitored value and the module's limits for it.
struct Reading {
  std::string what;  // "temperature", "lane 2 rx power"
  Quantity quantity;
  double value;
  const char* unit;
  const v1::ModuleThresholds* limits;
};

struct Breach {
  const Reading* reading;
  bool alarm;
  bool high;
  double threshold;
};

// A module that has not set its thresholds reads 0 in all four.
bool ThresholdsSet(const v1::ModuleThresholds& limits) {
  return limits.high_alarm() != 0 || limits.low_alarm() != 0 || limits.high_warning() != 0 ||
         limits.low_warning() != 0;
}

std::optional<Breach> Judge(const Reading& reading) {
  const v1::ModuleThresholds& limits = *reading.limits;
  const double value = reading.value;
  if (limits.has_high_alarm() && value > limits.high_alarm()) {
    return Breach{&reading, true, true, limits.high_alarm()};
  }
  if (limits.has_low_alarm() && value < limits.low_alarm()) {
    return Breach{&reading, true, false, limits.low_alarm()};
  }
  if (limits.has_high_warning() && value > limits.high_warning()) {
    return Breach{&reading, false, true, limits.high_warning()};
  }
  if (limits.has_low_warning() && value < limits.low_warning()) {
    return Breach{&reading, false, false, limits.low_warning()};
  }
  return std::nullopt;
}

std::string Fix(const Breach& breach) {
  switch (breach.reading->quantity) {
    case Quantity::kRxPower:
      return breach.high ? "too much light arrives: check the far end's transceiver type, and add "
                           "an attenuator on a short single-mode link"
                         : "clean or replace the fibre/transceiver";
    case Quantity::kTxPower:
    case Quantity::kTxBias:
      return "replace the transceiver: its laser is out of its own range";
    case Quantity::kTemperature:
      return breach.high ? "check the airflow and fans at the port, then replace the transceiver"
                         : "the module's sensor reads implausibly cold: replace the transceiver";
    case Quantity::kVoltage:
      return "reseat the module; if it persists, have the port's supply (NIC or cage) serviced";
  }
  return "";
}

// "lane 2 rx power 0.02 mW is under the module's low alarm 0.05 mW".
std::string BreachText(const Breach& breach) {
  const Reading& reading = *breach.reading;
  return absl::StrCat(reading.what, " ", FormatNumber(reading.value), " ", reading.unit, " is ",
                      breach.high ? "over" : "under", " the module's ",
                      breach.high ? "high " : "low ", breach.alarm ? "alarm " : "warning ",
                      FormatNumber(breach.threshold), " ", reading.unit);
}

std::vector<Reading> ReadingsOf(const v1::CableModule& module) {
  std::vector<Reading> readings;
  if (module.has_temperature_c()) {
    readings.push_back({"temperature", Quantity::kTemperature, module.temperature_c(), "C",
                        &module.temperature_limits()});
  }
  if (module.has_voltage_v()) {
    readings.push_back(
        {"supply voltage", Quantity::kVoltage, module.voltage_v(), "V", &module.voltage_limits()});
  }
  for (const v1::ModuleLane& lane : module.lanes()) {
    const std::string name = absl::StrCat("lane ", lane.lane(), " ");
    if (lane.has_tx_bias_ma()) {
      readings.push_back(
          {name + "tx bias", Quantity::kTxBias, lane.tx_bias_ma(), "mA", &module.tx_bias_limits()});
    }
    if (lane.has_tx_power_mw()) {
      readings.push_back({name + "tx power", Quantity::kTxPower, lane.tx_power_mw(), "mW",
                          &module.tx_power_limits()});
    }
    if (lane.has_rx_power_mw()) {
      readings.push_back({name + "rx power", Quantity::kRxPower, lane.rx_power_mw(), "mW",
                          &module.rx_power_limits()});
    }
  }
  return readings;
}

v1::Finding BreachFinding(const FindingBuilder& builder, std::vector<Breach> breaches) {
  std::stable_sort(breaches.begin(), breaches.end(),
                   [](const Breach& a, const Breach& b) { return a.alarm && !b.alarm; });
  const Breach& worst = breaches.front();
  std::string message = absl::StrCat(builder.subject(), " ", BreachText(worst), ": ", Fix(worst));
  std::vector<std::string> others;
  for (size_t i = 1; i < breaches.size() && i <= kMaxBreachesNamed; ++i) {
    others.push_back(BreachText(breaches[i]));
  }
  if (!others.empty()) absl::StrAppend(&message, ". Also: ", absl::StrJoin(others, "; "));
  if (breaches.size() > kMaxBreachesNamed + 1) {
    absl::StrAppend(&message, " and ", breaches.size() - kMaxBreachesNamed - 1, " more");
  }
  absl::StrAppend(&message, ".");
  const std::string observed = absl::StrCat(
      worst.reading->what, " ", FormatNumber(worst.reading->value), " ", worst.reading->unit);
  const std::string expected = absl::StrCat(
      worst.high ? "<= " : ">= ", FormatNumber(worst.threshold), " ", worst.reading->unit,
      " (the module's ", worst.high ? "high " : "low ", worst.alarm ? "alarm)" : "warning)");
  const std::string remedy = absl::StrCat(Fix(worst), ".");
  if (worst.alarm) return builder.Fail(observed, expected, message, remedy);
  return builder.FailWith(v1::Finding::warning, observed, expected, message, remedy);
}

v1::Finding DomFinding(const std::string& node, const v1::RailPort& port) {
  FindingBuilder builder(kDomId, v1::Finding::error, node, port.rail());
  if (!port.has_module()) return builder.Skipped("no module was read (cable.present says why)");
  const v1::CableModule& module = port.module();
  const std::vector<Reading> readings = ReadingsOf(module);
  FindingBuilder unknown(kDomId, v1::Finding::warning, node, port.rail());
  if (readings.empty()) {
    if (module.media() == "DAC") {
      return builder.Skipped("a passive copper cable (DAC) has no monitors");
    }
    return unknown.Unknown(ExplainMissing(module, {"monitors", "lanes"}), "module monitors",
                           "within the module's thresholds");
  }
  std::vector<Breach> breaches;
  size_t judged = 0;
  for (const Reading& reading : readings) {
    if (!ThresholdsSet(*reading.limits)) continue;
    ++judged;
    if (auto breach = Judge(reading)) breaches.push_back(*breach);
  }
  if (!breaches.empty()) return BreachFinding(builder, std::move(breaches));
  if (judged == 0) {
    return unknown.Unknown(ExplainMissing(module, {"thresholds"}), "module thresholds",
                           "within the module's thresholds");
  }
  return builder.Pass(absl::StrCat(judged, " of ", readings.size(), " values within thresholds"),
                      "within the module's thresholds",
                      absl::StrCat(builder.subject(), " ", ModuleText(module), ": ", judged,
                                   " monitored values (temperature, voltage, per-lane bias and "
                                   "power) are within the module's own thresholds."));
}

// One module's part number on one rail of one node.
struct Holder {
  std::string node;
  std::string rail;
  std::string part;
};

size_t RailIndex(const NodeEvidence& evidence, const v1::RailPort& port, size_t position) {
  const auto& rails = evidence.node->rails;
  auto it = std::find(rails.begin(), rails.end(), port.rail());
  return it == rails.end() ? position : static_cast<size_t>(it - rails.begin());
}

std::map<size_t, std::vector<Holder>> HoldersByRail(const std::vector<NodeEvidence>& nodes) {
  std::map<size_t, std::vector<Holder>> by_rail;
  for (const NodeEvidence& evidence : nodes) {
    if (!evidence.reachable || evidence.inventory == nullptr) continue;
    const auto& ports = evidence.inventory->rail_ports();
    for (int i = 0; i < ports.size(); ++i) {
      const v1::RailPort& port = ports[i];
      if (!port.has_module() || port.module().part_number().empty()) continue;
      by_rail[RailIndex(evidence, port, static_cast<size_t>(i))].push_back(
          {evidence.node->name, port.rail(), port.module().part_number()});
    }
  }
  return by_rail;
}

void JudgeRail(size_t index, const std::vector<Holder>& holders,
               std::vector<v1::Finding>& findings) {
  // The plan's rail position, with the first holder's name for it.
  const std::string rail = absl::StrCat("rail ", index, " (", holders.front().rail, ")");
  if (holders.size() < 2) {
    findings.push_back(FindingBuilder(kConsistencyId, v1::Finding::warning, "", rail)
                           .Skipped("fewer than two nodes report a part number: there is nothing "
                                    "to compare"));
    return;
  }
  std::map<std::string, size_t> counts;
  for (const Holder& holder : holders) ++counts[holder.part];
  const auto top = std::max_element(counts.begin(), counts.end(), [](const auto& a, const auto& b) {
    return a.second < b.second;
  });
  const std::string& common = top->first;
  if (counts.size() == 1) {
    findings.push_back(
        FindingBuilder(kConsistencyId, v1::Finding::warning, "", rail)
            .Pass(common, "one part number on every node",
                  absl::StrCat("All ", holders.size(), " nodes hold ", common, " on ", rail, ".")));
    return;
  }
  for (const Holder& odd : holders) {
    if (odd.part == common) continue;
    FindingBuilder builder(kConsistencyId, v1::Finding::warning, odd.node, odd.rail);
    findings.push_back(builder.Fail(
        odd.part, common,
        absl::StrCat(builder.subject(), " holds cable/transceiver ", odd.part, " while ",
                     top->second, " of the ", holders.size(), " nodes hold ", common, " on ", rail,
                     "."),
        absl::StrCat("Use one cable/transceiver model per rail: models differ in reach, power "
                     "and FEC behaviour, which shows up as one slow or flapping link. Replace ",
                     odd.node, " ", odd.rail, "'s with a ", common,
                     ", or record why it differs.")));
  }
}

std::vector<v1::Finding> NotAsked() {
  std::vector<v1::Finding> findings;
  for (const char* id : {kPresentId, kDomId, kConsistencyId}) {
    const Severity severity =
        absl::string_view(id) == kDomId ? v1::Finding::error : v1::Finding::warning;
    v1::Finding finding = FindingBuilder(id, severity, "").Skipped(kNotAsked);
    finding.set_message(kNotAsked);  // no subject to start it with
    findings.push_back(std::move(finding));
  }
  return findings;
}

}  // namespace

std::vector<v1::Finding> EvaluateCables(const plan::Plan& plan,
                                        const std::vector<NodeEvidence>& nodes) {
  bool any_ports = false;
  for (const NodeEvidence& evidence : nodes) {
    any_ports = any_ports || (evidence.reachable && evidence.inventory != nullptr &&
                              evidence.inventory->rail_ports_size() > 0);
  }
  if (!any_ports && !PlanAsksForCabling(plan)) return NotAsked();
  std::vector<v1::Finding> findings;
  for (const NodeEvidence& evidence : nodes) {
    if (!evidence.reachable || evidence.inventory == nullptr) continue;
    if (evidence.inventory->rail_ports_size() == 0) {
      findings.push_back(NoRailPortsFinding(evidence));
      continue;
    }
    for (const v1::RailPort& port : evidence.inventory->rail_ports()) {
      findings.push_back(PresentFinding(evidence.node->name, port));
      findings.push_back(DomFinding(evidence.node->name, port));
    }
  }
  for (const auto& [index, holders] : HoldersByRail(nodes)) JudgeRail(index, holders, findings);
  return findings;
}

}  // namespace clustercert::controller::checks
