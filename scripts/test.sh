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
  # gRPC's and protobuf's own allocations live until exit; leaks are checked
  # in our code by the unit suites, not in third-party singletons.
  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j "$jobs"
fi
