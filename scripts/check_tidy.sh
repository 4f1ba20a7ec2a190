#!/usr/bin/env bash
# clang-tidy (.clang-tidy: bugprone, performance, modernize) on the lines a
# change adds: every C++ line of agent/, controller/, common/, sweep/
# and workers/ added or changed since the tidy base (scripts/tidy-base, a
# commit; CLUSTERCERT_TIDY_BASE=REV overrides it) must be clean. A
# whole-tree run takes about 20 minutes on two cores, so older lines are
# brought up as the files are touched. Fails naming each warning, with its
# check.
#
#   scripts/check_tidy.sh [BUILD_DIR]     (default build; needs its
#                                          compile_commands.json and the
#                                          generated protobuf headers)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
base=${CLUSTERCERT_TIDY_BASE:-$(tr -d '[:space:]' < scripts/tidy-base)}
if [ ! -f "$build/compile_commands.json" ]; then
  echo "check_tidy: $build/compile_commands.json is missing: build first (bash scripts/build.sh)" >&2
  exit 2
fi
if ! git rev-parse -q --verify "${base}^{commit}" >/dev/null; then
  echo "check_tidy: the tidy base $base is not in this clone (a shallow clone?): fetch the" \
    "history (git fetch --unshallow) or set CLUSTERCERT_TIDY_BASE to a commit it has" >&2
  exit 2
fi
exec python3 scripts/tidy_changed_lines.py "$base" "$build" "$(nproc)"
