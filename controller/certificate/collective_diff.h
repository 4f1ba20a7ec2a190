#pragma once

#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/certificate/certificate_diff.h"

namespace clustercert::controller {

// The collectives part of DiffCertificates: sweeps matched by scope. A sweep
// that stopped running, a large-message busbw that fell beyond `noise` (a
// fraction of OLD's) and #wrong that appeared are regressions; the worst
// per-size busbw change, a changed transport and sweeps on one side only are
// listed. Appends to *entries in OLD's order, then NEW's additions.
void DiffCollectiveSweeps(const v1::Certificate& old_cert, const v1::Certificate& new_cert,
                          double noise, std::vector<DiffEntry>* entries);

}  // namespace clustercert::controller
