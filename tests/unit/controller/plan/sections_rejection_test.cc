// Rejections in cluster, expect, agents, pairwise, collectives, uplink and
// certificate: each case breaks one thing in BasePlan() and checks the exact
// file:line:col, key path and wording of the error.

#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/controller/plan/plan_test_util.h"

namespace clustercert::controller::plan::testing {
namespace {

const std::vector<RejectCase> kClusterCases = {
    {"NameWithSpace",
     {{"cluster: test-cluster", "cluster: test cluster"}},
     "|test cluster",
     "cluster is \"test cluster\"; it must be a name of letters, digits, '.', '_' and '-' (e.g. "
     "kentino-4node)."},
    {"NameMap",
     {{"cluster: test-cluster", "cluster: {name: x}"}},
     "|{name: x}",
     "cluster is a map; it must be a name of letters"},
    {"KeyTypo",
     {{"cluster: test-cluster", "clustr: test-cluster"}},
     "|clustr",
     "clustr is not a known key; did you mean cluster? Keys allowed at the top level: cluster, "
     "fabric, nodes, expect, agents, pairwise, collectives, uplink, other_fabrics, certificate, "
     "slurm.",
     2},
    {"UnknownSection",
     {{"cluster: test-cluster\n", "cluster: test-cluster\nmonitoring: on\n"}},
     "|monitoring",
     "monitoring is not a known key. Keys allowed at the top level: cluster, "},
};

const std::vector<RejectCase> kExpectCases = {
    {"PeermemQuoted",
     {{"nvidia_peermem: true", "nvidia_peermem: \"true\""}},
     "\"true\"",
     "expect.nvidia_peermem is \"true\"; it must be true or false. Write it without quotes."},
    {"PcieGenTooHigh",
     {{"gen: 4", "gen: 7"}},
     "gen: |7",
     "expect.pcie.gen is 7; it must be an integer from 1 to 6"},
    {"PcieGenZero",
     {{"gen: 4", "gen: 0"}},
     "gen: |0",
     "expect.pcie.gen is 0; it must be an integer from 1 to 6"},
    {"PcieWidthNotALinkWidth",
     {{"width: 16", "width: 3"}},
     "width: |3",
     "expect.pcie.width is 3; it must be one of 1, 2, 4, 8, 16, 32"},
    {"PcieUnknownKey",
     {{"width: 16}", "width: 16, lanes: 16}"}},
     "|lanes",
     "expect.pcie.lanes is not a known key. Keys allowed in expect.pcie: gen, width."},
    {"PcieList",
     {{"pcie: {gen: 4, width: 16}", "pcie: [4, 16]"}},
     "|[4, 16]",
     "expect.pcie is a list; it must be a map with gen and width."},
    {"ClockOffsetZero",
     {{"clock_offset_ms: 5", "clock_offset_ms: 0"}},
     "clock_offset_ms: |0",
     "expect.clock_offset_ms is 0; it must be a positive number of milliseconds"},
    {"ClockOffsetNegative",
     {{"clock_offset_ms: 5", "clock_offset_ms: -5"}},
     "-5",
     "expect.clock_offset_ms is -5; it must be a positive number of milliseconds"},
    {"RelationLowerCase",
     {{"max_gpu_nic_relation: PHB", "max_gpu_nic_relation: phb"}},
     "phb",
     "expect.max_gpu_nic_relation is \"phb\"; it must be one of PIX, PXB, PHB, NODE, SYS. Did you "
     "mean PHB?"},
    {"RelationUnknown",
     {{"max_gpu_nic_relation: PHB", "max_gpu_nic_relation: NVLINK"}},
     "NVLINK",
     "expect.max_gpu_nic_relation is \"NVLINK\"; it must be one of PIX, PXB, PHB, NODE, SYS."},
    {"OfedNumber",
     {{"ofed: true", "ofed: 1"}},
     "ofed: |1",
     "expect.ofed is 1; it must be true or false."},
};

const std::vector<RejectCase> kAgentsCases = {
    {"InsecureNo",
     {{"insecure: false", "insecure: no"}},
     "insecure: |no",
     "agents.insecure is \"no\"; it must be true or false."},
    {"TlsKeyTypo",
     {{"cert: /pki/controller.pem", "certs: /pki/controller.pem"}},
     "|certs:",
     "agents.tls.certs is not a known key; did you mean cert? Keys allowed in agents.tls: ca, "
     "cert, key."},
    {"TlsList",
     {{"tls: {ca: /pki/ca.pem, cert: /pki/controller.pem, key: /pki/controller.key}",
       "tls: [/pki/ca.pem]"}},
     "|[/pki",
     "agents.tls is a list; it must be a map with ca, cert and key."},
    {"TlsEmptyPath",
     {{"ca: /pki/ca.pem", "ca: \"\""}},
     "|\"\"",
     "agents.tls.ca is \"\"; it must be the path of a PEM file"},
    {"ConnectTimeoutZero",
     {{"connect_timeout_s: 5", "connect_timeout_s: 0"}},
     "connect_timeout_s: |0",
     "agents.connect_timeout_s is 0; it must be a positive number of seconds"},
    {"CallTimeoutNegative",
     {{"call_timeout_s: 30", "call_timeout_s: -1"}},
     "-1",
     "agents.call_timeout_s is -1; it must be a positive number of seconds"},
    {"RetriesTooMany",
     {{"retries: 2", "retries: 11"}},
     "retries: |11",
     "agents.retries is 11; it must be an integer from 0 to 10"},
    {"RetriesNegative",
     {{"retries: 2", "retries: -1"}},
     "-1",
     "agents.retries is -1; it must be an integer from 0 to 10"},
    {"RetriesFraction",
     {{"retries: 2", "retries: 1.5"}},
     "1.5",
     "agents.retries is 1.5; it must be an integer from 0 to 10"},
};

const std::vector<RejectCase> kPairwiseCases = {
    {"EngineUnknown",
     {{"engine: verbs", "engine: rdma"}},
     "rdma",
     "pairwise.engine is \"rdma\"; it must be one of verbs, tcp."},
    {"PatternTypo",
     {{"pattern: all-pairs", "pattern: all_pairs"}},
     "all_pairs",
     "pairwise.pattern is \"all_pairs\"; it must be one of all-pairs, ring, k-batch, leaf. Did you "
     "mean "
     "all-pairs?"},
    {"KBatchWithoutK",
     {{"pattern: all-pairs", "pattern: k-batch"}},
     "pattern: |k-batch",
     "pairwise.pattern is k-batch but pairwise.k is missing; k-batch needs k, how many nodes "
     "after each node around the ring it is paired with (2 or more)."},
    {"KTooSmall",
     {{"pattern: all-pairs", "pattern: k-batch\n  k: 1"}},
     "  k: |1",
     "pairwise.k is 1; it must be an integer from 2 to 1024"},
    {"KWithoutKBatch",
     {{"pattern: all-pairs", "pattern: ring\n  k: 4"}},
     "  k: |4",
     "pairwise.k is 4 but pairwise.pattern is ring; k applies only to pattern k-batch"},
    {"BudgetWithPattern",
     {{"pattern: all-pairs", "pattern: ring\n  budget_minutes: 30"}},
     "pattern: |ring",
     "pairwise.pattern is set but so is pairwise.budget_minutes, which picks the pattern itself; "
     "remove one of them"},
    {"BudgetNotPositive",
     {{"pattern: all-pairs", "budget_minutes: 0"}},
     "budget_minutes: |0",
     "pairwise.budget_minutes is 0; it must be a positive number of minutes, at most 10080"},
    {"TestUnknown",
     {{"tests: [write_bw, send_bw, write_lat]", "tests: [write_bw, ping]"}},
     "|ping",
     "pairwise.tests[1] is \"ping\"; it must be one of write_bw, send_bw, read_bw, write_lat, "
     "send_lat, read_lat."},
    {"TestsEmpty",
     {{"tests: [write_bw, send_bw, write_lat]", "tests: []"}},
     "tests: |[]",
     "pairwise.tests is an empty list; it must be a non-empty list of distinct values from "
     "write_bw, send_bw, read_bw, write_lat, send_lat, read_lat."},
    {"TestsDuplicate",
     {{"tests: [write_bw, send_bw, write_lat]", "tests: [write_bw, write_bw]"}},
     "write_bw, |write_bw",
     "pairwise.tests[1] is write_bw, already listed in pairwise.tests; list each value once."},
    {"TestsText",
     {{"tests: [write_bw, send_bw, write_lat]", "tests: write_bw"}},
     "tests: |write_bw",
     "pairwise.tests is \"write_bw\"; it must be a non-empty list of distinct values"},
    {"MemoryUnknown",
     {{"memory: [host, cuda]", "memory: [host, gpu]"}},
     "|gpu]",
     "pairwise.memory[1] is \"gpu\"; it must be one of host, cuda."},
    {"CudaOnNodeWithoutGpus",
     {{"gpus: 4\nexpect:", "gpus: 0\nexpect:"}, {"backend: nccl", "backend: gloo"}},
     "host, |cuda",
     "pairwise.memory includes cuda but node node2 has gpus: 0; cuda tests need a GPU on every "
     "node (set the node's gpus, or remove cuda)."},
    {"DurationZero",
     {{"duration_s: 10", "duration_s: 0"}},
     "duration_s: |0",
     "pairwise.duration_s is 0; it must be a positive number of seconds, at most 3600"},
    {"DurationTooLong",
     {{"duration_s: 10", "duration_s: 4000"}},
     "4000",
     "pairwise.duration_s is 4000; it must be a positive number of seconds, at most 3600"},
    {"NoProgressZero",
     {{"duration_s: 10", "duration_s: 10\n  no_progress_s: 0"}},
     "no_progress_s: |0",
     "pairwise.no_progress_s is 0; it must be a positive number of seconds, at most 3600 (a cell "
     "that moves no data for this long fails as no progress; e.g. 10)"},
    {"MessageBytesBadSuffix",
     {{"message_bytes: 8M", "message_bytes: 8X"}},
     "8X",
     "pairwise.message_bytes is \"8X\"; it must be a byte count: a whole number, optionally with a "
     "binary suffix K, M or G (8, 64K, 8G), from 1 to 64M"},
    {"StreamsTooMany",
     {{"message_bytes: 8M", "message_bytes: 8M\n  streams: 65"}},
     "streams: |65",
     "pairwise.streams is 65; it must be an integer from 1 to 64"},
    {"PairsAtOnceZero",
     {{"message_bytes: 8M", "message_bytes: 8M\n  pairs_at_once: 0"}},
     "pairs_at_once: |0",
     "pairwise.pairs_at_once is 0; it must be an integer from 1 to 65536"},
    {"BidirectionalNotBoolean",
     {{"message_bytes: 8M", "message_bytes: 8M\n  bidirectional: maybe"}},
     "bidirectional: |maybe",
     "pairwise.bidirectional is"},
    {"MessageBytesTooLarge",
     {{"message_bytes: 8M", "message_bytes: 2G"}},
     "2G",
     "pairwise.message_bytes is \"2G\"; it must be a byte count"},
    {"MinFractionZero",
     {{"min_fraction_of_line_rate: 0.80", "min_fraction_of_line_rate: 0"}},
     "min_fraction_of_line_rate: |0",
     "pairwise.min_fraction_of_line_rate is 0; it must be a number above 0 and at most 1"},
    {"MinFractionAboveOne",
     {{"min_fraction_of_line_rate: 0.80", "min_fraction_of_line_rate: 1.5"}},
     "1.5",
     "pairwise.min_fraction_of_line_rate is 1.5; it must be a number above 0 and at most 1"},
    {"MaxLatencyZero",
     {{"max_latency_us: 5", "max_latency_us: 0"}},
     "max_latency_us: |0",
     "pairwise.max_latency_us is 0; it must be a positive number of microseconds"},
    {"KeyTypo",
     {{"max_latency_us: 5", "max_latency_ms: 5"}},
     "|max_latency_ms",
     "pairwise.max_latency_ms is not a known key; did you mean max_latency_us? Keys allowed in "
     "pairwise: engine, pattern, k, budget_minutes, tests, memory, duration_s, no_progress_s, "
     "message_bytes, "
     "streams, pairs_at_once, "
     "bidirectional, directions, cuda_gpus, min_fraction_of_line_rate, max_latency_us, "
     "max_retries_per_gb, max_raw_ber, incast."},
    {"VerbsOnEthernetWithoutRails",
     {{"type: roce", "type: ethernet"},
      {"  roce: {gid_index: 3, pfc_priority: 3, dscp: 26, trust: dscp, ecn: true}\n", ""},
      {"data_ip: 10.10.1.1\n    rails: [mlx5_0, mlx5_1]\n", "data_ip: 10.10.1.1\n"}},
     "engine: |verbs",
     "pairwise.engine is verbs but node node1 has no rails (fabric.type is ethernet); use engine: "
     "tcp, or list each node's RDMA devices under rails."},
};

const std::vector<RejectCase> kCollectivesCases = {
    {"BackendUnknown",
     {{"backend: nccl", "backend: mpi"}},
     "mpi",
     "collectives.backend is \"mpi\"; it must be one of nccl, gloo."},
    {"SizeFraction",
     {{"min: 8, max: 8G", "min: 1.5G, max: 8G"}},
     "1.5G",
     "collectives.sizes.min is \"1.5G\"; it must be a byte count: a whole number, optionally with "
     "a binary suffix K, M or G (8, 64K, 8G), at least 1 and at most 32G. Fractions are not "
     "accepted; write 1536M."},
    {"SizeBadSuffix",
     {{"max: 8G", "max: 8X"}},
     "8X",
     "collectives.sizes.max is \"8X\"; it must be a byte count"},
    {"SizeZero",
     {{"min: 8,", "min: 0,"}},
     "min: |0",
     "collectives.sizes.min is 0; it must be a byte count"},
    {"SizeMinAboveMax",
     {{"min: 8, max: 8G", "min: 16G, max: 8G"}},
     "max: |8G",
     "collectives.sizes.min is 16G but collectives.sizes.max is 8G; min must not be larger than "
     "max."},
    {"SizeMinAboveDefaultMax",
     {{"sizes: {min: 8, max: 8G, factor: 2}", "sizes: {min: 16G}"}},
     "|16G",
     "collectives.sizes.min is 16G but collectives.sizes.max is 8G (the default); min must not be "
     "larger than max."},
    {"FactorOne",
     {{"factor: 2", "factor: 1"}},
     "factor: |1",
     "collectives.sizes.factor is 1; it must be an integer from 2 to 1024"},
    {"SizesList",
     {{"sizes: {min: 8, max: 8G, factor: 2}", "sizes: [8, 8G]"}},
     "|[8, 8G]",
     "collectives.sizes is a list; it must be a map with min, max and factor"},
    {"RanksNegative",
     {{"ranks_per_node: 4", "ranks_per_node: -1"}},
     "-1",
     "collectives.ranks_per_node is -1; it must be an integer from 0 to 16"},
    // Issue 15: the agent refuses more than 16 ranks a node; the plan says so first.
    {"RanksAboveTheAgentsCap",
     {{"ranks_per_node: 4", "ranks_per_node: 17"}},
     "ranks_per_node: |17",
     "collectives.ranks_per_node is 17; it must be an integer from 0 to 16"},
    {"SizeAboveTheAgentsCap",
     {{"min: 8, max: 8G", "min: 8, max: 64G"}},
     "max: |64G",
     "collectives.sizes.max is \"64G\"; it must be a byte count: a whole number, optionally "
     "with a binary suffix K, M or G (8, 64K, 8G), at least 1 and at most 32G."},
    {"RanksAboveGpus",
     {{"ranks_per_node: 4", "ranks_per_node: 8"}},
     "ranks_per_node: |8",
     "collectives.ranks_per_node is 8 but nodes node1, node2 have fewer GPUs; NCCL runs one rank "
     "per GPU"},
    {"NcclOnNodeWithoutGpus",
     {{"gpus: 4\nexpect:", "gpus: 0\nexpect:"}, {"memory: [host, cuda]", "memory: [host]"}},
     "backend: |nccl",
     "collectives.backend is nccl but node node2 has gpus: 0; NCCL needs a GPU per rank (use "
     "backend: gloo on CPU-only nodes)."},
    {"BusbwNegative",
     {{"min_busbw_gbytes: 22", "min_busbw_gbytes: -1"}},
     "-1",
     "collectives.min_busbw_gbytes is -1; it must be a number of GB/s, 0 or more"},
    {"EnvValueList",
     {{"NCCL_IB_GID_INDEX: 3", "NCCL_IB_GID_INDEX: [3]"}},
     "|[3]",
     "collectives.env.NCCL_IB_GID_INDEX is a list; it must be a single value: text or a number"},
    {"EnvList",
     {{"env: {NCCL_IB_HCA: \"mlx5_0,mlx5_1\", NCCL_IB_GID_INDEX: 3}", "env: [NCCL_IB_HCA]"}},
     "|[NCCL_IB_HCA]",
     "collectives.env is a list; it must be a map of environment variables"},
    {"EnvBadName",
     {{"NCCL_IB_GID_INDEX: 3", "1NCCL: 3"}},
     "|1NCCL",
     "collectives.env has the key 1NCCL; variable names are letters, digits and '_', not "
     "starting with a digit (e.g. NCCL_IB_HCA)."},
    // Issue 15: the env reached worker processes running as root.
    {"EnvLoaderVariable",
     {{"NCCL_IB_GID_INDEX: 3", "LD_PRELOAD: /tmp/evil.so"}},
     "|LD_PRELOAD",
     "collectives.env.LD_PRELOAD: LD_PRELOAD is not passed to collective workers: the workers "
     "run as root, so they take only the variables listed in docs/security.md (\"The worker "
     "environment\"; common/worker_env.cc)"},
    {"EnvNcclPlugin",
     {{"NCCL_IB_GID_INDEX: 3", "NCCL_NET_PLUGIN: /tmp/evil.so"}},
     "|NCCL_NET_PLUGIN",
     "collectives.env.NCCL_NET_PLUGIN: NCCL_NET_PLUGIN is refused: NCCL loads the network plugin "
     "library it names"},
    // Issue 34: the env was a deny-list; these four passed plan check.
    {"EnvNcclGinPlugin",
     {{"NCCL_IB_GID_INDEX: 3", "NCCL_GIN_PLUGIN: /tmp/evil.so"}},
     "|NCCL_GIN_PLUGIN",
     "collectives.env.NCCL_GIN_PLUGIN: NCCL_GIN_PLUGIN is refused: NCCL loads the GPU-initiated "
     "networking plugin library it names"},
    {"EnvNcclRmaPlugin",
     {{"NCCL_IB_GID_INDEX: 3", "NCCL_RMA_PLUGIN: /tmp/evil.so"}},
     "|NCCL_RMA_PLUGIN",
     "collectives.env.NCCL_RMA_PLUGIN: NCCL_RMA_PLUGIN is refused: NCCL loads the RMA plugin "
     "library it names"},
    {"EnvNcclIbverbsLib",
     {{"NCCL_IB_GID_INDEX: 3", "NCCL_IBVERBS_LIB: /tmp/evil.so"}},
     "|NCCL_IBVERBS_LIB",
     "collectives.env.NCCL_IBVERBS_LIB: NCCL_IBVERBS_LIB is refused: NCCL loads it as "
     "libibverbs"},
    {"EnvNcclProxyProfile",
     {{"NCCL_IB_GID_INDEX: 3", "NCCL_PROXY_PROFILE: /etc/cron.d/x"}},
     "|NCCL_PROXY_PROFILE",
     "collectives.env.NCCL_PROXY_PROFILE: NCCL_PROXY_PROFILE is refused: NCCL writes its proxy "
     "timeline to the file it names"},
    {"EnvUnknownNccl",
     {{"NCCL_IB_GID_INDEX: 3", "NCCL_FOO: 1"}},
     "|NCCL_FOO",
     "collectives.env.NCCL_FOO: NCCL_FOO is not passed to collective workers: the workers run as "
     "root, so they take only the variables listed in docs/security.md (\"The worker "
     "environment\"; common/worker_env.cc), each known to take a number, a keyword or a list of "
     "names; remove it from collectives.env, or ask for it to be added"},
    {"EnvValueAPath",
     {{"NCCL_IB_GID_INDEX: 3", "NCCL_IB_GID_INDEX: /tmp/x"}},
     "|/tmp/x",
     "collectives.env.NCCL_IB_GID_INDEX: NCCL_IB_GID_INDEX's value \"/tmp/x\" holds '/'"},
};

const std::vector<RejectCase> kUplinkCases = {
    {"CapacityZero",
     {{"capacity_gbps: 25", "capacity_gbps: 0"}},
     "capacity_gbps: |0",
     "uplink.capacity_gbps is 0; it must be a positive number of Gb/s"},
    {"IngestNegative",
     {{"ingest_gbytes_per_gpu: 0.25", "ingest_gbytes_per_gpu: -0.25"}},
     "-0.25",
     "uplink.workload.ingest_gbytes_per_gpu is -0.25; it must be a number of GB/s, 0 or more"},
    {"GpusPerNodeNegative",
     {{"gpus_per_node: 4", "gpus_per_node: -1"}},
     "-1",
     "uplink.workload.gpus_per_node is -1; it must be an integer from 0 to 64"},
    {"CheckpointText",
     {{"checkpoint_gbytes: 280", "checkpoint_gbytes: 280GB"}},
     "280GB",
     "uplink.workload.checkpoint_gbytes is \"280GB\"; it must be a number of GB, 0 or more"},
    {"TargetTypeUnknown",
     {{"{type: agent, node: node2}", "{type: s3, node: node2}"}},
     "s3",
     "uplink.targets[0].type is \"s3\"; it must be one of agent, http, tcp."},
    {"TargetTypeMissing",
     {{"{type: agent, node: node2}", "{node: node2}"}},
     "|{node: node2}",
     "uplink.targets[0].type is missing; it must be one of agent, http, tcp."},
    {"TargetNotAMap",
     {{"{type: agent, node: node2}", "agent"}},
     "- |agent",
     "uplink.targets[0] is \"agent\"; it must be a map with type (agent, http or tcp)"},
    {"AgentTargetWithoutNode",
     {{"{type: agent, node: node2}", "{type: agent}"}},
     "|{type: agent}",
     "uplink.targets[0].agent is missing; a target of type agent needs node (a plan node) or agent "
     "(host:port of a node-agent, e.g. on a storage host) with data_ip."},
    {"AgentTargetUnknownNode",
     {{"node: node2}", "node: storage1}"}},
     "storage1",
     "uplink.targets[0].node is storage1, which is not a node of this plan; an agent target names "
     "one of the plan's nodes, or gives agent and data_ip for a node-agent outside them."},
    {"AgentTargetNearMiss",
     {{"node: node2}", "node: Node2}"}},
     "Node2",
     "uplink.targets[0].node is Node2, which is not a node of this plan; an agent target names "
     "one of the plan's nodes, or gives agent and data_ip for a node-agent outside them (did you "
     "mean node2?)."},
    {"HttpTargetBadScheme",
     {{"url: \"http://10.10.9.1", "url: \"ftp://10.10.9.1"}},
     "\"ftp",
     "uplink.targets[1].url is \"ftp://10.10.9.1:9000/bucket/shard-000.tar\"; it must be a URL "
     "starting with http:// or https://"},
    {"HttpTargetWithNode",
     {{"{type: http, url:", "{type: http, node: node1, url:"}},
     "|node: node1, url",
     "uplink.targets[1].node does not apply to a target of type http; node belongs to targets of "
     "type agent."},
    {"TcpTargetWithoutPort",
     {{"address: \"10.10.9.1:5201\"", "address: \"10.10.9.1\""}},
     "\"10.10.9.1\"",
     "uplink.targets[2].address is \"10.10.9.1\"; it must be a literal IP address and port of a "
     "TCP sink, the port from 1 to 65535 (e.g. 10.10.9.1:5201 or [fd00::9]:5201). The port is "
     "missing."},
    {"TcpTargetWithoutAddress",
     {{"{type: tcp, address: \"10.10.9.1:5201\"}", "{type: tcp}"}},
     "|{type: tcp}",
     "uplink.targets[2].address is missing; a target of type tcp needs address."},
    {"FlowsZero",
     {{"flows: [1, 8]", "flows: [0, 8]"}},
     "[|0, 8]",
     "uplink.flows[0] is 0; it must be an integer from 1 to 64 (parallel flows in one run; the "
     "agent opens no more)."},
    {"FlowsTooMany",
     {{"flows: [1, 8]", "flows: [1, 2000]"}},
     "2000",
     "uplink.flows[1] is 2000; it must be an integer from 1 to 64"},
    {"FlowsScalar",
     {{"flows: [1, 8]", "flows: 8"}},
     "flows: |8",
     "uplink.flows is 8; it must be a non-empty list of flow counts"},
    {"FlowsEmpty",
     {{"flows: [1, 8]", "flows: []"}},
     "flows: |[]",
     "uplink.flows is an empty list; it must be a non-empty list of flow counts"},
};

const std::vector<RejectCase> kCertificateCases = {
    {"OutList",
     {{"out: certs/", "out: [certs/]"}},
     "|[certs/]",
     "certificate.out is a list; it must be a directory path"},
    {"OutEmpty",
     {{"out: certs/", "out: \"\""}},
     "|\"\"",
     "certificate.out is \"\"; it must be a directory path"},
    {"SigningKeyMap",
     {{"signing_key: /pki/signing.key", "signing_key: {path: /pki/k}"}},
     "|{path",
     "certificate.signing_key is a map; it must be the path of the certificate signing key"},
    {"KeyTypo",
     {{"signing_key:", "signing_kye:"}},
     "|signing_kye",
     "certificate.signing_kye is not a known key; did you mean signing_key? Keys allowed in "
     "certificate: out, signing_key."},
};

class ClusterRejectionTest : public ::testing::TestWithParam<RejectCase> {};
TEST_P(ClusterRejectionTest, NamesPositionKeyAndRule) { ExpectRejected(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Cluster, ClusterRejectionTest, ::testing::ValuesIn(kClusterCases),
                         CaseName);

class ExpectRejectionTest : public ::testing::TestWithParam<RejectCase> {};
TEST_P(ExpectRejectionTest, NamesPositionKeyAndRule) { ExpectRejected(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Expect, ExpectRejectionTest, ::testing::ValuesIn(kExpectCases), CaseName);

class AgentsRejectionTest : public ::testing::TestWithParam<RejectCase> {};
TEST_P(AgentsRejectionTest, NamesPositionKeyAndRule) { ExpectRejected(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Agents, AgentsRejectionTest, ::testing::ValuesIn(kAgentsCases), CaseName);

class PairwiseRejectionTest : public ::testing::TestWithParam<RejectCase> {};
TEST_P(PairwiseRejectionTest, NamesPositionKeyAndRule) { ExpectRejected(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Pairwise, PairwiseRejectionTest, ::testing::ValuesIn(kPairwiseCases),
                         CaseName);

class CollectivesRejectionTest : public ::testing::TestWithParam<RejectCase> {};
TEST_P(CollectivesRejectionTest, NamesPositionKeyAndRule) { ExpectRejected(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Collectives, CollectivesRejectionTest,
                         ::testing::ValuesIn(kCollectivesCases), CaseName);

class UplinkRejectionTest : public ::testing::TestWithParam<RejectCase> {};
TEST_P(UplinkRejectionTest, NamesPositionKeyAndRule) { ExpectRejected(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Uplink, UplinkRejectionTest, ::testing::ValuesIn(kUplinkCases), CaseName);

class CertificateRejectionTest : public ::testing::TestWithParam<RejectCase> {};
TEST_P(CertificateRejectionTest, NamesPositionKeyAndRule) { ExpectRejected(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Certificate, CertificateRejectionTest,
                         ::testing::ValuesIn(kCertificateCases), CaseName);

TEST(ClusterTest, MissingClusterPointsAtTheTopOfThePlan) {
  const std::string text = Replace(BasePlan(), "cluster: test-cluster\n", "");
  const absl::StatusOr<Plan> plan = ParsePlan(text, kFile);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(std::string(plan.status().message()),
            "plans/t.yaml:1:1: cluster is missing; it must be the cluster's name, of letters, "
            "digits, '.', '_' and '-' (e.g. kentino-4node).");
}

}  // namespace
}  // namespace clustercert::controller::plan::testing
