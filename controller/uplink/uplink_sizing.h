#pragma once

#include "clustercert/v1/certificate.pb.h"
#include "controller/plan/plan.h"

namespace clustercert::controller::uplink {

// The seed's uplink arithmetic: the uplink must match the dataset read rate,
// not the fabric. Required ingest = GPUs x per-GPU read rate (or a profile's
// cluster-wide rate), in GB/s and in the uplink's Gb/s, against the plan's
// capacity; headroom, utilisation, the time one checkpoint takes at the
// uplink's rate, and advice in the seed's words (undersized; sized to the
// fabric instead of the read rate; plan checkpoints by the larger figure).
// Plain arithmetic from the plan alone, so verify recomputes it.
//
// Profiles (the seed's figures): image-video 1 GB/s per GPU; llm-pretrain
// 4 Gb/s for the cluster (the top of the seed's 1-4 Gb/s); fine-tune 40 Gb/s
// for the cluster (bursts while reloading checkpoints).
v1::UplinkSizing SizeUplink(const plan::Plan& plan);

// GPUs the workload counts: nodes x gpus_per_node, or the nodes' own gpus
// when gpus_per_node is 0.
int CountedGpus(const plan::Plan& plan);

// One node's share of the required ingest, in Gb/s: its GPUs x the per-GPU
// rate, or the cluster-wide rate split evenly; 0 when the sizing has no rate.
double NodeNeedGbps(const plan::Plan& plan, const v1::UplinkSizing& sizing, const plan::Node& node);

// Seconds to move `gbytes` at `gbps` (GB x 8 / Gb/s); 0 when gbps is 0.
double TransferSeconds(double gbytes, double gbps);

}  // namespace clustercert::controller::uplink
