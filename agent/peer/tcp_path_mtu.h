#pragma once

#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "agent/peer/tcp_socket.h"
#include "clustercert/v1/peer.pb.h"

namespace clustercert::agent::peer {

// How long ProbePathMtu waits for an answer to its DF datagram: a routed
// hop shorter than it answers ICMP fragmentation-needed, the peer's kernel
// answers port-unreachable (nothing listens on the discard port), and the
// first answer ends the wait; only a path that answers nothing (a firewall,
// an L2 drop) waits it out. Long enough for an ARP resolution first and a
// busy host's round trips (emulated VMs: tens of ms; 200 ms missed a hop).
inline constexpr absl::Duration kPathMtuProbeWait = absl::Seconds(1);
// Where a probe goes when the peer has no port of its own to aim at: UDP 9
// (discard), where nothing listens; the datagram only has to cross the path.
inline constexpr uint16_t kDiscardPort = 9;

// The path MTU toward `peer` as the kernel's route sees it (mtu.path), from
// `local` (the data-plane address the test's traffic leaves from):
//   local_route_mtu: IP_MTU of a UDP socket bound to `local` and connected to
//     `peer` with IP_MTU_DISCOVER = IP_PMTUDISC_DO; connecting sends nothing.
//   route_mtu: IP_MTU after one datagram of local_route_mtu bytes (headers
//     included) went to `peer`:`port` with DF set and an ICMP answer came
//     back (or `wait` passed). A routed hop shorter than that drops it and
//     answers ICMP fragmentation-needed, which lowers the route's MTU in the
//     kernel: the figure TCP itself would learn only after its first
//     full-size segment.
// Why a DF datagram and not the test's own TCP connection: a stalled or
// failed test returns no result, and the TCP connection learns the PMTU only
// from segments it has already sent; the probe knows before the data runs.
// Neither sees an L2 hop (a switch port or VLAN at 1500 between two 9000
// hosts) that drops big frames without ICMP: there the data stalls, and the
// stall's message points at the MTU when these figures cannot explain it.
// Only `peer` ever receives the datagram (nothing listens on `port`; the
// peer's kernel drops it). Failures leave figures unset and say why in note.
v1::PathMtu ProbePathMtu(const SocketAddress& local, const SocketAddress& peer,
                         absl::Duration wait = kPathMtuProbeWait);

// The IP header and UDP header bytes a datagram to `family` carries.
uint32_t UdpOverheadBytes(int family);

// " (the route to 10.0.0.2 carries only 1500-byte packets, ...)": a clause
// for a stalled test's message when the probe found the route shorter than
// `packet_bytes`, the largest IP packet the test sends; empty otherwise.
std::string PathMtuStallClause(const v1::PathMtu& mtu, uint32_t packet_bytes);

// Why a test must not start: a routed hop answered the probe with ICMP
// fragmentation-needed below `packet_bytes`, so it drops every full-size
// packet of the test (the run would only stall; and rdma_rxe, whose frames
// take the kernel's route, then retries a packet the route refuses without
// end, in the kernel, freezing the calling thread). Empty when the probe saw
// no such hop: a short route of this node's own is judged by mtu.path, and
// a NIC that sizes frames from its port still runs.
std::string ShortHopRefusal(const v1::PathMtu& mtu, uint32_t packet_bytes);

}  // namespace clustercert::agent::peer
