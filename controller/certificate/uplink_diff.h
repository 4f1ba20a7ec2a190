#pragma once

#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/certificate/certificate_diff.h"

namespace clustercert::controller {

// The uplink part of DiffCertificates: the sizing (a verdict that went from
// fits to undersized regresses; a changed required rate is listed), and the
// runs matched by node, target and flow count: a run that stopped
// completing and an aggregate that fell beyond `noise` (a fraction of OLD's)
// are regressions of that node; rises and fixes are improvements. Runs on
// one side only are left to the uplink.* findings. Appends to *entries.
void DiffUplink(const v1::Certificate& old_cert, const v1::Certificate& new_cert, double noise,
                std::vector<DiffEntry>* entries);

}  // namespace clustercert::controller
