# Benchmark (issue 20): where the daemon reads the scrub backlog from, on
# the hypervisor this boot runs: Debian's (XEN_SYSCTL_PHYSCAP_scrub_pages
# clear: the 'H' heap dump) or one built with xen-patches/ (the bit set:
# physinfo's scrub_pages).  `make bench` runs it on both, one boot each
# (xenbench --bench, then xenbench --bench --hypervisor with build-xen's
# hypervisor), and report.sh sets the two side by side.
# Per run, with one guest size (GUEST_MIB, 1 GiB) and the daemon's
# defaults otherwise (progress-interval 250 ms), four teardowns:
#  1. sync (`[default] scrub = sync`), nothing else probing: the lines
#     Xen's console ring got from request to done (cleared with xl dmesg -c
#     first; goal on patched: 0).
#  2. deferred (`scrub = deferred`), the same, counted once a probe made
#     after the job's end has read the backlog at 0 (a deferred job is done
#     before its pages are clean; the daemon probes after it).
#  3. sync again, with a poller beside it: request-to-done (the job's
#     requested and finished times) divided by request-to-clean (the first
#     reading of 0 after the last non-zero one).  On patched the poller is
#     xbtool physinfo-trace, every 20 ms, silent; on Debian's it can only
#     be a heap dump (xbtool scrub-trace -w, every 200 ms, plus the dump's
#     own time), which writes to the console ring: that is why the
#     console is counted in 1 and 2 and not here.  Goal on patched: 1.1 or
#     less.
#  4. deferred again, with xbtool scrub-compare beside it: every 20 ms
#     (200 ms with H) the daemon's published scrub/pages, and at once the
#     hypervisor's figure (physinfo on patched, a heap dump on Debian's),
#     from the job's end until both read 0 or 20 s: the mean and largest
#     |published - hypervisor| (what a reader of scrub/pages is told
#     against the truth at that moment: a figure stands until the next
#     probe, every progress interval on patched, at most once a minute for
#     deferred jobs on Debian's); and, for each probe the daemon published
#     meanwhile, |published - the hypervisor's sample nearest its probed
#     time| (the figure itself, its age left out; as fine as the sampling).
# Then the cost of one probe as the daemon makes it (xbtool probe-cost,
# 20 of each, medians): one XEN_SYSCTL_physinfo against one heap dump read
# back (skip the ring, press H, read what it added), and the lines a dump
# writes.  Last, because it writes heap dumps.
# The guests have no devices (created paused): the backlog is the pages
# the hypervisor frees on destroy, which a vif or a disk does not change,
# and device teardown would only add backend time to request-to-done and
# request-to-clean alike.
# Figures go to the host in xen-scrub-source.csv, one row per run.
. $XB_LIB
RUNS=${XB_BENCH_RUNS:-1}
GUEST_MIB=${XB_BENCH_SCRUB_MIB:-1024}
CSV=/tmp/xen-scrub-source.csv
echo "xen,scrub_cap,run,guest_mib,sync_console_lines,deferred_console_lines,sync_request_to_done_ms,sync_request_to_clean_ms,sync_done_over_clean,poller,poller_readings,deferred_samples,deferred_mean_abs_diff,deferred_max_abs_diff,deferred_hv_peak,deferred_probes,deferred_at_probe_mean_abs_diff,physinfo_us,heap_dump_us,heap_dump_lines,deferred_nonzero_samples,deferred_within_interval,deferred_oldest_ms" > $CSV
fail() {
	xb_not_ok "$*"
	[ -n "${poller:-}" ] && kill $poller 2>/dev/null
	xb_daemon_log 30
	xb_daemon_stop
	xb_done
}
field() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
cap=$(field scrub_cap "$($XB_TOOL physinfo)")
[ -n "$cap" ] || fail "xbtool physinfo reads the capability"
xen=$(xl info | sed -n 's/^xen_version *: //p')
xb_note "Xen $xen, XEN_SYSCTL_PHYSCAP_scrub_pages $cap"
# ms NODE-VALUE: the daemon's "S.mmm" times in ms.
ms() { echo "$1" | awk '{ printf "%.0f", $1 * 1000 }'; }
# teardown POLICY NAME: a GUEST_MIB guest torn down, its job done.
teardown() {
	d=$(xb_guest $2 $GUEST_MIB) || fail "create a $GUEST_MIB MiB guest"
	[ -n "${3:-}" ] && eval "$3"
	xb_request $d
	xb_wait_final $d 120 && [ "$(xb_state $d)" = done ] || fail "$1: job $d ended $(xb_state $d)"
}
daemon() {
	printf '[default]\nscrub = %s\n%b' $1 "${2:-}" > /tmp/scrub-$1.conf
	xb_daemon_start_fresh -c /tmp/scrub-$1.conf || fail "xenreaperd starts with scrub = $1"
}

for run in $(seq 1 $RUNS); do
	# ---- 1. sync, quiet
	daemon sync
	xl dmesg -c > /dev/null || fail "xl dmesg -c"
	teardown sync src-s$run
	sync_lines=$(xl dmesg | wc -l)
	xb_daemon_stop
	# ---- 2. deferred, quiet, until a probe after the job's end read 0
	daemon deferred
	xl dmesg -c > /dev/null || fail "xl dmesg -c"
	teardown deferred src-q$run
	xb_wait_probe_clean "$(xb_read $XB_ROOT/job/$d/finished)" 150 ||
		fail "deferred: no probe read the backlog drained within 150 s"
	deferred_lines=$(xl dmesg | wc -l)
	xb_daemon_stop
	xb_note "run $run: console lines: sync $sync_lines, deferred $deferred_lines"
	xb_phase "run $run: console lines"
	# ---- 3. sync with a poller: request-to-done / request-to-clean, and
	# when the daemon read the backlog (its debug line for each probe,
	# stamped with monotonic ms, mapped to wall ms)
	XB_DAEMON_STAMP=1 XB_DAEMON_LOG=/tmp/scrub-sync.log
	: > $XB_DAEMON_LOG
	daemon sync '[daemon]\nlog-level = debug\n'
	rm -f /tmp/scrub-poll.dat
	if [ "$cap" = 1 ]; then
		kind=physinfo-20ms
		start_poller='$XB_TOOL physinfo-trace /tmp/scrub-poll.dat 120000 & poller=$!'
	else
		kind=heap-dump-200ms
		start_poller='$XB_TOOL scrub-trace -w /tmp/scrub-poll.dat 120000 & poller=$!'
	fi
	teardown sync src-t$run "$start_poller; xb_wait_log . 10 /tmp/scrub-poll.dat || fail 'the poller reads'"
	# One more reading past done for a backlog still there.
	sleep 0.5; kill $poller; wait $poller 2>/dev/null; poller=
	requested=$(ms "$(xb_read $XB_ROOT/job/$d/requested)")
	finished=$(ms "$(xb_read $XB_ROOT/job/$d/finished)")
	xb_daemon_stop
	read readings clean <<EOF
$(awk -v r=$requested '$1 >= r { n++; if ($2 > 0) { dirty = 1; clean = "" } else if (dirty && clean == "") clean = $1 }
	END { print n + 0, (dirty && clean != "") ? clean : "-" }' /tmp/scrub-poll.dat)
EOF
	XB_DAEMON_STAMP= XB_DAEMON_LOG=/tmp/xenreaperd.log
	# Both clocks in one line: stamp is waiting on its read when xbtool ms
	# exits, so the two are a few ms apart, not two process starts.
	mono_to_wall=$(xb_ms | $XB_TOOL stamp | awk '{ printf "%.0f\n", $2 - $1 }')
	probes_seen=$(awk -v o=$mono_to_wall -v r=$requested '/scrub backlog [0-9]+ pages/ {
		for (i = 1; i < NF; i++) if ($i == "backlog") p = $(i + 1)
		printf " +%d:%s", $1 + o - r, p }' /tmp/scrub-sync.log)
	xb_note "run $run: sync: the daemon's probes (ms after the request:pages):$probes_seen; done at +$((finished - requested))"
	to_done=$((finished - requested))
	if [ "$clean" = - ]; then
		to_clean= ratio=
		xb_note "run $run: the poller ($kind, $readings readings) saw no backlog drain after the request"
	else
		to_clean=$((clean - requested))
		ratio=$(awk -v a=$to_done -v b=$to_clean 'BEGIN { if (b > 0) printf "%.2f", a / b }')
		xb_note "run $run: sync request-to-done $to_done ms, request-to-clean $to_clean ms ($kind, $readings readings): ${ratio}x"
	fi
	xb_phase "run $run: sync against a poller"
	# ---- 4. deferred: published against the hypervisor's figure
	daemon deferred
	rm -f /tmp/scrub-compare.dat
	h=; [ "$cap" = 1 ] || h=-H
	teardown deferred src-c$run "$XB_TOOL scrub-compare $h $XB_ROOT /tmp/scrub-compare.dat 60000 & poller=\$!"
	end=$(ms "$(xb_read $XB_ROOT/job/$d/finished)")
	i=0
	until [ $i -ge 200 ] || awk -v e=$end '$1 >= e && $2 == "0" && $4 == 0 { f = 1 } END { exit !f }' /tmp/scrub-compare.dat 2>/dev/null; do
		sleep 0.1; i=$((i + 1))
	done
	kill $poller; wait $poller 2>/dev/null; poller=
	xb_daemon_stop
	# From the job's end to the first sample where both read 0.
	read samples mean max peak <<EOF
$(awk -v e=$end '$1 >= e && !stop && $2 ~ /^[0-9]+$/ {
		d = $2 - $4; if (d < 0) d = -d
		n++; sum += d; if (d > max) max = d; if ($4 > peak) peak = $4
		if ($2 == 0 && $4 == 0) stop = 1 }
	END { if (n) printf "%d %.0f %d %d\n", n, sum / n, max, peak; else print "0 - - -" }' /tmp/scrub-compare.dat)
EOF
	# Each probe published meanwhile (a new probed time) against the
	# sample nearest that time.
	read probes at_probe <<EOF
$(awk -v e=$end '$1 >= e - 1000 { w[++n] = $1; h[n] = $4 }
	$1 >= e && $3 != "-" && $3 != last && $3 * 1000 >= e - 1000 && $2 ~ /^[0-9]+$/ { last = $3; np++; pt[np] = $3 * 1000; pv[np] = $2 }
	END { for (i = 1; i <= np; i++) { best = -1
		for (j = 1; j <= n; j++) { d = w[j] - pt[i]; if (d < 0) d = -d; if (best < 0 || d < best) { best = d; hv = h[j] } }
		x = pv[i] - hv; if (x < 0) x = -x; sum += x }
	      if (np) printf "%d %.0f\n", np, sum / np; else print "0 -" }' /tmp/scrub-compare.dat)
EOF
	# How old the published figure is while the backlog is non-zero (issue
	# 40, part 3: within one progress interval).  After the job's end the
	# backlog only falls, so a published P is the truth of the last sample
	# j at or before this one whose figure was still >= P: its age is at
	# most now - w[j] (one poll period over, at worst).  A sample whose
	# hypervisor figure is already >= P shows a figure no older than it.
	read aged within oldest <<EOF
$(awk -v e=$end '{ w[++k] = $1; p[k] = $2; h[k] = $4 }
	END { for (i = 1; i <= k; i++) {
		if (w[i] < e || p[i] !~ /^[0-9]+$/ || h[i] + 0 <= 0) continue
		n++; age = 0
		if (h[i] + 0 < p[i] + 0) { j = i - 1; while (j >= 1 && h[j] + 0 < p[i] + 0) j--; age = j >= 1 ? w[i] - w[j] : -1 }
		if (age < 0) unknown = 1; else if (age > max) max = age
		if (age >= 0 && age <= 270) ok++ }
	      if (n) printf "%d %d %s\n", n, ok, unknown ? "-" : max; else print "0 0 -" }' /tmp/scrub-compare.dat)
EOF
	xb_note "run $run: deferred: $aged samples while the backlog was non-zero, $within of them showing a figure at most 270 ms old (one 250 ms interval and a poll period); the oldest $oldest ms"
	xb_note "run $run: deferred: $samples samples after the job's end: |published - hypervisor| mean $mean, max $max pages (hypervisor's peak $peak); $probes probe(s) published, |published - hypervisor at its probed time| mean $at_probe"
	xb_phase "run $run: deferred published against the hypervisor"
	# ---- the cost of one probe
	cost=$($XB_TOOL probe-cost 20) || fail "xbtool probe-cost"
	pi=$(field physinfo_us "$cost") hd=$(field h_us "$cost") hl=$(field h_lines "$cost")
	xb_note "run $run: one probe: physinfo $pi us, heap dump $hd us ($hl console lines)"
	echo "$xen,$cap,$run,$GUEST_MIB,$sync_lines,$deferred_lines,$to_done,$to_clean,$ratio,$kind,$readings,$samples,$mean,$max,$peak,$probes,$at_probe,$pi,$hd,$hl,$aged,$within,$oldest" >> $CSV
done
xb_ok "$RUNS run(s) measured on Xen $xen (scrub_cap $cap)"
xb_emit xen-scrub-source.csv $CSV
xb_done
