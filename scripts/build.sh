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
  # Also the build without the CUDA toolkit, so that path is compiled and
  # tested on every run (and ASan does not meet the CUDA runtime).
  extra=(-DCLUSTERCERT_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DCLUSTERCERT_BUILD_BENCH=OFF
         -DCLUSTERCERT_WITH_CUDA=OFF)
fi

bash scripts/install-deps.sh
cmake -S . -B "$dir" -G Ninja "${extra[@]}" >/dev/null
cmake --build "$dir"
