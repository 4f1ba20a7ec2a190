#!/usr/bin/env bash
# The soft-RoCE lab: N qemu VMs (default 4), each with a real rdma_rxe device
# on its data NIC and the host's own node-agent running inside, so the verbs
# engine, the live RoCE inventory and `controller run` meet real libibverbs.
#
#   softroce-lab.sh up [--nodes N] [--data-mtu M] [--speed MBPS]   boot the lab
#   softroce-lab.sh down                  remove everything (idempotent)
#   softroce-lab.sh status                what is running
#   softroce-lab.sh host CMD...           run CMD where the controller sits (the lab's netns)
#   softroce-lab.sh exec N CMD...         run CMD inside VM N (bash -c), print its output
#   softroce-lab.sh slow N RATE           shape VM N's data tap both ways with tc (e.g. 5mbit)
#   softroce-lab.sh ecn N [RATE]          a congestion point: VM N's incoming RoCE queued at RATE
#                                         (default 100mbit) in RED that marks ECT packets CE
#   softroce-lab.sh fast N                remove that shaping (slow or ecn)
#   softroce-lab.sh capture start NAME [--node N] [--dev IF] [--packets P] [--seconds S]
#                                         tcpdump RoCE (UDP 4791) on the data bridge, or on IF
#                                         inside VM N, into a pcap; returns once it listens
#   softroce-lab.sh capture stop NAME     stop it; prints the packets (tcpdump -n -v -tt)
#   softroce-lab.sh run [up options] -- CMD...   up, CMD on the host side, down; CMD's exit status
#
# Layout, all inside one network namespace (CCLAB_NAME, default cclab) so no
# lab packet ever reaches a real network:
#   bridge mgmt  10.203.1.0/24  controller 10.203.1.254, VM N 10.203.1.N (agent on :7070)
#   bridge data  10.203.2.0/24  VM N 10.203.2.N, MTU 9000, rxe0 on it
# Each VM boots Debian's kernel with a busybox initramfs, mounts the host's
# root read-only over 9p and runs node-agent from the host's build tree
# (CCLAB_BUILD, default build). VM N's state folder (console log, agent log,
# command files) is $CCLAB_STATE/nodeN, default /var/tmp/cclab-NAME.
#
# Runs as root. Installs its Debian packages itself. Interrupted or failed,
# it tears down what it made: no VM, tap, bridge or namespace is left.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
name=${CCLAB_NAME:-cclab}
state=${CCLAB_STATE:-/var/tmp/cclab-$name}
pki=${CCLAB_PKI:-/var/tmp/clustercert-lab-pki}
build=${CCLAB_BUILD:-build}
case "$build" in /*) ;; *) build="$repo/$build" ;; esac
netns=$name
boot_timeout=${CCLAB_BOOT_TIMEOUT:-300}
exec_timeout=${CCLAB_EXEC_TIMEOUT:-900}
vm_memory=${CCLAB_VM_MEMORY:-512}

packages=(qemu-system-x86 linux-image-amd64 busybox-static perftest ibverbs-utils ibverbs-providers
  iproute2 kmod cpio gzip tcpdump)
modules_9p=(virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci
  9pnet 9pnet_virtio netfs fscache 9p)

say() { echo "softroce-lab: $*" >&2; }
die() {
  say "$*"
  exit 1
}

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
  exit 2
}

need_root() {
  [[ $(id -u) -eq 0 ]] || die "needs root (network namespaces, taps, qemu); run it with sudo"
}

# The newest Debian kernel that has its modules installed.
kernel_version() {
  local v
  for v in $(ls /boot | sed -n 's/^vmlinuz-//p' | sort -V -r); do
    if [[ -d /lib/modules/$v/kernel/drivers/infiniband/sw/rxe ]]; then
      echo "$v"
      return 0
    fi
  done
  die "no kernel in /boot with rdma_rxe in /lib/modules (apt-get install linux-image-amd64)"
}

build_initramfs() {
  local kver=$1 root=$state/initramfs m path
  rm -rf "$root"
  mkdir -p "$root/bin" "$root/modules"
  cp /bin/busybox "$root/bin/busybox"
  cp "$repo/deploy/lab/initramfs-init.sh" "$root/init"
  chmod +x "$root/init"
  : >"$root/modules/order"
  for m in "${modules_9p[@]}"; do
    path=$(modinfo -k "$kver" -n "$m" 2>/dev/null) || die "kernel $kver has no module $m"
    [[ $path == /* ]] || continue  # built in
    case "$path" in
      *.ko) cp "$path" "$root/modules/$m.ko" ;;
      *.ko.xz) xz -dc "$path" >"$root/modules/$m.ko" ;;
      *.ko.zst) zstd -qdc "$path" >"$root/modules/$m.ko" ;;
      *) die "module $path: unknown compression" ;;
    esac
    echo "$m" >>"$root/modules/order"
  done
  (cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$state/initramfs.gz"
}

in_ns() { ip netns exec "$netns" "$@"; }
lab_exists() { ip netns list 2>/dev/null | grep -qw "^$netns"; }

vm_pid() {
  local f=$state/node$1/qemu.pid
  [[ -s $f ]] && cat "$f"
}

down() {
  local d pid
  for d in "$state"/node*/; do
    [[ -d $d ]] || continue
    pid=$(cat "$d/qemu.pid" 2>/dev/null || true)
    [[ -n $pid ]] && kill -9 "$pid" 2>/dev/null || true
  done
  if lab_exists; then
    ip netns pids "$netns" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
    sleep 0.2
    ip netns del "$netns" 2>/dev/null || true
  fi
  # A VM killed above may still hold its 9p files for a moment.
  for _ in 1 2 3 4 5; do
    rm -rf "$state" 2>/dev/null && break
    sleep 0.5
  done
}

console_tail() {
  local n=$1
  say "node$n console (last lines of $state/node$n/console.log):"
  tail -n 25 "$state/node$n/console.log" 2>/dev/null | sed 's/^/    /' >&2 || true
  if [[ -s $state/node$n/agent.log ]]; then
    say "node$n agent log:"
    tail -n 10 "$state/node$n/agent.log" | sed 's/^/    /' >&2
  fi
}

# The lab's namespace with its two bridges; the controller's seat is on mgmt.
make_switch() {
  local data_mtu=$1
  ip netns add "$netns"
  in_ns ip link set lo up
  in_ns ip link add mgmt type bridge
  in_ns ip link add data type bridge
  in_ns ip link set data mtu "$data_mtu"
  in_ns ip addr add 10.203.1.254/24 dev mgmt
  in_ns ip link set mgmt up
  in_ns ip link set data up
}

# VM N: taps mN and dN on the bridges, qemu in the background. Its NICs are
# named by MAC in node-init.sh; the data NIC's speed is what rxe reports.
# The lab's PKI, made once and shared by every lab name (the addresses are
# the same in each): node N's certificate for 10.203.1.N, the controller's
# for plans/lab-softroce.yaml's agents.tls. pki.sh keeps existing files.
make_pki() {
  local specs=() n
  for ((n = 1; n <= $1; ++n)); do specs+=("node$n=10.203.1.$n"); done
  bash "$repo/deploy/pki.sh" "$pki" "${specs[@]}" >/dev/null ||
    die "deploy/pki.sh $pki failed (see above): the lab's agents need certificates"
}

boot_vm() {
  local n=$1 kver=$2 data_mtu=$3 speed=$4 hex
  hex=$(printf '%02x' "$n")
  mkdir -p "$state/node$n"
  # The VM sees its state folder as /run/cclab: node-init.sh serves mutual TLS
  # with these (the agent refuses plaintext off loopback).
  cp "$pki/node$n.pem" "$state/node$n/agent.pem"
  cp "$pki/node$n.key" "$state/node$n/agent.key"
  cp "$pki/ca.pem" "$state/node$n/ca.pem"
  in_ns ip tuntap add dev "m$n" mode tap
  in_ns ip tuntap add dev "d$n" mode tap
  in_ns ip link set "m$n" master mgmt up
  in_ns ip link set "d$n" mtu "$data_mtu" master data up
  local kernel_args=(console=ttyS0 panic=-1 quiet "cclab.node=$n"
    "cclab.init=$repo/deploy/lab/node-init.sh" "cclab.agent=$build/bin/node-agent"
    "cclab.mgmt_mac=52:54:00:cc:01:$hex" "cclab.data_mac=52:54:00:cc:02:$hex"
    "cclab.mgmt_ip=10.203.1.$n" "cclab.data_ip=10.203.2.$n" "cclab.data_mtu=$data_mtu")
  in_ns qemu-system-x86_64 -name "$name-node$n" -accel tcg -smp 1 -m "$vm_memory" \
    -nodefaults -display none -no-reboot -daemonize -pidfile "$state/node$n/qemu.pid" \
    -serial "file:$state/node$n/console.log" \
    -kernel "/boot/vmlinuz-$kver" -initrd "$state/initramfs.gz" -append "${kernel_args[*]}" \
    -virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
    -virtfs "local,path=$state/node$n,mount_tag=labstate,security_model=none" \
    -netdev "tap,id=mgmt,ifname=m$n,script=no,downscript=no" \
    -device "virtio-net-pci,netdev=mgmt,mac=52:54:00:cc:01:$hex" \
    -netdev "tap,id=data,ifname=d$n,script=no,downscript=no" \
    -device "virtio-net-pci,netdev=data,mac=52:54:00:cc:02:$hex,speed=$speed,duplex=full,host_mtu=$data_mtu"
}

# Waits for every VM's node-agent; a VM that fails, exits or overruns has its
# console printed and ends the wait.
wait_for_agents() {
  local nodes=$1 start=$SECONDS n
  for ((n = 1; n <= nodes; ++n)); do
    until [[ -s $state/node$n/agent.port ]]; do
      if [[ -e $state/node$n/failed ]]; then
        console_tail "$n"
        die "node$n failed to start: $(cat "$state/node$n/failed")"
      fi
      if ! kill -0 "$(vm_pid "$n")" 2>/dev/null; then
        console_tail "$n"
        die "node$n's VM exited while booting: its console is above; fix what it names and run up again"
      fi
      if ((SECONDS - start > boot_timeout)); then
        console_tail "$n"
        die "node$n did not start its node-agent within ${boot_timeout} s: its console is above; a busy host boots slower (raise CCLAB_BOOT_TIMEOUT)"
      fi
      sleep 0.5
    done
  done
}

up() {
  local nodes=4 data_mtu=9000 speed=1000
  while (($#)); do
    case "$1" in
      --nodes) nodes=$2; shift 2 ;;
      --data-mtu) data_mtu=$2; shift 2 ;;
      --speed) speed=$2; shift 2 ;;
      *) die "up: unknown option $1 (--nodes N, --data-mtu M, --speed MBPS)" ;;
    esac
  done
  [[ $nodes =~ ^[0-9]+$ ]] && ((nodes >= 2 && nodes <= 8)) || die "up: --nodes $nodes: give 2 to 8"
  need_root
  [[ -x $build/bin/node-agent ]] ||
    die "$build/bin/node-agent is missing: run bash scripts/build.sh first (or set CCLAB_BUILD)"
  [[ $build != /run/* && $repo != /run/* ]] ||
    die "the build tree $build is under /run, which the VMs mount over; use another folder"
  bash "$repo/scripts/install-deps.sh" "${packages[@]}" >&2
  [[ -e /dev/net/tun ]] || die "/dev/net/tun is missing: the VMs' taps need the tun driver"

  down
  trap 'say "interrupted: tearing the lab down"; down; exit 130' INT TERM
  trap 'rc=$?; if ((rc != 0)); then say "up failed: tearing the lab down"; down; fi' EXIT
  mkdir -p "$state"
  make_pki "$nodes"
  local kver
  kver=$(kernel_version)
  build_initramfs "$kver"

  make_switch "$data_mtu"
  local n
  for ((n = 1; n <= nodes; ++n)); do
    boot_vm "$n" "$kver" "$data_mtu" "$speed"
  done
  echo "$nodes" >"$state/nodes"
  say "booting $nodes VMs (kernel $kver, TCG emulation; about 10-60 s)"

  local start=$SECONDS
  wait_for_agents "$nodes"
  trap - EXIT INT TERM
  say "up in $((SECONDS - start)) s: $nodes VMs, agents on 10.203.1.1-$nodes:7070, rxe0 on 10.203.2.1-$nodes"
  say "run a plan: $0 host $build/bin/controller run plans/lab-softroce.yaml"
  say "tear down:  $0 down"
}

status() {
  if ! lab_exists; then
    echo "lab $name: down"
    return 0
  fi
  local nodes n pid
  nodes=$(cat "$state/nodes" 2>/dev/null || echo 0)
  echo "lab $name: namespace $netns, state $state, $nodes VMs"
  for ((n = 1; n <= nodes; ++n)); do
    pid=$(vm_pid "$n" || true)
    if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
      echo "  node$n: qemu pid $pid, agent $( [[ -s $state/node$n/agent.port ]] && echo "on 10.203.1.$n:7070" || echo "not started")"
    else
      echo "  node$n: VM not running"
    fi
  done
}

check_node() {
  local n=$1
  [[ $n =~ ^[0-9]+$ ]] || die "node '$n': give the VM's number (1 for node1)"
  [[ -d $state/node$n ]] || die "node$n is not in the lab (is it up? $0 status)"
}

vm_exec() {
  local n=$1
  shift
  check_node "$n"
  (($#)) || die "exec: give a command"
  local id cmd=$state/node$n/cmd
  id="$(date +%s%N)-$$-$RANDOM"
  printf '%s\n' "$*" >"$cmd/$id.tmp"
  mv "$cmd/$id.tmp" "$cmd/$id.sh"
  local start=$SECONDS
  until [[ -e $cmd/$id.rc ]]; do
    if ! kill -0 "$(vm_pid "$n")" 2>/dev/null; then
      die "node$n's VM is not running (its console: $state/node$n/console.log): run $0 up again"
    fi
    if ((SECONDS - start > exec_timeout)); then
      die "node$n: '$*' did not finish within ${exec_timeout} s; it may still run in the VM (see $state/node$n/console.log), raise CCLAB_EXEC_TIMEOUT for longer commands"
    fi
    sleep 0.2
  done
  cat "$cmd/$id.out"
  local rc
  rc=$(cat "$cmd/$id.rc")
  rm -f "$cmd/$id".*
  return "$rc"
}

# Shapes VM N's data link on the host side only, both ways: the tap's egress
# (towards the VM) and, through an ifb device, the tap's ingress (from the
# VM). Shaping inside the VM would push back into rdma_rxe, which on 6.1
# soft-locks the VM's CPU; on the wire it is what a bad cable or a
# mis-negotiated switch port looks like: drops, retransmits, a slow pair.
slow() {
  local n=$1 rate=$2
  check_node "$n"
  local shape=(tbf rate "$rate" burst 32kbit latency 50ms)
  in_ns tc qdisc replace dev "d$n" root "${shape[@]}"
  in_ns ip link show "i$n" >/dev/null 2>&1 || in_ns ip link add "i$n" type ifb
  in_ns ip link set "i$n" up
  in_ns tc qdisc replace dev "i$n" root "${shape[@]}"
  in_ns tc qdisc replace dev "d$n" handle ffff: ingress
  in_ns tc filter replace dev "d$n" parent ffff: protocol all prio 1 u32 match u32 0 0 \
    action mirred egress redirect dev "i$n"
  say "node$n's data link shaped to $rate both ways (tc tbf on tap d$n and ifb i$n)"
}

# A congestion point on VM N's data link, the last hop of an incast: the
# RoCE packets (UDP 4791) VM N receives are queued at RATE in RED with ECN,
# which marks ECT packets CE once the average queue passes its thresholds,
# as a switch's WRED/ECN egress queue towards the receiver does. It sits in
# the VM (data0's ingress redirected to an ifb device, ecn0), not on the
# host's tap like slow: the host kernels the lab runs on may lack every
# ECN-marking qdisc (this one has only tbf, htb and the fifos: no sch_red,
# fq_codel, codel, pie or cake), while the VMs' Debian kernel has them all as
# modules; and on the receive side nothing pushes back into rdma_rxe.
# rdma_rxe neither reacts to the marks (no DCQCN) nor counts them (its
# hw_counters have no ECN or CNP entry): RED counts them (tc -s qdisc show
# dev ecn0 in the VM: "marked N"), and capture --node N --dev ecn0 sees the
# CE bits.
# Under TCG three rxe senders deliver 50-80 Mb/s in all, and the emulated
# receiver's CPU, not RATE, is what they outrun, so the queue stands in ecn0
# either way; RATE caps a faster host. Measured here (3 s of ib_write_bw
# from three VMs): a 9 KB htb burst made htb's timer the bottleneck under
# emulation (13-24 Mb/s), a 200 KB one kept the unshaped 60-80 Mb/s.
# Thresholds, for rxe's packets at MTU 4096 (about 4.2 KB on the wire):
# marks begin at an average of 2 packets queued and every ECT packet is
# marked past 6. Past the limit (1 MB) packets are dropped, as on any lossy
# fabric (the lab plan's lossless: false): rdma_rxe has no congestion
# control, so an emulated receiver that falls behind drops some whatever
# the limit (400 KB and 4 MB both did worse).
ecn() {
  local n=$1 rate=${2:-100mbit}
  check_node "$n"
  [[ $rate =~ ^[0-9]+(\.[0-9]+)?[kmg]?bit$ ]] || die "ecn: rate '$rate': give a tc rate such as 100mbit"
  local red=(red limit 1000000 min 8400 max 25200 avpkt 4200 burst 3 probability 0.2
    bandwidth "$rate" ecn)
  vm_exec "$n" "set -e
modprobe ifb numifbs=0
for m in sch_ingress cls_u32 act_mirred sch_htb sch_red; do modprobe \$m; done
ip link show ecn0 >/dev/null 2>&1 || ip link add ecn0 type ifb
ip link set ecn0 mtu \$(cat /sys/class/net/data0/mtu) up
tc qdisc replace dev ecn0 root handle 1: htb default 1
tc class replace dev ecn0 parent 1: classid 1:1 htb rate $rate ceil $rate burst 200000 cburst 200000
tc qdisc replace dev ecn0 parent 1:1 handle 10: ${red[*]}
tc qdisc replace dev data0 handle ffff: ingress
tc filter replace dev data0 parent ffff: protocol ip prio 1 u32 match ip protocol 17 0xff \\
  match ip dport 4791 0xffff action mirred egress redirect dev ecn0" >/dev/null ||
    die "node$n: setting up the ECN queue failed (its output is above): the VM needs the Debian kernel's sch_red, sch_htb, ifb, act_mirred and cls_u32 modules"
  touch "$state/node$n/ecn"
  say "node$n's incoming RoCE queued at $rate in RED with ECN (in the VM: ifb ecn0; marks: $0 exec $n tc -s qdisc show dev ecn0)"
}

fast() {
  local n=$1
  check_node "$n"
  in_ns tc qdisc del dev "d$n" root 2>/dev/null || true
  in_ns tc qdisc del dev "d$n" ingress 2>/dev/null || true
  in_ns ip link del "i$n" 2>/dev/null || true
  if [[ -e $state/node$n/ecn ]]; then
    vm_exec "$n" "tc qdisc del dev data0 ingress 2>/dev/null; ip link del ecn0 2>/dev/null; true" >/dev/null
    rm -f "$state/node$n/ecn"
  fi
  say "node$n's data link unshaped"
}

# Captures RoCE v2 (UDP 4791) into NAME.pcap, bounded by a packet count and
# a time, in the background; returns once tcpdump listens. On the host side
# (default) it listens on the data bridge, which in promiscuous mode sees
# every frame the bridge forwards, so every node's traffic with the DSCP and
# ECN bits its sender set. With --node N it runs inside VM N (default data0;
# ecn0 after ecn N, where the CE marks are); the pcap lands in VM N's state
# folder. tcpdump delivers packets in blocks of up to a second, so stop waits
# that long first.
capture_start() {
  (($#)) || die "capture start: give a name (letters, digits, '.', '_', '-')"
  local name=$1 node="" dev="" packets=50000 seconds=900
  shift
  while (($#)); do
    case "$1" in
      --node) node=$2; shift 2 ;;
      --dev) dev=$2; shift 2 ;;
      --packets) packets=$2; shift 2 ;;
      --seconds) seconds=$2; shift 2 ;;
      *) die "capture start: unknown option $1 (--node N, --dev IF, --packets P, --seconds S)" ;;
    esac
  done
  [[ $name =~ ^[A-Za-z0-9._-]+$ ]] || die "capture start: name '$name': use letters, digits, '.', '_' or '-'"
  [[ $packets =~ ^[1-9][0-9]*$ ]] || die "capture start: --packets $packets: give a positive count"
  [[ $seconds =~ ^[1-9][0-9]*$ ]] || die "capture start: --seconds $seconds: give a positive number of seconds"
  command -v tcpdump >/dev/null ||
    die "tcpdump is missing: $0 up installs it (or apt-get install tcpdump)"
  local tcpdump=(timeout "$seconds" tcpdump -n -Z root -s 128 -c "$packets")
  local dir log pid
  if [[ -z $node ]]; then
    lab_exists || die "capture: the lab is not up ($0 status)"
    dir=$state/captures
    mkdir -p "$dir"
    [[ ! -e $dir/$name.pid ]] || die "capture $name is already running: $0 capture stop $name"
    in_ns "${tcpdump[@]}" -i "${dev:-data}" -w "$dir/$name.pcap" udp port 4791 \
      </dev/null >"$dir/$name.log" 2>&1 &
    pid=$!
    echo "$pid" >"$dir/$name.pid"
  else
    check_node "$node"
    dir=$state/node$node/captures
    mkdir -p "$dir"
    [[ ! -e $dir/$name.pid ]] || die "capture $name is already running: $0 capture stop $name"
    # The pcap goes to the VM's tmpfs while it runs (9p writes cost the
    # emulated CPU) and is copied out on stop.
    vm_exec "$node" "mkdir -p /run/tmp/captures
${tcpdump[*]} -i ${dev:-data0} -w /run/tmp/captures/$name.pcap udp port 4791 \\
  </dev/null >/run/cclab/captures/$name.log 2>&1 &
echo \$! >/run/cclab/captures/$name.pid" >/dev/null
    pid=$(cat "$dir/$name.pid")
  fi
  log=$dir/$name.log
  local start=$SECONDS alive
  until grep -q "listening on" "$log" 2>/dev/null; do
    alive=true
    if [[ -z $node ]]; then
      kill -0 "$pid" 2>/dev/null || alive=false
    elif [[ -s $log ]]; then  # tcpdump said something else: an error, or a warning
      vm_exec "$node" "kill -0 $pid" >/dev/null 2>&1 || alive=false
    fi
    if ! $alive || ((SECONDS - start > 30)); then
      rm -f "$dir/$name.pid"
      die "capture $name: tcpdump did not start listening ($(tr '\n' ' ' <"$log" 2>/dev/null)): check the device name (--dev) and that the lab is up"
    fi
    sleep 0.2
  done
  local where="the data bridge (${dev:-data})"
  [[ -z $node ]] || where="node$node's ${dev:-data0}"
  say "capture $name: tcpdump (pid $pid) on $where, UDP 4791, at most $packets packets or $seconds s"
}

# Stops capture NAME and prints its packets as tcpdump -n -v -tt reads them
# (an IP line with the TOS byte and ECN codepoint, then the UDP line).
capture_stop() {
  (($# == 1)) || die "capture stop: give the capture's name"
  local name=$1 dir="" node="" d
  if [[ -e $state/captures/$name.pid ]]; then
    dir=$state/captures
  else
    for d in "$state"/node*/captures; do
      [[ -e $d/$name.pid ]] || continue
      dir=$d
      node=${d%/captures}
      node=${node##*/node}
    done
  fi
  [[ -n $dir ]] || die "capture $name is not running (start it: $0 capture start $name)"
  sleep 1.2  # the last block of packets
  local pid
  pid=$(cat "$dir/$name.pid")
  if [[ -z $node ]]; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.2
    done
  else
    vm_exec "$node" "kill -TERM $pid 2>/dev/null
for i in \$(seq 50); do kill -0 $pid 2>/dev/null || break; sleep 0.2; done
cp /run/tmp/captures/$name.pcap /run/cclab/captures/$name.pcap" >/dev/null
  fi
  rm -f "$dir/$name.pid"
  [[ -s $dir/$name.pcap ]] || die "capture $name wrote no pcap: $(tr '\n' ' ' <"$dir/$name.log")"
  say "capture $name: $(grep -E 'captured|dropped by kernel' "$dir/$name.log" | tr '\n' ' ')($dir/$name.pcap)"
  tcpdump -r "$dir/$name.pcap" -n -v -tt
}

action=${1:-}
(($#)) && shift
case "$action" in
  up) up "$@" ;;
  down) need_root; down ;;
  status) status ;;
  host)
    (($#)) || die "host: give a command"
    in_ns "$@"
    ;;
  exec)
    (($# >= 2)) || die "exec: give a node number and a command"
    vm_exec "$@"
    ;;
  slow)
    (($# == 2)) || die "slow: give a node number and a tc rate (e.g. slow 3 5mbit)"
    slow "$@"
    ;;
  ecn)
    (($# == 1 || $# == 2)) || die "ecn: give a node number and optionally a tc rate (e.g. ecn 1 100mbit)"
    ecn "$@"
    ;;
  fast)
    (($# == 1)) || die "fast: give a node number"
    fast "$@"
    ;;
  capture)
    sub=${1:-}
    (($#)) && shift
    case "$sub" in
      start) capture_start "$@" ;;
      stop) capture_stop "$@" ;;
      *) die "capture: give start NAME [options] or stop NAME" ;;
    esac
    ;;
  run)
    up_args=()
    while (($#)) && [[ $1 != -- ]]; do up_args+=("$1"); shift; done
    (($#)) && shift
    (($#)) || die "run: give a command after --"
    trap 'down' EXIT
    trap 'say "interrupted: tearing the lab down"; exit 130' INT TERM
    up "${up_args[@]}"
    trap 'down' EXIT
    set +e
    in_ns "$@"
    rc=$?
    set -e
    exit "$rc"
    ;;
  *) usage ;;
esac
