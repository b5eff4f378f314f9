#!/bin/sh
# compare-xen.sh: the headline ratios of two real-Xen bench runs, one per
# Xen version, side by side as a markdown section for docs/benchmarks.md:
# the caller blocked by `xl destroy --async` over the caller floor, memory
# back through xenreaperd (deferred) and through `xl destroy` over the
# teardown floor, and a batch's memory back through xenreaperd over a
# sequential `xl destroy` loop.  Each ratio is of two medians measured in
# the same boot, so the two columns compare although the runs differ:
# absolute times under emulation do not.  Reads xen-sizes.csv,
# xen-batch.csv and xen-machine.txt of each directory; a figure missing in
# one run shows as "–", never as a guess.
#
# usage: compare-xen.sh DIR_A DIR_B
set -eu
a=${1:?usage: compare-xen.sh DIR_A DIR_B}
b=${2:?usage: compare-xen.sh DIR_A DIR_B}
for d in "$a" "$b"; do
	for f in xen-sizes.csv xen-batch.csv xen-machine.txt; do
		[ -s "$d/$f" ] || { echo "compare-xen.sh: $d/$f is missing or empty" >&2; exit 1; }
	done
done
# median DIR FILE MEASURE KEY TOOL: the median of the matching runs, or empty.
median() {
	awk -F, -v m="$3" -v k="$4" -v t="$5" '$1 == m && $2 == k && $3 == t { print $5 }' "$1/$2" |
		sort -n | awk '{ v[++n] = $1 } END { if (n) print n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }'
}
ratio() { awk -v x="$1" -v y="$2" 'BEGIN { if (x == "" || y == "" || y == 0) print "–"; else printf "%.2f×", x / y }'; }
version() { sed -n 's/^xen_version=//p' "$1/xen-machine.txt"; }
# row LABEL FILE MEASURE KEY TOOL REF_MEASURE REF_TOOL
row() {
	case $4 in *[!0-9]*) printf '| %s | %s |' "$1" "$4" ;; *) printf '| %s | %s MiB |' "$1" "$4" ;; esac
	for d in "$a" "$b"; do
		printf ' %s |' "$(ratio "$(median "$d" "$2" "$3" "$4" "$5")" "$(median "$d" "$2" "$6" "$4" "$7")")"
	done
	echo
}
sizes=$(cat "$a/xen-sizes.csv" "$b/xen-sizes.csv" | awk -F, 'NR > 1 && $2 ~ /^[0-9]+$/ { print $2 }' | sort -n -u)
shapes=$(cat "$a/xen-batch.csv" "$b/xen-batch.csv" | awk -F, '$1 == "batch-back" { print $2 }' | sort -u)

echo "## Xen $(version "$a") beside Xen $(version "$b")"
echo
echo "The headline ratios of the two runs, each of two medians measured in"
echo "the same boot (teardown, scrubbing and xenstored changed between the"
echo "releases; the emulated machine is the same)."
echo
echo "| ratio | size | Xen $(version "$a") | Xen $(version "$b") |"
echo "|---|---|---|---|"
for s in $sizes; do
	row "caller blocked: \`xl destroy --async\` ÷ caller floor" xen-sizes.csv caller "$s" xl-async caller xenstore-write
done
for s in $sizes; do
	row "memory back: xenreaperd deferred ÷ teardown floor" xen-sizes.csv back "$s" xenreaper-deferred back floor
	row "memory back: \`xl destroy\` ÷ teardown floor" xen-sizes.csv back "$s" xl back floor
done
for s in $shapes; do
	row "batch, all memory back: xenreaperd, jobs = 2 ÷ sequential \`xl destroy\`" xen-batch.csv batch-back "$s" \
		xenreaper-jobs2 batch-back xl-seq
done
