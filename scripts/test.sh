#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test with ctest: first the
# normal build (with the soft-RoCE lab), then the ASan+UBSan build (skip it
# with --no-sanitize).
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=$(nproc)
if [ "$(id -u)" -eq 0 ]; then
  # A lab test killed by ctest's timeout cannot tear its VMs down itself.
  trap 'CCLAB_NAME=cclabtest bash deploy/lab/softroce-lab.sh down >/dev/null 2>&1 || true' EXIT
fi
bash scripts/build.sh
# Includes the soft-RoCE lab (tests/lab, 4 qemu VMs, ~7 min; root only,
# CLUSTERCERT_LAB=0 skips it).
ctest --test-dir build --output-on-failure -j "$jobs"

# Parity with perftest on a 2-VM lab: prints ratios, asserts none (CI runs
# it; elsewhere CLUSTERCERT_PARITY=1 asks for it).
if [ "$(id -u)" -eq 0 ] && [ "${CLUSTERCERT_LAB:-1}" != 0 ] &&
  { [ "${CI:-}" = true ] || [ "${CLUSTERCERT_PARITY:-0}" = 1 ]; }; then
  bash bench/verbs_vs_perftest.sh build
fi

# The GPU check must at least build here (CUDA + NCCL only, on its own):
# on a host without a GPU it stops after the build.
bash bench/gpu_check.sh --build-only

# The sweep harness's own overhead against a bare gloo loop (prints ratios).
if [ "${CI:-}" = true ] || [ "${CLUSTERCERT_PARITY:-0}" = 1 ]; then
  build/bin/gloo_overhead
fi

if [ "${1:-}" != "--no-sanitize" ]; then
  bash scripts/build.sh --sanitize
  # LeakSanitizer is on: a leak makes a suite, or an agent or controller the
  # integration tests start, exit non-zero.
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j "$jobs"
fi
