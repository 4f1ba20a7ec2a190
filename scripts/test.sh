#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test with ctest: first the
# normal build, then the ASan+UBSan build (skip it with --no-sanitize).
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=$(nproc)
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j "$jobs"

if [ "${1:-}" != "--no-sanitize" ]; then
  bash scripts/build.sh --sanitize
  # LeakSanitizer is on: a leak makes a suite, or an agent or controller the
  # integration tests start, exit non-zero.
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j "$jobs"
fi
