#!/bin/sh
# The Debian 13 root that the 4.20 boots run in, ready before they start:
# made with mmdebstrap from the mirror the host's apt uses (or reused from
# the cache in the build tree), the project built inside it against libxen
# 4.20, and its Debian packages built and linted there (make-root.sh).  A
# step of its own so that make check runs it beside the first 4.17 boot,
# on the CPU time that boot leaves idle.
# XENBENCH=no skips it.
[ "${XENBENCH:-yes}" = no ] && { echo "1..0 # SKIP XENBENCH=no"; exit 0; }
here=$(cd "$(dirname "$0")" && pwd)
b=${abs_top_builddir:-$(pwd)}/tests/xen
mkdir -p "$b"
n=0 failed=0
# step WHAT CMD...: run CMD, its output to $b/root-420.out; TAP for it.
# make-root.sh runs its heavy work in the idle scheduling class.
step() {
	what=$1; shift
	n=$((n + 1))
	t0=$(date +%s)
	if "$@" > "$b/root-420.step" 2>&1; then
		echo "ok $n - $what: $(tail -n 1 "$b/root-420.step" | sed 's/^make-root.sh: //') ($(( $(date +%s) - t0 )) s)"
	else
		echo "not ok $n - $what"
		tail -n 20 "$b/root-420.step" | sed 's/^/# /'
		failed=$((failed + 1))
	fi
	cat "$b/root-420.step" >> "$b/root-420.out"
}
: > "$b/root-420.out"
step "the Debian 13 root" sh "$here/make-root.sh" trixie "$b/root-trixie"
[ $failed -eq 0 ] && step "the project built inside it against libxen 4.20" \
	sh "$here/make-root.sh" --build "$b/root-trixie" "$b/build-4.20"
[ $failed -eq 0 ] && step "the Debian packages built and linted inside it" \
	sh "$here/make-root.sh" --debs "$b/root-trixie" "$b/debs-4.20"
echo "1..$n"
rm -f "$b/root-420.step"
[ $failed -eq 0 ]
