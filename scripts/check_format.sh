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
# One clang-format per 64 files, on every core: run one by one, the check took
# 100 s of a CI run, and one process per file still spent most of 44 s
# starting clang-format (40 files: 9.3 s one by one, 0.6 s in one call).
# Each violation names its file ("FILE:L:C: error: code should be
# clang-formatted"); a call that fails without naming one (a file it cannot
# read) prints its output and counts its whole batch.
# shellcheck disable=SC2016 # the script is sh's, with its own $@
batch='out=$(clang-format --dry-run --Werror "$@" 2>&1 >/dev/null) && exit 0
names=$(printf "%s\n" "$out" | sed -n "s/^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p" | sort -u)
if [ -n "$names" ]; then printf "%s\n" "$names"; else printf "%s\n" "$out" >&2; printf "%s\n" "$@"; fi'
mapfile -t bad < <(printf '%s\0' "${files[@]}" | xargs -0 -P "$(nproc)" -n 64 sh -c "$batch" check_format)
if [ ${#bad[@]} -gt 0 ]; then
  printf 'check_format: not clang-format clean: %s\n' "${bad[@]}" >&2
  echo "check_format: ${#bad[@]} of ${#files[@]} files differ; fix with: clang-format -i ${bad[*]}" >&2
  exit 1
fi
echo "check_format: ${#files[@]} files clang-format clean"
