#pragma once

#include <string>

#include "controller/certificate/certificate_diff.h"

namespace clustercert::controller {

// The diff for people: a header naming both certificates, then the
// inventory, findings, pairs, collectives and summary sections with one line
// per entry (regressions marked REGRESSION, red when `color`), ending with
// CertificateDiff::Summary() ("no regression" or "N regression(s): ...").
std::string RenderDiffText(const CertificateDiff& diff, bool color);

// The diff for machines: one JSON object with both sides, the warnings, every
// entry (section, kind, subject, field, old/new values and numbers, nodes,
// regression, improvement, text), the implicated hosts and the summary.
std::string RenderDiffJson(const CertificateDiff& diff);

}  // namespace clustercert::controller
