#!/usr/bin/env bash
# The NCCL worker on one GPU, standalone: builds workers/nccl with cmake into
# a temporary directory (only a compiler, CUDA and NCCL needed), runs a 1-rank
# allreduce sweep and the host<->device copy check, and prints nccl-tests'
# table and the copy figures.
#
#   bench/gpu_check.sh [--build-only] [--allow-skip]
#
#   --build-only   build, then stop (exit 0 when it built)
#   --allow-skip   on a host without a GPU print "skipped: no GPU (...)" and
#                  exit 0; without it such a host exits 2
#
# Environment: SIZES (8:8589934592:2; the worker caps it by free GPU memory
# and says so in a '# sweep capped' line), CUDA_DEVICE (0), RUN_TIMEOUT_S
# (900 per worker run), KEEP_BUILD (set: keep the build directory).
# Exit 0: the sweep's every #wrong is 0 and the copy check matched; 1 on a
# wrong element, a copy mismatch or a failed build/run; 2 skipped (no GPU).
set -euo pipefail

cd "$(dirname "$0")/.."
SIZES=${SIZES:-8:8589934592:2}
CUDA_DEVICE=${CUDA_DEVICE:-0}
RUN_TIMEOUT_S=${RUN_TIMEOUT_S:-900}
BUILD_ONLY=0
ALLOW_SKIP=0
for arg in "$@"; do
  case $arg in
    --build-only) BUILD_ONLY=1 ;;
    --allow-skip) ALLOW_SKIP=1 ;;
    *) echo "gpu_check: unknown argument '$arg': use --build-only and/or --allow-skip" >&2; exit 1 ;;
  esac
done

die() { echo "gpu_check: $*" >&2; exit 1; }

command -v cmake >/dev/null || die "cmake is missing: install cmake (3.22 or later)"
command -v c++ >/dev/null || command -v g++ >/dev/null || die "no C++ compiler: install g++"
CMAKE_ARGS=()
if ! command -v nvcc >/dev/null; then
  if [[ -x /usr/local/cuda/bin/nvcc ]]; then
    CMAKE_ARGS+=("-DCUDAToolkit_ROOT=/usr/local/cuda")
  else
    die "the CUDA toolkit is missing (no nvcc on PATH or in /usr/local/cuda/bin): install it, or put its bin/ on PATH"
  fi
fi

BUILD_DIR=$(mktemp -d /tmp/gpu_check.XXXXXX)
cleanup() { [[ -n ${KEEP_BUILD:-} ]] || rm -rf "$BUILD_DIR"; }
trap cleanup EXIT

echo "gpu_check: building workers/nccl in $BUILD_DIR" >&2
if ! cmake -S workers/nccl -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release "${CMAKE_ARGS[@]}" \
    >"$BUILD_DIR/configure.log" 2>&1; then
  cat "$BUILD_DIR/configure.log" >&2
  die "cmake could not configure workers/nccl (the CMake error above says what is missing: CUDA or NCCL)"
fi
if ! cmake --build "$BUILD_DIR" -j"$(nproc)" >"$BUILD_DIR/build.log" 2>&1; then
  cat "$BUILD_DIR/build.log" >&2
  die "workers/nccl did not build (compiler errors above)"
fi
WORKER="$BUILD_DIR/collective-worker-nccl"
[[ -x $WORKER ]] || die "the build finished but $WORKER is missing"
echo "gpu_check: built $WORKER" >&2
if [[ $BUILD_ONLY -eq 1 ]]; then
  exit 0
fi

# Runs the worker with "$@"; leaves stdout in $BUILD_DIR/out, stderr (NCCL's
# log and the worker's failure) in $BUILD_DIR/err, and returns its exit code.
run_worker() {
  local rc=0
  timeout "$RUN_TIMEOUT_S" "$WORKER" --rank 0 --ranks 1 --cuda-device "$CUDA_DEVICE" \
    --print-table "$@" >"$BUILD_DIR/out" 2>"$BUILD_DIR/err" </dev/null || rc=$?
  return $rc
}

rc=0
run_worker --sizes "$SIZES" || rc=$?
if [[ $rc -eq 3 ]]; then
  reason=$(grep -m1 'no CUDA device' "$BUILD_DIR/err" | sed 's/^collective-worker-nccl: //')
  echo "skipped: no GPU (${reason:-the worker exited 3})"
  [[ $ALLOW_SKIP -eq 1 ]] && exit 0
  exit 2
fi
cat "$BUILD_DIR/out"
if [[ $rc -ne 0 ]]; then
  tail -n 40 "$BUILD_DIR/err" >&2
  [[ $rc -eq 124 ]] && die "the sweep did not finish within RUN_TIMEOUT_S=$RUN_TIMEOUT_S s"
  die "the sweep failed (exit $rc); the worker's sentence is the last line above"
fi

# nccl-tests' columns: size count type redop root, then time algbw busbw
# #wrong out-of-place (field 9) and in-place (field 13).
rows=$(awk '!/^#/ && NF >= 13' "$BUILD_DIR/out" | wc -l)
wrong_rows=$(awk '!/^#/ && NF >= 13 && ($9 != 0 || $13 != 0)' "$BUILD_DIR/out" | wc -l)
[[ $rows -gt 0 ]] || die "the sweep printed no rows"

rc=0
run_worker --copy-check || rc=$?
cat "$BUILD_DIR/out"
if [[ $rc -ne 0 ]] && ! grep -q '^# copy ' "$BUILD_DIR/out"; then
  tail -n 20 "$BUILD_DIR/err" >&2
  die "the copy check failed (exit $rc); the worker's sentence is the last line above"
fi
copy_line=$(grep -m1 '^# copy ' "$BUILD_DIR/out" || true)

status=0
if [[ $wrong_rows -ne 0 ]]; then
  echo "gpu_check: $wrong_rows of $rows sizes have wrong elements (#wrong != 0): the GPU or NCCL returns bad sums; check dmesg for Xid errors" >&2
  status=1
fi
if [[ $copy_line == *mismatch* ]]; then
  grep -m1 'came back different' "$BUILD_DIR/err" >&2 || true
  echo "gpu_check: the host<->device copy came back different: check dmesg for Xid/AER errors" >&2
  status=1
fi
[[ $status -eq 0 ]] && echo "gpu_check: ok: $rows sizes with #wrong 0; ${copy_line#\# }"
exit $status
