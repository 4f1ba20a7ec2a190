#pragma once

#include <string>

#include "clustercert/v1/certificate.pb.h"

namespace clustercert::controller::report {

// The certificate as Markdown for a ticket: the verdict and its reasons, the
// failing and unknown findings with their remedies, one table per pair
// matrix (value, and a cross on failing cells), the large-message busbw of
// each collective scope against its floor, the suspects and what was
// skipped. Text from the certificate is escaped so that it cannot open HTML
// or break a table.
std::string RenderMarkdownReport(const v1::Certificate& certificate);

}  // namespace clustercert::controller::report
