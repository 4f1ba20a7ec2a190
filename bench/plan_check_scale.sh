#!/usr/bin/env bash
# `controller plan check` at scale, against the target of issue 15 (part 8):
# a plan of 100,000 nodes checked in under 2 s on the 2-core development VM,
# and every hostile file seen (aliased node entries, a million unknown keys,
# an alias bomb) refused in bounded time and memory. Generates each plan,
# times the check (median of 3) and prints wall time, peak RSS and exit code.
# Usage: bench/plan_check_scale.sh [NODES]   (after scripts/build.sh; the
# default build is RelWithDebInfo, i.e. optimised)
set -euo pipefail
cd "$(dirname "$0")/.."
nodes=${1:-100000}
controller=${CONTROLLER:-build/bin/controller}
[ -x "$controller" ] || { echo "build first: bash scripts/build.sh" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

head='cluster: scale
fabric: {type: roce, link_rate_gbps: 400}
pairwise: {engine: verbs, pattern: ring, memory: [host]}'

# A valid plan: every node with its agent, data address, 8 rails and 8 GPUs.
{
  echo "$head"
  echo "nodes:"
  awk -v n="$nodes" 'BEGIN { for (i = 0; i < n; i++) {
    a = int(i / 65536); b = int(i / 256) % 256; c = i % 256
    printf "  - name: node%d\n    agent: \"10.%d.%d.%d:7070\"\n    data_ip: 11.%d.%d.%d\n", i, a, b, c, a, b, c
    print "    rails: [mlx5_0, mlx5_1, mlx5_2, mlx5_3, mlx5_4, mlx5_5, mlx5_6, mlx5_7]\n    gpus: 8" } }'
} >"$tmp/valid.yaml"
# The first attack: one anchored node and NODES aliases of it.
{
  echo "$head"
  echo "nodes:"
  echo '  - &n {name: node0, agent: "10.0.0.1:7070", rails: [mlx5_0]}'
  awk -v n="$nodes" 'BEGIN { for (i = 1; i < n; i++) print "  - *n" }'
} >"$tmp/aliased.yaml"
# The second: a million unknown keys in one map, then spread over the nodes.
{
  echo "$head"
  echo "nodes: [{name: node0, agent: \"10.0.0.1:7070\", rails: [mlx5_0]}]"
  awk 'BEGIN { for (i = 0; i < 1000000; i++) printf "k%d: 1\n", i }'
} >"$tmp/unknown-one-map.yaml"
{
  echo "$head"
  echo "nodes:"
  awk -v n="$nodes" 'BEGIN { for (i = 0; i < n; i++) {
    printf "  - {name: node%d, agent: \"10.%d.%d.%d:7070\", rails: [mlx5_0]", i, int(i / 65536), int(i / 256) % 256, i % 256
    for (k = 0; k < 10; k++) printf ", x%d: 1", k
    print "}" } }'
} >"$tmp/unknown-spread.yaml"
# The third: ten levels of ten aliases (10^10 values once expanded).
{
  echo "a0: &a0 [x, x, x, x, x, x, x, x, x, x]"
  for level in 1 2 3 4 5 6 7 8 9; do
    prev=$((level - 1))
    echo "a$level: &a$level [*a$prev, *a$prev, *a$prev, *a$prev, *a$prev, *a$prev, *a$prev, *a$prev, *a$prev, *a$prev]"
  done
} >"$tmp/laughs.yaml"

printf '%-20s %10s %8s %10s %6s %8s\n' plan bytes 'wall s' 'RSS MB' exit 'errors'
worst=0
for name in valid aliased unknown-one-map unknown-spread laughs; do
  times=()
  for _ in 1 2 3; do
    set +e
    /usr/bin/time -f '%e %M' -o "$tmp/time" "$controller" plan check "$tmp/$name.yaml" \
      >"$tmp/out" 2>"$tmp/err"
    code=$?
    set -e
    # /usr/bin/time puts "Command exited with non-zero status N" first.
    read -r wall rss < <(tail -n 1 "$tmp/time")
    times+=("$wall")
  done
  median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n 2p)
  printf '%-20s %10d %8s %10.0f %6d %8d\n' "$name" "$(stat -c %s "$tmp/$name.yaml")" "$median" \
    "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')" "$code" "$(grep -c '' "$tmp/err")"
  if [ "$name" = valid ] && [ "$code" -ne 0 ]; then
    echo "the valid plan did not check:" >&2
    head -5 "$tmp/err" >&2
    exit 1
  fi
  worst=$(awk -v a="$median" -v b="$worst" 'BEGIN { print (a > b ? a : b) }')
done
echo "nodes: $nodes; slowest check ${worst} s against the target of 2 s:" \
  "$(awk -v w="$worst" 'BEGIN { print (w < 2 ? "met" : "NOT met") }')"
