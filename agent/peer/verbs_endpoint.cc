#include "agent/peer/verbs_endpoint.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/peer/tcp_path_mtu.h"
#include "agent/peer/verbs_protocol.h"
#include "common/ib_mtu.h"

namespace clustercert::agent::peer {
namespace {

constexpr int kAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
// perftest's default inline size for latency tests; bandwidth tests post from
// the registered buffer.
constexpr uint32_t kLatencyInlineBytes = 220;

std::string PortName(const VerbsTestOptions& options) {
  return absl::StrCat(options.device, " port ", options.port);
}

bool AllZero(const ibv_gid& gid) {
  return std::all_of(std::begin(gid.raw), std::end(gid.raw), [](uint8_t b) { return b == 0; });
}

// The port facts the endpoint publishes, checked for a usable RC path.
struct PortFacts {
  std::string link_layer;
  uint16_t lid = 0;
  uint32_t active_mtu_bytes = 0;
  ibv_gid gid{};
};

absl::StatusOr<PortFacts> CheckPort(const VerbsTestOptions& options, const Context& context,
                                    const ibv_port_attr& port) {
  PortFacts facts;
  facts.link_layer = LinkLayerName(port.link_layer);
  facts.lid = port.lid;
  const bool ethernet = port.link_layer == IBV_LINK_LAYER_ETHERNET;
  if (!ethernet && port.lid == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        PortName(options), " has LID 0: no subnet manager; start opensm (or the switch's SM)"));
  }
  if (port.state != IBV_PORT_ACTIVE) {
    return absl::FailedPreconditionError(
        absl::StrCat(PortName(options), " is ", ibv_port_state_str(port.state),
                     ", not ACTIVE: check the link (cable, switch port) with ibv_devinfo"));
  }
  absl::StatusOr<uint32_t> mtu = IbMtuToBytes(port.active_mtu);
  if (!mtu.ok()) {
    return absl::DataLossError(
        absl::StrCat("ibv_query_port(", PortName(options), "): ", mtu.status().message()));
  }
  facts.active_mtu_bytes = *mtu;
  if (options.message_bytes > port.max_msg_sz) {
    return absl::FailedPreconditionError(absl::StrCat(
        "message_bytes ", options.message_bytes, " exceeds ", PortName(options),
        "'s largest message (max_msg_sz ", port.max_msg_sz, "): use smaller messages"));
  }
  if (ethernet && options.gid_index >= static_cast<uint32_t>(port.gid_tbl_len)) {
    return absl::FailedPreconditionError(
        absl::StrCat("gid_index ", options.gid_index, " is outside ", PortName(options),
                     "'s GID table (0..", port.gid_tbl_len - 1, ")"));
  }
  absl::StatusOr<ibv_gid> gid = context.QueryGid(options.port, options.gid_index);
  if (ethernet) {
    if (!gid.ok()) return gid.status();
    if (AllZero(*gid)) {
      return absl::FailedPreconditionError(absl::StrCat(
          PortName(options), " GID index ", options.gid_index,
          " is empty: RoCE needs a populated GID; pick one from /sys/class/infiniband/",
          options.device, "/ports/", options.port,
          "/gids/ (soft-RoCE puts its IPv4 RoCE v2 GID at 1) or give the netdev an IP address"));
    }
  }
  // InfiniBand routes by LID; its GID is published for reference when it reads.
  if (gid.ok()) facts.gid = *gid;
  return facts;
}

// What the device must allow for this test's queues.
absl::Status CheckCapacity(const VerbsTestOptions& options, const ibv_device_attr& device,
                           const QueuePair::Capacity& capacity, int cq_entries) {
  if (static_cast<int>(options.streams) > device.max_qp) {
    return absl::FailedPreconditionError(absl::StrCat("streams ", options.streams, " exceeds ",
                                                      options.device, "'s ", device.max_qp,
                                                      " QPs: use fewer streams"));
  }
  const uint32_t largest = std::max(capacity.send_wr, capacity.recv_wr);
  if (static_cast<int64_t>(largest) > device.max_qp_wr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "queue_depth ", options.queue_depth, " needs ", largest, " work requests per QP, and ",
        options.device, " allows ", device.max_qp_wr, ": lower queue_depth"));
  }
  if (cq_entries > device.max_cqe) {
    return absl::FailedPreconditionError(
        absl::StrCat(options.streams, " QPs of queue_depth ", options.queue_depth, " need a CQ of ",
                     cq_entries, " entries, and ", options.device, " allows ", device.max_cqe,
                     ": lower queue_depth or streams"));
  }
  return absl::OkStatus();
}

// The IP address in a RoCE v2 GID: IPv4-mapped (::ffff:a.b.c.d) or a
// routable IPv6 address; nullopt for a RoCE v1 or link-local GID.
std::optional<std::string> GidAddress(const std::string& gid) {
  if (gid.size() != 16) return std::nullopt;
  const auto* raw = reinterpret_cast<const uint8_t*>(gid.data());
  char text[INET6_ADDRSTRLEN] = {};
  const bool mapped = std::all_of(raw, raw + 10, [](uint8_t b) { return b == 0; }) &&
                      raw[10] == 0xff && raw[11] == 0xff;
  if (mapped) {
    if (::inet_ntop(AF_INET, raw + 12, text, sizeof(text)) == nullptr) return std::nullopt;
    return std::string(text);
  }
  if (raw[0] == 0xfe && (raw[1] & 0xc0) == 0x80) return std::nullopt;
  if (::inet_ntop(AF_INET6, raw, text, sizeof(text)) == nullptr) return std::nullopt;
  return std::string(text);
}

// The route from this port's GID address to the peer's (tcp_path_mtu.h),
// for mtu.path and for a stall's message: rxe and mlx5 size RoCE frames
// from the netdev's MTU alone, so a shorter route or hop drops every full
// frame. The datagram goes to the discard port, never to RoCE's 4791.
v1::PathMtu ProbeRoceRoute(const v1::EndpointInfo& local, const v1::EndpointInfo& peer) {
  v1::PathMtu mtu;
  if (local.link_layer() != "Ethernet") {
    mtu.set_note("InfiniBand has no IP route; the QP's path MTU is the subnet manager's");
    return mtu;
  }
  const std::optional<std::string> from = GidAddress(local.gid());
  const std::optional<std::string> to = GidAddress(peer.gid());
  if (!from || !to) {
    mtu.set_note("a RoCE v1 or link-local GID names no IP route to probe");
    return mtu;
  }
  absl::StatusOr<SocketAddress> bind = SocketAddress::FromLiteral(*from, 0);
  absl::StatusOr<SocketAddress> target = SocketAddress::FromLiteral(*to, kDiscardPort);
  if (!bind.ok() || !target.ok() || bind->family() != target->family()) {
    mtu.set_note("the two GIDs are not addresses of one IP version");
    return mtu;
  }
  return ProbePathMtu(*bind, *target);
}

// The IP packet a RoCE v2 QP sends with `payload` bytes of data (at most its
// path MTU): the payload, BTH (12), RETH (16, on a write's first packet),
// ICRC (4), UDP (8) and the IP header.
uint32_t RocePacketBytes(uint32_t payload, const std::string& peer_address) {
  const bool v6 = peer_address.find(':') != std::string::npos;
  return payload + 12 + 16 + 4 + 8 + (v6 ? 40 : 20);
}

}  // namespace

absl::StatusOr<std::unique_ptr<VerbsEndpoint>> VerbsEndpoint::Create(VerbsTestOptions options,
                                                                     Clock& clock) {
  // rc_pingpong's order: buffer, context, (no completion channel: we poll),
  // PD, MR, CQ, QPs; each step checked before the next.
  absl::StatusOr<std::unique_ptr<MemoryProvider>> provider = MakeMemoryProvider(options.memory);
  if (!provider.ok()) return provider.status();
  absl::StatusOr<std::unique_ptr<Buffer>> buffer =
      (*provider)->Allocate(BufferBytes(options.message_bytes));
  if (!buffer.ok()) return buffer.status();
  absl::StatusOr<Context> context = Context::Open(options.device);
  if (!context.ok()) return context.status();

  absl::StatusOr<ibv_device_attr> device = context->QueryDevice();
  if (!device.ok()) return device.status();
  absl::StatusOr<ibv_port_attr> port = context->QueryPort(options.port);
  if (!port.ok()) return port.status();
  absl::StatusOr<PortFacts> facts = CheckPort(options, *context, *port);
  if (!facts.ok()) return facts.status();

  QueuePair::Capacity capacity;
  capacity.send_wr = options.tx_depth() + 1;  // + the end-of-test signal
  capacity.recv_wr = std::max<uint32_t>(1, ReceiveDepth(options));
  capacity.inline_bytes = options.latency() ? kLatencyInlineBytes : 0;
  const int cq_entries = static_cast<int>(options.streams * (capacity.send_wr + capacity.recv_wr));
  if (absl::Status fits = CheckCapacity(options, *device, capacity, cq_entries); !fits.ok()) {
    return fits;
  }
  const uint8_t reads = ReadsInFlight(options, *device);

  absl::StatusOr<ProtectionDomain> pd = ProtectionDomain::Allocate(*context);
  if (!pd.ok()) return pd.status();
  absl::StatusOr<MemoryRegion> mr = (*buffer)->Register(pd->get(), kAccess);
  if (!mr.ok()) return mr.status();
  absl::StatusOr<CompletionQueue> cq = CompletionQueue::Create(*context, cq_entries);
  if (!cq.ok()) return cq.status();
  std::vector<QueuePair> qps;
  qps.reserve(options.streams);
  for (uint32_t i = 0; i < options.streams; ++i) {
    absl::StatusOr<QueuePair> qp = QueuePair::Create(*context, pd->get(), cq->get(), capacity);
    if (!qp.ok()) return qp.status();
    if (absl::Status init = qp->ToInit(static_cast<uint8_t>(options.port), kAccess); !init.ok()) {
      return init;
    }
    qps.push_back(*std::move(qp));
  }

  v1::EndpointInfo local;
  local.set_lid(facts->lid);
  std::random_device seed;
  std::mt19937 random(seed());
  for (const QueuePair& qp : qps) {
    local.add_qpn(qp.qp_num());
    local.add_psn(random() & 0xFFFFFF);
  }
  local.set_gid(std::string(reinterpret_cast<const char*>(facts->gid.raw), sizeof(ibv_gid)));
  local.set_rkey(mr->rkey());
  local.set_vaddr(reinterpret_cast<uint64_t>((*buffer)->data()));
  local.set_active_mtu(facts->active_mtu_bytes);
  local.set_link_layer(facts->link_layer);

  Resources resources{*std::move(provider), *std::move(buffer), *std::move(context), *std::move(pd),
                      *std::move(mr),       *std::move(cq),     std::move(qps)};
  return std::unique_ptr<VerbsEndpoint>(
      new VerbsEndpoint(std::move(options), std::move(resources), std::move(local), reads, clock));
}

VerbsEndpoint::VerbsEndpoint(VerbsTestOptions options, Resources resources, v1::EndpointInfo local,
                             uint8_t reads_in_flight, Clock& clock)
    : options_(std::move(options)),
      clock_(clock),
      resources_(std::move(resources)),
      local_(std::move(local)),
      reads_in_flight_(reads_in_flight) {}

DataPath VerbsEndpoint::MakePath() const {
  DataPath path;
  path.options = &options_;
  path.device = options_.device;
  path.cq = resources_.cq.get();
  path.max_inline = UINT32_MAX;
  for (const QueuePair& qp : resources_.qps) {
    path.qps.push_back(qp.get());
    path.max_inline = std::min(path.max_inline, qp.max_inline_data());
  }
  path.lkey = resources_.mr.lkey();
  path.local_address = reinterpret_cast<uint64_t>(resources_.buffer->data());
  if (resources_.buffer->host_accessible()) {
    path.host = static_cast<uint8_t*>(resources_.buffer->data());
  }
  path.remote_address = peer_.vaddr();
  path.rkey = peer_.rkey();
  return path;
}

absl::Status VerbsEndpoint::Connect(const v1::EndpointInfo& peer, absl::Time deadline) {
  if (state_ != State::kPrepared) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the verbs endpoint on ", options_.device,
        " is already connected (or failed to): ", "prepare a new endpoint for another test"));
  }
  state_ = State::kUsed;  // until every QP reaches RTS
  if (clock_.Now() >= deadline) {
    return absl::DeadlineExceededError("Connect was called after its deadline");
  }
  if (absl::Status checked = CheckPeerInfo(options_, local_, peer); !checked.ok()) return checked;
  absl::StatusOr<ibv_mtu> mtu = PathMtu(local_.active_mtu(), peer.active_mtu());
  if (!mtu.ok()) return mtu.status();
  absl::StatusOr<uint32_t> mtu_bytes = IbMtuToBytes(*mtu);
  if (!mtu_bytes.ok()) return mtu_bytes.status();
  peer_ = peer;
  path_mtu_bytes_ = *mtu_bytes;
  path_mtu_ = ProbeRoceRoute(local_, peer);
  path_mtu_.set_qp_mtu(path_mtu_bytes_);
  path_mtu_.set_port_active_mtu(local_.active_mtu());

  const DataPath path = MakePath();
  const uint32_t receives = ReceiveDepth(options_);
  RemoteAddress remote;
  remote.global = local_.link_layer() == "Ethernet";
  remote.lid = static_cast<uint16_t>(peer.lid());
  std::memcpy(remote.gid.raw, peer.gid().data(), sizeof(remote.gid.raw));
  remote.sgid_index = static_cast<uint8_t>(options_.gid_index);
  remote.traffic_class = static_cast<uint8_t>(options_.traffic_class);
  remote.service_level = static_cast<uint8_t>(options_.service_level);
  remote.path_mtu = *mtu;
  remote.port = static_cast<uint8_t>(options_.port);
  remote.dest_rd_atomic = reads_in_flight_;
  for (size_t i = 0; i < resources_.qps.size(); ++i) {
    QueuePair& qp = resources_.qps[i];
    // Receives go up before RTR, so the peer never finds this side without one.
    for (uint32_t r = 0; r < receives; ++r) {
      if (absl::Status posted = path.PostReceive(i); !posted.ok()) return posted;
    }
    remote.qpn = peer.qpn(static_cast<int>(i));
    remote.psn = peer.psn(static_cast<int>(i));
    if (absl::Status rtr = qp.ToRtr(remote); !rtr.ok()) return rtr;
    if (absl::Status rts = qp.ToRts(local_.psn(static_cast<int>(i)), reads_in_flight_); !rts.ok()) {
      return rts;
    }
    if (clock_.Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat("connecting ", resources_.qps.size(),
                                                      " QPs on ", options_.device,
                                                      " ran past the deadline after ", i + 1));
    }
  }
  state_ = State::kConnected;
  return absl::OkStatus();
}

absl::StatusOr<v1::PeerTestResult> VerbsEndpoint::Run(absl::Time deadline) {
  if (state_ != State::kConnected) {
    return absl::FailedPreconditionError(
        absl::StrCat("the verbs endpoint on ", options_.device,
                     " is not connected, or has run already: Prepare, Connect, then Run once"));
  }
  state_ = State::kUsed;
  // The largest packet this test sends: a message, or a full QP MTU of one.
  const auto payload =
      static_cast<uint32_t>(std::min<uint64_t>(options_.message_bytes, uint64_t{path_mtu_bytes_}));
  const uint32_t packet_bytes = RocePacketBytes(payload, path_mtu_.peer_address());
  if (const std::string hop = ShortHopRefusal(path_mtu_, packet_bytes); !hop.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("the verbs ", options_.test, " test on ",
                                                      options_.device, " was not run: ", hop));
  }
  const absl::Time now = clock_.Now();
  const absl::Duration left = deadline - now;
  if (options_.duration_mode() && options_.duration >= left) {
    return absl::DeadlineExceededError(absl::StrFormat(
        "the verbs %s run has %.1f s before its deadline, less than its duration_s %.1f: give Run "
        "a deadline beyond the test's duration",
        options_.test, absl::ToDoubleSeconds(left), absl::ToDoubleSeconds(options_.duration)));
  }
  DataPath path = MakePath();
  path.started = DataPath::Clock::now();
  // Clamped so an infinite deadline cannot overflow the steady clock.
  path.deadline = path.started + absl::ToChronoNanoseconds(
                                     std::clamp(left, absl::ZeroDuration(), absl::Hours(24 * 366)));

  progress_.Start();
  path.bytes = progress_.counter();
  path.cancelled = &cancelled_;
  path.probe = &LiveStallProbe();  // a stall's message: QP state, attributes, counters
  absl::StatusOr<v1::PeerTestResult> result =
      options_.latency() ? RunLatency(path) : RunBandwidth(path);
  progress_.Stop();
  if (!result.ok()) {
    const std::string mtu_clause = PathMtuStallClause(path_mtu_, packet_bytes);
    if (mtu_clause.empty()) return result.status();
    absl::Status with_mtu(result.status().code(),
                          absl::StrCat(result.status().message(), mtu_clause));
    result.status().ForEachPayload([&with_mtu](absl::string_view url, const absl::Cord& payload) {
      with_mtu.SetPayload(url, payload);
    });
    return with_mtu;
  }
  *result->mutable_path_mtu() = path_mtu_;
  result->set_role(options_.server ? "server" : "client");
  result->set_memory_path(resources_.provider->Describe());
  const bool inline_data = options_.operation != VerbsTestOptions::Operation::kRead &&
                           options_.message_bytes <= path.max_inline;
  result->set_detail(
      absl::StrCat(DetailOf(options_, path_mtu_bytes_, inline_data), result->detail()));
  return result;
}

}  // namespace clustercert::agent::peer
