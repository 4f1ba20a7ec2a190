#!/usr/bin/env bash
# The controller at cluster scale: N real node-agents on loopback, each on
# the two-rail RoCE fixture (tests/fixtures/sysfs/roce-healthy), then
# `controller inventory` and `controller run` with the ring and k-batch
# patterns (tcp engine, short write_bw tests over 127.0.0.1). Prints, per N
# and command: wall time, the controller's own CPU time (user + system: on
# loopback the agents share the cores, so this is the controller's cost
# alone), its max RSS, its peak threads and
# open files, the certificate's and reports' sizes, stdout's size, the
# pairwise phase's overhead over its tests' own time (wall, and the
# controller's own CPU per round), and how long headless
# Chromium takes to open report.html. Targets and the measured table:
# docs/scale.md.
#
# Usage: bench/scale.sh [N ...]                 (default: 16 64 256)
#   SCALE_PORT_BASE   first agent port (default 30000; N ports from there)
#   SCALE_DURATION_S  seconds per pairwise test (default 1)
#   SCALE_K           k of the k-batch run (default 2)
#   SCALE_RUNS        which runs (default "inventory ring k-batch")
#   SCALE_CHROMIUM=0  skips timing report.html in Chromium
#   SCALE_OUT         keeps every run's plan, output and certificate there
#   SCALE_SCHED=0     skips the closing pairwise_scheduling_bench table
# Needs a build (bash scripts/build.sh) and /usr/bin/time; agents listen on
# 127.0.0.1 only (--insecure) and are stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${BIN:-build/bin}
port_base=${SCALE_PORT_BASE:-30000}
duration=${SCALE_DURATION_S:-1}
k=${SCALE_K:-2}
runs=${SCALE_RUNS:-inventory ring k-batch}
fixture=$PWD/tests/fixtures/sysfs/roce-healthy
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(16 64 256)

die() { echo "scale.sh: $*" >&2; exit 2; }
[ -x "$bin/node-agent" ] && [ -x "$bin/controller" ] || die "build first: bash scripts/build.sh"
[ -x /usr/bin/time ] || die "needs GNU time: apt-get install time"
for n in "${sizes[@]}"; do
  [[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 2 ] && [ "$n" -le 4096 ] ||
    die "N must be a whole number from 2 to 4096, not '$n'"
done

# Every agent holds a few descriptors and the controller about 4 per agent:
# lift the soft limit as far as the hard one allows.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

work=${SCALE_OUT:-$(mktemp -d)}
mkdir -p "$work"
agent_pids=()
stop_agents() {
  [ ${#agent_pids[@]} -gt 0 ] || return 0
  kill "${agent_pids[@]}" 2>/dev/null || true
  wait "${agent_pids[@]}" 2>/dev/null || true
  agent_pids=()
}
cleanup() {
  stop_agents
  [ -n "${SCALE_OUT:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Starts agents n0001..nNNNN on ports port_base..; fails naming the first
# that did not come up (a port in use, most often).
start_agents() {
  local n=$1 i name
  mkdir -p "$work/agents"
  for ((i = 1; i <= n; i++)); do
    printf -v name 'n%04d' "$i"
    "$bin/node-agent" --listen "127.0.0.1:$((port_base + i - 1))" --insecure \
      --node-name "$name" --sysfs-root "$fixture" --log-level warn \
      --port-file "$work/agents/$name.port" 2>"$work/agents/$name.log" &
    agent_pids+=($!)
  done
  for ((i = 1; i <= n; i++)); do
    printf -v name 'n%04d' "$i"
    for _ in $(seq 600); do [ -s "$work/agents/$name.port" ] && break; sleep 0.05; done
    [ -s "$work/agents/$name.port" ] || {
      echo "scale.sh: agent $name did not start on 127.0.0.1:$((port_base + i - 1)) (port in use? set SCALE_PORT_BASE):" >&2
      cat "$work/agents/$name.log" >&2
      exit 1
    }
  done
}

# plan N PATTERN -> a plan on stdout; PATTERN "" has no pairwise section.
plan() {
  local n=$1 pattern=$2 i name
  echo "cluster: scale-$n"
  echo "fabric:"
  echo "  type: roce"
  echo "  link_rate_gbps: 200"
  echo "  active_mtu: 4096"
  echo "  roce: {gid_index: 3, pfc_priority: 3, dscp: 26, trust: dscp, ecn: true}"
  echo "nodes:"
  for ((i = 1; i <= n; i++)); do
    printf -v name 'n%04d' "$i"
    echo "  - {name: $name, agent: \"127.0.0.1:$((port_base + i - 1))\", data_ip: 127.0.0.1, rails: [mlx5_0, mlx5_1], gpus: 4}"
  done
  echo "expect: {nvidia_peermem: true, pcie: {gen: 4, width: 16}, clock_offset_ms: 250, ntp_synced: false, management_separate: false}"
  echo "agents: {insecure: true, connect_timeout_s: 5, call_timeout_s: 60, retries: 1}"
  if [ -n "$pattern" ]; then
    local extra=""
    [ "$pattern" = k-batch ] && extra=", k: $k"
    # Loopback tcp is not a 200 Gb/s link, and 1,024 agents share two cores
    # (a starved cell moved 0.019 Gb/s): the floor is nominal, 2 Mb/s.
    echo "pairwise: {engine: tcp, pattern: $pattern$extra, tests: [write_bw], memory: [host], duration_s: $duration, no_progress_s: 30, min_fraction_of_line_rate: 0.00001}"
  fi
  echo "certificate: {out: $work/certs-$n}"
}

# Polls the controller (the child of /usr/bin/time) for its peak threads and
# open files until it exits; writes "threads fds" to $1.
sample_peaks() {
  local time_pid=$1 out=$2 pid="" threads=0 fds=0 t f
  # The controller may be gone between two reads: nothing here may end the loop.
  set +e +o pipefail
  while kill -0 "$time_pid" 2>/dev/null; do
    [ -n "$pid" ] || pid=$(pgrep -P "$time_pid" -x controller || true)
    if [ -n "$pid" ] && [ -r "/proc/$pid/status" ]; then
      t=$(sed -n 's/^Threads:\s*//p' "/proc/$pid/status" 2>/dev/null || echo 0)
      f=$(ls "/proc/$pid/fd" 2>/dev/null | wc -l)
      [ "${t:-0}" -gt "$threads" ] && threads=$t
      [ "$f" -gt "$fds" ] && fds=$f
    fi
    sleep 0.1
  done
  echo "$threads $fds" >"$out"
}

size_mb() { [ -f "$1" ] && awk -v b="$(stat -c %s "$1")" 'BEGIN { printf "%.2f", b / 1e6 }' || echo -; }

# Wall seconds headless Chromium takes to load and lay out report.html.
chromium_s() {
  local html=$1 start end
  [ "${SCALE_CHROMIUM:-1}" != 0 ] && command -v chromium >/dev/null && [ -f "$html" ] || { echo -; return; }
  start=$(date +%s.%N)
  if timeout 120 chromium --headless --no-sandbox --disable-gpu --dump-dom "file://$html" \
    >/dev/null 2>&1; then
    end=$(date +%s.%N)
    awk -v s="$start" -v e="$end" 'BEGIN { printf "%.1f", e - s }'
  else
    echo ">120"
  fi
}

# Two figures of the pairwise phase against its tests' own time (rounds x
# duration; tests run one per pair per round here): its wall time beyond
# that, in percent (the agents' starved CPU is in it), and the controller's
# own CPU per round (the phase's controller_cpu_ms / rounds) as a percentage
# of one test's duration: what the controller costs a round on its own.
overhead_pct() {
  local cert=$1
  [ -f "$cert" ] || { echo "- -"; return; }
  python3 - "$cert" "$duration" <<'EOF'
import json, sys
cert = json.load(open(sys.argv[1]))
phase = next((p for p in cert.get("phases", []) if p.get("name") == "pairwise"), None)
rounds = max((int(c.get("round", 0)) for c in cert.get("pairs", [])), default=0)
if phase is None or rounds == 0:
    print("- -")
else:
    test_ms = float(sys.argv[2]) * 1000
    ideal = rounds * test_ms
    cpu_per_round = float(phase.get("controller_cpu_ms", 0)) / rounds
    print("%.1f %.1f" % ((float(phase.get("duration_ms", 0)) - ideal) / ideal * 100,
                         cpu_per_round / test_ms * 100))
EOF
}

failed=0
printf '%-6s %-10s %8s %6s %9s %8s %6s %9s %9s %9s %9s %9s %10s %12s %6s %s\n' \
  nodes command wall_s cpu_s maxrss_mb threads fds cert_mb html_mb md_mb stdout_mb cells overhead% ctl_cpu%/rnd html_s verdict
for n in "${sizes[@]}"; do
  start_agents "$n"
  for run in $runs; do
    pattern=""
    command=run
    case $run in
      inventory) command=inventory ;;
      ring | k-batch) pattern=$run ;;
      *) die "SCALE_RUNS names '$run': use inventory, ring or k-batch" ;;
    esac
    dir=$work/$n-$run
    mkdir -p "$dir"
    plan "$n" "$pattern" >"$dir/plan.yaml"
    rm -rf "$work/certs-$n"
    args=("$command" "$dir/plan.yaml" --color=never)
    [ "$command" = run ] && args+=(--quiet)
    /usr/bin/time -f '%e %M %U %S' -o "$dir/time" "$bin/controller" "${args[@]}" \
      >"$dir/stdout" 2>"$dir/stderr" &
    time_pid=$!
    sample_peaks "$time_pid" "$dir/peaks" &
    sampler=$!
    rc=0
    wait "$time_pid" || rc=$?
    wait "$sampler" || true
    # GNU time puts "Command exited with non-zero status N" first when the
    # controller's verdict was not 0: the figures are the last line.
    read -r wall rss_kb user_s sys_s < <(tail -1 "$dir/time") || { wall=-; rss_kb=0; }
    cpu=$(awk -v u="${user_s:-0}" -v s="${sys_s:-0}" 'BEGIN { printf "%.2f", u + s }')
    read -r threads fds <"$dir/peaks"
    cert=$(sed -n 's/^certificate: //p' "$dir/stdout" | head -1)
    out_dir=$(dirname "${cert:-/nonexistent/x}")
    cells=-
    [ -f "${cert:-}" ] && cells=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1])).get("pairs", [])))' "$cert")
    case $rc in 0) verdict=certified ;; 1) verdict=not-certified ;; *) verdict="exit $rc" ;; esac
    if [ "$command" = inventory ]; then
      verdict="exit $rc"
      cells=-
    fi
    read -r wall_pct cpu_pct < <(if [ "$command" = run ]; then overhead_pct "${cert:-}"; else echo "- -"; fi)
    printf '%-6s %-10s %8s %6s %9s %8s %6s %9s %9s %9s %9s %9s %10s %12s %6s %s\n' \
      "$n" "$run" "$wall" "$cpu" "$(awk -v k="$rss_kb" 'BEGIN { printf "%.0f", k / 1024 }')" \
      "$threads" "$fds" "$(size_mb "${cert:-}")" "$(size_mb "$out_dir/report.html")" \
      "$(size_mb "$out_dir/report.md")" "$(size_mb "$dir/stdout")" "$cells" \
      "$wall_pct" "$cpu_pct" \
      "$( [ "$command" = run ] && chromium_s "$out_dir/report.html" || echo -)" "$verdict"
    if [ "$rc" -gt 1 ]; then
      echo "scale.sh: controller $command at N=$n exited $rc; its last lines:" >&2
      tail -5 "$dir/stderr" >&2
      failed=1
    fi
  done
  stop_agents
done

# The controller's scheduling overhead per round on its own: the same
# pairwise phase over fake agents that answer at once (the agents above
# share the cores with it, so their wall overhead is the machine's).
if [ "${SCALE_SCHED:-1}" != 0 ] && [ -x "$bin/pairwise_scheduling_bench" ]; then
  echo
  SCHED_DURATION_S=$duration "$bin/pairwise_scheduling_bench" "${sizes[@]}" || failed=1
fi
# A run that could not run (exit 2 or 3) fails the bench; a verdict does not.
exit "$failed"
