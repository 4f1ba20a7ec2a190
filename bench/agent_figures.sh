#!/usr/bin/env bash
# Figures for the node-agent, printed against their targets (not asserted):
#   - idle RSS of an agent serving the two-port RoCE fixture (target <= 30 MB)
#   - one GetInventory on that fixture (target <= 50 ms), round trip and the
#     agent's own collection time
# Usage: bench/agent_figures.sh   (after scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/bin
[ -x "$bin/node-agent" ] && [ -x "$bin/get_inventory_bench" ] || { echo "build first: bash scripts/build.sh" >&2; exit 2; }

tmp=$(mktemp -d)
"$bin/node-agent" --listen 127.0.0.1:0 --port-file "$tmp/port" --insecure --node-name bench \
  --sysfs-root tests/fixtures/sysfs/roce-healthy 2>"$tmp/agent.log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
port=$(cat "$tmp/port")
sleep 1
idle_kb=$(awk '/VmRSS/ {print $2}' /proc/$pid/status)

"$bin/get_inventory_bench" --agent "127.0.0.1:$port" --benchmark_min_time=2 \
  --benchmark_format=console | tee "$tmp/bench.txt"
after_kb=$(awk '/VmRSS/ {print $2}' /proc/$pid/status)
rtt_ms=$(awk '/BM_GetInventory/ {print $2}' "$tmp/bench.txt")

echo
awk -v idle="$idle_kb" -v after="$after_kb" -v rtt="$rtt_ms" 'BEGIN {
  printf "node-agent idle RSS:        %6.1f MB  (target <= 30 MB, ratio %.2f)\n", idle/1024, idle/1024/30
  printf "node-agent RSS after bench: %6.1f MB\n", after/1024
  printf "GetInventory round trip:    %6.2f ms  (target <= 50 ms, ratio %.3f)\n", rtt, rtt/50
}'
