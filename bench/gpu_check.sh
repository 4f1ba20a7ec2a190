#!/usr/bin/env bash
# First contact with a GPU host: one prepared script that says what CUDA and
# NCCL it found, builds the NCCL worker from the tree, runs the agent's
# inventory against the live host (and captures it as a --sysfs-root
# fixture), registers a cudaMalloc buffer through the verbs memory provider,
# runs the NCCL worker's 1-rank allreduce sweep (nccl-tests' table, NCCL's
# INFO log), an agent-launched sweep over every GPU through `controller run`,
# the communicator-creation deadline check and the host<->device copy check.
#
#   bench/gpu_check.sh [--build-only] [--dry-run] [--allow-skip]
#                      [--bin DIR] [--out DIR]
#
#   --build-only   build the worker, then stop (exit 0 when it built, 2 when
#                  a dry run found no CUDA or NCCL to build it with)
#   --dry-run      every step up to the first CUDA call, on a host without a
#                  GPU (CI): the build, the inventory (which must say "no GPU
#                  driver" or "no CUDA device"), the probe and the worker's
#                  "no CUDA device"; exit 0 when each behaved so
#   --allow-skip   on a host without a GPU print "skipped: no GPU (...)" and
#                  exit 0; without it such a host exits 2
#   --bin DIR      where node-agent, controller and gpu-memory-probe are
#                  (default build/bin; built by scripts/build.sh with CUDA).
#                  Missing ones skip their steps and say so
#   --out DIR      where every output goes (default: $OUT when set, else a
#                  new directory under /tmp, printed at the end):
#                    summary.txt        what was found and measured, with timings
#                    sweep.txt          nccl-tests' table of the 1-rank sweep
#                    nccl-info.log      NCCL_DEBUG=INFO of that sweep
#                    inventory.txt/json `controller inventory` of this host
#                    host-capture.tar.gz `node-agent --capture` of this host
#                    run.tar.gz         `controller run`'s output, certificate
#                                       and reports (the agent-launched sweep)
#
# Environment: SIZES (8:8589934592:2; the worker caps it by free GPU memory
# and says so in a '# sweep capped' line), CUDA_DEVICE (0), RUN_TIMEOUT_S
# (900 per worker run), KEEP_BUILD (set: keep the build directory),
# NCCL_HOME (where NCCL is, when not beside CUDA or in Python's nvidia.nccl).
# Exit 0: every step that ran passed; 1 on a wrong element, a copy mismatch,
# a failed build or step; 2 skipped (no GPU, without --allow-skip).
set -euo pipefail

cd "$(dirname "$0")/.."
REPO=$PWD
SIZES=${SIZES:-8:8589934592:2}
CUDA_DEVICE=${CUDA_DEVICE:-0}
RUN_TIMEOUT_S=${RUN_TIMEOUT_S:-900}
BUILD_ONLY=0
ALLOW_SKIP=0
DRY_RUN=0
BIN=build/bin
OUT_DIR=${OUT:-}
while [[ $# -gt 0 ]]; do
  case $1 in
    --build-only) BUILD_ONLY=1 ;;
    --allow-skip) ALLOW_SKIP=1 ;;
    --dry-run) DRY_RUN=1 ALLOW_SKIP=1 ;;
    --bin) BIN=${2:?--bin needs a directory}; shift ;;
    --out) OUT_DIR=${2:?--out needs a directory}; shift ;;
    *) echo "gpu_check: unknown argument '$1': use --build-only, --dry-run, --allow-skip, --bin DIR, --out DIR" >&2; exit 1 ;;
  esac
  shift
done

die() { echo "gpu_check: $*" >&2; exit 1; }
[[ -n $OUT_DIR ]] || OUT_DIR=$(mktemp -d /tmp/gpu_check_out.XXXXXX)
mkdir -p "$OUT_DIR"
OUT_DIR=$(cd "$OUT_DIR" && pwd)
[[ $BIN = /* ]] || BIN=$REPO/$BIN
SUMMARY=$OUT_DIR/summary.txt
: >"$SUMMARY"
# One line to the terminal and to summary.txt.
say() { echo "$*" | tee -a "$SUMMARY"; }
FAILED=()
fail_step() { FAILED+=("$1"); say "FAIL $1: $2"; }

# Seconds since the script started, for the timings in summary.txt.
T0=$(date +%s.%N)
elapsed() { awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

WORK=$(mktemp -d /tmp/gpu_check.XXXXXX)
AGENT_PID=
cleanup() {
  [[ -z $AGENT_PID ]] || kill "$AGENT_PID" 2>/dev/null || true
  [[ -n ${KEEP_BUILD:-} ]] || rm -rf "$WORK"
}
trap cleanup EXIT
BUILD_DIR=$WORK/build
mkdir -p "$BUILD_DIR"

# ---- 1. What this host has: CUDA, the driver, NCCL -------------------------
# Without CUDA or NCCL the worker cannot be built: a GPU host fails, the dry
# run (CI machines differ in what toolkit they carry) says so and skips the
# worker's steps.
WORKER_MISSING=
no_worker() {
  [[ $DRY_RUN -eq 1 ]] || die "$1"
  WORKER_MISSING=$1
  say "skipped worker build: $1"
}
NVCC=$(command -v nvcc || true)
[[ -n $NVCC || ! -x /usr/local/cuda/bin/nvcc ]] || NVCC=/usr/local/cuda/bin/nvcc
CUDA_ROOT=
if [[ -n $NVCC ]]; then
  CUDA_ROOT=$(dirname "$(dirname "$(readlink -f "$NVCC")")")
  # An nvcc linked or copied into /usr/local/bin leaves the toolkit elsewhere.
  if [[ ! -f $CUDA_ROOT/include/cuda_runtime.h && -f /usr/local/cuda/include/cuda_runtime.h ]]; then
    CUDA_ROOT=$(readlink -f /usr/local/cuda)
  fi
  say "cuda: $("$NVCC" --version | grep -m1 -o 'release [0-9.]*, V[0-9.]*') at $CUDA_ROOT"
else
  no_worker "the CUDA toolkit is missing (no nvcc on PATH or in /usr/local/cuda/bin): install it, or put its bin/ on PATH"
fi
GPU_COUNT=0
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  GPU_COUNT=$(nvidia-smi -L | grep -c '^GPU ' || true)
  nvidia-smi --query-gpu=index,name,memory.total,pci.bus_id,driver_version,pcie.link.gen.max,pcie.link.width.max \
    --format=csv 2>/dev/null | sed 's/^/nvidia-smi: /' | tee -a "$SUMMARY"
else
  say "nvidia-smi: not found or no GPU answered"
fi

# NCCL: NCCL_HOME, then beside CUDA, the system, then Python's nvidia.nccl
# package (PyTorch images carry NCCL only there, as libnccl.so.2).
find_nccl() {
  local dirs=() py
  [[ -z ${NCCL_HOME:-} ]] || dirs+=("$NCCL_HOME")
  [[ -z $CUDA_ROOT ]] || dirs+=("$CUDA_ROOT" "$CUDA_ROOT/targets/x86_64-linux")
  dirs+=(/usr/local/cuda /usr /usr/local)
  py=$(python3 -c 'import nvidia.nccl as n; print(list(n.__path__)[0])' 2>/dev/null || true)
  [[ -z $py ]] || dirs+=("$py")
  local d lib
  for d in "${dirs[@]}"; do
    [[ -f $d/include/nccl.h ]] || continue
    for lib in "$d"/lib64/libnccl.so "$d"/lib/libnccl.so "$d"/lib/x86_64-linux-gnu/libnccl.so \
      "$d"/lib64/libnccl.so.2 "$d"/lib/libnccl.so.2 "$d"/lib/x86_64-linux-gnu/libnccl.so.2; do
      if [[ -e $lib ]]; then
        NCCL_INCLUDE=$d/include NCCL_LIB=$lib
        return 0
      fi
    done
  done
  return 1
}
NCCL_INCLUDE= NCCL_LIB=
if find_nccl; then
  NCCL_HEADER_VERSION=$(awk '/#define NCCL_(MAJOR|MINOR|PATCH) /{v = v (v ? "." : "") $3} END {print v}' "$NCCL_INCLUDE/nccl.h")
  say "nccl: $NCCL_HEADER_VERSION (header $NCCL_INCLUDE/nccl.h, library $(readlink -f "$NCCL_LIB"))"
elif [[ -z $WORKER_MISSING ]]; then
  no_worker "NCCL is missing: no include/nccl.h with libnccl beside CUDA (${CUDA_ROOT:-none}), in /usr/local/cuda, /usr, /usr/local, NCCL_HOME or Python's nvidia.nccl; install NCCL or set NCCL_HOME"
fi

# ---- 2. The worker, built from the tree ------------------------------------
build_worker() {
  say "build: workers/nccl into $BUILD_DIR ($(elapsed) s)"
  if ! cmake -S workers/nccl -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
      "-DCUDAToolkit_ROOT=$CUDA_ROOT" "-DNCCL_INCLUDE_DIR=$NCCL_INCLUDE" "-DNCCL_LIBRARY=$NCCL_LIB" \
      >"$BUILD_DIR/configure.log" 2>&1; then
    cat "$BUILD_DIR/configure.log" >&2
    die "cmake could not configure workers/nccl (the CMake error above says what is missing: CUDA or NCCL)"
  fi
  if ! cmake --build "$BUILD_DIR" -j"$(nproc)" >"$BUILD_DIR/build.log" 2>&1; then
    cat "$BUILD_DIR/build.log" >&2
    die "workers/nccl did not build (compiler errors above)"
  fi
  WORKER=$BUILD_DIR/collective-worker-nccl
  [[ -x $WORKER ]] || die "the build finished but $WORKER is missing"
  say "build: ok, $WORKER ($(elapsed) s)"
}
WORKER=
[[ -n $WORKER_MISSING ]] || build_worker
[[ $BUILD_ONLY -eq 0 ]] || { [[ -n $WORKER ]] && exit 0; exit 2; }

have_bin() { [[ -x $BIN/$1 ]] || { say "skipped $2: no $1 in $BIN (build it with scripts/build.sh, or pass --bin DIR)"; return 1; }; }

# ---- 3. The agent's inventory of this host ---------------------------------
# One node on loopback; the agent finds the worker just built (--worker-dir).
write_plan() {
  local port=$1 collectives=$2
  # The N-rank sweep goes to 8 GiB as the 1-rank one does; on one GPU it
  # repeats that sweep through the agent, so 1 GiB shows the path is sound.
  local RUN_MAX_SIZE=1G
  [[ $GPU_COUNT -le 1 ]] || RUN_MAX_SIZE=8G
  cat <<EOF
cluster: gpu-check
fabric: {type: ethernet, link_rate_gbps: 1, min_netdev_mtu: 1500}
nodes:
  - {name: gpu0, agent: 127.0.0.1:$port, data_ip: 127.0.0.1, gpus: $GPU_COUNT}
expect: {nvidia_peermem: false, ntp_synced: false, ofed: false, management_separate: false}
agents: {insecure: true, connect_timeout_s: 5, call_timeout_s: 120, retries: 0}
EOF
  if [[ $collectives -eq 1 ]]; then
    cat <<EOF
collectives:
  backend: nccl
  ranks_per_node: 0
  sizes: {min: 8, max: $RUN_MAX_SIZE, factor: 2}
  warmup_iters: 2
  iters: 10
  min_busbw_gbytes: 0
  timeout_s: 300
EOF
  fi
  cat <<EOF
certificate: {out: $WORK/run}
EOF
}

start_agent() {
  "$BIN/node-agent" --insecure --listen 127.0.0.1:0 --port-file "$WORK/agent.port" \
    --node-name gpu0 --worker-dir "$BUILD_DIR" --log-level info 2>"$WORK/agent.log" &
  AGENT_PID=$!
  local i
  for i in $(seq 100); do
    [[ -s $WORK/agent.port ]] && return 0
    kill -0 "$AGENT_PID" 2>/dev/null || break
    sleep 0.1
  done
  tail -n 20 "$WORK/agent.log" >&2
  return 1
}

run_inventory() {
  have_bin node-agent inventory && have_bin controller inventory || return 0
  if "$BIN/node-agent" --capture "$WORK/capture" >"$WORK/capture.log" 2>&1; then
    tar -C "$WORK" -czf "$OUT_DIR/host-capture.tar.gz" capture
    say "inventory: host captured, $(find "$WORK/capture" -type f | wc -l) files -> host-capture.tar.gz"
  else
    fail_step capture "node-agent --capture failed: $(tail -n 1 "$WORK/capture.log")"
  fi
  start_agent || { fail_step inventory "the node-agent did not start (its log above)"; return 0; }
  write_plan "$(cat "$WORK/agent.port")" 0 >"$WORK/inventory.yaml"
  local rc=0
  "$BIN/controller" inventory "$WORK/inventory.yaml" --color never >"$OUT_DIR/inventory.txt" 2>&1 || rc=$?
  "$BIN/controller" inventory "$WORK/inventory.yaml" --json >"$OUT_DIR/inventory.json" 2>/dev/null || true
  say "inventory: controller exit $rc ($(elapsed) s)"
  # What CUDA, sysfs and the stack collector said, from the JSON.
  python3 - "$OUT_DIR/inventory.json" "$WORK/gpus" <<'PY' | tee -a "$SUMMARY" || fail_step inventory "inventory.json could not be read (controller exit $rc)"
import json, sys
node = json.load(open(sys.argv[1]))["nodes"][0]
inv = node.get("inventory", {})
rt = inv.get("gpu_runtime", {})
print(f"inventory: cuda driver present {rt.get('driver_present', False)}, driver API "
      f"{rt.get('driver_version') or '-'}, runtime {rt.get('runtime_version') or '-'}"
      + (f", reason: {rt['reason']}" if rt.get("reason") else ""))
for g in rt.get("gpus", []):
    print(f"inventory: gpu {g.get('index', 0)} {g.get('name')} {int(g.get('memory_bytes', 0)) / 2**30:.1f} GiB "
          f"pci {g.get('pci_bus_id')} uuid {g.get('uuid')}")
for f in inv.get("pci", []):
    if f.get("role") == "gpu":
        print(f"inventory: pci {f.get('address')} {f.get('vendor_id')}:{f.get('device_id')} gen "
              f"{f.get('current_gen', '?')}/{f.get('max_gen', '?')} x{f.get('current_width', '?')}/"
              f"{f.get('max_width', '?')} numa {f.get('numa_node', 'unset')}")
st = inv.get("stack", {})
print(f"inventory: kernel {st.get('kernel_release') or '-'}, nvidia {st.get('nvidia_driver_version') or '-'} "
      f"({st.get('nvidia_driver_flavour') or 'flavour unknown'}), peermem {st.get('peermem_loaded', False)}, "
      f"gpudirect {st.get('gpudirect_mechanism') or '-'} ({st.get('gpudirect_source') or '-'}), "
      f"nccl {st.get('nccl_version') or '-'} ({st.get('nccl_source') or '-'})")
for u in inv.get("unknowns", []) + st.get("unknowns", []):
    print(f"inventory: unknown {u.get('field')} at {u.get('path')}: {u.get('reason')}")
open(sys.argv[2], "w").write(str(len(rt.get("gpus", []))))
PY
  local gpus
  gpus=$(cat "$WORK/gpus" 2>/dev/null || echo '?')
  if [[ $DRY_RUN -eq 1 && $gpus != 0 ]]; then
    fail_step inventory "the dry run's inventory lists $gpus GPU(s) on a host that has none"
  fi
}

# ---- 4. GPU memory through the verbs memory provider -----------------------
run_memory_probe() {
  have_bin gpu-memory-probe "the GPUDirect registration" || return 0
  local rc=0
  "$BIN/gpu-memory-probe" --cuda-device "$CUDA_DEVICE" --bytes 67108864 >"$WORK/probe.out" 2>&1 || rc=$?
  sed 's/^/memory: /' "$WORK/probe.out" | tee -a "$SUMMARY"
  if [[ $rc -eq 3 && $DRY_RUN -eq 1 ]]; then
    say "memory: no CUDA device, as expected on this host"
  elif [[ $rc -ne 0 ]]; then
    fail_step memory "gpu-memory-probe exited $rc"
  fi
}

# ---- 5. The 1-rank sweep, the init deadline, the copy check ----------------
# Runs the worker standalone with "$@"; stdout to $WORK/out, stderr (NCCL's
# log and the worker's failure) to $WORK/err; returns its exit code.
run_worker() {
  local rc=0
  NCCL_DEBUG=${NCCL_DEBUG:-INFO} timeout "$RUN_TIMEOUT_S" "$WORKER" --cuda-device "$CUDA_DEVICE" "$@" \
    >"$WORK/out" 2>"$WORK/err" </dev/null || rc=$?
  return $rc
}

run_sweep() {
  local rc=0 start
  if [[ -z $WORKER ]]; then
    NO_GPU_REASON="no worker: $WORKER_MISSING"
    return 3
  fi
  start=$(elapsed)
  run_worker --rank 0 --ranks 1 --print-table --sizes "$SIZES" || rc=$?
  cp "$WORK/out" "$OUT_DIR/sweep.txt"
  cp "$WORK/err" "$OUT_DIR/nccl-info.log"
  if [[ $rc -eq 3 ]]; then
    NO_GPU_REASON=$(grep -m1 'no CUDA device' "$WORK/err" | sed 's/^collective-worker-nccl: //')
    say "sweep: ${NO_GPU_REASON:-the worker exited 3 (no CUDA device)}"
    return 3
  fi
  tee -a "$SUMMARY" <"$WORK/out"
  if [[ $rc -ne 0 ]]; then
    tail -n 40 "$WORK/err" >&2
    fail_step sweep "the 1-rank sweep exited $rc (RUN_TIMEOUT_S=$RUN_TIMEOUT_S); the worker's sentence is in nccl-info.log"
    return 0
  fi
  # nccl-tests' columns: #wrong out-of-place (field 9) and in-place (13).
  local rows wrong
  rows=$(awk '!/^#/ && NF >= 13' "$WORK/out" | wc -l)
  wrong=$(awk '!/^#/ && NF >= 13 && ($9 != 0 || $13 != 0)' "$WORK/out" | wc -l)
  say "sweep: $rows sizes, $wrong with wrong elements, NCCL $(grep -m1 -o 'NCCL version [^ ]*' "$WORK/err" || echo '?') ($(elapsed) s, from $start)"
  [[ $rows -gt 0 ]] || fail_step sweep "the sweep printed no rows"
  [[ $wrong -eq 0 ]] || fail_step sweep "$wrong of $rows sizes have wrong elements (#wrong != 0): the GPU or NCCL returns bad sums; check dmesg for Xid errors"
}

# Rank 0 of 2 with no rank 1: the non-blocking communicator creation must
# give up after --timeout-s with our sentence, not hang until killed.
run_init_deadline() {
  local rc=0 start end
  start=$(date +%s.%N)
  NCCL_DEBUG=WARN run_worker --rank 0 --ranks 2 --sizes 8:8:2 --timeout-s 5 || rc=$?
  end=$(date +%s.%N)
  local took sentence
  took=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
  sentence=$(grep -ho 'ncclCommInitRankConfig[^"]*' "$WORK/out" "$WORK/err" | head -n 1)
  say "init-deadline: exit $rc after $took s: ${sentence:-no sentence}"
  if [[ $rc -eq 124 || -z $sentence ]]; then
    fail_step init-deadline "a rank whose peer never joined did not fail on its own deadline"
  fi
}

run_copy_check() {
  local rc=0
  run_worker --rank 0 --ranks 1 --print-table --copy-check || rc=$?
  tee -a "$SUMMARY" <"$WORK/out"
  local line
  line=$(grep -m1 '^# copy ' "$WORK/out" || true)
  if [[ -z $line ]]; then
    tail -n 20 "$WORK/err" >&2
    fail_step copy "the copy check printed no figures (exit $rc)"
  elif [[ $line == *mismatch* ]]; then
    fail_step copy "the host<->device copy came back different: check dmesg for Xid/AER errors"
  fi
}

# ---- 6. The agent-launched sweep over every GPU (controller run) -----------
run_agent_sweep() {
  [[ -n $AGENT_PID ]] || { say "skipped agent sweep: no node-agent running (see inventory)"; return 0; }
  write_plan "$(cat "$WORK/agent.port")" 1 >"$WORK/run.yaml"
  local rc=0
  "$BIN/controller" run "$WORK/run.yaml" --out "$WORK/run" --color never >"$WORK/run.txt" 2>&1 || rc=$?
  cp "$WORK/run.txt" "$WORK/agent.log" "$WORK/run/" 2>/dev/null || true
  tar -C "$WORK" -czf "$OUT_DIR/run.tar.gz" run
  grep -E '^verdict|^certificate|collectives\.' "$WORK/run.txt" | sed 's/^/run: /' | tee -a "$SUMMARY"
  # Each scope's nccl-tests table and transport, from the certificate.
  local certificate
  certificate=$(find "$WORK/run" -name certificate.json | head -n 1)
  if [[ -n $certificate ]]; then
    python3 - "$certificate" <<'PY' | tee -a "$SUMMARY"
import json, sys
for sweep in json.load(open(sys.argv[1])).get("collectives", []):
    transport = sweep.get("nccl_transport", {})
    print(f"run: {sweep.get('scope')} {sweep.get('ranks')} rank(s), network "
          f"{transport.get('network') or '-'}, {len(transport.get('channels', []))} channel(s)")
    print(sweep.get("table", ""), end="")
PY
  fi
  say "run: controller exit $rc over $GPU_COUNT GPU(s) ($(elapsed) s)"
  # 0 certified, 1 not certified (a 1-GPU host has no bus to judge): both ran.
  [[ $rc -le 1 ]] || fail_step agent-sweep "controller run exited $rc; run.tar.gz holds its output"
}

run_inventory
run_memory_probe
sweep_rc=0
run_sweep || sweep_rc=$?
if [[ $sweep_rc -eq 3 ]]; then
  say "skipped: no GPU (${NO_GPU_REASON:-the worker exited 3}) ($(elapsed) s)"
  if [[ $DRY_RUN -eq 1 && ${#FAILED[@]} -gt 0 ]]; then
    die "the dry run failed at: ${FAILED[*]}"
  fi
  [[ $ALLOW_SKIP -eq 1 ]] && exit 0
  exit 2
fi
run_init_deadline
run_copy_check
run_agent_sweep
if [[ ${#FAILED[@]} -gt 0 ]]; then
  say "gpu_check: failed: ${FAILED[*]} ($(elapsed) s); outputs in $OUT_DIR"
  exit 1
fi
say "gpu_check: ok ($(elapsed) s); outputs in $OUT_DIR"
