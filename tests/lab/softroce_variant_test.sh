#!/usr/bin/env bash
# The verbs engine on a soft-RoCE lab set up unlike deploy/lab's default
# (issue 35, deliverable 9): the data NIC is eth0 (no rename), the data bridge
# sits in the root namespace (softroce-lab.sh --bridge root), the agents start
# right after `rdma link add` (before rxe has its IPv4 GID) and the plan has
# two nodes. perftest's ib_write_bw runs on the pair first; then
# `controller run` must move data in both directions with the engine's
# write_bw, as perftest does, and certify. Its own lab (CCLAB_NAME
# cclabvar), booted and torn down here: about 2 minutes under TCG.
#
#   tests/lab/softroce_variant_test.sh BUILD_DIR     (as root)
#
# Skips (exit 77) where the other lab tests skip: not root, or CLUSTERCERT_LAB=0;
# under CI=true those fail instead (tests/support/skip.sh).
set -euo pipefail
source "$(dirname "$0")/../support/skip.sh"

repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: softroce_variant_test.sh BUILD_DIR}" && pwd)
lab=$repo/deploy/lab/softroce-lab.sh
export CCLAB_NAME=cclabvar CCLAB_BUILD=$build

if [ "$(id -u)" -ne 0 ]; then
  skip_or_fail root "the soft-RoCE lab needs root (network namespace, taps, qemu)"
fi
if [ "${CLUSTERCERT_LAB:-1}" = 0 ]; then
  skip_or_fail lab-disabled "CLUSTERCERT_LAB=0 (unset it to run the lab)"
fi

work=/var/tmp/$CCLAB_NAME-work
rm -rf "$work"
mkdir -p "$work"
trap 'bash "$lab" down' EXIT
fail() {
  echo "[  FAILED  ] $*" >&2
  exit 1
}

bash "$lab" up --nodes 2 --netdev-name eth0 --bridge root --agent-start early

# The variant is what it claims: rxe0 on eth0, the taps on a bridge in this
# namespace (not the lab's), nothing else on that bridge.
for n in 1 2; do
  ndev=$(bash "$lab" exec "$n" "cat /sys/class/infiniband/rxe0/ports/1/gid_attrs/ndevs/0")
  [[ $ndev == eth0 ]] || fail "node$n: rxe0 is on '$ndev', the variant puts it on eth0"
done
ports=$(ls "/sys/class/net/ccd-$CCLAB_NAME/brif" 2>/dev/null | tr '\n' ' ' || true)
[[ $ports == "ccd-cclabvar-1 ccd-cclabvar-2 " ]] ||
  fail "the root-namespace bridge ccd-$CCLAB_NAME has ports '$ports', expected the two VMs' taps only"

# perftest first: the pair moves data with Debian's ib_write_bw.
bash "$lab" exec 1 "timeout 90 ib_write_bw -d rxe0 -x 1 -s 65536 -D 3 -F" >"$work/perftest.server" 2>&1 &
server=$!
sleep 3
bash "$lab" exec 2 "timeout 90 ib_write_bw -d rxe0 -x 1 -s 65536 -D 3 -F 10.203.2.1" \
  >"$work/perftest.client" 2>&1 || fail "ib_write_bw on the variant failed: $(tail -n 5 "$work/perftest.client")"
wait "$server" || true
perftest_mbs=$(awk '/^ *65536 +[0-9]+/ {v = $4} END {print v}' "$work/perftest.client")
[[ $perftest_mbs =~ ^[0-9]+(\.[0-9]+)?$ ]] ||
  fail "ib_write_bw on the variant printed no 65536-byte result row: $(tail -n 5 "$work/perftest.client")"
# The engine's floor is the calibrated lab's rule (docs/lab.md): 0.7 x what
# perftest moved on this pair (perftest's MB is 2^20 bytes), as a fraction of
# the plan's 2.5 Gb/s line rate.
perftest_gbps=$(awk -v m="$perftest_mbs" 'BEGIN {printf "%.4f", m * 1048576 * 8 / 1e9}')
min_fraction=$(awk -v g="$perftest_gbps" 'BEGIN {printf "%.5f", 0.7 * g / 2.5}')
echo "perftest ib_write_bw node2 -> node1: $perftest_mbs MB/s = $perftest_gbps Gb/s; engine floor $min_fraction of 2.5 Gb/s"

# A two-node plan: the lab plan's fabric and agents, write_bw both ways.
plan=$work/variant.yaml
cat >"$plan" <<EOF
cluster: softroce-variant
fabric:
  type: roce
  link_rate_gbps: 2.5
  active_mtu: 4096
  min_netdev_mtu: 9000
  roce:
    gid_index: 1
    lossless: false
nodes:
  - {name: node1, agent: "10.203.1.1:7070", data_ip: 10.203.2.1, rails: [rxe0], gpus: 0}
  - {name: node2, agent: "10.203.1.2:7070", data_ip: 10.203.2.2, rails: [rxe0], gpus: 0}
expect:
  nvidia_peermem: false
  ofed: false
  ntp_synced: false
  clock_offset_ms: 2000
agents:
  tls:
    ca: /var/tmp/clustercert-lab-pki/ca.pem
    cert: /var/tmp/clustercert-lab-pki/controller.pem
    key: /var/tmp/clustercert-lab-pki/controller.key
  connect_timeout_s: 10
  call_timeout_s: 60
  retries: 1
pairwise:
  engine: verbs
  pattern: all-pairs
  tests: [write_bw]
  memory: [host]
  duration_s: 3
  directions: both
  message_bytes: 64K
  min_fraction_of_line_rate: $min_fraction
  max_retries_per_gb: 100000
  max_latency_us: 60000
  no_progress_s: 10
certificate:
  out: certs/
EOF
set +e
bash "$lab" host "$build/bin/controller" run "$plan" --out "$work/certs" --color=never \
  >"$work/controller.out" 2>&1
rc=$?
set -e
grep -E "write_bw host: .*\((pass|fail)|moved no data|what the engine saw" "$work/controller.out" || true
for pair in "node1 -> node2" "node2 -> node1"; do
  grep -qE "$pair rxe0 write_bw host: [0-9.]+ Gb/s \(pass\)" "$work/controller.out" ||
    fail "the engine's write_bw $pair did not pass on the variant lab (perftest moved ${perftest_mbs:-?} MB/s): see $work/controller.out"
done
((rc == 0)) || fail "controller run exited $rc on the variant lab: see $work/controller.out"
echo "[       OK ] the verbs engine moves data on the variant lab, both ways"
