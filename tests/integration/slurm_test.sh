#!/usr/bin/env bash
# The Slurm adapter against a real Slurm 22.05 (issue 18): a slurmctld and a
# slurmd per node, with a generated slurm.conf and their own munged, on the
# namespace cluster of netns_lab.sh (four hosts, a controller host). The
# controller takes its nodes from the `gpu` partition, a wrong MTU on node3's
# data link fails it, and --slurm-drain must drain node3 with a
# "clustercert: ..." reason, leave node2 (drained by "ops" beforehand) alone,
# and resume node3 once the MTU is fixed. `controller health --node node3
# --slurm-drain` then drains and resumes it the same way.
#
#   slurm_test.sh CONTROLLER NODE_AGENT
# Exit 0 passed, 1 failed, 77 skipped (not root, or Slurm/munge missing; with
# CI=true those fail instead).
set -euo pipefail

controller=$1
node_agent=$2
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/../.." && pwd)
lab="$here/netns_lab.sh"
started=$SECONDS

# skip_or_fail KEY REASON: exit 77 here, a failure under CI=true (docs/testing.md).
source "$source_dir/tests/support/skip.sh"
SKIP_TEST_NAME=slurm_test

[ "$(id -u)" -eq 0 ] || skip_or_fail root "needs root (network namespaces; slurmctld and slurmd as root)"
for tool in /usr/sbin/slurmctld /usr/sbin/slurmd /usr/sbin/munged /usr/bin/scontrol /usr/sbin/ip \
  /usr/bin/nsenter; do
  [ -x "$tool" ] || skip_or_fail slurm "$tool is missing: scripts/install-deps.sh installs slurm-wlm and munge"
done

prefix="cs$(($$ % 100000))"
dir=$(mktemp -d /tmp/clustercert_slurm.XXXXXX)
chmod 755 "$dir"  # munged's socket must be reachable by every client
pids=()
failed=0

cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  bash "$lab" down "$prefix" >/dev/null 2>&1 || true
  if [ "$failed" -eq 0 ]; then rm -rf "$dir"; else echo "kept for inspection: $dir" >&2; fi
  echo "slurm_test: $((SECONDS - started)) s"
}
trap cleanup EXIT

fail() {
  failed=1
  echo "FAIL: $*" >&2
  for log in "$dir"/slurmctld.log "$dir"/out-*.txt; do
    [ -f "$log" ] && { echo "--- $log" >&2; tail -n 30 "$log" >&2; }
  done
  exit 1
}

ns() { echo "$prefix-$1"; }
in_ctl() { ip netns exec "$(ns ctl)" "$@"; }

# --- the namespace cluster, its PKI and agents -----------------------------
bash "$lab" up "$prefix" >/dev/null || skip_or_fail netns "cannot build the namespace lab here"
bash "$source_dir/deploy/pki.sh" "$dir/pki" node1=10.201.1.1 node2=10.201.1.2 \
  node3=10.201.1.3 node4=10.201.1.4 >"$dir/pki.log" 2>&1 || fail "deploy/pki.sh: $(cat "$dir/pki.log")"
for n in 1 2 3 4; do
  ip netns exec "$(ns n$n)" "$node_agent" --listen "10.201.1.$n:7070" --node-name "node$n" \
    --tls-cert "$dir/pki/node$n.pem" --tls-key "$dir/pki/node$n.key" --tls-ca "$dir/pki/ca.pem" \
    --port-file "$dir/agent$n.port" >"$dir/agent$n.log" 2>&1 &
  pids+=($!)
done

# --- munge and Slurm ---------------------------------------------------------
dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 status=none
chmod 400 "$dir/munge.key"
/usr/sbin/munged --foreground --force --socket="$dir/munge.sock" --key-file="$dir/munge.key" \
  --pid-file="$dir/munged.pid" --seed-file="$dir/munged.seed" --log-file="$dir/munged.log" \
  >"$dir/munged.out" 2>&1 &
pids+=($!)
mkdir -p "$dir/state" "$dir/spool/node1" "$dir/spool/node2" "$dir/spool/node3" "$dir/spool/node4"
cat >"$dir/slurm.conf" <<CONF
ClusterName=clustercert-lab
SlurmctldHost=localhost(10.201.1.100)
AuthType=auth/munge
AuthInfo=socket=$dir/munge.sock
CryptoType=crypto/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName=node[1-4] NodeAddr=10.201.1.[1-4] CPUs=1 RealMemory=100 State=UNKNOWN
PartitionName=gpu Nodes=node[1-4] Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$dir/slurm.conf"
for i in $(seq 50); do [ -S "$dir/munge.sock" ] && break; sleep 0.1; done
in_ctl /usr/sbin/slurmctld -D -f "$SLURM_CONF" >"$dir/slurmctld.out" 2>&1 &
pids+=($!)
# nsenter, not `ip netns exec`: slurmd needs the host's /sys/fs/cgroup, which
# ip netns exec hides behind a fresh /sys.
for n in 1 2 3 4; do
  nsenter --net="/run/netns/$(ns n$n)" /usr/sbin/slurmd -D -f "$SLURM_CONF" -N "node$n" \
    >"$dir/slurmd$n.out" 2>&1 &
  pids+=($!)
done

state_of() { in_ctl scontrol --oneliner show node "$1" | grep -o 'State=[^ ]*' | cut -d= -f2; }
# IDLE and not drained (a resumed node may show +NOT_RESPONDING until slurmctld's next ping).
in_service() { case "$(state_of "$1")" in IDLE | IDLE+NOT_RESPONDING) return 0 ;; *) return 1 ;; esac; }
reason_of() { in_ctl scontrol --oneliner show node "$1" | sed -n 's/.* Reason=\(.*\) \[.*\]$/\1/p'; }

for i in $(seq 100); do
  registered=0
  for n in 1 2 3 4; do
    case "$(state_of node$n 2>/dev/null)" in IDLE) registered=$((registered + 1)) ;; esac
  done
  [ "$registered" -eq 4 ] && break
  sleep 0.2
done
[ "$registered" -eq 4 ] || fail "the four slurmds did not register with slurmctld"
for n in 1 2 3 4; do [ -s "$dir/agent$n.port" ] || fail "agent node$n did not start"; done
echo "slurm up with 4 nodes after $((SECONDS - started)) s"

# Someone else's drain, which clustercert must never undo.
in_ctl scontrol update NodeName=node2 State=DRAIN "Reason=ops: cable swap on port 7"

# --- the plan: no nodes list, the agents from Slurm's NodeAddr ---------------
cat >"$dir/plan.yaml" <<PLAN
cluster: slurm-lab
fabric: {type: ethernet, link_rate_gbps: 1, min_netdev_mtu: 1500}
slurm:
  agent: "{addr}:7070"
  data_ip: "10.201.2.{n}"
  node_defaults: {gpus: 0}
  timeout_s: 10
expect: {nvidia_peermem: false, ntp_synced: false, ofed: false, clock_offset_ms: 250}
agents:
  tls: {ca: $dir/pki/ca.pem, cert: $dir/pki/controller.pem, key: $dir/pki/controller.key}
  connect_timeout_s: 2
  call_timeout_s: 20
  retries: 0
certificate: {out: $dir/certs}
PLAN

run_controller() {  # NAME ARGS...: runs the controller in the controller's namespace
  local name=$1
  shift
  set +e
  in_ctl "$controller" "$@" --color never >"$dir/out-$name.txt" 2>&1
  local code=$?
  set -e
  echo "$code"
}

# --- run 1: node3's data link has MTU 1400 -----------------------------------
ip -n "$(ns n3)" link set data0 mtu 1400
code=$(run_controller run1 run "$dir/plan.yaml" --slurm-nodes gpu --slurm-drain --out "$dir/run1")
[ "$code" -eq 1 ] || fail "run 1 exited $code, expected 1 (not certified: node3's MTU)"
grep -q "slurm: partition gpu: 4 node(s): node1, node2, node3, node4" "$dir/out-run1.txt" ||
  fail "run 1 did not take its nodes from the gpu partition"
certificate=$(ls "$dir"/run1/*/certificate.json)
grep -q 'nodes: from Slurm (partition gpu)' "$certificate" ||
  fail "the certificate does not embed the plan with Slurm's nodes"
grep -q '10.201.1.3:7070' "$certificate" ||
  fail "node3's agent address did not come from its NodeAddr"
grep -q "slurm: node3: drained" "$dir/out-run1.txt" || fail "run 1 did not say it drained node3"
case "$(state_of node3)" in *DRAIN*) ;; *) fail "node3 is $(state_of node3) in Slurm, not drained" ;; esac
reason=$(reason_of node3)
case "$reason" in "clustercert: "*MTU*) ;; *) fail "node3's reason is '$reason'" ;; esac
[ "$(reason_of node2)" = "ops: cable swap on port 7" ] || fail "node2's reason changed: $(reason_of node2)"
case "$(state_of node2)" in *DRAIN*) ;; *) fail "node2 is no longer drained" ;; esac
for n in 1 4; do
  in_service node$n || fail "node$n is $(state_of node$n), expected IDLE without DRAIN"
done
echo "run 1: node3 drained ($reason); node2 left drained by ops"

# The recorded verdicts recompute from the embedded plan.
set +e
in_ctl "$controller" verify "$certificate" >"$dir/out-verify.txt" 2>&1
set -e
grep -qi "recomputed" "$dir/out-verify.txt" || fail "verify did not recompute the verdicts"
if grep -qi "differ" "$dir/out-verify.txt"; then fail "verify found differences"; fi

# --- run 2: the MTU fixed -----------------------------------------------------
ip -n "$(ns n3)" link set data0 mtu 1500
code=$(run_controller run2 run "$dir/plan.yaml" --slurm-nodes 'node[1-4]' --slurm-drain \
  --out "$dir/run2")
[ "$code" -eq 0 ] || fail "run 2 exited $code, expected 0 (certified)"
grep -q "slurm: node3: resumed" "$dir/out-run2.txt" || fail "run 2 did not resume node3"
in_service node3 || fail "node3 is $(state_of node3) after run 2, expected IDLE without DRAIN"
[ -z "$(reason_of node3)" ] || fail "node3 kept the reason '$(reason_of node3)' after run 2"
[ "$(reason_of node2)" = "ops: cable swap on port 7" ] || fail "run 2 touched node2"
echo "run 2: node3 resumed; node2 still drained by ops"

# --- health, as Slurm's HealthCheckProgram runs it -----------------------------
ip -n "$(ns n3)" link set data0 mtu 1400
code=$(run_controller health1 health "$dir/plan.yaml" --node node3 --slurm-drain)
[ "$code" -eq 1 ] || fail "health on the broken node3 exited $code, expected 1"
grep -q "node3: FAIL: .*MTU 1400" "$dir/out-health1.txt" || fail "health did not print the finding"
case "$(state_of node3)" in *DRAIN*) ;; *) fail "health did not drain node3" ;; esac
ip -n "$(ns n3)" link set data0 mtu 1500
code=$(run_controller health2 health "$dir/plan.yaml" --node node3 --slurm-drain)
[ "$code" -eq 0 ] || fail "health on the fixed node3 exited $code, expected 0"
in_service node3 || fail "health did not resume node3: $(state_of node3)"
code=$(run_controller health3 health "$dir/plan.yaml" --node node2 --slurm-drain)
[ "$code" -eq 0 ] || fail "health on node2 exited $code, expected 0"
[ "$(reason_of node2)" = "ops: cable swap on port 7" ] || fail "health touched node2"
echo "health: drained and resumed node3; node2 left alone"
echo "PASS"
