#!/bin/sh
# Boots Debian's kernel under QEMU (TCG) on a two-node machine whose node 1 is
# CPU-less memory with HMAT latency/bandwidth, runs the static in-guest checks
# (tests/numa/guest_numa*) from a busybox initramfs, and passes when the guest
# prints "PADDISER-NUMA-RESULT: PASS" within the time limit.
#
# usage: scripts/numa-qemu.sh GUEST_BINARY...
# env:   BUILD (build dir, default build), NUMA_TIMEOUT (seconds, default 300),
#        PADDISER_NUMA_KERNEL (a vmlinuz to use instead of Debian's package).
# The kernel package is downloaded with apt-get download and unpacked under
# $BUILD/numa-kernel; nothing is installed into the host system.
set -eu
BUILD=${BUILD:-build}
TIMEOUT=${NUMA_TIMEOUT:-300}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$BUILD/numa
KDIR=$BUILD/numa-kernel
[ "$#" -ge 1 ] || { echo "usage: $0 GUEST_BINARY..." >&2; exit 2; }
for bin in "$@"; do
    [ -x "$bin" ] || { echo "numa-qemu: guest binary '$bin' missing (make builds it)" >&2; exit 2; }
done
for tool in qemu-system-x86_64 gzip timeout; do
    command -v "$tool" >/dev/null || { echo "numa-qemu: '$tool' not found (scripts/install-deps.sh qemu-system-x86 busybox-static)" >&2; exit 2; }
done
BUSYBOX=$(command -v busybox || echo /bin/busybox)
[ -x "$BUSYBOX" ] && file_is_static=$(ldd "$BUSYBOX" 2>&1 | grep -c "not a dynamic" || true)
[ "${file_is_static:-0}" -ge 1 ] || { echo "numa-qemu: $BUSYBOX is not busybox-static" >&2; exit 2; }

# ---- kernel: the image linux-image-amd64 points at, unpacked, not installed
kernel=${PADDISER_NUMA_KERNEL:-}
if [ -z "$kernel" ]; then
    pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-/ {print $2; exit}')
    if [ -z "$pkg" ]; then
        apt-get update -qq >/dev/null
        pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-/ {print $2; exit}')
    fi
    [ -n "$pkg" ] || { echo "numa-qemu: cannot resolve linux-image-amd64 (apt lists?)" >&2; exit 2; }
    kernel=$KDIR/$pkg.vmlinuz
    if [ ! -s "$kernel" ]; then
        mkdir -p "$KDIR"
        echo "numa-qemu: downloading $pkg"
        # Stale apt lists name a package the mirror has dropped: refresh once.
        (cd "$KDIR" && rm -f "$pkg"_*.deb &&
            { apt-get download -o APT::Sandbox::User=root -qq "$pkg" ||
              { apt-get update -qq >/dev/null && apt-get download -o APT::Sandbox::User=root -qq "$pkg"; }; }) ||
            { echo "numa-qemu: cannot download $pkg" >&2; exit 2; }
        rm -rf "$KDIR/x"
        dpkg-deb -x "$KDIR/$pkg"_*.deb "$KDIR/x"
        for opt in CONFIG_NUMA CONFIG_ACPI_NUMA CONFIG_ACPI_HMAT CONFIG_MIGRATION CONFIG_DEVTMPFS CONFIG_BLK_DEV_INITRD CONFIG_RD_GZIP CONFIG_SERIAL_8250_CONSOLE; do
            grep -q "^$opt=y" "$KDIR"/x/boot/config-* || { echo "numa-qemu: $pkg lacks $opt=y" >&2; exit 2; }
        done
        cp "$KDIR"/x/boot/vmlinuz-* "$kernel"
        rm -rf "$KDIR/x" "$KDIR/$pkg"_*.deb
    fi
fi

# ---- initramfs: busybox + /init + the static test programs
rm -rf "$WORK/rootfs"
mkdir -p "$WORK/rootfs/bin" "$WORK/rootfs/dev" "$WORK/rootfs/proc" "$WORK/rootfs/sys"
cp "$BUSYBOX" "$WORK/rootfs/bin/busybox"
cp "$ROOT/tests/numa/init" "$WORK/rootfs/init"
chmod 755 "$WORK/rootfs/init"
for bin in "$@"; do
    cp "$bin" "$WORK/rootfs/bin/"
    # A dynamic test program brings its shared libraries and loader along.
    ldd "$bin" 2>/dev/null | awk '/=> \// {print $3} /^[[:space:]]*\// {print $1}' | while read -r lib; do
        [ -e "$WORK/rootfs$lib" ] || cp -L --parents "$lib" "$WORK/rootfs/"
    done
done
(cd "$WORK/rootfs" && find . | "$BUSYBOX" cpio -o -H newc 2>/dev/null | gzip -1) > "$WORK/initramfs.gz"

# ---- the machine: node 0 = CPU + 512 MiB DRAM, node 1 = 512 MiB CPU-less,
# HMAT: node 1 three times the latency and a quarter of the bandwidth.
log=$WORK/guest.log
start=$(date +%s)
set +e
timeout "$TIMEOUT" qemu-system-x86_64 \
    -machine q35,hmat=on -accel tcg -m 1G -smp 1 \
    -object memory-backend-ram,id=m0,size=512M \
    -object memory-backend-ram,id=m1,size=512M \
    -numa node,nodeid=0,cpus=0,memdev=m0 \
    -numa node,nodeid=1,memdev=m1,initiator=0 \
    -numa hmat-lb,initiator=0,target=0,hierarchy=memory,data-type=access-latency,latency=80 \
    -numa hmat-lb,initiator=0,target=0,hierarchy=memory,data-type=access-bandwidth,bandwidth=20G \
    -numa hmat-lb,initiator=0,target=1,hierarchy=memory,data-type=access-latency,latency=240 \
    -numa hmat-lb,initiator=0,target=1,hierarchy=memory,data-type=access-bandwidth,bandwidth=5G \
    -display none -vga none -net none -serial stdio -monitor none -no-reboot \
    -kernel "$kernel" -initrd "$WORK/initramfs.gz" \
    -append "console=ttyS0 panic=-1 quiet nokaslr" </dev/null >"$log" 2>&1
qrc=$?
set -e
elapsed=$(( $(date +%s) - start ))
tr -d '\r' < "$log" | grep -E '^(guest|guest_numa|PADDISER-NUMA-RESULT)' || true
if tr -d '\r' < "$log" | grep -q '^PADDISER-NUMA-RESULT: PASS'; then
    echo "numa-qemu: PASS in ${elapsed}s (boot + test, TCG)"
    exit 0
fi
if [ "$qrc" -eq 124 ]; then
    echo "numa-qemu: FAIL: no result within ${TIMEOUT}s; last lines of $log:" >&2
else
    echo "numa-qemu: FAIL (qemu exit $qrc after ${elapsed}s); last lines of $log:" >&2
fi
tail -n 30 "$log" >&2
exit 1
