#!/usr/bin/env bash
# Runs "$@" beside a CPU hog: one busy loop per core, at the same priority as
# the command, for as long as the command runs. The soft-RoCE lab must give
# the right verdicts on a machine whose cores are busy (issue 16): emulated
# VMs then lose CPU for long stretches, which is when a lost RC write turns a
# QP to error or a link moves nothing for seconds, and when a wait that is
# not bounded by progress runs to its deadline.
#
#   tests/lab/beside_cpu_hog.sh ctest --test-dir build -L lab
#
# HOG_LOOPS (default: the number of cores) sets how many loops run.
set -euo pipefail

loops=${HOG_LOOPS:-$(nproc)}
hogs=()
stop_hogs() {
  ((${#hogs[@]})) && kill "${hogs[@]}" 2>/dev/null || true
  wait "${hogs[@]}" 2>/dev/null || true
}
trap stop_hogs EXIT
for ((i = 0; i < loops; ++i)); do
  (while :; do :; done) &
  hogs+=($!)
done
echo "beside_cpu_hog: ${loops} busy loop(s) running (pids ${hogs[*]}); running: $*"
start=$SECONDS
rc=0
"$@" || rc=$?
echo "beside_cpu_hog: the command took $((SECONDS - start)) s beside the hog (exit ${rc})"
exit "$rc"
