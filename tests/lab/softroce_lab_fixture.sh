#!/usr/bin/env bash
# The soft-RoCE lab's ctest fixture (tests/CMakeLists.txt): `up NAME BUILD` boots
# the four VMs the lab_softroce_* entries share, `down` removes them after
# the last. One boot serves the three tests, and a test that fails is run
# again on its own (ctest --repeat until-pass) without a second boot or the
# other two tests: a starved emulated link then costs CI one test's minutes,
# not the whole lab's.
#
# Skips (exit 77) where the tests skip: not root, or CLUSTERCERT_LAB=0.
set -euo pipefail

usage="usage: softroce_lab_fixture.sh up NAME BUILD_DIR | down NAME"
lab="$(cd "$(dirname "$0")/../.." && pwd)/deploy/lab/softroce-lab.sh"

if [ "$(id -u)" -ne 0 ]; then
  echo "[  SKIPPED ] the soft-RoCE lab needs root (network namespace, taps, qemu)"
  exit 77
fi
if [ "${CLUSTERCERT_LAB:-1}" = 0 ]; then
  echo "[  SKIPPED ] CLUSTERCERT_LAB=0"
  exit 77
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
  down)
    exec env CCLAB_NAME="$name" bash "$lab" down
    ;;
  *)
    echo "$usage" >&2
    exit 2
    ;;
esac
