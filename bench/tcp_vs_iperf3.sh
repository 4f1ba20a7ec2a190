#!/usr/bin/env bash
# Compares the tcp peer engine with iperf3 over the same veth pair between two
# network namespaces made for the purpose (ccbench-a 10.77.0.1/24,
# ccbench-b 10.77.0.2/24); the namespaces are always deleted on exit.
#
#   bench/tcp_vs_iperf3.sh [BUILD_DIR]     (as root; default build)
#
# Environment: RUN_SECONDS (5), STREAMS ("1 8"), REPEATS (2: best of each),
# MESSAGE_BYTES (131072, iperf3's default TCP block). Both figures are the
# receiver side: iperf3's end.sum_received, the engine's server result.
# Target: engine/iperf3 >= 0.95.
set -euo pipefail

cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build}
BENCH="$BUILD_DIR/bin/tcp_engine_bench"
RUN_SECONDS=${RUN_SECONDS:-5}
STREAMS=${STREAMS:-"1 8"}
REPEATS=${REPEATS:-2}
MESSAGE_BYTES=${MESSAGE_BYTES:-131072}
NS_A=ccbench-a
NS_B=ccbench-b
ADDR_A=10.77.0.1
ADDR_B=10.77.0.2
IPERF_PORT=5201

die() { echo "tcp_vs_iperf3: $*" >&2; exit 1; }

[[ $(id -u) -eq 0 ]] || die "needs root to create network namespaces"
[[ -x $BENCH ]] || die "$BENCH is missing: cmake --build $BUILD_DIR --target tcp_engine_bench"
command -v python3 >/dev/null || die "python3 is needed to read iperf3's JSON"
if ! command -v iperf3 >/dev/null; then
  echo "installing iperf3" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y iperf3 >/dev/null
fi

WORK=$(mktemp -d)
PIDS=()
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  ip netns del "$NS_A" 2>/dev/null || true
  ip netns del "$NS_B" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

# A leftover from an interrupted run would make `ip netns add` fail.
ip netns del "$NS_A" 2>/dev/null || true
ip netns del "$NS_B" 2>/dev/null || true
ip netns add "$NS_A"
ip netns add "$NS_B"
ip -n "$NS_A" link add ccb-a type veth peer name ccb-b netns "$NS_B"
ip -n "$NS_A" addr add "$ADDR_A/24" dev ccb-a
ip -n "$NS_B" addr add "$ADDR_B/24" dev ccb-b
for ns in "$NS_A" "$NS_B"; do
  ip -n "$ns" link set lo up
done
ip -n "$NS_A" link set ccb-a up
ip -n "$NS_B" link set ccb-b up

# Receiver-side Gb/s of one iperf3 run with $1 streams.
iperf3_gbps() {
  local streams=$1
  ip netns exec "$NS_A" iperf3 -s -1 -B "$ADDR_A" -p "$IPERF_PORT" >/dev/null 2>&1 &
  local server=$!
  PIDS+=("$server")
  local tries=0
  until ip netns exec "$NS_A" ss -ltn | grep -q ":$IPERF_PORT "; do
    ((++tries < 50)) || die "iperf3 server did not start"
    sleep 0.1
  done
  ip netns exec "$NS_B" iperf3 -c "$ADDR_A" -B "$ADDR_B" -p "$IPERF_PORT" -t "$RUN_SECONDS" \
    -P "$streams" -l "$MESSAGE_BYTES" -J >"$WORK/iperf3.json"
  wait "$server" || true
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("%.3f" % (d["end"]["sum_received"]["bits_per_second"]/1e9))' \
    "$WORK/iperf3.json"
}

# Receiver-side (server) Gb/s of one engine run with $1 streams.
engine_gbps() {
  local streams=$1
  rm -f "$WORK/port"
  ip netns exec "$NS_A" "$BENCH" --role server --bind "$ADDR_A" --peer "$ADDR_B" \
    --port-file "$WORK/port" --streams "$streams" --seconds "$RUN_SECONDS" \
    --message-bytes "$MESSAGE_BYTES" >"$WORK/server.out" 2>"$WORK/server.err" &
  local server=$!
  PIDS+=("$server")
  local tries=0
  until [[ -s $WORK/port ]]; do
    ((++tries < 50)) || die "engine server did not start: $(cat "$WORK/server.err")"
    sleep 0.1
  done
  ip netns exec "$NS_B" "$BENCH" --role client --bind "$ADDR_B" --peer "$ADDR_A:$(cat "$WORK/port")" \
    --streams "$streams" --seconds "$RUN_SECONDS" --message-bytes "$MESSAGE_BYTES" \
    >"$WORK/client.out" 2>"$WORK/client.err" || die "engine client failed: $(cat "$WORK/client.err")"
  wait "$server" || die "engine server failed: $(cat "$WORK/server.err")"
  sed -n 's/^result role=server .* gbps=\([0-9.]*\) .*/\1/p' "$WORK/server.out"
}

best() { printf '%s\n' "$@" | sort -g | tail -1; }

printf '%-8s %12s %12s %8s  %s\n' streams iperf3_Gbps engine_Gbps ratio verdict
for streams in $STREAMS; do
  iperf_runs=()
  engine_runs=()
  for ((i = 0; i < REPEATS; ++i)); do
    iperf_runs+=("$(iperf3_gbps "$streams")")
    engine_runs+=("$(engine_gbps "$streams")")
  done
  iperf=$(best "${iperf_runs[@]}")
  engine=$(best "${engine_runs[@]}")
  ratio=$(python3 -c "print('%.3f' % ($engine / $iperf))")
  verdict=$(python3 -c "print('ok' if $ratio >= 0.95 else 'below 0.95')")
  printf '%-8s %12s %12s %8s  %s   (runs: iperf3 %s; engine %s)\n' "$streams" "$iperf" "$engine" \
    "$ratio" "$verdict" "${iperf_runs[*]}" "${engine_runs[*]}"
done
