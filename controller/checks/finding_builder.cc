#include "controller/checks/finding_builder.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace clustercert::controller::checks {

MissingFact ExplainMissing(const google::protobuf::RepeatedPtrField<v1::Unknown>& unknowns,
                           std::initializer_list<absl::string_view> fields) {
  // Fields are tried in the caller's order so the proto's own name wins over aliases.
  for (absl::string_view field : fields) {
    for (const v1::Unknown& unknown : unknowns) {
      if (unknown.field() != field) continue;
      MissingFact fact;
      fact.reason = unknown.reason().empty() ? "unreadable" : unknown.reason();
      fact.path = unknown.path();
      fact.observed = fact.path.empty()
                          ? absl::StrCat("unknown: ", fact.reason)
                          : absl::StrCat("unknown: ", fact.reason, " (", fact.path, ")");
      return fact;
    }
  }
  return MissingBecause("not reported by the node-agent");
}

bool HasUnknown(const google::protobuf::RepeatedPtrField<v1::Unknown>& unknowns,
                std::initializer_list<absl::string_view> fields) {
  for (absl::string_view field : fields) {
    for (const v1::Unknown& unknown : unknowns) {
      if (unknown.field() == field) return true;
    }
  }
  return false;
}

MissingFact MissingBecause(absl::string_view reason) {
  MissingFact fact;
  fact.reason = std::string(reason);
  fact.observed = absl::StrCat("unknown: ", reason);
  return fact;
}

FindingBuilder::FindingBuilder(absl::string_view id, Severity severity, absl::string_view node,
                               absl::string_view device, uint32_t port)
    : id_(id), severity_(severity), node_(node), device_(device), port_(port) {
  subject_ = node_;
  if (!device_.empty()) absl::StrAppend(&subject_, subject_.empty() ? "" : " ", device_);
  if (port_ != 0) absl::StrAppend(&subject_, " port ", port_);
}

v1::Finding FindingBuilder::Make(v1::Finding::Status status, Severity severity) const {
  v1::Finding finding;
  finding.set_id(id_);
  finding.set_node(node_);
  finding.set_device(device_);
  finding.set_port(port_);
  finding.set_status(status);
  finding.set_severity(severity);
  return finding;
}

v1::Finding FindingBuilder::Pass(absl::string_view observed, absl::string_view expected,
                                 absl::string_view message) const {
  v1::Finding finding = Make(kPass, severity_);
  finding.set_observed(std::string(observed));
  finding.set_expected(std::string(expected));
  finding.set_message(std::string(message));
  return finding;
}

v1::Finding FindingBuilder::Fail(absl::string_view observed, absl::string_view expected,
                                 absl::string_view message, absl::string_view remedy) const {
  return FailWith(severity_, observed, expected, message, remedy);
}

v1::Finding FindingBuilder::FailWith(Severity severity, absl::string_view observed,
                                     absl::string_view expected, absl::string_view message,
                                     absl::string_view remedy) const {
  v1::Finding finding = Make(kFail, severity);
  finding.set_observed(std::string(observed));
  finding.set_expected(std::string(expected));
  finding.set_message(std::string(message));
  finding.set_remedy(std::string(remedy));
  return finding;
}

v1::Finding FindingBuilder::Unknown(const MissingFact& fact, absl::string_view what,
                                    absl::string_view expected, absl::string_view remedy) const {
  v1::Finding finding = Make(kUnknown, severity_);
  finding.set_observed(fact.observed);
  finding.set_expected(std::string(expected));
  finding.set_message(absl::StrCat(subject_, " ", what, " is unknown (", fact.reason,
                                   "), plan expects ", expected, "."));
  if (!remedy.empty()) {
    finding.set_remedy(std::string(remedy));
  } else if (!fact.path.empty()) {
    finding.set_remedy(absl::StrCat("The node-agent could not read ", fact.path, " (", fact.reason,
                                    "): run it as root with the host's /sys, load the driver that "
                                    "provides it, and re-run the inventory; an unknown never "
                                    "counts as a pass."));
  } else {
    finding.set_remedy(
        "Re-run the inventory with a node-agent that reports this fact (as root, with the "
        "host's /sys); an unknown never counts as a pass.");
  }
  return finding;
}

v1::Finding FindingBuilder::Skipped(absl::string_view reason) const {
  v1::Finding finding = Make(kSkipped, severity_);
  finding.set_message(absl::StrCat(subject_, ": ", reason, "."));
  return finding;
}

std::string FormatNumber(double value) { return absl::StrFormat("%g", value); }

}  // namespace clustercert::controller::checks
