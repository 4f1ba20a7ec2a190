#!/usr/bin/env bash
# Installs what is missing, configures and builds clustercert.
#   scripts/build.sh                  -> build/      (RelWithDebInfo with line tables only,
#                                        the default compiler)
#   scripts/build.sh --sanitize       -> build-asan/ (clang: ASan + UBSan, and the
#                                        libFuzzer targets under fuzz/ in the same build;
#                                        CLUSTERCERT_FUZZ_SECONDS=N runs each N s, default 12)
#   scripts/build.sh --tsan [TARGET]  -> build-tsan/ (clang: ThreadSanitizer; only
#                                        TARGETs when given)
#   scripts/build.sh --only TARGET... -> build/, only those TARGETs (and what they
#                                        need); a TARGET this configuration
#                                        does not have (collective-worker-nccl
#                                        without CUDA) is left out, and said
set -euo pipefail
cd "$(dirname "$0")/.."

dir=build
# -O2 with line tables (-g1): every stack and sanitizer report still names
# file and line, and a file compiles about a quarter faster than with full
# debug information (-g: run_command.cc 0.74x here), which CI's three builds
# feel. For a debugger session with locals, configure a Debug build.
extra=("-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG")
targets=()
case "${1:-}" in
  --sanitize)
    dir=build-asan
    # Also the build without the CUDA toolkit, so that path is compiled and
    # tested on every run (and ASan does not meet the CUDA runtime). clang,
    # because libFuzzer comes with it: one instrumented build serves both the
    # ASan+UBSan suites and the fuzzers.
    extra=(-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCLUSTERCERT_FUZZ=ON
           "-DCLUSTERCERT_FUZZ_SECONDS=${CLUSTERCERT_FUZZ_SECONDS:-12}" -DCMAKE_BUILD_TYPE=Debug
           "-DCMAKE_CXX_FLAGS_DEBUG=-gline-tables-only" "-DCMAKE_C_FLAGS_DEBUG=-gline-tables-only" -DCLUSTERCERT_BUILD_BENCH=OFF -DCLUSTERCERT_WITH_CUDA=OFF)
    ;;
  --only)
    shift
    targets=("$@")
    ;;
  --tsan)
    dir=build-tsan
    shift
    targets=("$@")
    # -O1: ThreadSanitizer slows code 5-15x and -O0 doubles that again; -O1
    # keeps stacks readable (the tests themselves build at -O0, see
    # tests/CMakeLists.txt). Line tables are all a report needs, and compile
    # a quarter faster than full debug information. No CUDA and no benches,
    # as in build-asan.
    extra=(-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCLUSTERCERT_TSAN=ON
           -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-gline-tables-only -O1"
           "-DCMAKE_C_FLAGS_DEBUG=-gline-tables-only -O1"
           -DCLUSTERCERT_BUILD_BENCH=OFF -DCLUSTERCERT_WITH_CUDA=OFF)
    ;;
esac

bash scripts/install-deps.sh
# A directory configured earlier with another compiler (build-asan was a gcc
# build) cannot switch in place: CMake refuses, so it starts again.
if [ "$dir" != build ] && [ -f "$dir/CMakeCache.txt" ] &&
  ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang++' "$dir/CMakeCache.txt"; then
  echo "build.sh: $dir was configured with another compiler; configuring it afresh"
  rm -rf "$dir"
fi
cmake -S . -B "$dir" -G Ninja "${extra[@]}" >/dev/null
if [ ${#targets[@]} -gt 0 ]; then
  known=$(cmake --build "$dir" --target help | sed -n 's/^\([^ :]*\): .*/\1/p')
  wanted=()
  for target in "${targets[@]}"; do
    if grep -qx -- "$target" <<<"$known"; then
      wanted+=("$target")
    else
      echo "build.sh: $dir has no target $target in this configuration; leaving it out"
    fi
  done
  targets=("${wanted[@]}")
fi
if [ ${#targets[@]} -gt 0 ]; then
  cmake --build "$dir" --target "${targets[@]}"
else
  cmake --build "$dir"
fi
