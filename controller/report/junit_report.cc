#include "controller/report/junit_report.h"

#include <algorithm>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "controller/certificate/result_keys.h"
#include "controller/checks/status_text.h"
#include "controller/collectives/collective_verdicts.h"
#include "controller/report/incast_rows.h"
#include "controller/report/pair_matrices.h"
#include "controller/report/report_text.h"

namespace clustercert::controller::report {
namespace {

enum class Outcome { kPass, kFailure, kError, kSkipped };

struct Case {
  std::string name;
  std::string classname;
  Outcome outcome = Outcome::kPass;
  std::string message;  // the failure/error/skipped message attribute
  std::string type;     // failure/error type attribute
  std::string body;     // failure/error text
  std::optional<double> seconds;
};

struct Suite {
  std::string name;
  std::vector<Case> cases;
  std::set<std::string> names;
  std::optional<double> seconds;  // the phase's duration, when there is one
};

// The suites in the order a reader expects, created on first use.
class Suites {
 public:
  Suite& Get(const std::string& area) {
    for (auto& suite : suites_) {
      if (suite.name == area) return suite;
    }
    suites_.push_back(Suite{area, {}, {}, std::nullopt});
    return suites_.back();
  }
  // Names are unique within a suite (CI dashboards merge cases that share
  // one): a second case of the same name gets " (2)", and so on.
  void Add(const std::string& area, Case c) {
    Suite& suite = Get(area);
    const std::string base = c.name;
    for (int n = 2; suite.names.count(c.name) > 0; ++n) c.name = absl::StrCat(base, " (", n, ")");
    suite.names.insert(c.name);
    suite.cases.push_back(std::move(c));
  }
  bool Has(const std::string& area, const std::string& name) {
    for (auto& suite : suites_) {
      if (suite.name == area) return suite.names.count(name) > 0;
    }
    return false;
  }
  std::vector<Suite>& all() { return suites_; }

 private:
  std::vector<Suite> suites_;
};

// The area a check belongs to: its id's prefix when that names a phase
// ("connect.reachable", "collectives.busbw"), else inventory.
std::string AreaOf(const std::string& id, const std::set<std::string>& phases) {
  const std::string prefix = id.substr(0, id.find('.'));
  if (prefix == "connect" || prefix == "pairwise" || prefix == "collectives" ||
      prefix == "uplink" || prefix == "incast" || phases.count(prefix) > 0) {
    return prefix;
  }
  // The lossless chain is judged on the pairwise tests' counters.
  if (prefix == "lossless") return "pairwise";
  return "inventory";
}

std::string FailureMessage(const std::string& message, const std::string& remedy) {
  if (remedy.empty()) return message;
  return absl::StrCat(message, message.empty() ? "" : " ", "Remedy: ", remedy);
}

std::string FindingBody(const v1::Finding& f) {
  std::string body;
  if (!f.message().empty()) absl::StrAppend(&body, f.message(), "\n");
  if (!f.observed().empty()) absl::StrAppend(&body, "observed: ", f.observed(), "\n");
  if (!f.expected().empty()) absl::StrAppend(&body, "expected: ", f.expected(), "\n");
  if (!f.remedy().empty()) absl::StrAppend(&body, "remedy: ", f.remedy(), "\n");
  if (IsCarried(f.carried())) absl::StrAppend(&body, CarriedText(f.carried()), "\n");
  return body;
}

// A phase's status as the finding status JUnit judges alike.
v1::Finding::Status AsFindingStatus(v1::PhaseResult::Status status) {
  switch (status) {
    case v1::PhaseResult::pass:
      return v1::Finding::pass;
    case v1::PhaseResult::fail:
      return v1::Finding::fail;
    case v1::PhaseResult::skipped:
      return v1::Finding::skipped;
    default:
      return v1::Finding::unknown;
  }
}

// Fills a case's outcome from a finding-like status.
void Judge(Case& c, v1::Finding::Status status, v1::Finding::Severity severity,
           const std::string& message, const std::string& remedy, const std::string& body) {
  if (status == v1::Finding::pass) return;
  if (status == v1::Finding::fail) {
    c.outcome = Outcome::kFailure;
    c.type = severity == v1::Finding::warning ? "warning" : "error";
    c.message = FailureMessage(message, remedy);
    c.body = body;
  } else if (status == v1::Finding::skipped) {
    c.outcome = Outcome::kSkipped;
    c.message = message;
  } else {
    c.outcome = Outcome::kError;
    c.type = "unknown";
    c.message = FailureMessage(message, remedy);
    c.body = body;
  }
}

Case CheckCase(const v1::Finding& f) {
  Case c;
  c.name = KeyOf(f);
  c.classname = absl::StrCat("clustercert.", f.id());
  const std::string& reason = f.message().empty() ? f.observed() : f.message();
  Judge(c, f.status(), f.severity(), reason, f.remedy(), FindingBody(f));
  return c;
}

Case PairCase(const v1::PairResult& p) {
  Case c;
  c.name = controller::PairKey(p);
  c.classname = absl::StrCat("clustercert.",
                             p.verdict().id().empty() ? std::string("pairwise") : p.verdict().id());
  std::string message = p.verdict().message();
  if (message.empty()) message = p.ok() ? std::string("no verdict recorded") : p.error();
  std::string body = FindingBody(p.verdict());
  if (!p.ok() && !p.error().empty()) absl::StrAppend(&body, "error: ", p.error(), "\n");
  for (const auto& concern : p.counter_concerns())
    absl::StrAppend(&body, "counter: ", concern, "\n");
  Judge(c, CellStatus(p), p.verdict().severity(), message, p.verdict().remedy(), body);
  if (p.client_result().has_bandwidth() && p.client_result().bandwidth().seconds() > 0) {
    c.seconds = p.client_result().bandwidth().seconds();
  }
  return c;
}

Case PhaseCase(const v1::PhaseResult& phase) {
  Case c;
  c.name = phase.name();
  c.classname = "clustercert.phase";
  std::string detail = phase.detail();
  if (phase.status() == v1::PhaseResult::skipped && absl::StartsWith(detail, "skipped: ")) {
    detail = detail.substr(9);
  }
  if (phase.status() == v1::PhaseResult::interrupted) {
    c.outcome = Outcome::kError;
    c.type = "interrupted";
    c.message = FailureMessage(detail, "");
    c.body = phase.detail();
  } else {
    Judge(c, AsFindingStatus(phase.status()), v1::Finding::error, detail, "", phase.detail());
  }
  c.seconds = phase.duration_ms() / 1000.0;
  return c;
}

// One incast round: judged by the worst of its findings (incast.bandwidth,
// incast.fairness, the lossless.* over its counters), each in the body.
Case IncastCase(const IncastRow& row) {
  Case c;
  c.name = row.label;
  c.classname = "clustercert.incast";
  const v1::Finding* worst = nullptr;
  std::string body;
  for (const v1::Finding* f : row.findings) {
    if (worst == nullptr && f->status() == row.status && f->severity() == row.severity) worst = f;
    absl::StrAppend(&body, f->id(), ": ", checks::StatusText(f->status()), "\n", FindingBody(*f));
  }
  if (!row.round->error().empty()) absl::StrAppend(&body, "error: ", row.round->error(), "\n");
  for (const auto& sender : row.round->senders()) {
    if (!sender.ok() && !sender.error().empty()) {
      absl::StrAppend(&body, "sender ", sender.node(), ": ", sender.error(), "\n");
    }
  }
  if (worst == nullptr) {
    Judge(c, v1::Finding::unknown, v1::Finding::error,
          absl::StrCat(row.label, ": no verdict recorded for this round"), "", body);
  } else {
    Judge(c, row.status, row.severity, worst->message(), worst->remedy(), body);
  }
  double seconds = 0;
  for (const auto& sender : row.round->senders()) {
    seconds = std::max({seconds, sender.client_result().bandwidth().seconds(),
                        sender.server_result().bandwidth().seconds()});
  }
  if (seconds > 0) c.seconds = seconds;
  return c;
}

// Identity of a finding, to recognise a pair's verdict among the checks.
std::tuple<std::string, std::string, std::string, std::string> Identity(const v1::Finding& f) {
  return {f.id(), f.node(), f.device(), f.message()};
}

std::string Seconds(double s) { return absl::StrFormat("%.3f", s); }

struct Counts {
  int tests = 0, failures = 0, errors = 0, skipped = 0;
  double seconds = 0;
};

Counts CountOf(const Suite& suite) {
  Counts n;
  for (const auto& c : suite.cases) {
    ++n.tests;
    n.failures += c.outcome == Outcome::kFailure;
    n.errors += c.outcome == Outcome::kError;
    n.skipped += c.outcome == Outcome::kSkipped;
    n.seconds += c.seconds.value_or(0);
  }
  if (suite.seconds) n.seconds = *suite.seconds;
  return n;
}

std::string CountAttributes(const Counts& n) {
  return absl::StrFormat("tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"%d\" time=\"%s\"",
                         n.tests, n.failures, n.errors, n.skipped, Seconds(n.seconds));
}

void WriteCase(const Case& c, std::string& out) {
  absl::StrAppend(&out, "    <testcase name=\"", XmlEscape(c.name), "\" classname=\"",
                  XmlEscape(c.classname), "\"");
  if (c.seconds) absl::StrAppend(&out, " time=\"", Seconds(*c.seconds), "\"");
  switch (c.outcome) {
    case Outcome::kPass:
      out += "/>\n";
      return;
    case Outcome::kSkipped:
      absl::StrAppend(&out, ">\n      <skipped message=\"", XmlEscape(c.message), "\"/>\n");
      break;
    case Outcome::kFailure:
    case Outcome::kError: {
      const char* tag = c.outcome == Outcome::kFailure ? "failure" : "error";
      absl::StrAppend(&out, ">\n      <", tag, " message=\"", XmlEscape(c.message), "\" type=\"",
                      XmlEscape(c.type), "\">", XmlEscape(c.body), "</", tag, ">\n");
      break;
    }
  }
  out += "    </testcase>\n";
}

// The phases suite, in run order; returns the phases' total seconds.
double AddPhaseCases(const v1::Certificate& certificate, Suites& suites) {
  double phase_total = 0;
  for (const auto& phase : certificate.phases()) {
    suites.Add("phases", PhaseCase(phase));
    phase_total += phase.duration_ms() / 1000.0;
  }
  suites.Get("phases").seconds = phase_total;
  return phase_total;
}

// The pairs, the incast rounds, then every check that is not already a
// pair's verdict or part of a round.
void AddPairAndCheckCases(const v1::Certificate& certificate,
                          const std::set<std::string>& phase_names, Suites& suites) {
  std::set<std::tuple<std::string, std::string, std::string, std::string>> pair_verdicts;
  for (const auto& p : certificate.pairs()) {
    pair_verdicts.insert(Identity(p.verdict()));
    suites.Add("pairwise", PairCase(p));
  }
  const std::set<std::string> incast_labels = IncastLabels(certificate);
  for (const IncastRow& row : IncastRows(certificate)) suites.Add("incast", IncastCase(row));
  for (const auto& f : certificate.checks()) {
    const std::string area = AreaOf(f.id(), phase_names);
    if (area == "pairwise" && pair_verdicts.count(Identity(f)) > 0) continue;
    if (!incast_labels.empty() && incast_labels.count(RoundLabelOf(KeyOf(f))) > 0) continue;
    Case c = CheckCase(f);
    if (f.id() == "collectives.run") {
      for (const auto& sweep : certificate.collectives()) {
        if (controller::FindingOfSweep(f, sweep) && sweep.duration_ms() > 0) {
          c.seconds = sweep.duration_ms() / 1000.0;
        }
      }
    }
    suites.Add(area, std::move(c));
  }
}

std::string SkippedArea(const v1::SkippedTest& s, const std::set<std::string>& phase_names) {
  if (s.kind() == "phase") return "phases";
  if (s.kind() == "pair") return "pairwise";
  if (s.kind() == "sweep") return "collectives";
  if (s.kind() == "incast") return "incast";
  if (s.kind() == "check") return AreaOf(s.key().substr(0, s.key().find('@')), phase_names);
  return "inventory";
}

// What did not run, unless a case of the same name already says so.
void AddSkippedCases(const v1::Certificate& certificate, const std::set<std::string>& phase_names,
                     Suites& suites) {
  const std::set<std::string> incast_labels = IncastLabels(certificate);
  for (const auto& s : certificate.skipped()) {
    const std::string area = SkippedArea(s, phase_names);
    if (suites.Has(area, s.key())) continue;
    // A round's skipped check is in the round's case already.
    if (s.kind() == "check" && incast_labels.count(RoundLabelOf(s.key())) > 0) continue;
    Case c;
    c.name = s.key();
    c.classname = absl::StrCat("clustercert.skipped.", s.kind().empty() ? "test" : s.kind());
    c.outcome = Outcome::kSkipped;
    c.message = s.reason();
    suites.Add(area, std::move(c));
  }
}

// A suite named after a phase takes that phase's duration.
void TimeSuitesByPhase(const v1::Certificate& certificate, Suites& suites) {
  for (auto& suite : suites.all()) {
    for (const auto& phase : certificate.phases()) {
      if (phase.name() == suite.name) suite.seconds = phase.duration_ms() / 1000.0;
    }
  }
}

std::string SuiteXml(const Suite& suite, const Counts& n, int id,
                     const v1::Certificate& certificate) {
  std::string out;
  absl::StrAppend(&out, "  <testsuite name=\"clustercert.", XmlEscape(suite.name), "\" id=\"", id,
                  "\" ", CountAttributes(n), ">\n", "    <properties>\n",
                  R"(      <property name="cluster" value=")", XmlEscape(certificate.cluster()),
                  "\"/>\n      <property name=\"verdict\" value=\"",
                  XmlEscape(certificate.verdict()),
                  "\"/>\n      <property name=\"started_at\" "
                  "value=\"",
                  XmlEscape(certificate.started_at()), "\"/>\n    </properties>\n");
  for (const auto& c : suite.cases) WriteCase(c, out);
  out += "  </testsuite>\n";
  return out;
}

}  // namespace

std::string RenderJunitReport(const v1::Certificate& certificate) {
  Suites suites;
  std::set<std::string> phase_names;
  for (const auto& phase : certificate.phases()) phase_names.insert(phase.name());
  const double phase_total = AddPhaseCases(certificate, suites);
  for (const char* area : {"connect", "inventory", "pairwise", "collectives"}) suites.Get(area);
  AddPairAndCheckCases(certificate, phase_names, suites);
  AddSkippedCases(certificate, phase_names, suites);
  TimeSuitesByPhase(certificate, suites);

  Counts total;
  std::string body;
  int id = 0;
  for (const auto& suite : suites.all()) {
    if (suite.cases.empty()) continue;
    const Counts n = CountOf(suite);
    total.tests += n.tests;
    total.failures += n.failures;
    total.errors += n.errors;
    total.skipped += n.skipped;
    if (suite.name != "phases") total.seconds += n.seconds;
    body += SuiteXml(suite, n, id++, certificate);
  }
  // The phases' own durations cover the run; the other suites are parts of
  // it, so the root's time is the phases' total when there is one.
  if (phase_total > 0) total.seconds = phase_total;
  return absl::StrCat("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"",
                      XmlEscape(absl::StrCat("clustercert ", certificate.cluster())), "\" ",
                      CountAttributes(total), ">\n", body, "</testsuites>\n");
}

}  // namespace clustercert::controller::report
