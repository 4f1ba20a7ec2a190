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
# HOG_WORK, when set, is a command line the first loop runs before it spins:
# useful work on one core (CI's ThreadSanitizer build at -j1) is as good a
# hog as a busy loop and leaves less to do afterwards. When "$@" ends first
# the work is stopped (its whole process group: ninja then removes the
# outputs of the compiles it interrupted), so whoever set HOG_WORK runs it
# again to finish it. Its output goes to HOG_WORK_LOG (default /dev/null).
set -euo pipefail

loops=${HOG_LOOPS:-$(nproc)}
hogs=()
# shellcheck disable=SC2317 # run by the EXIT trap
stop_hogs() {
  local pid
  for pid in "${hogs[@]}"; do
    # Each hog leads its own process group (setsid): the group takes a
    # build's compilers down with it.
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  done
  wait "${hogs[@]}" 2>/dev/null || true
}
trap stop_hogs EXIT
for ((i = 0; i < loops; ++i)); do
  if ((i == 0)) && [ -n "${HOG_WORK:-}" ]; then
    setsid bash -c "{ ${HOG_WORK}; } >'${HOG_WORK_LOG:-/dev/null}' 2>&1; while :; do :; done" &
  else
    setsid bash -c 'while :; do :; done' &
  fi
  hogs+=($!)
done
echo "beside_cpu_hog: ${loops} busy loop(s) running (pids ${hogs[*]})${HOG_WORK:+, the first after: ${HOG_WORK}}; running: $*"
start=$SECONDS
rc=0
"$@" || rc=$?
echo "beside_cpu_hog: the command took $((SECONDS - start)) s beside the hog (exit ${rc})"
exit "$rc"
