#!/usr/bin/env bash
# A 4-host lab in network namespaces, for the pairwise integration test:
#
#   PREFIX-sw     two bridges: mgmt (10.201.1.0/24) and data (10.201.2.0/24)
#   PREFIX-n1..4  host N: mgmt veth 10.201.1.N, data veth 10.201.2.N
#   PREFIX-ctl    the controller: mgmt veth 10.201.1.100
#   PREFIX-st     (after `storage`) a storage host: mgmt 10.201.1.50, data 10.201.2.50
#   PREFIX-inf    (after `inference`) a host of another fabric: 10.202.0.10 on
#                 its own bridge (infbr, 10.202.0.0/24)
#   PREFIX-rt     (after `inference`) the L3 router between the two fabrics:
#                 data 10.201.2.254, inference 10.202.0.1; reachable through
#                 only from a host given the route (`leak`)
#
# Every address lives only inside these namespaces.
#   netns_lab.sh up PREFIX          build it
#   netns_lab.sh slow PREFIX N RATE shape host N's data link both ways (tc tbf), e.g. 100mbit
#   netns_lab.sh slow-rx PREFIX N RATE shape only what host N receives
#   netns_lab.sh storage PREFIX     add the storage host
#   netns_lab.sh databr PREFIX up|down  the data bridge (a fabric outage)
#   netns_lab.sh inference PREFIX   add the other fabric's host
#   netns_lab.sh leak PREFIX N      host N routes the other fabric via the router on data0
#   netns_lab.sh down PREFIX        remove it (idempotent)
set -euo pipefail

action=$1
prefix=$2

ns() { echo "$prefix-$1"; }

count=0
attach() {  # attach HOSTNS IFNAME BRIDGE ADDRESS; the switch port is <m|d>-<host>
  local host=$1 ifname=$2 bridge=$3 address=$4
  local port="${ifname:0:1}-${host##*-}"
  count=$((count + 1))
  # Made here under short unique names, then moved and renamed.
  local a="ccv${$}a$count" b="ccv${$}b$count"
  ip link add "${a:0:15}" type veth peer name "${b:0:15}"
  ip link set "${a:0:15}" netns "$host" name "$ifname"
  ip link set "${b:0:15}" netns "$(ns sw)" name "$port"
  ip -n "$(ns sw)" link set "$port" master "$bridge" up
  ip -n "$host" addr add "$address/24" dev "$ifname"
  ip -n "$host" link set "$ifname" up
}

down() {
  for name in sw ctl n1 n2 n3 n4 st inf rt; do
    ip netns pids "$(ns $name)" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
    ip netns del "$(ns $name)" 2>/dev/null || true
  done
}

case "$action" in
  up)
    down
    ip netns add "$(ns sw)"
    ip -n "$(ns sw)" link set lo up
    for br in mgmtbr databr; do
      ip -n "$(ns sw)" link add "$br" type bridge
      ip -n "$(ns sw)" link set "$br" up
    done
    for n in 1 2 3 4; do
      ip netns add "$(ns n$n)"
      ip -n "$(ns n$n)" link set lo up
      attach "$(ns n$n)" mgmt0 mgmtbr "10.201.1.$n"
      attach "$(ns n$n)" data0 databr "10.201.2.$n"
    done
    ip netns add "$(ns ctl)"
    ip -n "$(ns ctl)" link set lo up
    attach "$(ns ctl)" mgmt0 mgmtbr 10.201.1.100
    ;;
  slow)
    # Both directions: the host's egress on data0 and the switch port's
    # egress towards the host.
    n=$3
    rate=$4
    tc -n "$(ns n$n)" qdisc replace dev data0 root tbf rate "$rate" burst 32kbit latency 100ms
    tc -n "$(ns sw)" qdisc replace dev "d-n$n" root tbf rate "$rate" burst 32kbit latency 100ms
    ;;
  slow-rx)
    # The host's receive path only: the switch port's egress towards it
    # (a bad receive lane, or a congested port in front of the host).
    n=$3
    rate=$4
    tc -n "$(ns sw)" qdisc replace dev "d-n$n" root tbf rate "$rate" burst 32kbit latency 100ms
    ;;
  fast)
    # Undo `slow`: the cable swap of a re-certification.
    n=$3
    tc -n "$(ns n$n)" qdisc del dev data0 root 2>/dev/null || true
    tc -n "$(ns sw)" qdisc del dev "d-n$n" root 2>/dev/null || true
    ;;
  storage)
    ip netns add "$(ns st)"
    ip -n "$(ns st)" link set lo up
    attach "$(ns st)" mgmt0 mgmtbr 10.201.1.50
    attach "$(ns st)" data0 databr 10.201.2.50
    ;;
  databr)
    ip -n "$(ns sw)" link set databr "$3"
    ;;
  inference)
    ip -n "$(ns sw)" link add infbr type bridge
    ip -n "$(ns sw)" link set infbr up
    for name in inf rt; do
      ip netns add "$(ns $name)"
      ip -n "$(ns $name)" link set lo up
    done
    attach "$(ns rt)" data0 databr 10.201.2.254
    attach "$(ns rt)" inf0 infbr 10.202.0.1
    ip netns exec "$(ns rt)" sysctl -qw net.ipv4.ip_forward=1
    attach "$(ns inf)" inf0 infbr 10.202.0.10
    ip -n "$(ns inf)" route add default via 10.202.0.1
    ;;
  leak)
    ip -n "$(ns n$3)" route add 10.202.0.0/24 via 10.201.2.254 dev data0
    ;;
  down)
    down
    ;;
  *)
    echo "usage: $0 up|slow|slow-rx|fast|storage|databr|inference|leak|down PREFIX [ARGS]" >&2
    exit 2
    ;;
esac
