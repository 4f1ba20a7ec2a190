#pragma once

#include <string>

#include "clustercert/v1/certificate.pb.h"

namespace clustercert::controller::report {

// The report's incast section (pairwise.incast): one row per round with the
// receiver, rail, senders, each sender's Gb/s, the aggregate against the
// receiver's line rate, the fairness and the round's verdict (the worst of
// its findings, which the Findings section details). Empty when the
// certificate has no incast round.
std::string IncastSectionHtml(const v1::Certificate& certificate);

}  // namespace clustercert::controller::report
