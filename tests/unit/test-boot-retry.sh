#!/bin/sh
# xenbench's boot retry, with a stand-in for qemu-system-x86_64 that plays
# back a console: dom0's kernel dying of "Oops: int3" before dom0 is up
# (multi-threaded TCG's cross-modifying code) is booted again, at most
# twice, each crashed console kept; any other death, or that oops once
# dom0 is up, stands at the first boot.  xenbench prepares a real boot
# (the hypervisor, kernel and modules install-deps brings), so this runs
# as root, as the real-Xen suite does, and skips otherwise.  TAP on stdout.
srcdir=${srcdir:-.}
builddir=$(pwd)
[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP xenbench needs root"; exit 0; }
[ -x /bin/busybox ] && ls /boot/xen-4.17*-amd64.gz >/dev/null 2>&1 ||
	{ echo "1..0 # SKIP no Xen 4.17 or busybox-static: run scripts/install-deps"; exit 0; }
[ -f "$builddir/units/xenreaperd.service" ] || { echo "1..0 # SKIP no build in $builddir"; exit 0; }
tmp=${TMPDIR:-/tmp}/test-boot-retry.$$
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" || exit 1

n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $*"; }
check() { what=$1; shift; if "$@"; then ok "$what"; else not_ok "$what"; fi; }

# The stand-in: boot number K prints console K of $tmp/script (one word
# per boot: int3, panic, late-int3, up), CRLF as the serial port does.
cat > "$tmp/bin/qemu-system-x86_64" <<'QEMU'
#!/bin/sh
k=$(($(cat "$FAKE_DIR/boots" 2>/dev/null || echo 0) + 1)); echo $k > "$FAKE_DIR/boots"
what=$(sed -n "${k}p" "$FAKE_DIR/script")
case $what in
int3) printf '[    7.5] Oops: int3: 0000 [#1] PREEMPT SMP NOPTI\r\n(XEN) Hardware Dom0 crashed: rebooting machine in 5 seconds.\r\n' ;;
panic) printf '[   15.4] Kernel panic - not syncing: Attempted to kill init!\r\n(XEN) Hardware Dom0 crashed: rebooting machine in 5 seconds.\r\n' ;;
late-int3) printf 'XQ: xen 4.17.7\r\nXQ: dom0 ready\r\nXQ-BEGIN 10-baseline\r\n[   30.1] Oops: int3: 0000 [#1]\r\n' ;;
up) printf 'XQ: xen 4.17.7\r\nXQ: dom0 ready\r\nXQ-BEGIN 10-baseline\r\nXQTAP ok played back\r\nXQ-END 10-baseline 0 1\r\nXQ: all done\r\n' ;;
esac
QEMU
chmod +x "$tmp/bin/qemu-system-x86_64"

# run CASE CONSOLES...: xenbench with those consoles; sets rc and boots.
run() {
	name=$1; shift
	mkdir -p "$tmp/$name"; printf '%s\n' "$@" > "$tmp/$name/script"
	FAKE_DIR=$tmp/$name PATH=$tmp/bin:$PATH "$srcdir/tests/xen/xenbench" --builddir "$builddir" \
		--log "$tmp/$name/serial.log" baseline > "$tmp/$name/tap" 2>&1
	rc=$?
	boots=$(cat "$tmp/$name/boots" 2>/dev/null || echo 0)
}

run once int3 up
check "one int3 death before dom0 is up: booted again, passes (exit $rc, $boots boots)" \
	test "$rc" = 0 -a "$boots" = 2
check "  said so" grep -q "^# dom0's kernel died before dom0 was up" "$tmp/once/tap"
check "  and kept that console" grep -q "Oops: int3" "$tmp/once/serial.log.crash1"

run thrice int3 int3 int3 up
check "three int3 deaths: three boots, then it fails as a hung boot (exit $rc, $boots boots)" \
	test "$rc" = 99 -a "$boots" = 3
check "  the scenario reported as not finished" grep -q "^not ok .*10-baseline: did not finish" "$tmp/thrice/tap"

run panic panic up
check "another death before dom0 is up is not retried (exit $rc, $boots boots)" test "$rc" = 99 -a "$boots" = 1

mkdir -p "$tmp/late"; echo stale > "$tmp/late/serial.log.crash1"
run late late-int3 up
check "an int3 once dom0 is up is not retried (exit $rc, $boots boots)" test "$rc" = 1 -a "$boots" = 1
check "  and an earlier run's crashed console is not left beside this one's" test ! -e "$tmp/late/serial.log.crash1"
echo "1..$n"
