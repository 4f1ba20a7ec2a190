#!/usr/bin/env bash
# The controller's overhead on a 4-node all-pairs run (target <= 10 %):
# the pairwise phase's wall time against the time its tests themselves take
# (rounds x tests per pair x duration_s; the pairs of a round run at once,
# on one CallLoop: no thread per pair).
# Builds the 4-namespace lab of the integration test (root), runs the tcp
# engine with no retests (nothing fails), prints the ratio, removes the lab.
# Usage: bench/pairwise_overhead.sh [DURATION_S]   (after scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-2}
bin=build/bin
[ -x "$bin/node-agent" ] && [ -x "$bin/controller" ] || { echo "build first: bash scripts/build.sh" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "needs root for network namespaces" >&2; exit 2; }

prefix=ccb$$
tmp=$(mktemp -d)
cleanup() {
  bash tests/integration/netns_lab.sh down "$prefix"
  rm -rf "$tmp"
}
trap cleanup EXIT
bash tests/integration/netns_lab.sh up "$prefix"
# Mutual TLS as deployed: --insecure serves loopback only, and these agents
# listen on the namespaces' management addresses.
bash deploy/pki.sh "$tmp/pki" node1=10.201.1.1 node2=10.201.1.2 node3=10.201.1.3 \
  node4=10.201.1.4 >/dev/null
for n in 1 2 3 4; do
  ip netns exec "$prefix-n$n" "$bin/node-agent" --listen "10.201.1.$n:7070" --node-name "node$n" \
    --tls-cert "$tmp/pki/node$n.pem" --tls-key "$tmp/pki/node$n.key" --tls-ca "$tmp/pki/ca.pem" \
    --port-file "$tmp/node$n.port" 2>"$tmp/node$n.log" &
done
for n in 1 2 3 4; do
  for _ in $(seq 100); do [ -s "$tmp/node$n.port" ] && break; sleep 0.05; done
  [ -s "$tmp/node$n.port" ] || { echo "node$n's agent did not start:" >&2; cat "$tmp/node$n.log" >&2; exit 1; }
done

{
  echo "cluster: overhead-bench"
  echo "fabric: {type: ethernet, link_rate_gbps: 1, min_netdev_mtu: 1500}"
  echo "nodes:"
  for n in 1 2 3 4; do
    echo "  - {name: node$n, agent: \"10.201.1.$n:7070\", data_ip: 10.201.2.$n, gpus: 0}"
  done
  echo "expect: {nvidia_peermem: false, ntp_synced: false, ofed: false, clock_offset_ms: 250}"
  echo "agents: {connect_timeout_s: 2, call_timeout_s: 20, retries: 0, tls: {ca: $tmp/pki/ca.pem, cert: $tmp/pki/controller.pem, key: $tmp/pki/controller.key}}"
  echo "pairwise: {engine: tcp, pattern: all-pairs, tests: [write_bw], memory: [host], duration_s: $duration, min_fraction_of_line_rate: 0.1}"
  echo "certificate: {out: $tmp/certs}"
} >"$tmp/plan.yaml"

start=$(date +%s.%N)
ip netns exec "$prefix-ctl" "$bin/controller" run "$tmp/plan.yaml" --quiet --color=never >"$tmp/out.txt" || true
end=$(date +%s.%N)
cert=$(sed -n 's/^certificate: //p' "$tmp/out.txt")
[ -s "$cert" ] || { echo "the run wrote no certificate; its output:" >&2; cat "$tmp/out.txt" >&2; exit 1; }
phase_ms=$(grep -A4 '"name": "pairwise"' "$cert" | sed -n 's/.*"duration_ms": "\{0,1\}\([0-9]*\)"\{0,1\}.*/\1/p')
# The schedule's rounds as run (all-pairs on 4 nodes: 3 per direction, both
# directions by default), the highest round a cell names.
rounds=$(sed -n 's/.*"round": \([0-9]*\).*/\1/p' "$cert" | sort -n | tail -1)
awk -v ms="$phase_ms" -v d="$duration" -v r="$rounds" -v s="$start" -v e="$end" 'BEGIN {
  ideal = r * d * 1000
  printf "pairwise phase: %.0f ms for %d rounds of %g s tests (ideal %.0f ms)\n", ms, r, d, ideal
  printf "controller overhead: %.1f %% (target <= 10 %%, ratio %.3f)\n", (ms - ideal) / ideal * 100, ms / ideal
  printf "whole run (connect, inventory, pairwise, certificate): %.2f s\n", e - s
}'
for pid in $(jobs -p); do kill "$pid" 2>/dev/null || true; done
wait 2>/dev/null || true
