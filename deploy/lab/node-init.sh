#!/bin/bash
# The rest of a soft-RoCE lab VM's PID 1, run from the host's tree inside the
# VM (see initramfs-init.sh). Names the two NICs by MAC (mgmt0: management,
# data0 or cclab.data_name: data plane), addresses them, creates the rxe
# device on the data NIC, starts the host's node-agent on the management
# address (once rxe has its IPv4 GID, or at once with cclab.agent_start=early),
# then runs the commands the host drops into /run/cclab/cmd (softroce-lab.sh
# exec), each in the background.
set -u
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export TMPDIR=/run/tmp HOME=/run/tmp
state=/run/cclab
mkdir -p "$TMPDIR" "$state/cmd"
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts 2>/dev/null
mount -t tmpfs tmpfs /dev/shm 2>/dev/null

arg() {
  local w
  for w in $(cat /proc/cmdline); do
    case "$w" in "cclab.$1="*) echo "${w#*=}" ;; esac
  done
}
log() { echo "cclab node$node: $*" | tee -a "$state/init.log" >/dev/console; }
fail() {
  log "$*"
  echo "$*" >"$state/failed"
  sleep 1
  echo o >/proc/sysrq-trigger
  sleep 60
}

node=$(arg node)
agent=$(arg agent)
mgmt_mac=$(arg mgmt_mac)
data_mac=$(arg data_mac)
mgmt_ip=$(arg mgmt_ip)
data_ip=$(arg data_ip)
data_mtu=$(arg data_mtu)
data=$(arg data_name)
data=${data:-data0}
agent_start=$(arg agent_start)

hostname "node$node"
ip link set lo up
modprobe virtio_net || fail "modprobe virtio_net failed: the VM needs /lib/modules/$(uname -r) from the host (reinstall linux-image-amd64)"
for _ in $(seq 50); do
  [ "$(ls /sys/class/net | wc -l)" -ge 3 ] && break
  sleep 0.1
done
# mgmt0 first, so a data NIC named eth0 or eth1 never meets a name in use;
# a data NIC that already has its name (eth0, the variant) is left alone.
for want in "$mgmt_mac mgmt0" "$data_mac $data"; do
  for dev in /sys/class/net/*; do
    name=${dev##*/}
    [ "$(cat "$dev/address")" = "${want% *}" ] && [ "$name" != "${want#* }" ] &&
      ip link set "$name" name "${want#* }"
  done
done
[ -e /sys/class/net/mgmt0 ] || fail "no NIC with the management MAC $mgmt_mac (NICs: $(cat /sys/class/net/*/address | tr '\n' ' ')): qemu's -device line in softroce-lab.sh boot_vm sets it"
[ -e "/sys/class/net/$data" ] || fail "no NIC with the data MAC $data_mac (NICs: $(cat /sys/class/net/*/address | tr '\n' ' ')): qemu's -device line in softroce-lab.sh boot_vm sets it"
ip link set mgmt0 mtu 1500 up
ip addr add "$mgmt_ip/24" dev mgmt0
ip link set "$data" mtu "$data_mtu" up
ip addr add "$data_ip/24" dev "$data"

# crc32_generic first: without it rdma_rxe's ICRC setup fails and `rdma link
# add` says "No such file or directory".
modprobe crc32_generic || fail "modprobe crc32_generic failed: rdma_rxe needs it; reinstall linux-image-amd64 on the host"
modprobe rdma_rxe || fail "modprobe rdma_rxe failed: Debian's kernel ships it as a module; reinstall linux-image-amd64 on the host"
rdma link add rxe0 type rxe netdev "$data" || fail "rdma link add rxe0 type rxe netdev $data failed (see the lines above): $data must be up and crc32_generic loaded"
# The IPv4-mapped RoCE v2 GID (index 1) appears once rxe has seen the
# address; the early variant starts the agent without waiting for it.
for _ in $(seq 100); do
  [ "$agent_start" = early ] && break
  grep -q ffff /sys/class/infiniband/rxe0/ports/1/gids/1 2>/dev/null && break
  sleep 0.1
done
log "rxe0 on $data ($data_ip, MTU $data_mtu): $(cat /sys/class/infiniband/rxe0/ports/1/rate), GID 1 $(cat /sys/class/infiniband/rxe0/ports/1/gids/1)"

"$agent" --listen "$mgmt_ip:7070" --node-name "node$node" \
  --tls-cert "$state/agent.pem" --tls-key "$state/agent.key" --tls-ca "$state/ca.pem" \
  --port-file "$state/agent.port" >"$state/agent.log" 2>&1 &
log "node-agent started on $mgmt_ip:7070 (pid $!)"

# Command runner: the host writes cmd/ID.sh (atomically, by rename); the VM
# renames it to ID.run, runs it and leaves ID.out and then ID.rc.
while :; do
  for f in "$state"/cmd/*.sh; do
    [ -e "$f" ] || continue
    id=${f%.sh}
    mv "$f" "$id.run" || continue
    (
      bash "$id.run" >"$id.out" 2>&1
      echo $? >"$id.rc.tmp"
      mv "$id.rc.tmp" "$id.rc"
    ) &
  done
  sleep 0.2
done
