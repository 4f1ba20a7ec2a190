#!/usr/bin/env bash
# Installs what is missing, configures and builds clustercert.
#   scripts/build.sh              -> build/      (RelWithDebInfo)
#   scripts/build.sh --sanitize   -> build-asan/ (ASan + UBSan)
set -euo pipefail
cd "$(dirname "$0")/.."

dir=build
extra=()
if [ "${1:-}" = "--sanitize" ]; then
  dir=build-asan
  extra=(-DCLUSTERCERT_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DCLUSTERCERT_BUILD_BENCH=OFF)
fi

bash scripts/install-deps.sh
cmake -S . -B "$dir" -G Ninja "${extra[@]}" >/dev/null
cmake --build "$dir"
