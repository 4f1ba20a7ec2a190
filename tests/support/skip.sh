#!/usr/bin/env bash
# A skip for the environment, for shell (and Python) tests: the rule of
# tests/support/environment_skip.h (docs/testing.md, "A skip in CI is a
# failure"). Outside CI the test skips with its reason (exit 77, the code
# ctest is told about). Under CI=true it fails (exit 1), naming the test and
# what is missing, unless KEY is listed in tests/allowed_skips.txt.
#
# Sourced:  source tests/support/skip.sh; skip_or_fail KEY REASON...
#   (SKIP_TEST_NAME names the test, default the script's name;
#    SKIP_EXIT_CODE is the skip's exit code, default 77)
# Run:      bash tests/support/skip.sh TEST KEY REASON...   (exits 77 or 1)

SKIP_ALLOWED_LIST="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/allowed_skips.txt"

# skip_allowed KEY: whether KEY is an entry (a key with a reason) of the list.
skip_allowed() {
  [ -r "$SKIP_ALLOWED_LIST" ] || return 1
  awk -v key="$1" '$1 !~ /^#/ && $1 == key && NF >= 2 { found = 1 } END { exit !found }' \
    "$SKIP_ALLOWED_LIST"
}

# skip_or_fail KEY REASON...: ends the test as the rule says.
skip_or_fail() {
  local key=$1 name=${SKIP_TEST_NAME:-$(basename "$0")}
  shift
  if [ "${CI:-}" = true ]; then
    if skip_allowed "$key"; then
      # scripts/ctest_skips.py accepts a ctest "Skipped" entry by this marker.
      echo "$name: allowed skip: $key (tests/allowed_skips.txt): $*"
      exit "${SKIP_EXIT_CODE:-77}"
    fi
    echo "$name: FAIL: cannot run its check and skipped under CI=true for '$key', which" \
      "$SKIP_ALLOWED_LIST does not list: give CI's host what is missing" \
      "(scripts/install-deps.sh, run as root) or fix the test. The skip said: $*" >&2
    exit 1
  fi
  echo "$name: skipped: $*"
  exit "${SKIP_EXIT_CODE:-77}"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  [ $# -ge 3 ] || {
    echo "usage: $0 TEST KEY REASON..." >&2
    exit 2
  }
  SKIP_TEST_NAME=$1
  shift
  skip_or_fail "$@"
fi
