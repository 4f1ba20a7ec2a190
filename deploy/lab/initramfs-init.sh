#!/bin/busybox sh
# PID 1 of a soft-RoCE lab VM (packed into the lab's initramfs by
# softroce-lab.sh). It mounts the host's root read-only over 9p, gives the VM
# its own /proc, /sys, /dev and a writable /run, mounts the VM's state folder
# (written by the host) at /run/cclab and hands over to node-init.sh from the
# host's tree, so the VM runs the host's own build and packages.
/bin/busybox mkdir -p /bin /proc /sys /dev /newroot
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

fail() {
  echo "cclab initramfs: $*; powering off" >/dev/console
  poweroff -f
}

# The virtio and 9p modules, in dependency order (softroce-lab.sh copies them).
for m in $(cat /modules/order); do
  insmod "/modules/$m.ko" || fail "insmod $m failed: the initramfs module does not match the kernel (softroce-lab.sh rebuilds both on every up)"
done

arg() {
  for w in $(cat /proc/cmdline); do
    case "$w" in "cclab.$1="*) echo "${w#*=}" ;; esac
  done
}

opts=trans=virtio,version=9p2000.L,msize=262144
mount -t 9p -o "$opts,ro" hostroot /newroot || fail "cannot mount the host's root (9p tag hostroot)"
mount -t tmpfs -o mode=0755 tmpfs /newroot/run || fail "cannot mount tmpfs on /run"
mkdir -p /newroot/run/cclab
mount -t 9p -o "$opts" labstate /newroot/run/cclab || fail "cannot mount the state folder (9p tag labstate)"
init=$(arg init)
[ -n "$init" ] || fail "no cclab.init= on the kernel command line"
mount --move /proc /newroot/proc
mount --move /sys /newroot/sys
mount --move /dev /newroot/dev
exec chroot /newroot /bin/bash "$init"
