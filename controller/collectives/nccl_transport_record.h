#pragma once

#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"

namespace clustercert::controller {

// Adds what one NCCL INFO log says about transports to the certificate's
// record: channel counts are summed, and each channel is listed as
// "<label>: channel 0 0->4 send via NET/IB/0/GDRDMA" (no label: "channel ...").
// The agents' sweep calls it once per rank's log, the mpirun launcher once
// for the whole run's output.
void AddTransportLog(const std::vector<std::string>& lines, const std::string& label,
                     v1::CollectiveTransport& record);

// "NET/Socket" when any channel used it, "NET/IB+GDRDMA" when every NET/IB
// channel had GDRDMA, "NET/IB", "intra-node", or "" when the log had none.
std::string NcclTransportName(const v1::CollectiveTransport& record);

}  // namespace clustercert::controller
