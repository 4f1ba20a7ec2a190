#pragma once

#include <string>

#include "clustercert/v1/certificate.pb.h"

namespace clustercert::controller::report {

// The certificate as Prometheus metrics in the text exposition format that
// node_exporter's textfile collector reads (`clustercert.prom`, written
// beside the reports; copy it into the collector's directory, or point the
// collector at the output directory). Every sample carries `cluster`; the
// families (docs/operations.md lists them with two alert rules):
//
//   clustercert_certified                       1 certified, 0 not
//   clustercert_certificate_timestamp_seconds   when the run finished (Unix time):
//                                               time() minus it is the certificate's age
//   clustercert_node_certified{node}            reachable, and no check on it blocks
//   clustercert_failing_checks{node,check,severity}
//                                               checks that failed or stayed unknown, by id
//   clustercert_pair_passed{client,server,rail,test,memory,client_gpu,server_gpu,retest_of}
//   clustercert_pair_bandwidth_bytes_per_second{...}, clustercert_pair_bandwidth_ratio{...}
//                                               (of the line rate),
//                                               clustercert_pair_latency_seconds{...}
//   clustercert_collective_busbw_bytes_per_second{scope,backend,nodes,node_count}
//   clustercert_uplink_throughput_bytes_per_second{node,target,flows}
//
// Base units (bytes per second, seconds), as Prometheus's conventions ask;
// a figure that was not measured has no sample rather than a 0. Label
// values are escaped (\\, \", \n); a series whose labels repeat one already
// written is left out, so the file always parses.
std::string RenderPrometheusMetrics(const v1::Certificate& certificate);

}  // namespace clustercert::controller::report
