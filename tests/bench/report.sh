#!/bin/sh
# report.sh: turn the figures `make bench` measured (BENCH_OUT: scale.csv
# from bench-scale, xen-*.csv and xen-*.dat from the real-Xen bench) into
# DOCS/benchmarks.md, one table per measure with median, min and max and
# the ratio of medians to each reference, every goal of issue 10 marked met
# or MISSED (by how much), and gnuplot plots in DOCS/bench/ beside copies of
# the CSV files; with BENCH_OUT-4.20 there too, the headline ratios on Xen
# 4.20 beside them (compare-xen.sh).  The scrub backlog source table sets
# BENCH_OUT/xen-scrub-source.csv (Debian's hypervisor) beside
# BENCH_OUT-patched/xen-scrub-source.csv (build-xen's, xen-patches/).  It
# computes nothing it was not given: a missing or empty file is an error,
# and no document is written.
#
# usage: report.sh BENCH_OUT DOCS [WALL_SECONDS]
set -eu
out=${1:?usage: report.sh BENCH_OUT DOCS [WALL_SECONDS]}
docs=${2:?usage: report.sh BENCH_OUT DOCS [WALL_SECONDS]}
wall=${3:-}
die() { echo "report.sh: $*" >&2; exit 1; }
for f in scale.csv scale-in-flight.csv xen-sizes.csv xen-daemon.csv xen-batch.csv xen-machine.txt \
	xen-trace-xl.dat xen-trace-floor.dat xen-trace-xl-async.dat \
	xen-dom0.csv xen-syscalls.csv xen-xslat.dat xen-probes.csv xen-rest.csv \
	xen-scrub-deferred.dat xen-scrub-sync.dat xen-scrub-source.csv \
	xen-attr-syscalls.csv xen-attr-ipis.csv xen-attr-paths.csv xen-attr-res.csv \
	xen-before-after.csv xen-mass.csv xen-mass.dat xen-numa.csv xen-numa.dat; do
	[ -s "$out/$f" ] || die "$out/$f is missing or empty: the bench did not run to the end, nothing reported"
done
[ -s "$out-patched/xen-scrub-source.csv" ] ||
	die "$out-patched/xen-scrub-source.csv is missing or empty: the patched hypervisor's boot did not run to the end, nothing reported"
command -v gnuplot >/dev/null || die "gnuplot is missing: run scripts/install-deps"
mkdir -p "$docs/bench"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# --- statistics: "measure size tool n median min max" per group.  With
# "text", the second column is sorted as text (a batch shape, "4x512").
stats() {
	second=n; [ "${2:-}" = text ] && second=
	tail -n +2 "$1" | sort -t, -k1,1 -k2,2$second -k3,3 -k5,5n | awk -F, '
		function flush() {
			if (n == 0) return
			med = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
			print key, n, med, v[1], v[n]
		}
		{ k = $1 " " $2 " " $3
		  if (k != key) { flush(); key = k; n = 0 }
		  v[++n] = $5 }
		END { flush() }'
}
# Derived per run: xenreaperd deferred from the moment its caller returned
# (the request is in xenstore by then) until memory back, i.e. memory back
# less the caller's time: the daemon's part, to set beside the floor.
{ cat "$out/xen-sizes.csv"
  awk -F, '$1 == "caller" && $3 == "xl-async" { c[$2 "," $4] = $5 }
	   $1 == "back" && $3 == "xenreaper-deferred" { b[$2 "," $4] = $5 }
	   END { for (k in b) if (k in c) { split(k, a, ","); print "back," a[1] ",xenreaper-after-caller," a[2] "," b[k] - c[k] } }' \
	"$out/xen-sizes.csv"; } > "$tmp/sizes.csv"
stats "$tmp/sizes.csv" > "$tmp/sizes"
stats "$out/xen-batch.csv" text > "$tmp/batch"
# dom0 figures: "measure tool n median min max" (xen-dom0.csv has no size)
tail -n +2 "$out/xen-dom0.csv" | awk -F, '{ print $1 ",0," $2 "," $3 "," $4 }' > "$tmp/dom0.csv"
sed -i '1i measure,size,tool,run,value' "$tmp/dom0.csv"
stats "$tmp/dom0.csv" | awk '{ $2 = ""; print }' | tr -s ' ' > "$tmp/dom0"
# dmed MEASURE TOOL: a dom0 median
dmed() { awk -v m="$1" -v t="$2" '$1 == m && $2 == t { print $4 }' "$tmp/dom0"; }
# med MEASURE SIZE TOOL: the median, or empty
med() { awk -v m="$1" -v s="$2" -v t="$3" '$1 == m && $2 == s && $3 == t { print $5 }' "$4"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "–"; else printf "%.2f×", a / b }'; }
# goal A B LIMIT: "met" or "MISSED by N %"
goal() {
	awk -v a="$1" -v b="$2" -v l="$3" 'BEGIN {
		if (a == "" || b == "" || b == 0) { print "not measured"; exit }
		r = a / b
		if (r <= l) printf "met (%.2f× ≤ %s×)", r, l
		else printf "**MISSED** by %.0f %% (%.2f× > %s×)", (r / l - 1) * 100, r, l }'
}
sizes=$(awk '{ print $2 }' "$tmp/sizes" | sort -n -u | grep -v '^0$')
mkey() { sed -n "s/^$1=//p" "$out/xen-machine.txt"; }
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
ncpu=$(mkey nr_cpus)
# The commit the bench was built from (make bench writes it at the start:
# a commit made while it runs is not what it measured).
commit=$(cat "$out/commit" 2>/dev/null || (cd "$docs" && git rev-parse --short HEAD 2>/dev/null) || echo unknown)

# A row: TOOL LABEL MEASURE SIZE, with ratios to the references REF...
# (nothing if TOOL was not measured at SIZE).
row() {
	_t=$1 _l=$2 _m=$3 _s=$4; shift 4
	[ -n "$(med "$_m" "$_s" "$_t" "$tmp/sizes")" ] || return 0
	awk -v m="$_m" -v s="$_s" -v t="$_t" -v l="$_l" '$1 == m && $2 == s && $3 == t {
		printf "| %s | %s | %d | %d | %d |", l, $5, $6, $7, $4 }' "$tmp/sizes"
	_v=$(med "$_m" "$_s" "$_t" "$tmp/sizes")
	for _r in "$@"; do printf ' %s |' "$(ratio "$_v" "$(med "$_m" "$_s" "$_r" "$tmp/sizes")")"; done
	echo
}

# --- issue 18's goals, each from this run's figures, with the figures that
# explain a miss (who sent the IPIs, what made the system calls).
# spread: "median (min–max)" of the numbers on stdin.
spread() {
	sort -n | awk '{ v[NR] = $1 } END { if (!NR) { print "–"; exit }
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.0f (%.0f–%.0f)\n", m, v[1], v[NR] }'
}
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# at_most A B: "met" when A ≤ B, else how far over; at_least A B: A ≥ B.
at_most() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "not measured"
		else if (a <= b) printf "met (%.2f×)", a / b
		else printf "**MISSED** (%.2f×)", a / b }'
}
at_least() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "not measured"
		else if (a >= b) printf "met (%.2f×)", a / b
		else printf "**MISSED** (%.2f×)", a / b }'
}
# attr_runs FILE TOOL: TOOL's per-run totals in an xen-attr-*.csv.
attr_runs() { tail -n +2 "$out/$1" | awk -F, -v t=$2 '$1 == t { n[$2] += $5 } END { for (r in n) print n[r] }'; }
# lat_pooled TOOL PHASE: "P99 N": the p99 (nearest rank) of every run's
# round trips pooled, and how many there were.
lat_pooled() {
	awk -v t=$1 -v p=$2 '$1 == t && $2 == p { print $3 }' "$out/xen-xslat.dat" | sort -n |
		awk '{ v[NR] = $1 } END { if (!NR) exit; i = int((99 * NR + 99) / 100); print v[i], NR }'
}
# work_runs TOOL: the CPU task's work during ÷ idle, run by run.
work_runs() {
	tail -n +2 "$out/xen-dom0.csv" | awk -F, -v t=$1 '$2 == t && $1 ~ /^spin-units-per-100ms-/ { v[$3 "," $1] = $4; r[$3] = 1 }
		END { for (k in r) if (v[k ",spin-units-per-100ms-idle"] > 0)
			printf "%.3f\n", v[k ",spin-units-per-100ms-busy"] / v[k ",spin-units-per-100ms-idle"] }'
}
# ipi_mean TOOL CATEGORY: mean IPIs per teardown by CATEGORY (the
# attribution section's $tmp/ipis-TOOL).
ipi_mean() { awk -v c=$2 '$1 == c { n += $2 } $1 == "all" { m++ } END { printf "%.0f", m ? n / m : 0 }' "$tmp/ipis-$1"; }
# --- issue 40's mass teardown (xen-mass.csv: measure,tool,run,value)
# mass_med MEASURE TOOL / mass_spread MEASURE TOOL: median, "median (min–max)".
mass_vals() { awk -F, -v m="$1" -v t="$2" '$1 == m && $2 == t { print $4 }' "$out/xen-mass.csv" | sort -n; }
mass_med() { mass_vals "$1" "$2" | median; }
mass_spread() { mass_vals "$1" "$2" | spread; }
mass_shape() {
	awk -F, '$1 == "shape-guests" { n = $4 } $1 == "shape-mib" { m = $4 } $1 == "shape-with-devices" { d = $4 }
		END { printf "%d guests of %d MiB (%d of them with a vif and a disk)", n, m, d }' "$out/xen-mass.csv"
}
mass_table() {
	for m in blocked-ms first-gone-ms back-ms clean-ms dom0-cpu-ms teardown-cpu-ms xenstored-cpu-ms client-cpu-ms \
		xs-p99-us-idle xs-p99-us-busy daemon-peak-rss-kib teardowns-at-once-most; do
		case $m in
		blocked-ms) label="caller blocked, ms" ;;
		first-gone-ms) label="first domain gone, ms" ;;
		back-ms) label="all memory back, ms" ;;
		clean-ms) label="all memory clean, ms" ;;
		dom0-cpu-ms) label="dom0 CPU until all back, ms" ;;
		teardown-cpu-ms) label="of it, the teardown's own processes (every xl; or xenreaperd and its teardown processes), ms" ;;
		xenstored-cpu-ms) label="of it, xenstored, ms" ;;
		client-cpu-ms) label="of it, the resident xenstore client, ms" ;;
		xs-p99-us-idle) label="xenstore p99 before, µs" ;;
		xs-p99-us-busy) label="xenstore p99 during, µs" ;;
		daemon-peak-rss-kib) label="daemon's peak RSS, KiB" ;;
		teardowns-at-once-most) label="teardowns at once, most (from its jobs' started and finished)" ;;
		esac
		row="| $label"
		for t in xl-seq xl-par async tx; do
			x=$(mass_spread $m $t)
			row="$row | ${x:-–}"
		done
		echo "$row |"
	done
}
# mass_exited: what the processes that exited during each run used, by
# name (the kernel's process accounting), when the boot had it.
mass_exited() {
	grep -q '^exited-cpu-by-name,' "$out/xen-mass.csv" || return 0
	echo
	echo "Of dom0's CPU, the processes that exited during each run (hotplug"
	echo "scripts and the commands they run, each \`xl\`, libxl's destroy"
	echo "children), by name, in ms (the kernel's process accounting; \`all\` is"
	echo "every exited process's):"
	echo
	awk -F, '$1 == "exited-cpu-by-name" { printf "- %s, run %s: %s\n", $2, $3, $4 }' "$out/xen-mass.csv"
}
mass_goals() {
	par=$(mass_med back-ms xl-par) tx=$(mass_med back-ms tx) as=$(mass_med back-ms async)
	p_xl=$(mass_med xs-p99-us-busy xl-par) p_tx=$(mass_med xs-p99-us-busy tx)
	r1=$(awk -F, '$1 == "xs-requests-per-job" && $2 == "tx-1" { print $4 }' "$out/xen-mass.csv")
	rn=$(awk -F, '$1 == "xs-requests-per-job" && $2 ~ /^tx-/ && $2 != "tx-1" { print $4 }' "$out/xen-mass.csv")
	echo "Goals: all memory back ÷ parallel \`xl destroy\`'s, at most 0.5: **$(ratio "$tx" "$par")** (tx), $(ratio "$as" "$par") (async), $(goal "$tx" "$par" 0.5);"
	echo "xenstore p99 during ≤ parallel \`xl\`'s: $p_tx against $p_xl µs, $(at_most "$p_tx" "$p_xl");"
	echo "the daemon's xenstore requests per job flat from one guest to the batch (within 10 %): $r1 and $rn, $(goal "$rn" "$r1" 1.1)."
}

goals_issue18() {
	sc_xl=$(attr_runs xen-attr-syscalls.csv xl | median) sc_d=$(attr_runs xen-attr-syscalls.csv daemon | median)
	res_xl=$(attr_runs xen-attr-res.csv xl | median) res_d=$(attr_runs xen-attr-res.csv daemon | median)
	echo "## Lighter on dom0 than plain xl (issue 18): the goals"
	echo
	echo "Each measured side by side with plain \`xl destroy\` in the boot above;"
	echo "per teardown, median (min–max) over the runs.  The sections below"
	echo "give the details."
	echo
	echo "| goal | \`xl destroy\` | xenreaperd | verdict |"
	echo "|---|---|---|---|"
	echo "| resched IPIs (RES) per 512 MiB teardown ≤ xl's | $(attr_runs xen-attr-res.csv xl | spread) | $(attr_runs xen-attr-res.csv daemon | spread) | $(at_most "$res_d" "$res_xl") |"
	echo "| system calls per 512 MiB teardown (\`strace -f\`) ≤ xl's | $(attr_runs xen-attr-syscalls.csv xl | spread) | $(attr_runs xen-attr-syscalls.csv daemon | spread) | $(at_most "$sc_d" "$sc_xl") |"
	set -- $(lat_pooled xl busy)
	p99_xl=${1:-} n_xl=${2:-0}
	set -- $(lat_pooled xl idle)
	i99_xl=${1:-}
	w_xl=$(work_runs xl | median)
	for t in idle low normal; do
		set -- $(lat_pooled $t busy)
		p99=${1:-} n=${2:-0}
		set -- $(lat_pooled $t idle)
		i99=${1:-}
		w=$(work_runs $t | median)
		echo "| xenstore p99 during a 3 GiB teardown ≤ xl's during; xenreaperd at priority \`$t\` (µs, every run's reads pooled; reads) | $p99_xl ($n_xl) | $p99 ($n) | $(at_most "$p99" "$p99_xl") |"
		echo "| the same p99 ÷ that of the idle 3 s before, toward 1.5× | $(ratio "$p99_xl" "$i99_xl") | $(ratio "$p99" "$i99") | $(goal "$p99" "$i99" 1.5) |"
		echo "| the CPU-bound task's work during ÷ idle ≥ xl's; priority \`$t\` | $(printf '%.2f' "$w_xl") | $(printf '%.2f' "$w") | $(at_least "$w" "$w_xl") |"
	done
	worst=$(for s in $sizes; do
		awk -v a="$(med caller $s xl-async "$tmp/sizes")" -v b="$(med caller $s xenstore-write "$tmp/sizes")" -v s=$s \
			'BEGIN { if (b > 0) printf "%.3f %s\n", a / b, s }'
	done | sort -rn | head -n 1)
	ws=$(echo "$worst" | awk '{ print $2 }')
	# The spread of both at the worst size: the floor is a process of its
	# own too, and its runs differ by more than the goal's 5 %.
	range() { awk -v m=caller -v s="$ws" -v t="$1" '$1 == m && $2 == s && $3 == t { printf "%d–%d ms", $6, $7 }' "$tmp/sizes"; }
	echo "| \`xl destroy --async\` blocks its caller ≤ 1.05× one \`xenstore-write\`, at every size | | worst $(echo "$worst" | awk '{ printf "%.2f× (%s MiB", $1, $2 }'): over its runs the floor took $(range xenstore-write), \`xl destroy --async\` $(range xl-async)) | $(echo "$worst" | awk '{ print ($1 <= 1.05 ? "met" : "**MISSED**") }') |"
	tail -n +2 "$out/scale.csv" | awk -F, '{ print $1, $4 }' | sort -k1,1n -k2,2n | awk '
		{ v[$1] = v[$1] " " $2 }
		END { for (k in v) { m = split(substr(v[k], 2), a, " "); print k, (m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2) } }' |
		sort -n > "$tmp/scale-med"
	awk 'NR == 1 { b = $1; bv = $2; next } $1 <= 10000 && $2 / bv > g { g = $2 / bv; gn = $1 }
	     $1 == 100000 { big = sprintf("; N = 100000: %.2f×", $2 / bv) }
	     END { printf "| the daemon'"'"'s CPU per request on the doubles, N = %d to 10000 ≤ 1.1× | | worst %.2f× (N = %d)%s | %s |\n",
			b, g, gn, big, g <= 1.1 ? "met" : "**MISSED**" }' "$tmp/scale-med"
	echo
	echo "Why these p99s mean something: the resident client reads every 10 ms"
	echo "for the whole of each teardown and every run's reads are pooled, so"
	echo "each p99 above is over $n_xl reads or more (xl's is the fewest: its"
	echo "teardowns are the shortest) and rests on its $(( n_xl / 100 )) or more slowest, not on one."
	echo "The p99 of a single teardown, min–max over runs (µs):"
	for t in xl idle low normal; do
		printf '%s' "$t $(tail -n +2 "$out/xen-dom0.csv" | awk -F, -v t=$t '$1 == "xs-p99-us-busy" && $2 == t { print $4 }' | spread)"
		if [ $t = normal ]; then echo .; else printf '; '; fi
	done
	echo
	set -- $(tail -n +2 "$out/xen-attr-paths.csv" | awk -F, '{ n[$3] += $5; r[$2] = 1 }
		END { for (k in r) m++; printf "%.0f %.0f\n", n["main"] / m, n["worker"] / m }')
	main_calls=$(attr_sum daemon main)
	echo "What a miss is made of (the attribution section below): xenstored sent"
	echo "$(ipi_mean daemon xs) of xenreaperd's resched IPIs per teardown ($(ipi_mean xl xs) during \`xl destroy\`),"
	echo "its own tasks $(ipi_mean daemon own) (xl's: $(ipi_mean xl own)): the extra IPIs are xenstored"
	echo "waking to serve the daemon's requests and then waking their waiters."
	echo "xenreaperd made $1 xenstore requests per teardown from its main thread"
	echo "(job, progress and memory nodes) and $2 from its teardown worker"
	set -- "$@" $(tail -n +2 "$out/xen-attr-syscalls.csv" | awk -F, '$1 == "daemon" && $3 == "main" { r[$2] = 1
			if ($4 == "read" || $4 == "write") rw += $5; if ($4 == "rt_sigaction") sig += $5 }
		END { for (k in r) m++; printf "%.0f %.0f\n", rw / m, sig / m }')
	echo "(libxl's own).  Of its main thread's $main_calls system calls, $3 are"
	echo "reads and writes ($(awk -v a="$3" -v b="$1" 'BEGIN { printf "%.1f", b ? a / b : 0 }') per request it made) and $4 \`rt_sigaction\`:"
	echo "libxenstore 4.17 writes a request's header and body and reads a"
	echo "reply's in two calls each, and sets and restores SIGPIPE's action"
	echo "around each write (Xen 4.20's sends with \`MSG_NOSIGNAL\`;"
	echo "docs/xen-versions.md): $(awk -v a="$3" -v g="$4" -v b="$1" 'BEGIN { printf "%.1f", b ? (a + g) / b : 0 }') of these per request, besides"
	echo "the wake-up of xenstored that serves it."
	echo
	echo "Not figures: the 16 TiB guest (2^32 pages at 2 GiB/s, part 3) is a"
	echo "unit test on the doubles, \`tests/unit/test-metrics\`, which checks its"
	echo "pages left, rate, time left, memory nodes and metrics exact in every"
	echo "\`make check\`.  The default \`jobs = auto\` is dom0's vCPUs, at most 4"
	echo "(xenreaper.conf(5) says why): here $ncpu, the batch section's"
	echo "\`jobs = $(( ncpu < 4 ? ncpu : 4 ))\` rows."
}

cp "$out"/scale.csv "$out"/scale-in-flight.csv "$out"/xen-*.csv "$out"/xen-*.dat "$out"/xen-machine.txt "$docs/bench/"
md=$docs/benchmarks.md
{
cat <<EOF
# Benchmarks

Generated by \`make bench\` (\`tests/bench/report.sh\`) from the figures of
one run; every figure below is from that run (CSV files in
[\`bench/\`](bench/)).  Times are in milliseconds: median of the runs, with
min and max; ratios are of medians.  The machine is emulated (Xen under
QEMU TCG) and shared, so absolute times mean little: read the ratios.

| | |
|---|---|
| host CPU | $cpu |
| emulation | QEMU TCG, \`-cpu qemu64\`, $ncpu vCPUs, Xen + dom0 ($(mkey dom0_mem_mib) MiB) |
| Xen | $(mkey xen_version) |
| dom0 kernel | $(mkey dom0_kernel) |
| free for guests at start | $(mkey free_mib_at_start) MiB |
| date | $(date -u +'%Y-%m-%d %H:%M UTC') |
| commit | $commit |
EOF
[ -n "$wall" ] && echo "| \`make bench\` wall time | $((wall / 60)) min $((wall % 60)) s |"
cat <<EOF

Reproduce: \`make bench\` (root, the packages of \`scripts/install-deps\`);
the real-Xen part alone: \`tests/xen/xenbench --bench\` (figures in
\`bench-out/\`), then \`tests/bench/report.sh bench-out docs\`.

@GOALS@

## Caller blocked

How long the asking process is blocked, from its fork to its exit.  The
caller floor is one \`xenstore-write\` of one node that nobody watches
(measured beside \`xl destroy\` in each run): the least any dom0 client can
do to hand a teardown over.  \`xenreaper destroy\` was timed asking the
sync daemon (without \`--wait\` it returns once the request is written).
A client's start-up alone (\`xenreaper --version\`: exec, and loading
libxenreaper with libxenstore) shows how much of a client's time is spent
before it asks anything; the rest is its checks and the request's
transaction.  One xenstore transaction reads the domain's name and the
UUID libxl wrote in its \`vm\` node (only dom0 can write it); the daemon's
UUID guard checks that against the hypervisor before it destroys
anything, so the client loads libxenctrl only when something asks the
hypervisor (free memory, a domain libxl did not make).
Goal: \`xl destroy --async\` ≤ 1.05× the caller floor.

EOF
for s in $sizes; do
	echo "### $s MiB"
	echo
	echo "| tool | median | min | max | runs | ÷ floor | ÷ xl destroy |"
	echo "|---|---|---|---|---|---|---|"
	row xenstore-write "caller floor: \`xenstore-write\`" caller $s xenstore-write xl
	row xl "\`xl destroy\`" caller $s xenstore-write xl
	row xl-async "\`xl destroy --async\`" caller $s xenstore-write xl
	row xenreaper "\`xenreaper destroy\`" caller $s xenstore-write xl
	row client-startup "a client's start-up alone: \`xenreaper --version\`" caller $s xenstore-write xl
	echo
	echo "Goal, \`xl destroy --async\` ≤ 1.05× floor: $(goal "$(med caller $s xl-async "$tmp/sizes")" "$(med caller $s xenstore-write "$tmp/sizes")" 1.05)."
	echo
done
cat <<EOF
## Request to memory back, and to clean memory

From the request (the fork of the asking command; for the floor, the call)
until Xen's free memory is back at its baseline less 1 MiB.  The teardown
floor is \`libxl_domain_destroy\` called by a process whose libxl context is
already open (\`xbtool floor-destroy\`).  \`xl destroy\` and the floors
were measured with no daemon running.  xenreaperd deferred (the
default policy) is timed from the fork of \`xl destroy --async\`; sync
from the fork of \`xenreaper destroy\`, and its request-to-clean until its
job is \`done\` (the daemon saw the scrub backlog at 0).  Goal: xenreaperd deferred ≤ 1.1× the teardown floor.
The floor starts its clock with the process and its libxl context already
made; a request through the daemon starts with the caller's own process
(the caller-floor table above: a few hundred ms under emulation).  So the
row "from its caller's return" (memory back less the caller's blocked time,
run by run) is the daemon's part, the one comparable with the floor.

EOF
for s in $sizes; do
	echo "### $s MiB"
	echo
	echo "| tool | median | min | max | runs | ÷ floor | ÷ xl destroy |"
	echo "|---|---|---|---|---|---|---|"
	row floor "teardown floor" back $s floor xl
	row xl "\`xl destroy\`" back $s floor xl
	row xenreaper-deferred "xenreaperd deferred (\`xl destroy --async\`)" back $s floor xl
	row xenreaper-after-caller "xenreaperd deferred, from its caller's return" back $s floor xl
	row xenreaper-sync "xenreaperd sync (\`xenreaper destroy\`)" back $s floor xl
	f=$(med back $s floor "$tmp/sizes") x=$(med back $s xl "$tmp/sizes")
	c=$(med clean $s xenreaper-sync "$tmp/sizes")
	awk -v s=$s '$1 == "clean" && $2 == s && $3 == "xenreaper-sync" {
		printf "| xenreaperd sync, **to clean** | %s | %d | %d | %d |", $5, $6, $7, $4 }' "$tmp/sizes"
	echo " $(ratio "$c" "$f") | $(ratio "$c" "$x") |"
	echo
	echo "Goal, xenreaperd deferred ≤ 1.1× floor: $(goal "$(med back $s xenreaper-deferred "$tmp/sizes")" "$f" 1.1);"
	echo "the daemon's part alone (from its caller's return): $(goal "$(med back $s xenreaper-after-caller "$tmp/sizes")" "$f" 1.1)."
	echo "For scale: the floor's \`libxl_domain_destroy\` call itself returned after $(med floor-call $s floor "$tmp/sizes") ms (median)."
	echo
done
cat <<EOF
![pages left over time](bench/pages-left.png)

Pages left in one $(awk '{ print $2 }' "$tmp/sizes" | sort -n | tail -n 1) MiB guest over time
(\`tot_pages\`, sampled every 20 ms from the request) under \`xl destroy\`,
the teardown floor and xenreaperd (deferred, asked by \`xl destroy --async\`).

## Batches

Caller blocked (one process asks for all: a shell loop of \`xl destroy\`,
the same with every \`xl destroy\` in the background, or one
\`xenstore-write\` of every request), until the first domain is gone, and
until all memory is back.  Times in ms, median (min–max).

EOF
# batch_tools SHAPE: the tools measured on SHAPE, xl first, then xenreaperd
# by its jobs in numeric order.
batch_tools() {
	awk -v s="$1" '$2 == s { print $3 }' "$tmp/batch" | sort -u |
		awk '/^xl-seq$/ { print 0, $0; next } /^xl-par$/ { print 1, $0; next }
		     { n = $0; sub(/^xenreaper-jobs/, "", n); print 2 + n, $0 }' | sort -n | awk '{ print $2 }'
}
for shape in $(awk '{ print $2 }' "$tmp/batch" | sort -u); do
	echo "### $(echo $shape | sed 's/x/ guests of /') MiB"
	echo
	echo "| tool | caller blocked | first gone | all memory back | runs | back ÷ sequential xl |"
	echo "|---|---|---|---|---|---|"
	seq_back=$(awk -v s=$shape '$1 == "batch-back" && $2 == s && $3 == "xl-seq" { print $5 }' "$tmp/batch")
	for t in $(batch_tools "$shape"); do
		awk -v t=$t -v s=$shape -v ref="$seq_back" '
			function cell() { return sprintf("%s (%d–%d)", $5, $6, $7) }
			$2 == s && $3 == t && $1 == "batch-caller" { c = cell() }
			$2 == s && $3 == t && $1 == "batch-first-gone" { g = cell() }
			$2 == s && $3 == t && $1 == "batch-back" { b = cell(); v = $5; n = $4 }
			END { names["xl-seq"] = "sequential `xl destroy`"; names["xl-par"] = "parallel `xl destroy`"
			      name = t in names ? names[t] : t
			      if (t ~ /^xenreaper-jobs/) { sub(/^xenreaper-jobs/, "", name); name = "xenreaperd, jobs = " name }
			      printf "| %s | %s | %s | %s | %d | %.2f× |\n", name, c, g, b, n, v / ref }' "$tmp/batch"
	done
	echo
done
cat <<EOF

![batch totals](bench/batch.png)

## dom0 while a teardown runs

A 3 GiB guest torn down by plain \`xl destroy\` and by xenreaperd with its
worker at priority \`idle\` (SCHED_IDLE), \`low\` (nice 10, the default)
and \`normal\`.  Meanwhile one resident client reads a xenstore node every
10 ms (round trip, µs) and a CPU-bound task counts units of fixed work per
100 ms; both are compared with the 3 s of idle dom0 just before the same
teardown.  Medians over the runs.  Goal: xenstore p99 during a xenreaper
teardown ≤ 1.5× idle.

| teardown by | xenstore p50 idle → during (µs) | p99 idle → during (µs) | p99 ÷ idle | CPU task's work ÷ idle | teardown (ms) | runs |
|---|---|---|---|---|---|---|
EOF
for t in xl idle low normal; do
	case $t in xl) l="\`xl destroy\`" ;; *) l="xenreaperd, priority \`$t\`" ;; esac
	n=$(awk -v t=$t '$1 == "teardown-ms" && $2 == t { print $3 }' "$tmp/dom0")
	echo "| $l | $(dmed xs-p50-us-idle $t) → $(dmed xs-p50-us-busy $t) | $(dmed xs-p99-us-idle $t) → $(dmed xs-p99-us-busy $t) | $(ratio "$(dmed xs-p99-us-busy $t)" "$(dmed xs-p99-us-idle $t)") | $(ratio "$(dmed spin-units-per-100ms-busy $t)" "$(dmed spin-units-per-100ms-idle $t)") | $(dmed teardown-ms $t) | $n |"
done
echo
for t in idle low normal; do
	echo "Goal, xenstore p99 during a xenreaper teardown (priority \`$t\`) ≤ 1.5× idle: $(goal "$(dmed xs-p99-us-busy $t)" "$(dmed xs-p99-us-idle $t)" 1.5)."
done
cat <<EOF

![xenstore latency](bench/xenstore-latency.png)

Round trips of the resident xenstore client, every run of each teardown
by the tool pooled, idle (the 3 s before) and during.

## What sampling costs dom0

A 512 MiB guest torn down by plain \`xl destroy\` and by xenreaperd at
\`progress-interval\` 20 ms, 250 ms (the default) and 1 s, under
\`strace -c -f\` (the daemon's threads and children, or \`xl\` and its
children): system calls and mlock/munlock among them per teardown, and the
resched IPIs dom0 took meanwhile (\`/proc/interrupts\`, RES, all vCPUs).
strace stretches every system call, so the times here are longer than
elsewhere; the counts are what they are.  Goal: 0 mlock per sample.

| teardown by | system calls | per second | mlock + munlock | resched IPIs | per second | traced ms | runs |
|---|---|---|---|---|---|---|---|
EOF
for t in xl 20ms 250ms 1s; do
	case $t in xl) l="\`xl destroy\`" ;; *) l="xenreaperd, progress-interval $t" ;; esac
	sc=$(dmed syscalls $t) ms=$(dmed traced-ms $t) res=$(dmed res-ipis $t)
	n=$(awk -v t=$t '$1 == "syscalls" && $2 == t { print $3 }' "$tmp/dom0")
	echo "| $l | $sc | $(awk -v a=$sc -v b=$ms 'BEGIN { printf "%.0f", a * 1000 / b }') | $(dmed mlocks $t) | $res | $(awk -v a=$res -v b=$ms 'BEGIN { printf "%.0f", a * 1000 / b }') | $ms | $n |"
done
echo
echo "mlock/munlock calls in all runs: $(awk -F, '$1 == "mlocks" { n += $4 } END { print n + 0 }' "$out/xen-dom0.csv") (goal 0 per sample: $(awk -F, '$1 == "mlocks" { n += $4 } END { print n ? "**MISSED**" : "met" }' "$out/xen-dom0.csv"))."
echo
echo "The system calls by kind (median calls per teardown over the runs, the 8 most frequent of each):"
echo
echo "| teardown by | system calls by kind |"
echo "|---|---|"
for t in xl 20ms 250ms 1s; do
	printf '| %s | ' "$t"
	tail -n +2 "$out/xen-syscalls.csv" | awk -F, -v t=$t '$1 == t { print $3, $4 }' | sort -k1,1 -k2,2n |
		awk '{ v[$1] = v[$1] " " $2; n[$1]++ }
		     END { for (k in v) { m = split(substr(v[k], 2), a, " "); print a[int((m + 1) / 2)], k } }' |
		sort -rn | head -n 8 | awk '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $2, $1 }'
	echo " |"
done
cat <<EOF

## Where a teardown's system calls and resched IPIs come from

\`tests/xen/bench/45-attribution.sh\`: a 512 MiB guest (no devices, as
above) torn down by plain \`xl destroy\` and by xenreaperd (defaults), each
twice a run: once under \`strace -f\`, whose calls are counted by the
thread that made them, and once under ftrace alone, whose function tracer
takes the kernel stack of every resched IPI sent
(\`xen_smp_send_reschedule\`): the task that sent it, the system call it
was in, and what woke the task that was to run.  System calls: medians per teardown over
the runs; IPIs: means, beside the RES count of \`/proc/interrupts\` over
the same teardown (the sends traced and the IPIs taken should agree).  Harness: the bench's own processes (\`xbtool\` waiting on a
watch or on physinfo, the shell, \`timeout\`).  xenreaperd's forked
children carry its name, so their IPIs count as its own.

| teardown by | thread | system calls | the most frequent |
|---|---|---|---|
EOF
# attr_sum TOOL ROLE: the median over runs of TOOL's calls by ROLE ("": all)
attr_sum() {
	tail -n +2 "$out/xen-attr-syscalls.csv" | awk -F, -v t="$1" -v f="$2" '$1 == t && (f == "" || $3 == f) { n[$2] += $5 }
		END { for (r in n) print n[r] }' |
		sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}
for t in xl daemon; do
	case $t in xl) l='`xl destroy`' ;; *) l=xenreaperd ;; esac
	for role in main worker "other thread" child; do
		c=$(attr_sum $t "$role")
		[ -n "$c" ] || continue
		top=$(tail -n +2 "$out/xen-attr-syscalls.csv" | awk -F, -v t=$t -v r="$role" '$1 == t && $3 == r { n[$4] += $5; runs[$2] = 1 }
			END { for (k in runs) m++; for (k in n) printf "%.0f %s\n", n[k] / m, k }' |
			sort -rn | head -n 5 | awk '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $2, $1 }')
		echo "| $l | $role | $c | $top |"
	done
	echo "| $l | **all** | **$(attr_sum $t "")** | |"
done
cat <<EOF

| teardown by | resched IPIs (RES in /proc/interrupts) | traced | by the teardown's own tasks | by xenstored | by the kernel (idle, softirq, kworkers) | by the harness | the most frequent senders (task: where, woken by) |
|---|---|---|---|---|---|---|---|
EOF
# attr_ipis TOOL CATEGORY: the mean over runs ("all": every IPI)
attr_ipis() {
	awk -v c=$2 '$1 == "all" { m++ } $1 == c { n += $2 } END { printf "%.0f", m ? n / m : 0 }' "$tmp/ipis-$1"
}
for t in xl daemon; do
	case $t in xl) l='`xl destroy`' own='^xl$' ;; *) l=xenreaperd own='^(xenreaperd|xr-teardown)$' ;; esac
	tail -n +2 "$out/xen-attr-ipis.csv" | awk -F, -v t=$t -v own="$own" '$1 == t {
		c = $3 ~ own ? "own" : $3 == "xenstored" ? "xs" : $3 ~ /^(<idle>|ksoftirqd|kworker|rcu|migration|cpuhp)/ ? "kernel" : "harness"
		n[$2 "," c] += $5; all[$2] += $5; runs[$2] = 1
		src[$3 ": " $4] += $5 }
		END {
			for (r in runs) m++
			for (r in runs) print "all", all[r]
			for (k in n) { split(k, a, ","); print a[2], n[k] }
			for (k in src) printf "src %.1f %s\n", src[k] / m, k
		}' > "$tmp/ipis-$t"
	top=$(awk '$1 == "src" { $1 = ""; print }' "$tmp/ipis-$t" | sort -k1,1rn | head -n 4 |
		awk '{ n = $1; $1 = ""; sub(/^ /, ""); printf "%s%s (%s)", (NR > 1 ? "; " : ""), $0, n }')
	res=$(tail -n +2 "$out/xen-attr-res.csv" | awk -F, -v t=$t '$1 == t { n += $5; m++ } END { printf "%.0f", m ? n / m : 0 }')
	echo "| $l | $res | $(attr_ipis $t all) | $(attr_ipis $t own) | $(attr_ipis $t xs) | $(attr_ipis $t kernel) | $(attr_ipis $t harness) | $top |"
done
cat <<EOF

xenreaperd's xenstore requests per teardown by path (domids and numbers
as N; mean over the runs; the main thread's, then the teardown workers'
(threads before issue 39, the teardown process since), whose are
libxl's), the most frequent:

| thread | path | requests |
|---|---|---|
EOF
for role in main worker; do
	tail -n +2 "$out/xen-attr-paths.csv" | awk -F, -v r=$role '$3 == r { n[$4] += $5; runs[$2] = 1 }
		END { for (k in runs) m++; for (k in n) printf "%.1f %s\n", n[k] / m, k }' | sort -rn | head -n 10 |
		awk -v r=$role '{ printf "| %s | `%s` | %s |\n", r, $2, $1 }'
done
cat <<EOF

## Scrub probing

1 GiB guests torn down one at a time by xenreaperd at \`log-level = debug\`
(each probe is logged with its duration).  A sync job's probes all come
before it is done: one row per teardown, from the request to done.
Deferred jobs share probes (one once releases settle, at most one a
minute): one row for the whole series, from the first request until a
probe newer than the last job's end.  Console lines: what Xen's console
ring held at the end of the row, cleared at its start (\`xl dmesg -c\`).

| policy | teardowns | probes per teardown (min–max per row) | ms per probe | console lines per teardown | lines per probe | rows |
|---|---|---|---|---|---|---|
EOF
for p in deferred sync; do
	tail -n +2 "$out/xen-probes.csv" | awk -F, -v p=$p '$1 == p { n++; t += $3; pr += $4; ms += $5; ln += $6
			r = $4 / $3; if (n == 1 || r < lo) lo = r; if (n == 1 || r > hi) hi = r }
		END { if (!n) exit
		      printf "| %s | %d | %.2f (%.2f–%.2f) | %s | %.0f | %s | %d |\n", p, t, pr / t, lo, hi,
			pr ? sprintf("%.0f", ms / pr) : "–", ln / t, pr ? sprintf("%.0f", ln / pr) : "–", n }'
done
cat <<EOF

![scrub backlog](bench/scrub-backlog.png)

The host's scrub backlog over one 2 GiB teardown per policy, probed every
200 ms by \`xbtool scrub-trace\` (key H, as the daemon probes), with the
moment each job said \`done\`: deferred when the pages are back, sync
once the backlog is 0.
EOF
cat <<EOF

## Scrub backlog source: stock vs patched

The same bench (\`tests/xen/bench/60-scrub-source.sh\`) in two boots:
Debian's hypervisor, where the daemon can only learn the scrub backlog
from a heap dump (debug key H, read back from the console ring), and one
built by \`tests/xen/build-xen\` with the series in \`xen-patches/\`, which
reports the backlog in \`physinfo.scrub_pages\` and says so with
\`XEN_SYSCTL_PHYSCAP_scrub_pages\`.  $(awk -F, 'NR == 2 { print $4 }' "$out/xen-scrub-source.csv") MiB guests without devices,
the daemon's defaults but for \`[default] scrub\`; median over the runs,
min–max in brackets when there are several.  Console lines: what Xen's
console ring got from the request until done (sync), or until a probe
made after the job's end read 0 (deferred), cleared first.  Done ÷ clean:
a sync job's request-to-done over request-to-clean, clean being the first
reading of 0 after the last non-zero one, from a poller beside it
(patched: physinfo every 20 ms; stock: a heap dump every 200 ms, the
only figure there is, in a teardown of its own since it writes to the
console).  Published vs hypervisor: a deferred job's \`scrub/pages\`
against the hypervisor's figure read at once after it (physinfo on
patched, a heap dump on stock), every 20 ms (200 ms with a heap dump)
from the job's end until both read 0: what a reader is told against the
truth then (a figure stands until the next probe); and each probe's own
figure against the hypervisor's sample nearest its \`scrub/probed\` time.  Age while the backlog is non-zero:
after the job's end the backlog only falls, so a published figure is the
truth of the last sample still at or above it; its age is the time since
that sample (one 250 ms progress interval, plus the poller's 20 ms, is the
goal; a figure the poller cannot place is counted as not within it).  One probe: \`xbtool probe-cost\`,
20 of each way, the median.

EOF
# scrub_col FILE COLUMN [DIGITS]: "median (min–max)" of a column.
scrub_col() {
	tail -n +2 "$1" | cut -d, -f"$2" | grep -E '^[0-9.]+$' | sort -n | awk -v d="${3:-0}" '
		{ v[++n] = $1 }
		END { if (!n) { print "–"; exit }
		      m = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
		      f = "%." d "f"
		      if (n == 1) printf f "\n", m
		      else printf f " (" f "–" f ")\n", m, v[1], v[n] }'
}
stock=$out/xen-scrub-source.csv patched=$out-patched/xen-scrub-source.csv
scrub_first() { awk -F, -v c="$2" 'NR == 2 { print $c }' "$1"; }
# scrub_goal VALUE LIMIT: met or MISSED against "at most LIMIT"
scrub_goal() {
	awk -v v="$1" -v l="$2" 'BEGIN { if (v == "" || v == "–") print "not measured"
		else if (v + 0 <= l + 0) print "met"
		else printf "**MISSED** (%s > %s)\n", v, l }'
}
psl=$(scrub_col "$patched" 5) pdl=$(scrub_col "$patched" 6) pr=$(scrub_col "$patched" 9 2) pold=$(scrub_col "$patched" 23)
cat <<EOF
| | stock | patched | goal (patched) |
|---|---|---|---|
| Xen | $(scrub_first "$stock" 1) | $(scrub_first "$patched" 1) | |
| \`XEN_SYSCTL_PHYSCAP_scrub_pages\` | $(scrub_first "$stock" 2) | $(scrub_first "$patched" 2) | 1 |
| runs | $(($(wc -l < "$stock") - 1)) | $(($(wc -l < "$patched") - 1)) | |
| console lines per sync teardown | $(scrub_col "$stock" 5) | $psl | 0: $(scrub_goal "${psl%% *}" 0) |
| console lines per deferred teardown | $(scrub_col "$stock" 6) | $pdl | 0: $(scrub_goal "${pdl%% *}" 0) |
| one probe: physinfo (µs) | $(scrub_col "$stock" 18) | $(scrub_col "$patched" 18) | |
| one probe: heap dump read back (µs) | $(scrub_col "$stock" 19) | $(scrub_col "$patched" 19) | |
| console lines per heap dump | $(scrub_col "$stock" 20) | $(scrub_col "$patched" 20) | |
| sync: request to done (ms) | $(scrub_col "$stock" 7) | $(scrub_col "$patched" 7) | |
| sync: request to clean (ms) | $(scrub_col "$stock" 8) | $(scrub_col "$patched" 8) | |
| sync: done ÷ clean | $(scrub_col "$stock" 9 2)× | $pr× | ≤ 1.1×: $(scrub_goal "${pr%% *}" 1.1) |
| poller for clean (its readings) | $(scrub_first "$stock" 10) ($(scrub_col "$stock" 11)) | $(scrub_first "$patched" 10) ($(scrub_col "$patched" 11)) | |
| deferred: mean \\|published − hypervisor\\| (pages) | $(scrub_col "$stock" 13) | $(scrub_col "$patched" 13) | |
| deferred: largest \\|published − hypervisor\\| (pages) | $(scrub_col "$stock" 14) | $(scrub_col "$patched" 14) | |
| deferred: samples; the hypervisor's peak (pages) | $(scrub_col "$stock" 12); $(scrub_col "$stock" 15) | $(scrub_col "$patched" 12); $(scrub_col "$patched" 15) | |
| deferred: probes published; mean \\|published − hypervisor at the probe's time\\| (pages) | $(scrub_col "$stock" 16); $(scrub_col "$stock" 17) | $(scrub_col "$patched" 16); $(scrub_col "$patched" 17) | |
| deferred, while the backlog is non-zero: samples; of them showing a figure at most 270 ms old | $(scrub_col "$stock" 21); $(scrub_col "$stock" 22) | $(scrub_col "$patched" 21); $(scrub_col "$patched" 22) | all |
| deferred: the oldest figure shown then (ms) | $(scrub_col "$stock" 23) | $pold | ≤ 270: $(scrub_goal "${pold%% *}" 270) |

The two hypervisors can differ by more than the series: build-xen builds
the newest source apt can fetch when Debian's installed version's is not
in the archive (the Xen row says which; \`xen-patches/README.md\`).  CSV:
[\`bench/xen-scrub-source.csv\`](bench/xen-scrub-source.csv) (stock),
[\`bench/patched/xen-scrub-source.csv\`](bench/patched/xen-scrub-source.csv).
EOF
cat <<EOF

## The daemon's own cost

EOF
awk -F, 'NR > 1 { v[$1] = $5 } END {
	printf "| figure | value | goal |\n|---|---|---|\n"
	printf "| RSS idle, at start | %d KiB | |\n", v["rss-idle-kib"]
	printf "| RSS after the size bench'"'"'s jobs | %d KiB | < 4 MiB: %s |\n", v["rss-after-jobs-kib"],
		v["rss-after-jobs-kib"] < 4096 ? "met" : sprintf("**MISSED** by %d KiB", v["rss-after-jobs-kib"] - 4096) }' "$out/xen-daemon.csv"
awk -F, 'NR > 1 { v[$1] = $2 } END {
	w = v["idle-wakeups-per-10s"] / 10
	printf "| at rest: wake-ups (context switches of all its threads over 10 s) | %.1f per second | 0: %s |\n", w,
		w == 0 ? "met" : sprintf("**MISSED** by %.1f per second", w)
	printf "| at rest: CPU (user + system ticks over 10 s) | %d | 0: %s |\n", v["idle-cpu-ticks-per-10s"],
		v["idle-cpu-ticks-per-10s"] == 0 ? "met" : "**MISSED**"
	printf "| at rest: system calls over the next 10 s (strace -c -f) | %d | |\n", v["idle-syscalls-per-10s"]
	printf "| RSS at rest | %d KiB | |\n", v["rss-idle-kib"]
	printf "| RSS with %d jobs queued (jobs = 1, the first held) | %d KiB | < 4 MiB: %s |\n", v["queued-jobs"] + 1, v["rss-queued-kib"],
		v["rss-queued-kib"] < 4096 ? "met" : sprintf("**MISSED** by %d KiB", v["rss-queued-kib"] - 4096)
	printf "| RSS after %d finished jobs (%d records kept) | %d KiB | < 4 MiB: %s |\n", v["finished-jobs"], v["job-records-kept"],
		v["rss-after-finished-kib"], v["rss-after-finished-kib"] < 4096 ? "met" : sprintf("**MISSED** by %d KiB", v["rss-after-finished-kib"] - 4096)
	printf "| peak RSS of that daemon | %d KiB | |\n", v["rss-peak-kib"] }' "$out/xen-rest.csv"
smallest=$(tail -n +2 "$out/xen-sizes.csv" | cut -d, -f2 | sort -n | head -n 1)
awk -F, -v floor="$(med back "$smallest" floor "$tmp/sizes")" -v size="$smallest" 'NR > 1 { v[$1] = $2 } END {
	if (!("spawn-us" in v)) exit
	printf "| a teardown helper'"'"'s start (issue 39): posix_spawn until its libxl context is open (median of 20) | %.1f ms, %.3f× the %s MiB teardown floor (%s ms) | |\n",
		v["spawn-us"] / 1000, floor ? v["spawn-us"] / 1000 / floor : 0, size, floor
	printf "| its parts: a libxl context made in-process; posix_spawn of /bin/true until reaped | %.1f ms; %.1f ms | |\n",
		v["ctx-us"] / 1000, v["true-us"] / 1000 }' "$out/xen-rest.csv"
echo
echo "The finished jobs are $(awk -F, '$1 == "finished-jobs" { print $2 }' "$out/xen-rest.csv") in all: the queued ones, done, and requests for absent domains, refused (failed)."
cat <<EOF

## Before and after issue 39: worker threads, then teardown processes

The daemon built from 753a49a (\`tests/xen/build-before\`: worker threads
in one process, each with its own libxl context) beside this tree's
(\`xenreaper-teardown\` processes, each serving one teardown at a time,
one kept ready), in one boot, run by run
interleaved, both at their default policy.  The daemon's part is its
memory back less the teardown floor's (\`xbtool floor-destroy\`: one
\`libxl_domain_destroy\`, its context made first); system calls are the
daemon's with its teardown processes and their children (\`strace -c -f\`,
so times are stretched); RSS is the daemon's, idle, then with the teardown
process it keeps ready, and the peak of the
daemon and its teardown processes together while the batch of eight ran.
Median (min–max) of the runs.

EOF
stats_ba() {
	tail -n +2 "$out/xen-before-after.csv" | awk -F, '{ print $1 ",0," $2 "," $3 "," $4 }' |
		sed '1i measure,size,tool,run,value' > "$tmp/ba.csv"
	stats "$tmp/ba.csv" | awk '{ $2 = ""; print }' | tr -s ' '
}
stats_ba > "$tmp/ba"
# bmed MEASURE TOOL; bspread MEASURE TOOL: median, and "median (min–max)"
bmed() { awk -v m="$1" -v t="$2" '$1 == m && $2 == t { print $4 }' "$tmp/ba"; }
bspread() { awk -v m="$1" -v t="$2" '$1 == m && $2 == t { print $4 " (" $5 "–" $6 ")" }' "$tmp/ba"; }
floor=$(bmed one-back-ms floor)
echo "| figure | before | after | after ÷ before |"
echo "|---|---|---|---|"
for m in one-back-ms batch2-back-ms batch4-back-ms batch8-back-ms syscalls res-ipis rss-idle-kb rss-idle-all-kb batch8-rss-peak-kb; do
	case $m in
	one-back-ms) label="1 GiB: memory back, ms" ;;
	batch*-back-ms) label="$(echo $m | sed 's/batch\([0-9]*\)-.*/\1/') × 512 MiB at once: all memory back, ms" ;;
	syscalls) label="512 MiB: system calls per teardown" ;;
	res-ipis) label="512 MiB: resched IPIs per teardown" ;;
	rss-idle-kb) label="RSS idle, KiB" ;;
	rss-idle-all-kb) label="RSS idle with its idle teardown processes, KiB" ;;
	batch8-rss-peak-kb) label="RSS peak during 8 at once (daemon and teardown processes), KiB" ;;
	esac
	echo "| $label | $(bspread $m before) | $(bspread $m after) | $(ratio "$(bmed $m after)" "$(bmed $m before)") |"
done
b=$(bmed one-back-ms before) a=$(bmed one-back-ms after)
echo "| 1 GiB: the daemon's part ÷ the teardown floor ($floor ms) | $(awk -v x="$b" -v f="$floor" 'BEGIN { printf "%.3f", (x - f) / f }') | $(awk -v x="$a" -v f="$floor" 'BEGIN { printf "%.3f", (x - f) / f }') | |"
echo "| 1 GiB: memory back ÷ \`xl destroy\`'s ($(bmed one-back-ms xl) ms) | $(ratio "$b" "$(bmed one-back-ms xl)") | $(ratio "$a" "$(bmed one-back-ms xl)") | |"
for n in 2 4 8; do
	echo "| $n × 512 MiB: all memory back ÷ parallel \`xl destroy\`'s ($(bmed batch$n-back-ms xl-par) ms) | $(ratio "$(bmed batch$n-back-ms before)" "$(bmed batch$n-back-ms xl-par)") | $(ratio "$(bmed batch$n-back-ms after)" "$(bmed batch$n-back-ms xl-par)") | |"
done
cat <<EOF

CSV: [\`bench/xen-before-after.csv\`](bench/xen-before-after.csv).

## A host emptied at once (issue 40)

\`80-mass\`, in a boot of its own: $(mass_shape) torn down all at once by
\`xl destroy\` one after another (xl-seq) and all at once (xl-par), and by
xenreaperd at its default policy, asked by \`xl destroy --async\` of each
through the front (async) or by one xenstore-write of every request (tx).
Time to clean is from the request until key H reports nothing to scrub;
dom0 CPU is every vCPU's busy time until all memory was back
(\`/proc/stat\`); the xenstore p99 is a resident client's reads during
that time.  Median (min–max) of the runs.

| figure | xl-seq | xl-par | async | tx |
|---|---|---|---|---|
EOF
mass_table
mass_exited
cat <<EOF

$(mass_goals)

![Memory back over time, a host emptied at once](bench/mass.png)

CSV: [\`bench/xen-mass.csv\`](bench/xen-mass.csv), [\`bench/xen-mass.dat\`](bench/xen-mass.dat).

## Two NUMA nodes (issue 40)

\`85-numa\`, in a boot with two NUMA nodes (\`xenbench --numa 2\`:
QEMU's SRAT, half the RAM and half the CPUs each): a 1 GiB guest pinned to
each node's CPUs, each torn down in turn under \`scrub = sync\` on a busy
host.  Xen scrubs a node's pages on an idle CPU of that node, one CPU per
node at a time (\`node_to_scrub\` in page_alloc.c); samples every 250 ms
while the job was scrubbing.

| guest on node | samples scrubbing | with its node's published backlog > 0 | with the other node's > 0 | the other node's, pages (min–max) | published = the last heap dump's | done (ms) | last sample with its node dirty (ms) |
|---|---|---|---|---|---|---|---|
EOF
for n in 0 1; do
	v() { awk -F, -v m=$1 -v n=$n '$1 == m && $2 == n { print $3 }' "$out/xen-numa.csv"; }
	# A residue that does not move is not the freed node's scrub: its range.
	other=$(awk -v n=$n '$1 == n && $7 == "scrubbing" { x = n == 0 ? $4 : $3; if (x == "-") next
		if (lo == "" || x + 0 < lo + 0) lo = x; if (x + 0 > hi + 0) hi = x } END { print (lo == "" ? "–" : lo "–" hi) }' "$out/xen-numa.dat")
	echo "| $n | $(v samples-scrubbing) | $(v published-own-node-nonzero) | $(v published-other-node-nonzero) | $other | $(v published-equals-last-dump) | $(v done-ms) | $(v last-dirty-ms) |"
done
cat <<EOF

CSV: [\`bench/xen-numa.csv\`](bench/xen-numa.csv), [\`bench/xen-numa.dat\`](bench/xen-numa.dat).

## Scale without Xen (test doubles)

\`tests/bench/bench-scale\` (\`make bench-host\`): N requests through the
daemon's real intake, job machinery and the in-process runner (policy defaults,
jobs = 1) on the in-process xenstore and hypervisor of \`tests/unit/\`, in
waves of 100 domains.  CPU is the process's (all threads); the fake
xenstore is a test double (a sorted array, an undo log per transaction),
so its own cost is measured apart and subtracted ("daemon").
Peak RSS includes the fake xenstore's contents.

| N | CPU per request, daemon (µs) | min | max | with the fake xenstore (µs) | xenstore ops per job | transactions per job | hypervisor calls per job | peak RSS (KiB) |
|---|---|---|---|---|---|---|---|---|
EOF
tail -n +2 "$out/scale.csv" | sort -t, -k1,1n -k4,4n | awk -F, '
	function flush() {
		if (!n) return
		m = n % 2 ? d[(n + 1) / 2] : (d[n / 2] + d[n / 2 + 1]) / 2
		printf "| %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f | %d |\n", key, m, d[1], d[n],
			tot / n, ops / n, tx / n, hv / n, rss
		med[key] = m; order[++k] = key
	}
	{ if ($1 != key) { flush(); key = $1; n = 0; tot = ops = tx = hv = rss = 0 }
	  d[++n] = $4; tot += $3; ops += $8; tx += $9; hv += $10; if ($12 > rss) rss = $12 }
	END { flush()
	      if (k > 1) {
		# Flat at every size, not only the largest: the worst growth
		# from the smallest N.
		worst = 2
		for (i = 3; i <= k; i++)
			if (med[order[i]] > med[order[worst]])
				worst = i
		g = med[order[worst]] / med[order[1]]
		printf "\nGrowth of the daemon'"'"'s CPU per request from N = %d to N = %d, the worst of the sizes: **%.2f×** ", order[1], order[worst], g
		printf "(1.0 is linear overall, below 1 better; the goal, linear or better, counting up to 1.1× as run-to-run noise: %s).\n", g <= 1.1 ? "met" : sprintf("**MISSED** by %.0f %%", (g / 1.1 - 1) * 100)
		printf "Step by step:"
		for (i = 2; i <= k; i++)
			printf "%s N = %d to %d: %.2f×", (i > 2 ? ";" : ""), order[i - 1], order[i], med[order[i]] / med[order[i - 1]]
		printf ".\n"
	      } }'
cat <<EOF

### Teardowns in flight (issue 40)

\`bench-scale -f\`: K teardowns held at once inside the fake hypervisor's
destroy (the policy's \`jobs\` set to K directly: the parser stops at 64,
so past it the figure is the main loop's cost per job), then the loop run
on the fake clock for 8 s with nothing changing (after 8 s for the rates
the start set to fall to nothing), 8 s with the same 10 jobs' pages falling
at every progress interval (250 ms), and while 100 more requests are taken
(queued behind the K).  CPU is the main thread's, less the fake xenstore's
and the fake hypervisor's own; the medians of the runs.

| in flight | CPU per tick, still (µs) | per tick and job in flight (µs) | xenstore requests per tick, still | CPU per tick, 10 moving (µs) | xenstore requests per tick, 10 moving | CPU per request taken (µs) | xenstore requests per request taken | peak RSS (KiB) |
|---|---|---|---|---|---|---|---|---|
EOF
tail -n +2 "$out/scale-in-flight.csv" | sort -t, -k1,1n | awk -F, '
	function med(v, n,   i, j, t) {
		for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
		return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
	}
	function flush() {
		if (!n) return
		printf "| %d | %.1f | %.3f | %.2f | %.1f | %.2f | %.1f | %.2f | %d |\n", key, med(a, n), med(b, n),
			med(c, n), med(d, n), med(e, n), med(f, n), med(g, n), rss
		pj[++k] = med(b, n); mv[k] = med(e, n); rq[k] = med(f, n); kk[k] = key
	}
	{ if ($1 != key) { flush(); key = $1; n = 0; rss = 0 }
	  n++; a[n] = $4; b[n] = $5; c[n] = $6; d[n] = $8; e[n] = $9; f[n] = $10; g[n] = $11
	  if ($12 > rss) rss = $12 }
	END { flush()
	      if (k > 1)
		printf "\nFrom %d to %d in flight (goal: at most 1.1×): CPU per tick and job %.2f×, per request taken %.2f×; xenstore requests per tick with 10 jobs moving %.2f× (they follow what changed when this is 1.0).\n",
			kk[1], kk[k], pj[k] / pj[1], rq[k] / rq[1], mv[k] / mv[1] }'
} > "$tmp/benchmarks.md"
# The goals' summary goes at the top, made last: it reads the figures the
# sections made on their way.
goals_issue18 > "$tmp/goals.md"
sed -i -e "/^@GOALS@\$/{r $tmp/goals.md" -e 'd}' "$tmp/benchmarks.md"

# --- plots
gnuplot <<EOF || die "gnuplot failed"
set terminal pngcairo size 900,500 noenhanced
set output "$docs/bench/pages-left.png"
set title "Pages left in one guest over time, from the request"
set xlabel "ms since the request"
set ylabel "MiB still held by the domain"
set key top right
set grid
plot "$out/xen-trace-xl.dat" using 1:(\$2/256.0) with lines lw 2 title "xl destroy", \
     "$out/xen-trace-floor.dat" using 1:(\$2/256.0) with lines lw 2 title "teardown floor (libxl, context open)", \
     "$out/xen-trace-xl-async.dat" using 1:(\$2/256.0) with lines lw 2 title "xenreaperd deferred (xl destroy --async)"
EOF
# One bar group per shape and tool, in the tables' order.
for m in caller first-gone back; do
	for shape in $(awk '{ print $2 }' "$tmp/batch" | sort -u); do
		for t in $(batch_tools "$shape"); do
			awk -v m=batch-$m -v s=$shape -v t=$t '$1 == m && $2 == s && $3 == t {
				sub(/^xenreaper-/, "", t); print s "\\n" t, $5, $6, $7 }' "$tmp/batch"
		done
	done > "$tmp/batch-$m.dat"
done
gnuplot <<EOF || die "gnuplot failed"
set terminal pngcairo size 900,500 noenhanced
set output "$docs/bench/batch.png"
set title "Batch teardown: median (min-max bars), ms"
set style data histograms
set style histogram errorbars gap 2 lw 1
set style fill solid 0.6 border -1
set ylabel "ms"
set yrange [0:*]
set grid ytics
set bmargin 5
set key outside top center horizontal
plot "$tmp/batch-caller.dat" using 2:3:4:xtic(1) title "caller blocked", \
     "$tmp/batch-first-gone.dat" using 2:3:4 title "first domain gone", \
     "$tmp/batch-back.dat" using 2:3:4 title "all memory back"
EOF
# The mass teardown's memory back over time, run 1 of each tool.
for t in xl-seq xl-par async tx; do
	awk -v t=$t '$1 == t && $2 == 1 { print $3 / 1000, $4 / 256 }' "$out/xen-mass.dat" > "$tmp/mass-$t.dat"
done
gnuplot <<EOF || die "gnuplot failed"
set terminal pngcairo size 900,500 noenhanced
set output "$docs/bench/mass.png"
set title "A host emptied at once: memory back over time, from the request"
set xlabel "s since the request"
set ylabel "MiB back in Xen's free pool"
set key bottom right
set grid
plot "$tmp/mass-xl-seq.dat" using 1:2 with lines lw 2 title "xl destroy, one after another", \
     "$tmp/mass-xl-par.dat" using 1:2 with lines lw 2 title "xl destroy, all at once", \
     "$tmp/mass-async.dat" using 1:2 with lines lw 2 title "xenreaperd (xl destroy --async of each)", \
     "$tmp/mass-tx.dat" using 1:2 with lines lw 2 title "xenreaperd (one transaction of requests)"
EOF
# xenstore round trips as distributions (one line per teardown tool and
# phase: the fraction of reads at or under each latency).
for t in xl idle low normal; do
	for ph in idle busy; do
		awk -v t=$t -v p=$ph '$1 == t && $2 == p { print $3 }' "$out/xen-xslat.dat" | sort -n |
			awk '{ v[NR] = $1 } END { for (i = 1; i <= NR; i++) print v[i], i / NR }' > "$tmp/lat-$t-$ph.dat"
	done
done
gnuplot <<EOF || die "gnuplot failed"
set terminal pngcairo size 900,500 noenhanced
set output "$docs/bench/xenstore-latency.png"
set title "xenstore read round trips of a resident client, idle and during a 3 GiB teardown"
set xlabel "round trip (µs, log scale)"
set ylabel "fraction of reads at or under"
set logscale x
set key bottom right
set grid
plot "$tmp/lat-xl-idle.dat" using 1:2 with lines lw 1 dt 2 lc 1 title "idle (before xl destroy)", \
     "$tmp/lat-xl-busy.dat" using 1:2 with lines lw 2 lc 1 title "during xl destroy", \
     "$tmp/lat-idle-busy.dat" using 1:2 with lines lw 2 lc 2 title "during xenreaperd, priority idle", \
     "$tmp/lat-low-busy.dat" using 1:2 with lines lw 2 lc 3 title "during xenreaperd, priority low", \
     "$tmp/lat-normal-busy.dat" using 1:2 with lines lw 2 lc 4 title "during xenreaperd, priority normal"
EOF
dd=$(sed -n 's/^# done //p' "$out/xen-scrub-deferred.dat") ds=$(sed -n 's/^# done //p' "$out/xen-scrub-sync.dat")
gnuplot <<EOF || die "gnuplot failed"
set terminal pngcairo size 900,500 noenhanced
set output "$docs/bench/scrub-backlog.png"
set title "Scrub backlog over one 2 GiB teardown, and when the job said done"
set xlabel "ms since the request"
set ylabel "MiB waiting to be scrubbed"
set key top right
set grid
set arrow from ${dd:-0},graph 0 to ${dd:-0},graph 1 nohead lc 1 dt 2
set arrow from ${ds:-0},graph 0 to ${ds:-0},graph 1 nohead lc 2 dt 2
plot "$out/xen-scrub-deferred.dat" using 1:(\$2/256.0) with linespoints lw 2 lc 1 title "deferred (dashed: job done)", \
     "$out/xen-scrub-sync.dat" using 1:(\$2/256.0) with linespoints lw 2 lc 2 title "sync (dashed: job done)"
EOF
# The headline ratios on Xen 4.20 beside these, when make bench's 4.20 boot
# left its figures in BENCH_OUT-4.20 (make bench removes them first).
if [ -s "$out-4.20/xen-sizes.csv" ]; then
	{ echo; sh "$(dirname "$0")/compare-xen.sh" "$out" "$out-4.20"; } >> "$tmp/benchmarks.md" ||
		die "compare-xen.sh failed on $out and $out-4.20"
	mkdir -p "$docs/bench/4.20"
	cp "$out-4.20"/xen-sizes.csv "$out-4.20"/xen-batch.csv "$out-4.20"/xen-machine.txt "$docs/bench/4.20/"
fi
mkdir -p "$docs/bench/patched"
cp "$out-patched/xen-scrub-source.csv" "$docs/bench/patched/"
mv "$tmp/benchmarks.md" "$md"
echo "report.sh: wrote $md and $docs/bench/"
