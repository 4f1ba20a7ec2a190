#!/usr/bin/env bash
# The soft-RoCE lab's ctest fixture (tests/CMakeLists.txt): `up NAME BUILD` boots
# the four VMs the lab_softroce_* entries share, `calibrate NAME` measures them
# with perftest and writes the lab plan with floors derived from that
# (softroce-lab.sh calibrate; its own entry, lab_softroce_calibrate, so that
# CI runs it beside the CPU hog the tests run beside, not in the quiet boot),
# `down` removes them after the last. One boot serves the three tests, and a test that fails is run
# again on its own (ctest --repeat until-pass) without a second boot or the
# other two tests: a starved emulated link then costs CI one test's minutes,
# not the whole lab's.
#
# Skips (exit 77) where the tests skip: not root, or CLUSTERCERT_LAB=0; under
# CI=true those fail instead (tests/support/skip.sh).
set -euo pipefail

usage="usage: softroce_lab_fixture.sh up NAME BUILD_DIR | calibrate NAME | down NAME"
lab="$(cd "$(dirname "$0")/../.." && pwd)/deploy/lab/softroce-lab.sh"

# skip_or_fail KEY REASON: exit 77 here, a failure under CI=true (docs/testing.md).
source "$(dirname "$0")/../support/skip.sh"
SKIP_TEST_NAME=lab_softroce_${1:-fixture}
if [ "$(id -u)" -ne 0 ]; then
  skip_or_fail root "the soft-RoCE lab needs root (network namespace, taps, qemu)"
fi
if [ "${CLUSTERCERT_LAB:-1}" = 0 ]; then
  skip_or_fail lab-disabled "CLUSTERCERT_LAB=0 (unset it to run the lab)"
fi
# The name comes from tests/CMakeLists.txt; letters, digits and '-' only,
# since it names a namespace and a folder.
name=${2:-}
[[ $name =~ ^[a-z][a-z0-9-]{0,15}$ ]] || { echo "$usage (NAME: a-z, 0-9, -)" >&2; exit 2; }
case "${1:-}" in
  up)
    [ $# -eq 3 ] || { echo "$usage" >&2; exit 2; }
    # The tests' logs and plans (softroce_lab_test.cc's WorkDir), empty per boot.
    rm -rf "/var/tmp/$name-work"
    mkdir -p "/var/tmp/$name-work"
    exec env CCLAB_NAME="$name" CCLAB_BUILD="$3" bash "$lab" up --nodes 4
    ;;
  calibrate)
    exec env CCLAB_NAME="$name" bash "$lab" calibrate
    ;;
  down)
    exec env CCLAB_NAME="$name" bash "$lab" down
    ;;
  *)
    echo "$usage" >&2
    exit 2
    ;;
esac
