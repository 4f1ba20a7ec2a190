#pragma once

#include <string>

#include "clustercert/v1/certificate.pb.h"

namespace clustercert::controller::report {

// The certificate as JUnit XML for CI dashboards. One <testsuite> per area —
// the phases themselves, connect, inventory, pairwise, collectives (and any
// further phase the checks belong to) — with one <testcase> per evaluated
// check (name: its finding key, classname "clustercert.<check id>") and one
// per pair cell (name: its pair key). A failing check or cell is a
// <failure> whose message carries the finding's message and remedy, an
// unknown one an <error>, a skipped one <skipped message=reason>. Entries of
// the certificate's skipped list that no check stands for are added as
// skipped cases. Pair verdicts also appear among the checks; they are
// counted once, under pairwise. Counts on every suite and on the root match
// their children; times come from the phase durations, the sweeps' and the
// bandwidth tests' own, where the certificate has them.
std::string RenderJunitReport(const v1::Certificate& certificate);

}  // namespace clustercert::controller::report
