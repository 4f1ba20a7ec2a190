#!/usr/bin/env bash
# Parity with perftest: Debian's ib_write_bw / ib_send_bw / ib_write_lat and
# clustercert's verbs engine (driven the way users drive it: node-agent in the
# VMs, `controller run` with a one-test plan) with the same parameters on the
# same soft-RoCE VM pair (node2 client -> node1 server, rxe0, GID index 1,
# RC, one QP, TX depth 128), alternating, REPEATS times. Prints the medians
# and the ratios: targets are bandwidth >= 0.97 x perftest and latency
# typical <= 1.05 x perftest. Under TCG emulation single runs swing, which is
# why the medians are compared; nothing here is asserted. The emulated link
# also stalls now and then (a run of either tool then reaches its deadline):
# each tool gets up to 3 attempts per run, and the row counts the retries.
#
#   bench/verbs_vs_perftest.sh [BUILD_DIR]          (as root; default build)
#
# Uses the lab that is up (CCLAB_NAME, 2+ VMs), or brings up a 2-VM lab and
# tears it down afterwards. Environment: REPEATS (5), SECONDS_PER_BW (5, the
# bandwidth tests' -D / duration_s), BW_BYTES (65536, perftest's bandwidth
# default), TESTS ("write_bw send_bw write_lat"). Latency uses perftest's
# defaults, which are the engine's: 2-byte messages, 1000 iterations.
set -euo pipefail

cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build}
REPEATS=${REPEATS:-5}
SECONDS_PER_BW=${SECONDS_PER_BW:-5}
BW_BYTES=${BW_BYTES:-65536}
TESTS=${TESTS:-"write_bw send_bw write_lat"}
LAB=deploy/lab/softroce-lab.sh
# The lab's agents serve mutual TLS with the PKI softroce-lab.sh makes.
PKI=${CCLAB_PKI:-/var/tmp/clustercert-lab-pki}
CONTROLLER=$(cd "$BUILD_DIR" && pwd)/bin/controller

die() { echo "verbs_vs_perftest: $*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || die "needs root (the soft-RoCE lab)"
[[ -x $CONTROLLER ]] || die "$CONTROLLER is missing: bash scripts/build.sh"
command -v python3 >/dev/null || die "python3 is needed to read the certificate"

WORK=$(mktemp -d /var/tmp/verbs_vs_perftest.XXXXXX)
own_lab=0
cleanup() {
  ((own_lab)) && bash "$LAB" down || true
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if ! bash "$LAB" status | grep -q "node2: qemu pid"; then
  own_lab=1
  CCLAB_BUILD=$BUILD_DIR bash "$LAB" up --nodes 2
fi

perftest_flags() {  # the flags both tools agree on, for test $1
  case "$1" in
    *_bw) echo "-d rxe0 -i 1 -x 1 -c RC -q 1 -t 128 -s $BW_BYTES -D $SECONDS_PER_BW -F" ;;
    *_lat) echo "-d rxe0 -i 1 -x 1 -c RC -s 2 -n 1000 -F" ;;
  esac
}

# One perftest server/client pair for test $1; non-zero when either failed.
perftest_pair() {
  local test=$1 tool="ib_$1" flags
  flags=$(perftest_flags "$test")
  bash "$LAB" exec 1 "timeout 120 $tool $flags" >"$WORK/server.txt" 2>&1 &
  local server=$! tries=0
  # The server must be listening on its TCP side channel first; under
  # emulation it may take a few seconds to get there.
  sleep 2
  until bash "$LAB" exec 2 "timeout 120 $tool $flags 10.203.2.1" >"$WORK/client.txt" 2>&1; do
    if ! grep -q "Couldn't connect" "$WORK/client.txt" || ((++tries >= 10)); then
      wait "$server" || true
      return 1
    fi
    sleep 1
  done
  wait "$server"
}

# The soft-RoCE devices' counters on both VMs, for a failed attempt: a stall
# of the emulated link shows as retransmits or RNR NAKs there.
rxe_counters() {
  local n
  for n in 1 2; do
    echo "    node$n rxe0 counters: $(bash "$LAB" exec "$n" \
      'cd /sys/class/infiniband/rxe0/ports/1/hw_counters 2>/dev/null &&
       for f in *; do v=$(cat "$f"); [ "$v" = 0 ] || printf "%s=%s " "$f" "$v"; done' 2>&1 |
      tr -d '\r' | tail -1)"
  done
}

# A failed attempt of either tool is tried again (up to 3 attempts in all),
# said on stderr and counted in the row, so the two tools get the same
# allowance for the emulated link's stalls and a tool that needs it more shows.
note_retry() {  # tool test attempt detail-file
  echo "verbs_vs_perftest: $1 $2 attempt $3 failed:" >&2
  sed 's/^/    /' "$4" | tail -8 >&2
  rxe_counters >&2
  echo "$1" >>"$WORK/retries.$2"
}

# One perftest run of test $1: bandwidth average Gb/s, or latency t_typical us.
perftest_figure() {
  local test=$1 attempt
  for attempt in 1 2 3; do
    perftest_pair "$test" && break
    note_retry perftest "$test" "$attempt" "$WORK/client.txt"
    ((attempt < 3)) || die "ib_$test failed 3 times"
  done
  python3 - "$test" "$WORK/client.txt" <<'EOF'
import re, sys
test, path = sys.argv[1], sys.argv[2]
rows = [l.split() for l in open(path) if re.match(r"^\s*\d+\s+\d+\s+[\d.]+", l)]
if not rows:
    sys.exit("no result row in perftest's output:\n" + open(path).read())
row = rows[-1]
# bw: #bytes #iterations BW_peak BW_average[MB/sec] MsgRate; MB/sec is 2^20
# bytes/s, which keeps 2 decimals where --report_gbits would print 0.17.
# lat: #bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9%
if test.endswith("_bw"):
    print("%.4f" % (float(row[3]) * 2**20 * 8 / 1e9))
else:
    print(row[4])
EOF
}

# One engine run of test $1 through node-agent and controller: the cell's
# Gb/s or typical us, as the certificate records it.
engine_figure() {
  local test=$1 attempt
  for attempt in 1 2 3; do
    engine_attempt "$test" >"$WORK/engine.txt" 2>&1 && break
    note_retry engine "$test" "$attempt" "$WORK/engine.txt"
    ((attempt < 3)) || die "the engine's $test failed 3 times"
  done
  cat "$WORK/engine.txt"
}

# One try of engine_figure; non-zero with the reason when the cell failed.
engine_attempt() {
  local test=$1 plan=$WORK/plan.yaml
  cat >"$plan" <<EOF
cluster: parity
fabric: {type: roce, link_rate_gbps: 2.5, active_mtu: 4096, min_netdev_mtu: 9000, roce: {gid_index: 1, lossless: false}}
nodes:
  - {name: node2, agent: "10.203.1.2:7070", rails: [rxe0], gpus: 0}
  - {name: node1, agent: "10.203.1.1:7070", rails: [rxe0], gpus: 0}
expect: {nvidia_peermem: false, ofed: false, ntp_synced: false, clock_offset_ms: 100000}
agents: {connect_timeout_s: 10, call_timeout_s: 60, retries: 1,
         tls: {ca: $PKI/ca.pem, cert: $PKI/controller.pem, key: $PKI/controller.key}}
pairwise: {engine: verbs, tests: [$test], memory: [host], duration_s: $SECONDS_PER_BW,
           message_bytes: $BW_BYTES, min_fraction_of_line_rate: 0.001, max_latency_us: 1000000}
certificate: {out: $WORK/certs}
EOF
  rm -rf "$WORK/certs"
  # Exit 1 (ran, not certified) still has the cell; 2 and 3 mean nothing ran.
  local rc=0 cert
  bash "$LAB" host "$CONTROLLER" run "$plan" --color=never >"$WORK/controller.txt" 2>&1 || rc=$?
  cert=$(ls "$WORK"/certs/*/certificate.json 2>/dev/null | head -1)
  [[ $rc -le 1 && -n $cert ]] ||
    { echo "controller run (exit $rc) wrote no certificate; it said: $(tail -20 "$WORK/controller.txt")"; return 1; }
  python3 - "$test" "$cert" <<'EOF'
import json, sys
test, path = sys.argv[1], sys.argv[2]
cert = json.load(open(path))
pairs = [p for p in cert.get("pairs", []) if p.get("test") == test and not p.get("retest_of")]
if not pairs or not pairs[0].get("ok"):
    sys.exit("the engine's %s cell node2 -> node1 failed: %s; run "
             "plans/lab-softroce.yaml on the lab by hand (docs/lab.md) to look closer"
             % (test, pairs[0].get("error") if pairs else "the certificate has no such cell"))
# The cell's judged figure: bandwidth as measured where the data is counted
# (the receiver of sends, the poster of writes), latency typical one-way us.
print(pairs[0]["value"])
EOF
}

median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }

retries() {  # tool test: how many of its attempts failed
  local n=0
  [[ -f $WORK/retries.$2 ]] && n=$(grep -cx "$1" "$WORK/retries.$2" || true)
  echo "$n"
}

printf '%-10s %10s %10s %-6s %7s  %s\n' test perftest engine unit ratio verdict
for test in $TESTS; do
  p_runs=()
  e_runs=()
  for ((i = 0; i < REPEATS; ++i)); do
    p_runs+=("$(perftest_figure "$test")")
    e_runs+=("$(engine_figure "$test")")
  done
  p=$(median "${p_runs[@]}")
  e=$(median "${e_runs[@]}")
  ratio=$(python3 -c "print('%.3f' % ($e / $p))")
  case "$test" in
    *_bw) unit="Gb/s"; verdict=$(python3 -c "print('ok' if $ratio >= 0.97 else 'below 0.97')") ;;
    *) unit="us typ"; verdict=$(python3 -c "print('ok' if $ratio <= 1.05 else 'above 1.05')") ;;
  esac
  printf '%-10s %10.4f %10.4f %-6s %7s  %-11s (runs: perftest %s; engine %s; retried: perftest %s, engine %s)\n' \
    "$test" "$p" "$e" "$unit" "$ratio" "$verdict" "${p_runs[*]}" "$(printf '%.4f ' "${e_runs[@]}")" \
    "$(retries perftest "$test")" "$(retries engine "$test")"
done
