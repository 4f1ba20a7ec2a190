#include "controller/commands/baseline_rerun.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/time_format.h"
#include "controller/certificate/certificate_reader.h"
#include "controller/certificate/certificate_signer.h"
#include "controller/certificate/verdict_recompute.h"

namespace clustercert::controller {

absl::StatusOr<BaselineRerun> PrepareBaselineRerun(const std::string& baseline_path,
                                                   const std::string& only, const plan::Plan& plan,
                                                   absl::Time now) {
  if (only.empty()) {
    return absl::InvalidArgumentError(
        "--baseline needs --only NODE[,NODE]: the nodes whose tests run again (the rest is "
        "carried over from the baseline)");
  }
  auto loaded = LoadCertificate(baseline_path);
  if (!loaded.ok()) return loaded.status();
  const v1::Certificate& old = loaded->certificate;

  if (old.cluster() != plan.cluster || old.plan_sha256() != plan.sha256) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the baseline ", baseline_path, " was made from another plan (cluster '", old.cluster(),
        "', plan sha256 ", old.plan_sha256().substr(0, 12), "; this plan: '", plan.cluster, "', ",
        plan.sha256.substr(0, 12),
        "): carried results would keep other thresholds; run the plan in full instead"));
  }
  // Carried results go out under this plan's signature, so a signed plan
  // carries only from a baseline its own key signed: one re-signed with any
  // other key (or unsigned) would have its results laundered.
  const std::string& key = plan.certificate.signing_key;
  if (old.has_signature() || !key.empty()) {
    auto trusted =
        key.empty() ? absl::StatusOr<TrustedKeys>(TrustedKeys()) : TrustedKeys::FromSigningKey(key);
    if (!trusted.ok()) return trusted.status();
    const SignatureCheck signature = CheckSignature(old, *trusted);
    if (key.empty() ? !signature.intact : !signature.valid) {
      std::vector<std::string> why = signature.problems;
      if (signature.intact) why.push_back(signature.untrusted);
      return absl::InvalidArgumentError(absl::StrCat(
          "the baseline ", baseline_path, " does not verify (", absl::StrJoin(why, "; "),
          "): results cannot be carried over from it; use an unedited certificate this plan's "
          "key signed, or run in full"));
    }
  }
  const VerdictRecheck recheck = RecheckVerdicts(old);
  if (!recheck.differences.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the baseline ", baseline_path, "'s verdicts do not follow from its values (",
        recheck.differences.front(), recheck.differences.size() > 1 ? "; ..." : "",
        "): results cannot be carried over from it; check it with `controller verify` or run in "
        "full"));
  }

  BaselineRerun rerun;
  std::vector<std::string> names;
  for (absl::string_view part : absl::StrSplit(only, ',', absl::SkipWhitespace())) {
    const std::string name(absl::StripAsciiWhitespace(part));
    bool known = false;
    for (const auto& node : plan.nodes) known = known || node.name == name;
    if (!known) {
      std::vector<std::string> all;
      for (const auto& node : plan.nodes) all.push_back(node.name);
      return absl::InvalidArgumentError(
          absl::StrCat("--only names '", name, "', which is not a node of ", plan.path,
                       " (its nodes: ", absl::StrJoin(all, ", "), ")"));
    }
    rerun.scope.only.insert(name);
    names.push_back(name);
  }

  rerun.certificate = std::make_unique<v1::Certificate>(old);
  rerun.scope.baseline = rerun.certificate.get();
  rerun.scope.carried.set_from_started_at(old.started_at());
  rerun.scope.carried.set_from_sha256(loaded->sha256);
  absl::Time started;
  std::string error;
  if (absl::ParseTime(absl::RFC3339_full, old.started_at(), &started, &error)) {
    rerun.scope.carried.set_age_s(absl::ToInt64Seconds(now - started));
  }
  rerun.baseline.set_path(baseline_path);
  rerun.baseline.set_sha256(loaded->sha256);
  rerun.baseline.set_started_at(old.started_at());
  for (const auto& name : names) rerun.baseline.add_only_nodes(name);
  return rerun;
}

}  // namespace clustercert::controller
