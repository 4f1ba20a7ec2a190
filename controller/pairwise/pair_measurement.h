#pragma once

#include <string>

#include "clustercert/v1/peer.pb.h"

namespace clustercert::controller::pairwise {

// One peer test between two nodes as the pairwise phase ran it: who measured
// (the client), against whom, on which rail and memory, and what came back.
// The verdict and localisation code reads only this, so tests build matrices
// of them without agents.
struct PairMeasurement {
  std::string client;  // the node that measured
  std::string server;
  std::string rail;    // RDMA device on both ends, e.g. "mlx5_0"; "" for the tcp engine
  std::string memory;  // host | cuda
  std::string test;    // write_bw | send_bw | read_bw | write_lat | send_lat | read_lat
  bool ok = false;     // false: the test did not run to completion; `error` says why
  std::string error;
  // The error is the control plane's (an agent unanswered or busy): the
  // pair was not measured, which says nothing about its link.
  bool control_plane = false;
  v1::PeerTestResult result;
  double line_rate_gbps = 0;  // the slower end's port rate (or the plan's); 0: unknown
  // Set when an end reported a NaN or infinite figure (NonFiniteSentence):
  // the measurement is invalid and its verdicts are unknown, never pass.
  std::string invalid;
};

}  // namespace clustercert::controller::pairwise
