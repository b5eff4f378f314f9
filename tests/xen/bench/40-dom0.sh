# Benchmark (issue 10, measures 4 and 5): what a teardown costs the rest
# of dom0.
#   4. While a 3 GiB guest is torn down (plain `xl destroy`, and xenreaperd
#      with its worker at priority idle, low and normal), a resident client
#      reads one xenstore node every 10 ms (xbtool xs-latency: round trips
#      p50/p99) and a CPU-bound task counts its work (xbtool spin): both
#      against the idle window of 3 s just before the same teardown.
#   5. While a 512 MiB guest is torn down (plain `xl destroy`, and xenreaperd
#      at progress-interval 20 ms, 250 ms and 1 s), the system calls of the
#      tearing-down process and its children by kind (strace -c -f, so the
#      times are stretched; counts are what they are), mlock/munlock among
#      them, and the resched IPIs dom0 took (/proc/interrupts, RES).
# XB_BENCH_RUNS runs each (default 3), tools interleaved run by run.
# Figures go to the host: xen-dom0.csv, xen-syscalls.csv, and every run's
# latency samples (xen-xslat.dat: tool, phase, µs, run), pooled by the
# report for a p99 over all runs and for the distribution plot.  A failed
# measurement fails the scenario: no figure from it reaches the host.
. $XB_LIB
RUNS=${XB_BENCH_RUNS:-3}
MIB4=${XB_BENCH_DOM0_MIB:-3072}
MIB5=${XB_BENCH_SYSCALL_MIB:-512}
CSV=/tmp/xen-dom0.csv
SYS=/tmp/xen-syscalls.csv
LAT=/tmp/xen-xslat.dat
echo "measure,tool,run,value" > $CSV
echo "tool,run,syscall,calls" > $SYS
: > $LAT
lat_pid= spin_pid=
fail() {
	xb_not_ok "$*"
	[ -n "$lat_pid" ] && kill $lat_pid $spin_pid 2>/dev/null
	ps -eo pid,stat,wchan:24,etime,args | grep -v ' \[' | tail -n 20 | sed 's/^/XQTAP #   ps: /'
	xb_daemon_log 30
	xb_daemon_stop
	xb_done
}

guest() {
	_d=$(xb_guest $1 $2) || fail "create $1 ($2 MiB)"
	echo $_d
}

# teardown TOOL DOMID: ask for it; return once its memory is back (and,
# for xenreaperd, its job is done).  Sets $back_ms.
teardown() {
	_pages=$($XB_TOOL pages $2) || fail "pages of $2"
	_target=$(( $(xb_free_pages) + _pages - 256 ))
	case $1 in
	xl) timeout 200 $XB_TOOL back /tmp/m.ms $_target xl destroy $2 ;;
	*) timeout 200 $XB_TOOL back /tmp/m.ms $_target \
		xenstore-write $XB_ROOT/request/$2 "$($XB_TOOL uuid $2)" ;;
	esac || fail "$1: teardown of $2 failed"
	read _blocked back_ms < /tmp/m.ms
	$XB_TOOL wait-gone $2 60000 >/dev/null || fail "$1: domain $2 not gone"
	case $1 in xl) ;; *)
		xb_wait_final $2 120 && [ "$(xb_state $2)" = done ] ||
			fail "$1: job $2 ended $(xb_state $2)" ;;
	esac
}

mean() { awk '{ s += $1 } END { if (!NR) exit 1; printf "%.1f\n", s / NR }'; }

# ---- measure 4
dom0_run() {
	tool=$1 run=$2
	d=$(guest m4-$tool-$run $MIB4)
	case $tool in xl) ;; *)
		printf '[default]\npriority = %s\n' $tool > /tmp/prio.conf
		xb_daemon_start_fresh -c /tmp/prio.conf || fail "xenreaperd starts with priority = $tool" ;;
	esac
	$XB_TOOL xs-latency /tmp/lat.txt & lat_pid=$!
	$XB_TOOL spin /tmp/spin.txt & spin_pid=$!
	# An observation window, not a wait for a state: 3 s of dom0 idle.
	sleep 1; i0=$($XB_TOOL ms); sleep 3; i1=$($XB_TOOL ms)
	t0=$($XB_TOOL ms)
	teardown $tool $d
	t1=$($XB_TOOL ms)
	kill -TERM $lat_pid $spin_pid; wait $lat_pid $spin_pid
	lat_pid= spin_pid=
	case $tool in xl) ;; *) xb_daemon_stop ;; esac
	for phase in idle busy; do
		if [ $phase = idle ]; then a=$i0 b=$i1; else a=$t0 b=$t1; fi
		p50=$(xb_window /tmp/lat.txt $a $b | xb_pct 50) && p99=$(xb_window /tmp/lat.txt $a $b | xb_pct 99) &&
			n=$(xb_window /tmp/lat.txt $a $b | wc -l) &&
			work=$(xb_window /tmp/spin.txt $a $b | mean) ||
			fail "$tool run $run: no samples in the $phase window"
		printf '%s\n' "xs-p50-us-$phase,$tool,$run,$p50" "xs-p99-us-$phase,$tool,$run,$p99" \
			"xs-reads-$phase,$tool,$run,$n" "spin-units-per-100ms-$phase,$tool,$run,$work" >> $CSV
		xb_window /tmp/lat.txt $a $b | sed "s/^/$tool $phase /; s/\$/ $run/" >> $LAT
		eval "${phase}_p99=$p99 ${phase}_work=$work"
	done
	echo "teardown-ms,$tool,$run,$((t1 - t0))" >> $CSV
	xb_note "$MIB4 MiB run $run $tool: xenstore p99 $idle_p99 us idle, $busy_p99 us during ($((t1 - t0)) ms); spin $idle_work -> $busy_work units/100 ms"
}

# ---- measure 5
syscall_run() {
	tool=$1 run=$2
	d=$(guest m5-$tool-$run $MIB5)
	rm -f /tmp/st.txt /tmp/st.err
	case $tool in
	xl)	target=$(( $(xb_free_pages) + $($XB_TOOL pages $d) - 256 ))
		r0=$(xb_res_ipis); t0=$($XB_TOOL ms)
		timeout 300 strace -c -f -o /tmp/st.txt xl destroy $d 2>/tmp/st.err || fail "xl destroy $d under strace"
		$XB_TOOL wait-free $target 60000 >/dev/null ||
			fail "xl run $run: memory not back"
		t1=$($XB_TOOL ms); r1=$(xb_res_ipis) ;;
	*)	printf '[daemon]\nprogress-interval = %s\n' $tool > /tmp/interval.conf
		xb_daemon_start_fresh -c /tmp/interval.conf || fail "xenreaperd starts with progress-interval = $tool"
		xb_daemon_ready || fail "no teardown process ready"
		tg=$(xb_trace_targets)
		strace -c -f -o /tmp/st.txt $tg 2>/tmp/st.err & st_pid=$!
		xb_trace_attached /tmp/st.err "$tg" || fail "strace did not attach to xenreaperd and its teardown process"
		r0=$(xb_res_ipis); t0=$($XB_TOOL ms)
		teardown $tool $d
		t1=$($XB_TOOL ms); r1=$(xb_res_ipis)
		kill -INT $st_pid; wait $st_pid
		xb_daemon_stop ;;
	esac
	[ -s /tmp/st.txt ] || fail "$tool run $run: no strace summary"
	awk -v t=$tool -v r=$run '$NF != "syscall" && $NF != "total" && $4 ~ /^[0-9]+$/ { print t "," r "," $NF "," $4 }' \
		/tmp/st.txt >> $SYS
	total=$(awk '$NF == "total" { print $4 }' /tmp/st.txt)
	locks=$(awk '$NF ~ /^(mlock|munlock|mlock2)$/ { n += $4 } END { print n + 0 }' /tmp/st.txt)
	{
		echo "syscalls,$tool,$run,$total"
		echo "mlocks,$tool,$run,$locks"
		echo "res-ipis,$tool,$run,$((r1 - r0))"
		echo "traced-ms,$tool,$run,$((t1 - t0))"
	} >> $CSV
	xb_note "$MIB5 MiB run $run $tool: $total system calls ($locks mlock/munlock), $((r1 - r0)) resched IPIs in $((t1 - t0)) ms"
}

# Warm-up: every program once (from 9p into dom0's page cache).
xl list >/dev/null && $XB_TOOL ms >/dev/null && strace -o /dev/null true &&
	xenstore-read /local/domain/0/name >/dev/null || fail "warm-up"

for run in $(seq 1 $RUNS); do
	for tool in xl idle low normal; do dom0_run $tool $run; done
done
xb_phase "measure 4"
for run in $(seq 1 $RUNS); do
	for tool in xl 20ms 250ms 1s; do syscall_run $tool $run; done
done
xb_phase "measure 5"
xb_ok "$(($(wc -l < $CSV) - 1)) dom0 figures measured"
xb_emit xen-dom0.csv $CSV
xb_emit xen-syscalls.csv $SYS
xb_emit xen-xslat.dat $LAT
xb_done
