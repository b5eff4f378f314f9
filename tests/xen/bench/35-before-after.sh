# Benchmark (issue 39): the daemon before each teardown ran in a process of
# its own (worker threads: XB_BEFORE, the daemon tests/xen/build-before
# builds from 753a49a) beside the daemon of this tree (after), in one boot,
# interleaved run by run, both at their default policy:
#   one       a 1 GiB guest: all memory back, beside the teardown floor
#             (xbtool floor-destroy) and plain `xl destroy`
#   batch     2, 4 and 8 guests of 512 MiB requested at once (one
#             xenstore-write): all memory back, beside parallel `xl destroy`
#   syscalls  a 512 MiB teardown with strace -c -f on the daemon and the
#             teardown process it keeps ready (their children with them,
#             the next ready one included): system calls, and the resched
#             IPIs dom0 took meanwhile
#   rss       the daemon's RSS idle, alone and with the teardown process
#             it keeps ready, and the peak of the daemon and its teardown
#             processes together, sampled every 50 ms while the batch of 8
#             ran
# XB_BENCH_RUNS runs (default 3).  Figures go to the host in
# xen-before-after.csv; without XB_BEFORE the scenario fails and sends none.
. $XB_LIB
RUNS=${XB_BENCH_RUNS:-3}
CSV=/tmp/xen-before-after.csv
AFTER=$XB_DAEMON
echo "measure,daemon,run,value" > $CSV
sampler=
fail() {
	xb_not_ok "$*"
	[ -n "$sampler" ] && kill $sampler 2>/dev/null
	xb_daemon_log 30
	xb_daemon_stop
	xb_done
}
[ -x "${XB_BEFORE:-}" ] || fail "XB_BEFORE names no daemon to compare with ('${XB_BEFORE:-}'): make bench sets it from tests/xen/build-before"

# guests PREFIX N MIB: N guests at once; their domids in $doms.
guests() {
	_pids= doms=
	for _i in $(seq 1 $2); do
		(xb_guest $1-$_i $3 > /tmp/$1-$_i.domid) &
		_pids="$_pids $!"
	done
	for _p in $_pids; do wait $_p; done
	for _i in $(seq 1 $2); do
		[ -s /tmp/$1-$_i.domid ] || { cat /tmp/$1-$_i.create.log; fail "create $1-$_i"; }
		doms="$doms $(cat /tmp/$1-$_i.domid)"
	done
}

# start WHICH: the daemon WHICH (before, after) at its default policy.
start() {
	case $1 in before) XB_DAEMON=$XB_BEFORE ;; after) XB_DAEMON=$AFTER ;; esac
	xb_daemon_start_fresh || fail "the $1 daemon starts"
}

# back TOOL FILE TARGET DOMS...: tear DOMS down with TOOL (xl, xl-par,
# floor, or a daemon: one xenstore-write), until TARGET free pages.
back() {
	_tool=$1 _f=$2 _target=$3; shift 3
	_gone=$(echo "$@" | tr ' ' ',')
	case $_tool in
	xl)	timeout 300 $XB_TOOL back -g $_gone $_f $_target xl destroy "$@" ;;
	xl-par)	timeout 300 $XB_TOOL back -g $_gone $_f $_target sh -c \
			'p=; for d; do xl destroy $d & p="$p $!"; done; r=0; for x in $p; do wait $x || r=1; done; exit $r' sh "$@" ;;
	floor)	timeout 300 $XB_TOOL floor-destroy $_f $_target "$@" ;;
	*)	_args=
		for _d; do _args="$_args $XB_ROOT/request/$_d $($XB_TOOL uuid $_d)"; done
		timeout 300 $XB_TOOL back -g $_gone $_f $_target xenstore-write $_args ;;
	esac || fail "$_tool: teardown of $* failed"
	for _d; do
		$XB_TOOL wait-gone $_d 60000 >/dev/null || fail "$_tool: domain $_d not gone"
		case $_tool in before|after)
			xb_wait_final $_d 120 && [ "$(xb_state $_d)" = done ] ||
				fail "$_tool: job $_d ended $(xb_state $_d)" ;;
		esac
	done
}

# pages DOMS...: their pages together.
pages() { _n=0; for _d; do _n=$((_n + $($XB_TOOL pages $_d))); done; echo $_n; }

# rss_of PID...: their VmRSS together, kB.
rss_of() { for _p; do awk '/^VmRSS:/ { print $2 }' /proc/$_p/status 2>/dev/null; done | awk '{ s += $1 } END { print s + 0 }'; }

one_run() {
	run=$1
	for tool in floor xl before after; do
		guests one-$tool-$run 1 1024
		case $tool in before|after) start $tool ;; esac
		back $tool /tmp/m.ms $(( $(xb_free_pages) + $(pages $doms) - 256 )) $doms
		read _blocked _back _x < /tmp/m.ms
		echo "one-back-ms,$tool,$run,$_back" >> $CSV
		case $tool in before|after) xb_daemon_stop ;; esac
		xb_note "1 GiB run $run $tool: memory back $_back ms"
	done
}

batch_run() {
	run=$1 n=$2
	for tool in xl-par before after; do
		guests b$n-$tool-$run $n 512
		case $tool in before|after)
			start $tool
			if [ $n = 8 ]; then
				echo "rss-idle-kb,$tool,$run,$(rss_of $XB_DAEMON_PID)" >> $CSV
				# With the teardown process kept ready, once it is.
				[ $tool = after ] && { xb_daemon_ready || fail "no teardown process ready"; }
				echo "rss-idle-all-kb,$tool,$run,$(rss_of $XB_DAEMON_PID $(pgrep -P $XB_DAEMON_PID))" >> $CSV
			fi
			# The daemon and its teardown processes together, at their peak.
			( peak=0; while :; do
				r=$(rss_of $XB_DAEMON_PID $(pgrep -P $XB_DAEMON_PID))
				[ $r -gt $peak ] && { peak=$r; echo $peak > /tmp/rss.peak; }
				sleep 0.05
			done ) & sampler=$!
			echo 0 > /tmp/rss.peak ;;
		esac
		back $tool /tmp/m.ms $(( $(xb_free_pages) + $(pages $doms) - 256 * n )) $doms
		read _blocked _back _first < /tmp/m.ms
		echo "batch$n-back-ms,$tool,$run,$_back" >> $CSV
		case $tool in before|after)
			kill $sampler; wait $sampler 2>/dev/null; sampler=
			echo "batch$n-rss-peak-kb,$tool,$run,$(cat /tmp/rss.peak)" >> $CSV
			xb_daemon_stop ;;
		esac
		xb_note "$n x 512 MiB run $run $tool: all memory back $_back ms"
	done
}

syscall_run() {
	run=$1
	for tool in before after; do
		guests sc-$tool-$run 1 512
		start $tool
		rm -f /tmp/st.txt /tmp/st.err
		# The teardown process kept ready, traced from its first
		# request: the one it starts meanwhile for the next teardown
		# is counted whole.
		[ $tool = after ] && { xb_daemon_ready || fail "no teardown process ready"; }
		tg=$(xb_trace_targets)
		strace -c -f -o /tmp/st.txt $tg 2>/tmp/st.err & st_pid=$!
		xb_trace_attached /tmp/st.err "$tg" || fail "strace did not attach to the $tool daemon and its teardown process"
		r0=$(xb_res_ipis)
		back $tool /tmp/m.ms $(( $(xb_free_pages) + $(pages $doms) - 256 )) $doms
		r1=$(xb_res_ipis)
		kill -INT $st_pid; wait $st_pid
		xb_daemon_stop
		total=$(awk '$NF == "total" { print $4 }' /tmp/st.txt)
		[ -n "$total" ] || fail "$tool run $run: no strace summary"
		echo "syscalls,$tool,$run,$total" >> $CSV
		echo "res-ipis,$tool,$run,$((r1 - r0))" >> $CSV
		xb_note "512 MiB run $run $tool: $total system calls, $((r1 - r0)) resched IPIs"
	done
}

# Warm-up: every program once (from 9p into dom0's page cache).
xl list >/dev/null && $XB_TOOL ms >/dev/null && strace -o /dev/null true &&
	$XB_BEFORE --version >/dev/null 2>&1; $AFTER --version >/dev/null 2>&1
for run in $(seq 1 $RUNS); do one_run $run; done
xb_phase "one"
for n in 2 4 8; do
	for run in $(seq 1 $RUNS); do batch_run $run $n; done
done
xb_phase "batches"
for run in $(seq 1 $RUNS); do syscall_run $run; done
xb_phase "syscalls"
XB_DAEMON=$AFTER
xb_ok "$(($(wc -l < $CSV) - 1)) before/after figures measured"
xb_emit xen-before-after.csv $CSV
xb_done
