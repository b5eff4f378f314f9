#!/bin/sh
# tests/bench/compare-xen.sh on two made-up bench runs whose medians are
# known: each headline ratio is of the two medians of its own run (an odd
# and an even number of runs), a figure one run lacks shows as "–", and a
# run without its files is an error with nothing printed.  TAP on stdout.
srcdir=${srcdir:-.}
compare=$srcdir/tests/bench/compare-xen.sh
tmp=${TMPDIR:-/tmp}/test-compare-xen.$$
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/a" "$tmp/b" || exit 1

n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $*"; }
check() { what=$1; shift; if "$@"; then ok "$what"; else not_ok "$what"; fi; }

# Run a: caller floor 100, 300, 200 (median 200), xl-async 250, 260, 900
# (median 260): 1.30x.  Run b: floor 100 and 200 (median 150), xl-async
# 300 and 330 (median 315): 2.10x.
cat > "$tmp/a/xen-sizes.csv" <<'CSV'
measure,size_mib,tool,run,value_ms
caller,512,xenstore-write,1,100
caller,512,xenstore-write,2,300
caller,512,xenstore-write,3,200
caller,512,xl-async,1,250
caller,512,xl-async,2,900
caller,512,xl-async,3,260
back,512,floor,1,400
back,512,xenreaper-deferred,1,500
back,512,xl,1,1000
CSV
cat > "$tmp/b/xen-sizes.csv" <<'CSV'
measure,size_mib,tool,run,value_ms
caller,512,xenstore-write,1,100
caller,512,xenstore-write,2,200
caller,512,xl-async,1,330
caller,512,xl-async,2,300
back,512,floor,1,200
back,512,xl,1,300
CSV
for d in a b; do
	cat > "$tmp/$d/xen-batch.csv" <<'CSV'
measure,shape,tool,run,value_ms
batch-back,4x512,xl-seq,1,2000
batch-back,4x512,xenreaper-jobs2,1,1000
CSV
done
echo xen_version=4.17.7 > "$tmp/a/xen-machine.txt"
echo xen_version=4.20.5 > "$tmp/b/xen-machine.txt"

sh "$compare" "$tmp/a" "$tmp/b" > "$tmp/out" 2> "$tmp/err"; rc=$?
check "two whole runs: exit 0" test $rc -eq 0
check "  the heading names both versions" grep -q '^## Xen 4.17.7 beside Xen 4.20.5$' "$tmp/out"
check "  caller: the median of each run's own floor (odd and even counts)" \
	grep -q '^| caller blocked: `xl destroy --async` ÷ caller floor | 512 MiB | 1.30× | 2.10× |$' "$tmp/out"
check "  memory back through xenreaperd: '–' where run b has no figure" \
	grep -q '^| memory back: xenreaperd deferred ÷ teardown floor | 512 MiB | 1.25× | – |$' "$tmp/out"
check "  memory back through xl" \
	grep -q '^| memory back: `xl destroy` ÷ teardown floor | 512 MiB | 2.50× | 1.50× |$' "$tmp/out"
check "  the batch row, by shape" \
	grep -q '^| batch, all memory back: xenreaperd, jobs = 2 ÷ sequential `xl destroy` | 4x512 | 0.50× | 0.50× |$' "$tmp/out"
check "  nothing on stderr" test ! -s "$tmp/err"
rm "$tmp/b/xen-batch.csv"
sh "$compare" "$tmp/a" "$tmp/b" > "$tmp/out" 2> "$tmp/err"; rc=$?
check "a run without xen-batch.csv: exit 1" test $rc -eq 1
check "  saying which file ($(cat "$tmp/err"))" grep -q "$tmp/b/xen-batch.csv is missing or empty" "$tmp/err"
check "  and printing no table" test ! -s "$tmp/out"
echo "1..$n"
