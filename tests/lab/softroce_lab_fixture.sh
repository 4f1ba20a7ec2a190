#!/usr/bin/env bash
# The soft-RoCE lab's ctest fixture (tests/CMakeLists.txt): `up BUILD` boots
# the four VMs the lab_softroce_* entries share, `down` removes them after
# the last. One boot serves the three tests, and a test that fails is run
# again on its own (ctest --repeat until-pass) without a second boot or the
# other two tests: a starved emulated link then costs CI one test's minutes,
# not the whole lab's.
#
# Skips (exit 77) where the tests skip: not root, or CLUSTERCERT_LAB=0.
set -euo pipefail

usage="usage: softroce_lab_fixture.sh up BUILD_DIR | down"
lab="$(cd "$(dirname "$0")/../.." && pwd)/deploy/lab/softroce-lab.sh"
# The lab's name and work folder, as tests/lab/softroce_lab_test.cc has them.
name=cclabtest
work=/var/tmp/$name-work

if [ "$(id -u)" -ne 0 ]; then
  echo "[  SKIPPED ] the soft-RoCE lab needs root (network namespace, taps, qemu)"
  exit 77
fi
if [ "${CLUSTERCERT_LAB:-1}" = 0 ]; then
  echo "[  SKIPPED ] CLUSTERCERT_LAB=0"
  exit 77
fi
case "${1:-}" in
  up)
    [ $# -eq 2 ] || { echo "$usage" >&2; exit 2; }
    rm -rf "$work"
    mkdir -p "$work"
    exec env CCLAB_NAME=$name CCLAB_BUILD="$2" bash "$lab" up --nodes 4
    ;;
  down)
    exec env CCLAB_NAME=$name bash "$lab" down
    ;;
  *)
    echo "$usage" >&2
    exit 2
    ;;
esac
