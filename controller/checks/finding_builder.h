#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "clustercert/v1/certificate.pb.h"
#include "clustercert/v1/inventory.pb.h"

namespace clustercert::controller::checks {

// Finding.status values, by the names the checks use.
inline constexpr v1::Finding::Status kPass = v1::Finding::pass;
inline constexpr v1::Finding::Status kFail = v1::Finding::fail;
inline constexpr v1::Finding::Status kUnknown = v1::Finding::unknown;
inline constexpr v1::Finding::Status kSkipped = v1::Finding::skipped;

// Finding.severity: an error blocks certification when it fails or is
// unknown; a warning never does.
using Severity = v1::Finding::Severity;

// Why a fact the check needs is missing, taken from the Unknown entry that the
// node-agent recorded on the message that should have carried it.
struct MissingFact {
  std::string reason;    // "No such file or directory", or "not reported by the node-agent"
  std::string path;      // the file or call that failed; may be empty
  std::string observed;  // "unknown: <reason> (<path>)"
};

// Looks up the Unknown whose `field` is one of `fields` (the proto field name
// first, then the names agents use for the same fact, e.g. "rate_gbps", "rate").
MissingFact ExplainMissing(const google::protobuf::RepeatedPtrField<v1::Unknown>& unknowns,
                           std::initializer_list<absl::string_view> fields);

template <typename Message>
MissingFact ExplainMissing(const Message& message,
                           std::initializer_list<absl::string_view> fields) {
  return ExplainMissing(message.unknowns(), fields);
}

// Whether the node-agent recorded an Unknown for any of `fields`: tells a
// fact it could not read apart from one it read as absent/false.
bool HasUnknown(const google::protobuf::RepeatedPtrField<v1::Unknown>& unknowns,
                std::initializer_list<absl::string_view> fields);

template <typename Message>
bool HasUnknown(const Message& message, std::initializer_list<absl::string_view> fields) {
  return HasUnknown(message.unknowns(), fields);
}

// A fact that is absent for a reason the check itself knows (no QoS entry for
// the netdev, no PCI function for the device): observed "unknown: <reason>".
MissingFact MissingBecause(absl::string_view reason);

// Builds the findings of one check on one subject (node, device, port). Every
// finding it makes carries the id, node, device, port and severity; the
// subject text ("node2 mlx5_0 port 1") starts each message.
class FindingBuilder {
 public:
  FindingBuilder(absl::string_view id, Severity severity, absl::string_view node,
                 absl::string_view device = {}, uint32_t port = 0);

  // "node2 mlx5_0 port 1", "node2 gpu3", "node2".
  const std::string& subject() const { return subject_; }

  v1::Finding Pass(absl::string_view observed, absl::string_view expected,
                   absl::string_view message) const;
  v1::Finding Fail(absl::string_view observed, absl::string_view expected,
                   absl::string_view message, absl::string_view remedy) const;
  // A fail with a severity other than the check's (e.g. more GPUs than planned).
  v1::Finding FailWith(Severity severity, absl::string_view observed, absl::string_view expected,
                       absl::string_view message, absl::string_view remedy) const;
  // `what` names the missing fact ("rate", "PFC mask of enp1s0f0"); the message
  // reads "<subject> <what> is unknown (<reason>), plan expects <expected>."
  // An empty remedy gives the generic one: make the fact readable and re-run.
  v1::Finding Unknown(const MissingFact& fact, absl::string_view what, absl::string_view expected,
                      absl::string_view remedy = {}) const;
  v1::Finding Skipped(absl::string_view reason) const;

 private:
  v1::Finding Make(v1::Finding::Status status, Severity severity) const;

  std::string id_;
  Severity severity_;
  std::string node_;
  std::string device_;
  uint32_t port_;
  std::string subject_;
};

// Number formatting shared by observed/expected values: 200 -> "200", 2.5 -> "2.5".
std::string FormatNumber(double value);

}  // namespace clustercert::controller::checks
