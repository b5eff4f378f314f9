# Benchmark (issue 10, measures 6 and 7): what the daemon costs by itself.
#   6. Scrub probing: 1 GiB guests torn down one at a time, deferred and
#      sync, with xenreaperd at log-level debug (each probe is logged with
#      its ms): probes, ms per probe, and the lines the probes wrote to
#      Xen's console ring (cleared first: xl dmesg -c).  A sync job's
#      probes all come before it is done, so each sync teardown is one
#      row.  Deferred jobs share probes: one once releases settle, at most
#      one a minute, so the deferred row is the whole series of teardowns,
#      until a probe newer than the last one's end has been made.
#   7. The daemon at rest: wake-ups (context switches of all its threads)
#      and CPU ticks over 10 s once nothing is in flight, and what system
#      calls it made meanwhile (strace -c -f); RSS idle, with 50 jobs
#      queued (jobs = 1, the first held on libxl's domain lock; guests of
#      88 MiB, the least that holds the dom0 kernel), and after
#      1,000 more finished jobs (requests for absent domains, refused).
#      And what a teardown helper process would cost to start (xbtool
#      spawn-cost: exec until its libxl context is open).
# Before each policy's series, for the plot, one 2 GiB teardown with the
# backlog probed every 200 ms (xbtool scrub-trace: xen-scrub-POLICY.dat).
# Figures go to the host in xen-probes.csv and xen-rest.csv; a failed
# measurement fails the scenario and sends none.
. $XB_LIB
RUNS=${XB_BENCH_RUNS:-3}
QUEUED=${XB_BENCH_QUEUED:-50}
FINISHED=${XB_BENCH_FINISHED:-1000}
PROBES=/tmp/xen-probes.csv
REST=/tmp/xen-rest.csv
echo "policy,run,teardowns,probes,probe_ms_total,console_lines" > $PROBES
echo "measure,value" > $REST
holder=
fail() {
	xb_not_ok "$*"
	[ -n "$holder" ] && kill $holder 2>/dev/null
	xb_daemon_log 30
	xb_daemon_stop
	xb_done
}
# The probes logged so far: "COUNT TOTAL_MS".
probes_logged() {
	sed -n 's/.*scrub backlog .*probe [0-9]*, \([0-9]*\) ms).*/\1/p' $XB_DAEMON_LOG |
		awk '{ n++; ms += $1 } END { print n + 0, ms + 0 }'
}

# ---- measure 6
# probe_teardown POLICY RUN: one 1 GiB guest torn down, its job done.
probe_teardown() {
	d=$(xb_guest p-$1-$2 1024) || fail "create a 1 GiB guest"
	xb_request $d
	xb_wait_final $d 120 && [ "$(xb_state $d)" = done ] || fail "$1 run $2: job $d ended $(xb_state $d)"
}
# probe_mark: a row starts: the probes logged so far (n0, ms0), the
# console ring cleared.
probe_mark() {
	read n0 ms0 <<EOF
$(probes_logged)
EOF
	xl dmesg -c >/dev/null || fail "xl dmesg -c"
}
# probe_row POLICY RUN TEARDOWNS: the probes logged since probe_mark.
probe_row() {
	lines=$(xl dmesg | wc -l)
	read n1 ms1 <<EOF
$(probes_logged)
EOF
	echo "$1,$2,$3,$((n1 - n0)),$((ms1 - ms0)),$lines" >> $PROBES
	xb_note "$1 $2: $3 teardown(s), $((n1 - n0)) probe(s), $((ms1 - ms0)) ms in all, $lines console lines"
}
probe_series() {
	policy=$1
	if [ $policy = sync ]; then
		for run in $(seq 1 $RUNS); do
			probe_mark
			probe_teardown $policy $run
			probe_row $policy $run 1
		done
		return
	fi
	probe_mark
	for run in $(seq 1 $RUNS); do probe_teardown $policy $run; done
	# Until a probe made after the last job ended (a state, at most a
	# minute and a bit away), polled: scrub/probed is a time, and a watch
	# cannot wait for "newer than".
	end=$(xb_read $XB_ROOT/job/$d/finished)
	i=0
	until awk -v p="$(xb_read $XB_ROOT/scrub/probed)" -v e="$end" 'BEGIN { exit !(p + 0 >= e + 0) }'; do
		[ $i -lt 900 ] || fail "deferred: no probe within 90 s of the last job's end"
		sleep 0.1; i=$((i + 1))
	done
	probe_row $policy 1-$RUNS $RUNS
}

for policy in deferred sync; do
	printf '[daemon]\nlog-level = debug\n[default]\nscrub = %s\n' $policy > /tmp/probe.conf
	xb_daemon_start_fresh -c /tmp/probe.conf || fail "xenreaperd starts with scrub = $policy"
	# The scrub backlog over time (for the plot), probed every 200 ms by
	# xbtool for one 2 GiB teardown, and when its job said done.
	d=$(xb_guest trace-$policy 2048) || fail "create a 2 GiB guest"
	$XB_TOOL scrub-trace /tmp/xen-scrub-$policy.dat 15000 & tracer=$!
	$XB_TOOL wait-node $XB_ROOT/job/$d/state done 60000 > /tmp/done.ms & waiter=$!
	xb_request $d
	wait $waiter || fail "$policy: trace job $d did not end done"
	wait $tracer || fail "$policy: scrub-trace failed"
	echo "# done $(cut -d' ' -f1 /tmp/done.ms)" >> /tmp/xen-scrub-$policy.dat
	# After the trace: the series ends once a probe follows the last
	# teardown, so the deferred daemon is at rest for measure 7.
	probe_series $policy
	xb_phase "trace and probes, $policy"
	[ $policy = deferred ] || { xb_daemon_stop; continue; }
	# ---- measure 7, at rest: the deferred daemon after its teardowns,
	# once a probe has seen the backlog drained (until then it still
	# follows the deferred jobs' scrubbing: one run measured 17 wake-ups
	# in the 10 s after a probe that still saw one).
	xb_wait_probe_clean "$end" 300 || fail "at rest: no probe read the backlog drained within 300 s"
	pid=$XB_DAEMON_PID
	ctx() { cat /proc/$pid/task/*/status | awk '/ctxt_switches/ { n += $2 } END { print n }'; }
	c0=$(ctx) k0=$(xb_ticks $pid); sleep 10; c1=$(ctx) k1=$(xb_ticks $pid)
	echo "idle-wakeups-per-10s,$((c1 - c0))" >> $REST
	echo "idle-cpu-ticks-per-10s,$((k1 - k0))" >> $REST
	strace -c -f -o /tmp/rest-strace.txt -p $pid 2>/dev/null & st=$!
	sleep 10; kill -INT $st; wait $st
	calls=$(awk '$NF == "total" { print $4 }' /tmp/rest-strace.txt)
	echo "idle-syscalls-per-10s,${calls:-0}" >> $REST
	awk '$NF != "syscall" && $NF != "total" && $4 ~ /^[0-9]+$/ { print "idle-syscall-" $NF "," $4 }' \
		/tmp/rest-strace.txt >> $REST
	echo "rss-idle-kib,$(awk '/^VmRSS/ { print $2 }' /proc/$pid/status)" >> $REST
	xb_note "at rest: $((c1 - c0)) wake-ups and $((k1 - k0)) CPU ticks in 10 s; ${calls:-0} system calls in the next 10 s"
	xb_daemon_stop
done

# ---- measure 7, RSS with QUEUED jobs queued and after FINISHED more.
printf '[daemon]\njobs = 1\n' > /tmp/one.conf
xb_daemon_start_fresh -c /tmp/one.conf || fail "xenreaperd starts with jobs = 1"
pid=$XB_DAEMON_PID
doms=
i=1
while [ $i -le $QUEUED ]; do
	pids=
	for j in 1 2 3 4; do
		[ $i -le $QUEUED ] || break
		(xb_guest q$i 88 > /tmp/q$i.domid) & pids="$pids $!"
		i=$((i + 1))
	done
	for p in $pids; do wait $p; done
done
for i in $(seq 1 $QUEUED); do
	[ -s /tmp/q$i.domid ] || { cat /tmp/q$i.create.log; fail "create q$i (88 MiB)"; }
	doms="$doms $(cat /tmp/q$i.domid)"
done
set -- $doms; first=$1
lockfile=/var/lib/xen/userdata-l.$first.$($XB_TOOL uuid $first).domain-userdata-lock
flock -o $lockfile sleep 600 & holder=$!
i=0; while flock -n $lockfile true && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
flock -n $lockfile true && fail "libxl's lock for domain $first not held"
args=
for d in $doms; do args="$args $XB_ROOT/request/$d $($XB_TOOL uuid $d)"; done
xenstore-write $args || fail "request $QUEUED teardowns"
xb_wait_node $XB_ROOT/daemon/active-jobs $QUEUED 60 >/dev/null || fail "$QUEUED jobs not active"
queued=$(for d in $doms; do xb_state $d; done | grep -c '^queued$')
[ "$queued" -eq $((QUEUED - 1)) ] || fail "$queued jobs queued, want $((QUEUED - 1))"
xb_phase "$QUEUED guests created and queued"
echo "rss-queued-kib,$(awk '/^VmRSS/ { print $2 }' /proc/$pid/status)" >> $REST
echo "queued-jobs,$queued" >> $REST
kill $holder; wait $holder 2>/dev/null; holder=
for d in $doms; do
	xb_wait_final $d 300 && [ "$(xb_state $d)" = done ] || fail "queued job $d ended $(xb_state $d)"
done
xb_phase "$QUEUED queued jobs done"
args=
for d in $(seq 20000 $((20000 + FINISHED - 1))); do args="$args $XB_ROOT/request/$d 00000000-0000-0000-0000-000000000001"; done
xenstore-write $args || fail "request $FINISHED teardowns of absent domains"
xb_wait_final $((20000 + FINISHED - 1)) 300 || fail "the last of $FINISHED refused requests did not end"
for d in 20000 $((20000 + FINISHED / 2)); do
	[ "$(xb_state $d)" = "" ] || [ "$(xb_state $d)" = failed ] || fail "refused request $d ended $(xb_state $d)"
done
kept=$(xenstore-list $XB_ROOT/job | wc -l)
echo "rss-after-finished-kib,$(awk '/^VmRSS/ { print $2 }' /proc/$pid/status)" >> $REST
echo "rss-peak-kib,$(awk '/^VmHWM/ { print $2 }' /proc/$pid/status)" >> $REST
echo "finished-jobs,$((FINISHED + QUEUED))" >> $REST
echo "job-records-kept,$kept" >> $REST
xb_note "RSS $(awk '/^VmRSS/ { print $2 }' /proc/$pid/status) KiB after $((FINISHED + QUEUED)) finished jobs ($kept records kept)"
xb_daemon_stop
xb_phase "$FINISHED refused requests"
# What a teardown helper process would cost before its first destroy
# (issue 39): its exec and libxl context, beside a context made in-process
# and the spawn of /bin/true.
spawn=$($XB_TOOL spawn-cost 20) || fail "spawn-cost"
for kv in $spawn; do echo "$(echo ${kv%%=*} | tr _ -),${kv#*=}" >> $REST; done
xb_note "a helper's start: $spawn"
xb_ok "$(($(wc -l < $PROBES) - 1)) probe rows, $(($(wc -l < $REST) - 1)) figures at rest measured"
xb_emit xen-probes.csv $PROBES
xb_emit xen-rest.csv $REST
xb_emit xen-scrub-deferred.dat /tmp/xen-scrub-deferred.dat
xb_emit xen-scrub-sync.dat /tmp/xen-scrub-sync.dat
xb_done
