#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"

namespace clustercert::controller::plan {

// Where a value came from in the plan file (Plan::path), for
// "file:line:col: message". No file name here: a plan is one file, and a copy
// of its name in each of a large plan's millions of values cost more than
// their parsing.
struct SourceLocation {
  int line = 0;    // 1-based; 0 when unknown
  int column = 0;  // 1-based
};

enum class FabricType { kRoce, kInfiniband, kEthernet };

// How the rails are wired (fabric.topology): kRailOptimized says rail i of
// every node in a leaf group lands on one switch, so the cabling.* checks
// that judge it are errors; kUnspecified makes them warnings.
enum class FabricTopology { kUnspecified, kRailOptimized };

// How the data fabric is switched (fabric.routing): kAuto runs the bgp.*
// checks on each node whose agent reports a BGP instance (FRR), kBgp requires
// one on every node (a routed Clos, BGP unnumbered), kL2 never runs them.
enum class FabricRouting { kAuto, kBgp, kL2 };

struct RoceSettings {
  int gid_index = 3;
  int pfc_priority = 3;
  int dscp = 26;
  std::string trust = "dscp";  // dscp | pcp
  bool ecn = true;
  // false: the fabric is not run lossless (soft-RoCE, a lab switch without
  // DCB), so the PFC, trust, DSCP, traffic_class and ECN checks are skipped.
  bool lossless = true;
};

struct InfinibandSettings {
  // fabric.infiniband.service_level: the SL every verbs test sends on (the
  // subnet manager's SL-to-VL table then picks the virtual lane).
  int service_level = 0;
};

// The GRH traffic class a RoCE test sends with: the plan's DSCP in the upper
// six bits, ECT(0) (binary 10) in the two ECN bits when fabric.roce.ecn is
// on, so switches may mark instead of drop (DSCP 26 with ECN is 106, the
// value perftest's --tclass takes).
int RoceTrafficClass(const RoceSettings& roce);

struct Fabric {
  FabricType type = FabricType::kRoce;
  double link_rate_gbps = 0;      // 0: not checked
  int active_mtu = 4096;          // 256 | 512 | 1024 | 2048 | 4096
  int min_netdev_mtu = 9000;      // RoCE / ethernet data netdevs
  RoceSettings roce;              // used when type == kRoce
  InfinibandSettings infiniband;  // used when type == kInfiniband
  FabricRouting routing = FabricRouting::kAuto;
  // fabric.cabling: the cable plan's CSV as written in the plan (relative to
  // the plan file's directory unless absolute); empty when none.
  std::string cabling;
  FabricTopology topology = FabricTopology::kUnspecified;
  // fabric.lldp_wait_s: how long every agent listens for LLDP at once when
  // the plan asks for cabling; one LLDP tx-interval (30 s) plus a second.
  absl::Duration lldp_wait = absl::Seconds(31);
};

// Where the plan says one port's cable lands: a switch and its name for the
// port, as LLDP would announce them ("leaf4", "Ethernet14").
struct CableEnd {
  std::string switch_name;
  std::string port;
  // Where the plan says it, for messages: "cables.csv:14" or
  // "nodes[2].rails[1]".
  std::string source;
};

struct Node {
  std::string name;
  std::string agent;               // host:port of the node-agent (management plane)
  std::string data_ip;             // optional
  std::vector<std::string> rails;  // RDMA devices to test, e.g. mlx5_0
  int gpus = 0;
  // The leaf switch the node hangs off (in a rail-optimised fabric, its rail
  // group: the nodes whose rails share one leaf per rail); empty when the
  // plan gives none. Drives pattern: leaf (pair_patterns.h).
  std::string leaf;
  SourceLocation location;  // of the node's entry, for messages
};

struct PcieExpectation {
  int gen = 0;    // 0: not checked
  int width = 0;  // 0: not checked
};

struct Expectations {
  bool nvidia_peermem = true;
  PcieExpectation pcie;
  absl::Duration clock_offset = absl::Milliseconds(5);  // expect.clock_offset_ms
  bool ntp_synced = true;  // require the kernel clock to be NTP-disciplined
  bool ofed = true;        // warn when running upstream rdma-core instead of MLNX_OFED
  // false: a one-interface box (loopback development) where the data plane is
  // the management interface by construction; mgmt.separate is skipped.
  bool management_separate = true;
  std::string max_gpu_nic_relation = "PHB";  // PIX | PXB | PHB | NODE | SYS
  bool gpu_nic_same_numa = true;
};

struct TlsSettings {
  // PEM files for mutual TLS (deploy/pki.sh makes them).
  std::string ca = "/etc/clustercert/ca.pem";
  std::string cert = "/etc/clustercert/controller.pem";
  std::string key = "/etc/clustercert/controller.key";
};

struct AgentSettings {
  bool insecure = false;  // plaintext gRPC: loopback development only
  TlsSettings tls;
  absl::Duration connect_timeout = absl::Seconds(5);  // agents.connect_timeout_s
  absl::Duration call_timeout = absl::Seconds(30);    // agents.call_timeout_s
  int retries = 2;
};

enum class PairwiseEngine { kVerbs, kTcp };
enum class PairwisePattern { kAllPairs, kRing, kKBatch, kLeaf };

// pairwise.incast: k senders write to one receiver at once, each receiver in
// turn (controller/pairwise/incast). Off unless the plan has the section.
struct Incast {
  bool enabled = false;
  int senders = 3;                          // k; a smaller cluster uses all its other nodes
  int max_rounds = 64;                      // receivers tested, in node order: bounds the run
  double min_fraction_of_line_rate = 0.90;  // the round's aggregate vs the receiver's rate
  double min_fairness = 0.50;               // slowest sender / fastest sender
};

struct Pairwise {
  bool enabled = false;  // true when the plan has a pairwise section
  PairwiseEngine engine = PairwiseEngine::kVerbs;
  PairwisePattern pattern = PairwisePattern::kAllPairs;
  int k = 0;  // batch size for k-batch
  // pairwise.budget_minutes: the controller picks the pattern (all-pairs,
  // else the widest k-batch, else the ring) whose estimated time fits
  // (pairwise/schedule/pattern_budget.h); zero when the plan names none.
  absl::Duration budget = absl::ZeroDuration();
  std::vector<std::string> tests = {
      "write_bw", "write_lat"};  // write_bw | send_bw | read_bw | write_lat | send_lat
  std::vector<std::string> memory = {"host"};   // host | cuda
  absl::Duration duration = absl::Seconds(10);  // pairwise.duration_s
  // A cell whose data stops moving for this long (pairwise.no_progress_s)
  // fails as "no progress" instead of waiting for its deadline (the
  // duration plus the margin).
  absl::Duration no_progress = absl::Seconds(10);
  int64_t message_bytes = 8388608;
  int streams = 1;  // parallel QPs / TCP connections per bandwidth test
  // pairwise.pairs_at_once: at most this many cells of a round run at the
  // same time (the rest wait for a later sub-round); 0 = every disjoint
  // pair of the round at once.
  int pairs_at_once = 0;
  bool bidirectional = false;  // bandwidth tests both ways at once (perftest -b)
  // Both directions of every pair as separate cells (N x (N-1)); false: the
  // lower node is the client only (pairwise.directions: one).
  bool both_directions = true;
  // cuda memory: GPUs per node tested, each with its nearest rail; 0 = all.
  int cuda_gpus = 0;
  double min_fraction_of_line_rate = 0.80;
  double max_latency_us = 5;
  // Retransmission and out-of-sequence counter rises per GB a cell moved
  // above which the cell warns (pair_verdict.h WithCounterVerdict).
  double max_retries_per_gb = 1.0;
  // A bandwidth cell whose receiving port's raw (pre-FEC) BER,
  // rx_corrected_bits_phy over the bits received, is above this fails
  // (pair_verdict.h WithCounterVerdict): FEC is working too hard. The IEEE
  // 802.3 pre-FEC requirement for 50G/100G-per-lane PAM4 links with
  // RS(544,514) FEC (docs/checks.md cites it).
  double max_raw_ber = 2.4e-4;
  Incast incast;  // pairwise.incast
};

enum class CollectiveBackend { kNccl, kGloo };
enum class CollectiveLauncher { kAgents, kMpirun };
// gloo only: kAuto = ibverbs where the node's first rail is an RDMA device, else tcp.
enum class GlooTransport { kAuto, kTcp, kIbverbs };

struct SizeSweep {
  int64_t min_bytes = 8;
  int64_t max_bytes = 8LL << 30;
  int factor = 2;
};

struct Collectives {
  bool enabled = false;
  CollectiveBackend backend = CollectiveBackend::kNccl;
  SizeSweep sizes;
  int ranks_per_node = 0;       // 0: the node's gpus
  double min_busbw_gbytes = 0;  // 0: the floor follows the rails (min_fraction_of_fabric)
  // Between nodes the busbw floor is this share of what the slowest node's
  // rails carry (rails x fabric.link_rate_gbps / 8 GB/s, nccl-tests' busbw).
  double min_fraction_of_fabric = 0.8;
  // The 1-node scope on every node (each node's NVLink/PCIe path judged
  // against the others' median) or on the first node only.
  bool one_node_every_node = true;
  double min_fraction_of_median = 0.8;  // a 1-node figure below this share of the median fails
  std::map<std::string, std::string> env;
  CollectiveLauncher launcher = CollectiveLauncher::kAgents;
  GlooTransport transport = GlooTransport::kAuto;
  int warmup_iters = 5;  // nccl-tests -w
  int iters = 20;        // nccl-tests -n
  // collectives.timeout_s, per scope: ranks still running then are killed.
  absl::Duration timeout = absl::Minutes(10);
  // 1-node | 2-node | all-nodes; all three by default.
  std::vector<std::string> scopes = {"1-node", "2-node", "all-nodes"};
  // One sweep per scope per operation, nccl-tests' names without "_perf"
  // (sweep/collective_operation.h): all_reduce, all_gather, reduce_scatter,
  // alltoall. all_reduce alone by default.
  std::vector<std::string> operations = {"all_reduce"};
  // launcher mpirun: an optional OpenMPI hostfile (the hosts and slots come
  // from the nodes: --host <agent host>:<ranks>), and the directory holding
  // nccl-tests' binaries (all_reduce_perf, ...), an absolute path; empty:
  // each binary by its name on the nodes' PATH.
  std::string hostfile;
  std::string nccl_tests_dir;
};

struct UplinkTarget {
  std::string type;  // agent | http | tcp
  // type agent: a plan node acting as sink, or a node-agent outside the
  // nodes under test (a storage or head node) given by its agent address and
  // the data-plane address the flows go to.
  std::string node;
  std::string agent;  // host:port of that node-agent (management plane)
  std::string data_ip;
  std::string name;     // how reports call it; defaults to node, url or address
  std::string url;      // type http
  std::string address;  // type tcp host:port
};

struct UplinkWorkload {
  // image-video | llm-pretrain | fine-tune (rates in controller/uplink/
  // uplink_sizing.cc, from the seed); empty: ingest_gbytes_per_gpu or
  // cluster_ingest_gbps says it.
  std::string profile;
  int gpus_per_node = 0;  // 0: each node's gpus from the nodes list
  double ingest_gbytes_per_gpu = 0;
  double cluster_ingest_gbps = 0;  // a cluster-wide read rate instead of per GPU
  double checkpoint_gbytes = 0;
};

struct Uplink {
  bool enabled = false;
  double capacity_gbps = 0;
  UplinkWorkload workload;
  std::vector<UplinkTarget> targets;
  std::vector<int> flows = {1, 8};
  absl::Duration duration = absl::Seconds(5);  // uplink.duration_s: per node, target and flow count
};

// A fabric the training data plane must not reach (other_fabrics[]): an
// inference or storage fabric, by its subnets, and addresses in it known to
// answer, which each node's data netdevs try to connect to.
struct OtherFabric {
  std::string name;
  std::vector<std::string> subnets;  // canonical CIDRs: "10.20.0.0/16"
  std::vector<std::string> probe;    // "10.20.0.10:2049", "[fd00::1]:2049"
  SourceLocation location;
};

struct CertificateSettings {
  std::string out = "certs/";
  std::string signing_key;  // empty: unsigned
};

// The plan's slurm section (docs/slurm.md): how a node that Slurm lists
// becomes a plan node when `controller run --slurm-nodes` takes the node list
// from Slurm. Patterns hold {name}, {addr}, {hostname} and {n}
// (controller/plan/node_pattern.h); a plan `nodes:` entry of the same name
// wins over them.
struct SlurmSettings {
  bool enabled = false;  // the plan has a slurm section
  std::string agent;     // slurm.agent, e.g. "{addr}:7070"
  std::string data_ip;   // slurm.data_ip, e.g. "10.10.1.{n}"; empty: none
  // slurm.node_defaults: what every Slurm node without a plan entry has.
  std::vector<std::string> rails;
  int gpus = 0;
  std::string leaf;
  absl::Duration timeout = absl::Seconds(10);  // slurm.timeout_s: each scontrol call
};

struct Plan {
  std::string path;    // as given on the command line
  std::string sha256;  // of the file's bytes, hex
  std::string text;    // the file's bytes (embedded in the certificate)
  std::string cluster;
  Fabric fabric;
  std::vector<Node> nodes;
  Expectations expect;
  AgentSettings agents;
  Pairwise pairwise;
  Collectives collectives;
  Uplink uplink;
  std::vector<OtherFabric> other_fabrics;  // empty: the isolation checks are skipped
  CertificateSettings certificate;
  SlurmSettings slurm;
  // The cable plan: each (node, device) port's expected far end, merged from
  // fabric.cabling and the switch/port of nodes[].rails[] (nodes[].cable on
  // fabric.type ethernet, whose device is "" until the agent names the data
  // netdev). A std::map so that reports list it in node order.
  std::map<std::pair<std::string, std::string>, CableEnd> cables;
  std::string cabling_sha256;  // of fabric.cabling's bytes, hex; empty without one
  std::string cabling_text;    // fabric.cabling's bytes as read (the certificate embeds them)
  // Set by a caller that has the cable plan's bytes already (`verify` takes
  // them from the certificate): fabric.cabling is then not read from disk.
  std::optional<std::string> attached_cabling;
  // Where each key's value sits in the file, by path ("fabric.link_rate_gbps",
  // "nodes[2].rails[1]"), so a finding can cite the plan line that set it.
  // Only keys present in the file are listed.
  std::map<std::string, SourceLocation> locations;
};

const char* FabricTypeName(FabricType type);           // "roce" | "infiniband" | "ethernet"
const char* FabricRoutingName(FabricRouting routing);  // "auto" | "bgp" | "l2"
// "all-pairs" | "ring" | "k-batch" | "leaf", as the plan spells them.
const char* PairwisePatternName(PairwisePattern pattern);

}  // namespace clustercert::controller::plan
