#include "controller/checks/clock_checks.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace clustercert::controller::checks {

void AppendClockChecks(const CheckContext& context, std::vector<v1::Finding>& findings) {
  FindingBuilder builder = context.Builder("clock.ntp", v1::Finding::error);
  if (!context.plan().expect.ntp_synced) {
    findings.push_back(builder.Skipped("plan sets expect.ntp_synced: false"));
    return;
  }
  const v1::Clock& clock = context.inventory().clock();
  const std::string expected = "synchronized";
  if (!clock.has_synchronized()) {
    findings.push_back(builder.Unknown(ExplainMissing(clock, {"synchronized"}),
                                       "clock synchronisation", expected));
    return;
  }
  if (clock.synchronized()) {
    std::string observed = clock.has_est_error_us() ? absl::StrCat("synchronized (est. error ",
                                                                   clock.est_error_us(), " us)")
                                                    : std::string("synchronized");
    findings.push_back(builder.Pass(
        observed, expected,
        absl::StrCat(builder.subject(), "'s clock is NTP-synchronised, as the plan expects.")));
    return;
  }
  std::string observed = clock.source().empty()
                             ? std::string("not synchronized")
                             : absl::StrCat("not synchronized (", clock.source(), ")");
  findings.push_back(builder.Fail(
      observed, expected,
      absl::StrCat(builder.subject(),
                   "'s clock is not NTP-synchronised, plan expects it "
                   "synchronised."),
      "Run chrony or systemd-timesyncd against the NTP server on the management network (sudo "
      "apt install chrony && sudo systemctl enable --now chrony; chronyc tracking must show it "
      "synchronised; if it already is, enable rtcsync so the kernel's flag says so): clock drift "
      "is invisible until the distributed framework starts producing wrong gradients."));
}

}  // namespace clustercert::controller::checks
