#include "common/worker_env.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"

namespace clustercert {

// Sources: NCCL's user guide, "Environment Variables" (docs.nvidia.com/
// deeplearning/nccl/user-guide/docs/env.html), and NCCL's source, where every
// NCCL_PARAM is an integer and every string variable is read by ncclGetEnv;
// the string ones not listed here are paths, libraries or addresses.
const WorkerEnvVariable kWorkerEnvAllowed[] = {
    // Which networks and devices: names, never paths.
    {"NCCL_SOCKET_IFNAME",
     "IP interfaces for NCCL's sockets (bootstrap, NET/Socket): interface-name prefixes, "
     "=exact, ^excluded; derived from the plan"},
    {"NCCL_SOCKET_FAMILY", "address family of NCCL's sockets: AF_INET or AF_INET6"},
    {"NCCL_SOCKET_NTHREADS", "CPU threads per NET/Socket connection: a number"},
    {"NCCL_NSOCKS_PERTHREAD", "sockets per NET/Socket thread: a number"},
    {"NCCL_OOB_NET_ENABLE", "bootstrap over the network plugin instead of sockets: 0 or 1"},
    {"NCCL_OOB_NET_IFNAME",
     "interfaces for that bootstrap: interface-name prefixes, =exact, ^excluded"},
    {"NCCL_NET",
     "which of the networks NCCL already has to use (IB, Socket, a loaded plugin's name): "
     "compared by name, loads nothing"},
    {"NCCL_IB_HCA",
     "RDMA devices NCCL uses: device names with optional :port, =exact, ^excluded; derived "
     "from the node's rails"},
    {"NCCL_IB_DISABLE", "turns the IB/RoCE transport off: 0 or 1"},
    {"NCCL_IB_GID_INDEX", "GID table index of RoCE traffic: a number; derived from the plan"},
    {"NCCL_IB_ROCE_VERSION_NUM", "RoCE version when NCCL picks the GID: 1 or 2"},
    {"NCCL_IB_ADDR_FAMILY", "address family of the GID NCCL picks: AF_INET or AF_INET6"},
    {"NCCL_IB_TC", "traffic class of NCCL's QPs (DSCP << 2 | ECN): a number; derived"},
    {"NCCL_IB_FIFO_TC", "traffic class of NCCL's control messages: a number"},
    {"NCCL_IB_SL", "InfiniBand service level: a number"},
    {"NCCL_IB_TIMEOUT", "QP ack timeout exponent: a number"},
    {"NCCL_IB_RETRY_CNT", "QP retry count: a number"},
    {"NCCL_IB_QPS_PER_CONNECTION", "QPs per connection: a number"},
    {"NCCL_IB_SPLIT_DATA_ON_QPS", "split each message over the QPs: 0 or 1"},
    {"NCCL_IB_AR_THRESHOLD", "message size from which adaptive routing is used: bytes"},
    {"NCCL_IB_ADAPTIVE_ROUTING", "use adaptive routing: 0 or 1"},
    {"NCCL_IB_PCI_RELAXED_ORDERING", "PCIe relaxed ordering of NCCL's memory: 0, 1 or 2"},
    {"NCCL_IB_ECE_ENABLE", "enhanced connection establishment: 0 or 1"},
    {"NCCL_IB_MERGE_NICS", "merge the ports of dual-port NICs: 0 or 1"},
    {"NCCL_CROSS_NIC", "rings and trees may use different NICs per node: 0, 1 or 2"},
    // GPUDirect and peer-to-peer paths: levels and switches.
    {"NCCL_NET_GDR_LEVEL",
     "furthest GPU-NIC distance for GPUDirect RDMA: LOC, PIX, PXB, PHB, SYS or a number; "
     "used by the shipped plans"},
    {"NCCL_NET_GDR_READ", "GPUDirect RDMA on the sending side: 0 or 1"},
    {"NCCL_NET_SHARED_BUFFERS", "share network buffers between peers: 0 or 1"},
    {"NCCL_NET_SHARED_COMMS", "share network connections between peers (PXN): 0 or 1"},
    {"NCCL_DMABUF_ENABLE", "register GPU memory through dma-buf: 0 or 1"},
    {"NCCL_P2P_DISABLE", "turns CUDA peer-to-peer between GPUs off: 0 or 1"},
    {"NCCL_P2P_LEVEL",
     "furthest GPU-GPU distance for peer-to-peer: LOC, NVL, PIX, PXB, PHB, SYS or a number"},
    {"NCCL_P2P_DIRECT_DISABLE", "turns direct peer access within a process off: 0 or 1"},
    {"NCCL_SHM_DISABLE",
     "turns the shared-memory transport off: 0 or 1 (its segments' names are NCCL's own, "
     "never taken from the environment)"},
    {"NCCL_NVB_DISABLE", "turns NVLink-through-a-GPU off: 0 or 1"},
    {"NCCL_PXN_DISABLE", "turns PXN (NIC of a peer GPU over NVLink) off: 0 or 1"},
    {"NCCL_P2P_PXN_LEVEL", "when PXN is used for send/receive: 0, 1 or 2"},
    {"NCCL_NVLS_ENABLE", "NVLink SHARP: 0, 1 or 2"},
    {"NCCL_CUMEM_ENABLE", "allocate through the cuMem* API: 0 or 1"},
    {"NCCL_CUMEM_HOST_ENABLE", "host memory through the cuMem* API: 0 or 1"},
    // Algorithms, protocols and sizes: keywords and numbers.
    {"NCCL_ALGO",
     "algorithms NCCL may use: Ring, Tree, CollnetDirect, CollnetChain, NVLS, NVLSTree, PAT, "
     "^excluded, optionally per collective (allreduce:tree;...)"},
    {"NCCL_PROTO", "protocols NCCL may use: LL, LL128, Simple, ^excluded"},
    {"NCCL_PAT_ENABLE", "the PAT algorithm: 0 or 1"},
    {"NCCL_COLLNET_ENABLE",
     "CollNet (SHARP) through a network plugin NCCL already loaded: 0 or 1; loads nothing"},
    {"NCCL_COLLNET_NODE_THRESHOLD", "nodes from which CollNet is used: a number"},
    {"NCCL_BUFFSIZE", "buffer between each pair of ranks: bytes"},
    {"NCCL_NTHREADS", "CUDA threads per block: a number"},
    {"NCCL_MAX_NCHANNELS", "most channels (CUDA blocks) NCCL uses: a number"},
    {"NCCL_MIN_NCHANNELS", "fewest channels NCCL uses: a number"},
    {"NCCL_MAX_CTAS", "most CTAs per collective: a number"},
    {"NCCL_MIN_CTAS", "fewest CTAs per collective: a number"},
    {"NCCL_CGA_CLUSTER_SIZE", "CUDA cooperative group array size: a number"},
    {"NCCL_NCHANNELS_PER_NET_PEER", "channels per remote peer for send/receive: a number"},
    {"NCCL_P2P_NET_CHUNKSIZE", "send/receive chunk over the network: bytes"},
    {"NCCL_P2P_NVL_CHUNKSIZE", "send/receive chunk over NVLink: bytes"},
    {"NCCL_P2P_PCI_CHUNKSIZE", "send/receive chunk over PCIe: bytes"},
    {"NCCL_P2P_LL_THRESHOLD", "send/receive size up to which LL is used: bytes"},
    {"NCCL_ALLOC_P2P_NET_LL_BUFFERS", "LL buffers for network send/receive: 0 or 1"},
    {"NCCL_LAUNCH_MODE", "how a multi-GPU process launches kernels: PARALLEL or GROUP"},
    {"NCCL_COMM_BLOCKING", "blocking communicator calls: 0 or 1"},
    {"NCCL_RUNTIME_CONNECT", "connect peers when first used instead of at init: 0 or 1"},
    {"NCCL_GRAPH_REGISTER", "register buffers of CUDA graphs: 0 or 1"},
    {"NCCL_LOCAL_REGISTER", "register user buffers: 0 or 1"},
    {"NCCL_GRAPH_MIXING_SUPPORT", "mix CUDA graphs and plain launches: 0 or 1"},
    {"NCCL_IGNORE_CPU_AFFINITY", "ignore the process's CPU affinity: 0 or 1"},
    {"NCCL_SET_STACK_SIZE", "raise the CUDA stack size: 0 or 1"},
    {"NCCL_SET_THREAD_NAME", "name NCCL's threads: 0 or 1"},
    {"NCCL_CHECK_POINTERS", "check every call's CUDA pointers: 0 or 1"},
    {"NCCL_RAS_ENABLE",
     "NCCL's RAS subsystem: 0 or 1 (its listening address, NCCL_RAS_ADDR, is not listed)"},
    // Logging: to the worker's stdout, which the agent captures.
    {"NCCL_DEBUG",
     "log level: VERSION, WARN, INFO or TRACE; the controller sets INFO to read the transport "
     "(NCCL_DEBUG_FILE, a path, is refused)"},
    {"NCCL_DEBUG_SUBSYS", "subsystems logged: INIT, COLL, P2P, NET, ... ^excluded, or ALL"},
    // gloo: this project's gloo worker reads none of these (it binds the data
    // address the agent passes) and libgloo 0.5 reads none; PyTorch and
    // newer gloo do, and plans written for them pass.
    {"GLOO_SOCKET_IFNAME", "interface gloo binds (PyTorch): interface names"},
    {"GLOO_DEVICE_TRANSPORT", "gloo transport (PyTorch): TCP, IBVERBS or UV"},
    {"GLOO_LOG_LEVEL", "gloo's log level (newer gloo): DEBUG, INFO, WARN or ERROR"},
    // CUDA runtime and OpenMP.
    {"CUDA_DEVICE_MAX_CONNECTIONS", "hardware work queues per GPU: a number (1-32)"},
    {"CUDA_MODULE_LOADING", "when CUDA loads kernels: LAZY or EAGER"},
    {"CUDA_LAUNCH_BLOCKING", "synchronous kernel launches: 0 or 1"},
    {"OMP_NUM_THREADS", "OpenMP threads: a number"},
};
const size_t kWorkerEnvAllowedCount = sizeof(kWorkerEnvAllowed) / sizeof(kWorkerEnvAllowed[0]);

const WorkerEnvVariable kWorkerEnvRefused[] = {
    {"NCCL_NET_PLUGIN", "NCCL loads the network plugin library it names"},
    {"NCCL_TUNER_PLUGIN", "NCCL loads the tuner plugin library it names"},
    {"NCCL_PROFILER_PLUGIN", "NCCL loads the profiler plugin library it names"},
    {"NCCL_ENV_PLUGIN",
     "NCCL loads the library it names, which then answers for every NCCL variable"},
    {"NCCL_GIN_PLUGIN", "NCCL loads the GPU-initiated networking plugin library it names"},
    {"NCCL_RMA_PLUGIN", "NCCL loads the RMA plugin library it names"},
    {"NCCL_IBVERBS_LIB", "NCCL loads it as libibverbs"},
    {"NCCL_LIBIBVERBS_SO", "RCCL loads it as libibverbs (RCCL's name for NCCL_IBVERBS_LIB)"},
    {"NCCL_CUDA_PATH", "older NCCL loads the CUDA driver library from it"},
    {"NCCL_CONF_FILE", "NCCL reads NCCL variables from the file it names"},
    {"NCCL_DEBUG_FILE", "NCCL writes its log to the file it names"},
    {"NCCL_TOPO_FILE", "NCCL reads its topology from the file it names"},
    {"NCCL_TOPO_DUMP_FILE", "NCCL writes the topology to the file it names"},
    {"NCCL_GRAPH_FILE", "NCCL reads its rings and trees from the file it names"},
    {"NCCL_GRAPH_DUMP_FILE", "NCCL writes its rings and trees to the file it names"},
    {"NCCL_PROXY_PROFILE", "NCCL writes its proxy timeline to the file it names"},
    {"NCCL_TUNER_CONFIG_FILE", "NCCL's example tuner plugin reads the file it names"},
    {"NCCL_PROFILE_DUMP_FILE", "NCCL's example profiler plugin writes the file it names"},
    {"NCCL_INSPECTOR_DUMP_DIR", "NCCL's inspector plugin writes into the directory it names"},
    {"CUDA_CACHE_PATH", "the CUDA driver writes its kernel cache into the directory it names"},
};
const size_t kWorkerEnvRefusedCount = sizeof(kWorkerEnvRefused) / sizeof(kWorkerEnvRefused[0]);

namespace {

constexpr size_t kMaxValueBytes = 1024;

// Where the list is, and how to extend it: every refusal ends with this.
constexpr char kWhereTheListIs[] =
    "the workers run as root, so they take only the variables listed in docs/security.md "
    "(\"The worker environment\"; common/worker_env.cc), each known to take a number, a keyword "
    "or a list of names; remove it from collectives.env, or ask for it to be added (an issue "
    "naming the variable, what it tunes and NCCL's documentation of its value)";

bool IsUpperName(absl::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name) {
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

// What numbers, keywords and lists of names are written with. No '/': no
// value spells an absolute path or climbs out of a directory, should a
// listed variable ever come to be read as one. No '%', '$' or '~' either.
bool IsValueCharacter(char c) {
  if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) return true;
  switch (c) {
    case '_':
    case ',':
    case '.':
    case ':':
    case ';':
    case '=':
    case '^':
    case '+':
    case '-':
    case '@':
      return true;
    default:
      return false;
  }
}

}  // namespace

absl::Status CheckWorkerEnv(absl::string_view name, absl::string_view value) {
  if (!IsUpperName(name) || name.size() > 128) {
    return absl::InvalidArgumentError(absl::StrCat(
        "environment variable '", ClipValue(name),
        "' is not a variable name the workers take (upper-case letters, digits and '_', at "
        "most 128 characters, e.g. NCCL_IB_HCA)"));
  }
  for (const WorkerEnvVariable& refused : kWorkerEnvRefused) {
    if (name == refused.name) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, " is refused: ", refused.why,
          ", and a worker runs as root, so whoever sets it picks code or a file root opens; ",
          kWhereTheListIs));
    }
  }
  const bool allowed =
      std::any_of(std::begin(kWorkerEnvAllowed), std::end(kWorkerEnvAllowed),
                  [&](const WorkerEnvVariable& listed) { return name == listed.name; });
  if (!allowed) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " is not passed to collective workers: ", kWhereTheListIs));
  }
  if (value.size() > kMaxValueBytes) {
    return absl::InvalidArgumentError(absl::StrCat(name, "'s value is ", value.size(),
                                                   " bytes; at most ", kMaxValueBytes,
                                                   " are passed to the workers"));
  }
  for (char c : value) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, "'s value holds a control character (NUL, newline, ...); give it as plain text"));
    }
  }
  for (char c : value) {
    if (!IsValueCharacter(c)) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, "'s value \"", ClipValue(value), "\" holds '", ClipValue(absl::string_view(&c, 1)),
          "'; worker variables take numbers, keywords and lists of names, written with letters, "
          "digits and _ , . : ; = ^ + - @ (never a path)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace clustercert
