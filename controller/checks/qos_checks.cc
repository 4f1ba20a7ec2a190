#include "controller/checks/qos_checks.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace clustercert::controller::checks {
namespace {

// What every QoS check of one rail port starts from.
struct QosSubject {
  const RailPort* rail_port;
  std::string netdev;        // may be empty
  const v1::NetdevQos* qos;  // nullptr when the inventory has no entry
  MissingFact missing;       // why `qos` is nullptr
};

QosSubject ResolveQos(const CheckContext& context, const RailPort& rail_port) {
  QosSubject subject{&rail_port, CheckContext::PortNetdev(rail_port), nullptr, {}};
  if (subject.netdev.empty()) {
    subject.missing = ExplainMissing(*rail_port.port, {"netdev"});
    return subject;
  }
  subject.qos = context.FindQos(subject.netdev);
  if (subject.qos == nullptr) {
    subject.missing = HasUnknown(context.inventory(), {"qos"})
                          ? ExplainMissing(context.inventory(), {"qos"})
                          : MissingBecause(absl::StrCat("no QoS entry for ", subject.netdev));
  }
  return subject;
}

FindingBuilder QosBuilder(const CheckContext& context, const QosSubject& subject,
                          absl::string_view id, Severity severity) {
  return context.Builder(id, severity, subject.rail_port->device->name(),
                         subject.rail_port->port->port());
}

// The netdev as commands should name it.
std::string NetdevArg(const QosSubject& subject) {
  return subject.netdev.empty() ? std::string("<netdev>") : subject.netdev;
}

// "3,4" for mask 0x18, "none" for 0.
std::string Priorities(uint32_t mask) {
  std::vector<int> priorities;
  for (int priority = 0; priority < 8; ++priority) {
    if (mask & (1u << priority)) priorities.push_back(priority);
  }
  return priorities.empty() ? std::string("none") : absl::StrJoin(priorities, ",");
}

// mlnx_qos's --pfc argument enabling only `priority`: "0,0,0,1,0,0,0,0".
std::string PfcVector(int priority) {
  std::vector<int> bits(8, 0);
  if (priority >= 0 && priority < 8) bits[priority] = 1;
  return absl::StrJoin(bits, ",");
}

v1::Finding CheckPfc(const CheckContext& context, const QosSubject& subject,
                     const FindingBuilder& builder) {
  const int priority = context.roce().pfc_priority;
  const std::string expected = absl::StrCat("priority ", priority, " only");
  if (subject.qos == nullptr) return builder.Unknown(subject.missing, "PFC", expected);
  const v1::NetdevQos& qos = *subject.qos;
  if (!qos.has_pfc_enabled_mask()) {
    return builder.Unknown(ExplainMissing(qos, {"pfc_enabled_mask", "pfc"}),
                           absl::StrCat("PFC on ", subject.netdev), expected);
  }
  std::string observed = absl::StrCat("priorities ", Priorities(qos.pfc_enabled_mask()));
  std::string message = absl::StrCat(builder.subject(), " netdev ", subject.netdev, " has PFC on ",
                                     observed, ", plan expects PFC on ", expected, ".");
  if (qos.pfc_enabled_mask() == (1u << priority)) return builder.Pass(observed, expected, message);
  const std::string netdev = NetdevArg(subject);
  return builder.Fail(
      observed, expected, message,
      absl::StrCat("Enable PFC on priority ", priority, " only: sudo mlnx_qos -i ", netdev,
                   " --pfc ", PfcVector(priority), " (or sudo dcb pfc set dev ", netdev,
                   " prio-pfc all:off ", priority, ":on), and enable PFC on the same priority ",
                   priority,
                   " on every switch hop with lossless buffers on that queue; everything else "
                   "stays on priority 0."));
}

v1::Finding CheckTrust(const CheckContext& context, const QosSubject& subject,
                       const FindingBuilder& builder) {
  const std::string& expected = context.roce().trust;
  if (subject.qos == nullptr) return builder.Unknown(subject.missing, "QoS trust", expected);
  const v1::NetdevQos& qos = *subject.qos;
  std::string effective;
  std::string observed;
  if (!qos.trust().empty()) {
    effective = qos.trust();
    observed = effective;
  } else if (!qos.dscp_priorities().empty()) {
    effective = "dscp";
    observed = "dscp (inferred: upstream mlx5 trusts DSCP when the DCB app table has DSCP entries)";
  } else {
    return builder.Unknown(ExplainMissing(qos, {"trust"}),
                           absl::StrCat("QoS trust of ", subject.netdev), expected);
  }
  std::string message = absl::StrCat(builder.subject(), " netdev ", subject.netdev, " trusts ",
                                     effective, ", plan expects ", expected, ".");
  if (effective == expected) return builder.Pass(observed, expected, message);
  const std::string netdev = NetdevArg(subject);
  std::string remedy;
  if (expected == "dscp") {
    remedy = absl::StrCat("Trust DSCP: sudo mlnx_qos -i ", netdev,
                          " --trust dscp (MLNX_OFED); on upstream mlx5 add the DSCP app-table "
                          "entry, sudo dcb app add dev ",
                          netdev, " dscp-prio ", context.roce().dscp, ":",
                          context.roce().pfc_priority, ", which switches the port to DSCP trust.");
  } else {
    remedy = absl::StrCat("Trust PCP: sudo mlnx_qos -i ", netdev,
                          " --trust pcp (MLNX_OFED); on upstream mlx5 remove the DSCP app-table "
                          "entries (sudo dcb app flush dev ",
                          netdev, " dscp-prio).");
  }
  return builder.Fail(observed, expected, message, remedy);
}

v1::Finding CheckDscpMap(const CheckContext& context, const QosSubject& subject,
                         const FindingBuilder& builder) {
  const int dscp = context.roce().dscp;
  const int priority = context.roce().pfc_priority;
  if (context.roce().trust != "dscp") {
    return builder.Skipped(absl::StrCat("plan trusts ", context.roce().trust,
                                        ", so the DSCP-to-priority map does not apply"));
  }
  const std::string expected = absl::StrCat("DSCP ", dscp, " -> priority ", priority);
  if (subject.qos == nullptr) return builder.Unknown(subject.missing, "DSCP map", expected);
  const v1::NetdevQos& qos = *subject.qos;
  if (qos.dscp_priorities().empty()) {
    if (HasUnknown(qos, {"dscp_priorities", "app_table"})) {
      return builder.Unknown(ExplainMissing(qos, {"dscp_priorities", "app_table"}),
                             absl::StrCat("DCB app table of ", subject.netdev), expected);
    }
    return builder.Skipped(absl::StrCat("the DCB app table of ", subject.netdev,
                                        " has no DSCP entries, so the driver's default "
                                        "DSCP-to-priority map applies"));
  }
  std::vector<int> mapped;
  for (const v1::DscpPriority& entry : qos.dscp_priorities()) {
    if (static_cast<int>(entry.dscp()) == dscp)
      mapped.push_back(static_cast<int>(entry.priority()));
  }
  const bool ok = !mapped.empty() &&
                  std::all_of(mapped.begin(), mapped.end(), [&](int p) { return p == priority; });
  std::string observed =
      mapped.empty() ? absl::StrCat("DSCP ", dscp, " not in the app table")
                     : absl::StrCat("DSCP ", dscp, " -> priority ", absl::StrJoin(mapped, ","));
  std::string message =
      absl::StrCat(builder.subject(), " netdev ", subject.netdev, " maps ",
                   mapped.empty() ? absl::StrCat("no priority to DSCP ", dscp) : observed,
                   ", plan expects ", expected, ".");
  if (ok) return builder.Pass(observed, expected, message);
  const std::string netdev = NetdevArg(subject);
  return builder.Fail(
      observed, expected, message,
      absl::StrCat("Map DSCP ", dscp, " to priority ", priority, ": sudo dcb app replace dev ",
                   netdev, " dscp-prio ", dscp, ":", priority, " (MLNX_OFED: sudo mlnx_qos -i ",
                   netdev, " --dscp2prio set,", dscp, ",", priority, "); the DSCP value (", dscp,
                   ") and the PFC priority (", priority, ") must match on every hop."));
}

// "106 (DSCP 26, ECN on)".
std::string TrafficClassText(uint32_t traffic_class) {
  return absl::StrCat(traffic_class, " (DSCP ", traffic_class >> 2, ", ECN ",
                      (traffic_class & 3u) != 0 ? "on" : "off", ")");
}

v1::Finding CheckTrafficClass(const CheckContext& context, const QosSubject& subject,
                              const FindingBuilder& builder) {
  const uint32_t wanted =
      (static_cast<uint32_t>(context.roce().dscp) << 2) | (context.roce().ecn ? 2u : 0u);
  const std::string expected = TrafficClassText(wanted);
  if (subject.qos == nullptr) return builder.Unknown(subject.missing, "traffic class", expected);
  const v1::NetdevQos& qos = *subject.qos;
  if (!qos.has_traffic_class()) {
    return builder.Unknown(ExplainMissing(qos, {"traffic_class"}), "RDMA traffic class", expected);
  }
  std::string observed = TrafficClassText(qos.traffic_class());
  std::string message = absl::StrCat(builder.subject(), " sends RDMA with traffic class ", observed,
                                     ", plan expects ", expected, ".");
  if (qos.traffic_class() == wanted) return builder.Pass(observed, expected, message);
  const RailPort& rail_port = *subject.rail_port;
  return builder.Fail(
      observed, expected, message,
      absl::StrCat("Set the RoCE traffic class: echo ", wanted,
                   " | sudo tee /sys/class/infiniband/", rail_port.device->name(), "/tc/",
                   rail_port.port->port(), "/traffic_class (MLNX_OFED; NCCL also takes NCCL_IB_TC=",
                   wanted, ") so RDMA packets carry DSCP ", context.roce().dscp,
                   " and land in PFC priority ", context.roce().pfc_priority, " on every hop."));
}

v1::Finding CheckEcn(const CheckContext& context, const QosSubject& subject,
                     const FindingBuilder& builder) {
  const int priority = context.roce().pfc_priority;
  if (!context.roce().ecn) return builder.Skipped("plan sets fabric.roce.ecn: false");
  const std::string expected = absl::StrCat("np and rp on priority ", priority);
  if (subject.qos == nullptr) return builder.Unknown(subject.missing, "ECN", expected);
  const v1::NetdevQos& qos = *subject.qos;
  if (!qos.has_ecn_np_mask()) {
    return builder.Unknown(ExplainMissing(qos, {"ecn_np_mask", "ecn"}), "ECN (notification point)",
                           expected);
  }
  if (!qos.has_ecn_rp_mask()) {
    return builder.Unknown(ExplainMissing(qos, {"ecn_rp_mask", "ecn"}), "ECN (reaction point)",
                           expected);
  }
  std::string observed = absl::StrCat("np priorities ", Priorities(qos.ecn_np_mask()),
                                      ", rp priorities ", Priorities(qos.ecn_rp_mask()));
  std::string message = absl::StrCat(builder.subject(), " netdev ", subject.netdev, " has ECN ",
                                     observed, ", plan expects ECN ", expected, ".");
  const uint32_t bit = 1u << priority;
  if ((qos.ecn_np_mask() & bit) && (qos.ecn_rp_mask() & bit)) {
    return builder.Pass(observed, expected, message);
  }
  const std::string netdev = NetdevArg(subject);
  return builder.Fail(observed, expected, message,
                      absl::StrCat("Enable ECN (DCQCN) on priority ", priority,
                                   " for both roles: echo 1 | sudo tee "
                                   "/sys/class/net/",
                                   netdev, "/ecn/roce_np/enable/", priority, " /sys/class/net/",
                                   netdev, "/ecn/roce_rp/enable/", priority,
                                   ", and mark ECN on the switch queues of "
                                   "priority ",
                                   priority,
                                   ": ECN does the work most of the time, PFC is only the "
                                   "emergency brake."));
}

// Every QoS check, in report order; each judges one rail port's netdev.
struct QosCheck {
  const char* id;
  Severity severity;
  v1::Finding (*judge)(const CheckContext&, const QosSubject&, const FindingBuilder&);
};
constexpr QosCheck kQosChecks[] = {
    {"qos.pfc", v1::Finding::error, CheckPfc},
    {"qos.trust", v1::Finding::error, CheckTrust},
    {"qos.dscp", v1::Finding::error, CheckDscpMap},
    {"qos.traffic_class", v1::Finding::warning, CheckTrafficClass},
    {"qos.ecn", v1::Finding::warning, CheckEcn},
};

}  // namespace

void AppendQosChecks(const CheckContext& context, std::vector<v1::Finding>& findings) {
  if (!context.is_roce()) return;
  for (const RailPort& rail_port : context.RailPorts()) {
    const QosSubject subject = ResolveQos(context, rail_port);
    for (const QosCheck& check : kQosChecks) {
      const FindingBuilder builder = QosBuilder(context, subject, check.id, check.severity);
      // Recorded as skipped, not left out: the certificate shows what was not checked.
      findings.push_back(context.roce().lossless
                             ? check.judge(context, subject, builder)
                             : builder.Skipped("plan sets fabric.roce.lossless: false (this "
                                               "fabric runs without PFC/ECN, so there is no QoS "
                                               "configuration to check)"));
    }
  }
}

}  // namespace clustercert::controller::checks
