#!/bin/sh
# What the later 4.17 boots need built, ready before they start: the
# Debian packages for systemd/40-package (tests/xen/build-deb, into
# BUILDDIR/tests/xen/debs-4.17) and the patched hypervisor for
# suite-patched.sh (tests/xen/build-xen, into its cache).  A step of its
# own, niced, so that make check runs it beside the first boot: QEMU's
# emulated CPUs keep a little over one of the two host CPUs busy, and these
# builds took 25 s and 75 s on the critical path when each boot made its
# own.  XENBENCH=no skips it.
[ "${XENBENCH:-yes}" = no ] && { echo "1..0 # SKIP XENBENCH=no"; exit 0; }
here=$(cd "$(dirname "$0")" && pwd)
b=${abs_top_builddir:-$(pwd)}
out=$b/tests/xen/prebuild.out
mkdir -p "$b/tests/xen"
n=0 failed=0
: > "$out"
# step WHAT CMD...: run CMD niced, its output to $out; TAP for it.
step() {
	what=$1; shift
	n=$((n + 1))
	t0=$(date +%s)
	if nice -n 19 "$@" > "$b/tests/xen/prebuild.step" 2>&1; then
		echo "ok $n - $what: $(tail -n 1 "$b/tests/xen/prebuild.step") ($(( $(date +%s) - t0 )) s)"
	else
		echo "not ok $n - $what"
		tail -n 20 "$b/tests/xen/prebuild.step" | sed 's/^/# /'
		failed=$((failed + 1))
	fi
	cat "$b/tests/xen/prebuild.step" >> "$out"
}
rm -rf "$b/tests/xen/debs-4.17"
step "the Debian packages built and linted for Debian 12" "$here/build-deb" "$b/tests/xen/debs-4.17"
step "the patched hypervisor built (or taken from the cache)" "$here/build-xen" --builddir "$b"
echo "1..$n"
rm -f "$b/tests/xen/prebuild.step"
[ $failed -eq 0 ]
