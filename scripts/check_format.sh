#!/usr/bin/env bash
# Fails when a C++ file of the tree is not clang-format clean (.clang-format:
# Google style, 100 columns), naming each file and the command that fixes it.
# Seconds: it runs first in scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.cc' '*.h')
else  # an unpacked tarball: every source outside the build directories
  mapfile -t files < <(find . -path './build*' -prune -o \( -name '*.cc' -o -name '*.h' \) -print)
fi
# One clang-format per file, on every core: run one by one, the check took
# 100 s of a CI run.
mapfile -t bad < <(printf '%s\0' "${files[@]}" | xargs -0 -P "$(nproc)" -n 16 sh -c \
  'for f; do clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || echo "$f"; done' check_format)
if [ ${#bad[@]} -gt 0 ]; then
  printf 'check_format: not clang-format clean: %s\n' "${bad[@]}" >&2
  echo "check_format: ${#bad[@]} of ${#files[@]} files differ; fix with: clang-format -i ${bad[*]}" >&2
  exit 1
fi
echo "check_format: ${#files[@]} files clang-format clean"
