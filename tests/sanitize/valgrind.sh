#!/bin/sh
# The daemon's core under valgrind's memcheck, on the unit tests' test
# doubles: the gcc build's own test programs (the daemon's real objects)
# run with --leak-check=full; any memory error or definite leak fails
# them.  This stands in for memcheck on real Xen, which valgrind cannot
# do: its Xen support stops at sysctl/domctl interface version 0x12 and
# Xen 4.17 speaks 0x15 (it refuses the hypercalls with ENOSYS; the
# real-Xen scenario 90-memcheck runs an ASan+LSan daemon instead).
# TAP on stdout.
builddir=${abs_top_builddir:-.}
n=0 failed=0
tests="test-reaper test-reliability test-orphans test-handoff test-rate test-metrics
	test-job test-config test-heapdump test-layout test-stuck test-leftovers test-journal"
# One test per CPU at once (memcheck is single-threaded, and this run was
# the tail of make check's unit phase on one core); TAP in the list's order.
jobs=${VALGRIND_JOBS:-$(nproc 2>/dev/null || echo 1)}
case $jobs in ''|*[!0-9]*|0) echo "Bail out! VALGRIND_JOBS=$jobs: expected a number of jobs, 1 or more"; exit 1 ;; esac
if ! command -v valgrind >/dev/null 2>&1; then
	echo "1..0 # SKIP valgrind is not installed (apt-get install valgrind)"
	exit 0
fi
tmp=${TMPDIR:-/tmp}/valgrind.$$
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp" || exit 1
# memcheck T: its status in $tmp/T.rc.
memcheck() {
	valgrind -q --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=99 \
		--log-file="$tmp/$1.vg" "$builddir/tests/unit/$1" > "$tmp/$1.out" 2>&1
	echo $? > "$tmp/$1.rc"
}
# JOBS lanes, the tests dealt round-robin, each lane one after the other.
lane=0
while [ $lane -lt "$jobs" ]; do
	(i=0; for t in $tests; do
		[ $((i % jobs)) = $lane ] && memcheck $t
		i=$((i + 1))
	done) &
	lane=$((lane + 1))
done
wait
for t in $tests; do
	n=$((n + 1))
	if [ "$(cat "$tmp/$t.rc" 2>/dev/null)" = 0 ]; then
		echo "ok $n - memcheck: $t: no memory error, no definite leak"
	else
		failed=$((failed + 1))
		echo "not ok $n - memcheck: $t (status $(cat "$tmp/$t.rc" 2>/dev/null || echo unknown))"
		grep -v '^==[0-9]*== *$' "$tmp/$t.vg" | head -n 40 | sed 's/^/# /'
		grep '^not ok' "$tmp/$t.out" | head -n 5 | sed 's/^/# /'
	fi
done
echo "1..$n"
[ $failed -eq 0 ]
