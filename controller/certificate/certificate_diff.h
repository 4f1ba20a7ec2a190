#pragma once

#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"

namespace clustercert::controller {

// `controller diff OLD NEW`: what changed between two certificates of one
// cluster, typically before and after a cable, NIC or switch swap. The diff
// is a plain value (no I/O): entries typed by kind, each saying whether it is
// a regression, so scripts can gate on regressed() and people can read the
// text rendering (certificate_diff_render.h).

struct DiffOptions {
  // Relative change band for bandwidth, busbw and latency within which a
  // change is noise and not listed: 0.10 lists a cell that moved by more than
  // 10 % of its OLD value.
  double noise_fraction = 0.10;
};

enum class DiffSection { kInventory, kFindings, kPairs, kCollectives, kUplink, kSummary };

enum class DiffKind {
  // inventory (nodes matched by name, devices by name, ports by number)
  kNodeAdded,
  kNodeRemoved,       // in OLD, not in NEW: NEW does not cover it (a regression)
  kNodeReachability,  // reachable -> unreachable is a regression
  kComponentAdded,    // an RDMA device, port, netdev, PCI function or GPU
  kComponentRemoved,  // a regression: hardware OLD certified is gone
  kIdentityChanged,   // GUID, GID, board id, PCI address, GPU UUID: swapped hardware
  kFirmwareChanged,
  kLinkChanged,      // rate, width, state, MTU, link layer, netdev speed
  kPcieChanged,      // PCIe generation, width, speed, NUMA node
  kSoftwareChanged,  // driver, OFED, rdma-core, agent versions, kernel modules
  kConfigChanged,    // QoS, management address
  // findings (matched by FindingKey; pair verdicts are under pairs)
  kVerdictChanged,
  kPhaseChanged,
  kFindingAdded,  // failing or unknown in NEW, not in OLD
  kFindingFixed,  // failing in OLD, passing, skipped or absent in NEW
  kFindingStillFailing,
  // pairs (matched by PairKey; retests are skipped)
  kPairFailed,  // ok -> failed, or its verdict pass -> fail
  kPairFixed,
  kPairStillFailing,
  kPairBandwidth,  // beyond the noise band, either way
  kPairLatency,
  kPairOnlyOld,
  kPairOnlyNew,
  // collectives (matched by scope)
  kSweepFailed,
  kSweepFixed,
  kSweepStillFailing,
  kSweepBusbw,  // large_busbw_gbytes beyond the noise band
  kSweepSizes,  // the worst per-size busbw change (listed, not judged)
  kSweepWrong,  // #wrong appeared
  kSweepTransport,
  kSweepOnlyOld,
  kSweepOnlyNew,
  // uplink (runs matched by node, target and flow count)
  kUplinkSizing,  // the sizing verdict or the required rate changed; fits -> undersized regresses
  kUplinkRunFailed,  // a run that completed in OLD failed in NEW
  kUplinkRunFixed,
  kUplinkThroughput,  // aggregate Gb/s beyond the noise band, either way
  // summary
  kSuspectAdded,
  kSuspectRemoved,
};

// "node_added", "pair_bandwidth", ... (the JSON rendering's names).
const char* DiffKindName(DiffKind kind);
const char* DiffSectionName(DiffSection section);
DiffSection SectionOf(DiffKind kind);

// One change. Values are text as the certificates hold them ("" when the
// side lacks the fact); numeric changes also carry the numbers.
struct DiffEntry {
  DiffKind kind = DiffKind::kNodeAdded;
  std::string subject;  // "node3", "node3 mlx5_0 port 1", a pair or finding key, a scope
  // "node_guid", "rate_gbps", "large_busbw_gbytes"; empty for the subject itself.
  std::string field;
  std::string old_value;
  std::string new_value;
  bool has_numbers = false;
  double old_number = 0;
  double new_number = 0;
  std::string unit;                // of the numbers: "Gb/s", "us", "GB/s"
  std::vector<std::string> nodes;  // the hosts the entry is about
  bool regression = false;
  bool improvement = false;
  std::string text;  // one line, the text rendering's (without the marker)
};

// A host that several regressed pairs share: the seed's localisation applied
// to the diff ("node3 is in 3 of 3 regressed pairs").
struct HostImplication {
  std::string node;
  int regressed_pairs = 0;
  int total_regressed_pairs = 0;
};

struct DiffSide {
  std::string cluster;
  std::string plan_sha256;
  std::string started_at;
  std::string verdict;
};

struct CertificateDiff {
  DiffSide old_side;
  DiffSide new_side;
  double noise_fraction = 0.10;
  // The clusters or the plans differ: the diff still runs, but says so.
  std::vector<std::string> warnings;
  std::vector<DiffEntry> entries;  // section order, then OLD's order
  std::vector<HostImplication> hosts;
  int regressed_pairs = 0;

  bool regressed() const;
  int regression_count() const;
  // "no regression" or "4 regression(s): node3 is in 3 of 3 regressed pairs; ...".
  std::string Summary() const;
};

// 92.4, 0.048726, 1011.3: five significant digits, as the certificates
// print measured values.
std::string FormatDiffValue(double value);

CertificateDiff DiffCertificates(const v1::Certificate& old_cert, const v1::Certificate& new_cert,
                                 const DiffOptions& options);

}  // namespace clustercert::controller
