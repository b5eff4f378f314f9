# Benchmark (issue 18, part 1): where a teardown's system calls and
# resched IPIs come from, plain `xl destroy` beside xenreaperd (defaults),
# one 512 MiB guest each, no devices (as 40-dom0's measure 5, whose totals
# these break down; the guests of 58-guests carry the devices).
#   System calls: strace -f -tt of the tearing-down process and its
#   children, each thread given a role: the main thread, a teardown
#   worker (the teardown process kept ready, xenreaper-teardown; a
#   thread, xr-teardown, before issue 39), another thread of the process
#   (libxenstore's reader threads: they carry the process's name), a
#   forked child (the next teardown process among them).
#   Resched IPIs: ftrace's function tracer on the function that sends one
#   in a PV dom0 (xen_smp_send_reschedule), with the kernel stack of each
#   send: the task that sent it and the system call it was in, or the
#   kernel path when in none (an interrupt, a kernel thread), with the
#   two frames under try_to_wake_up (what woke the task: a futex, a pipe,
#   an event channel).
# XB_BENCH_RUNS runs each (default 2), tools interleaved run by run.
# Figures: xen-attr-syscalls.csv (tool,run,role,syscall,calls),
# xen-attr-ipis.csv (tool,run,task,source,ipis), xen-attr-paths.csv
# (tool,run,role,path,requests: the daemon's xenstore requests by path),
# xen-attr-res.csv (the RES count of /proc/interrupts over each traced
# teardown, to set beside the sends traced).
. $XB_LIB
RUNS=${XB_BENCH_RUNS:-2}
MIB=${XB_BENCH_SYSCALL_MIB:-512}
T=/sys/kernel/tracing
SYS=/tmp/xen-attr-syscalls.csv
IPI=/tmp/xen-attr-ipis.csv
PATHS=/tmp/xen-attr-paths.csv
RES=/tmp/xen-attr-res.csv
echo "tool,run,role,syscall,calls" > $SYS
echo "tool,run,task,source,ipis" > $RES
echo "tool,run,role,path,requests" > $PATHS
echo "tool,run,task,source,ipis" > $IPI
fail() {
	xb_not_ok "$*"
	echo 0 > $T/tracing_on 2>/dev/null
	xb_daemon_log 30
	xb_daemon_stop
	xb_done
}

[ -d $T/events ] || mount -t tracefs nodev $T || fail "tracefs mounts"
IPI_FN=xen_smp_send_reschedule
grep -qx "$IPI_FN" $T/available_filter_functions ||
	fail "$IPI_FN can be traced (dom0 kernel $(uname -r))"
echo 0 > $T/tracing_on
echo $IPI_FN > $T/set_ftrace_filter
echo function > $T/current_tracer
echo 1 > $T/options/func_stack_trace
echo 4096 > $T/buffer_size_kb

# res0 and res1: the resched IPIs taken (xb_res_ipis), the count the
# traced sends must match.
ipis_begin() { echo > $T/trace; res0=$(xb_res_ipis); echo 1 > $T/tracing_on; }
# ipis_end TOOL RUN: one row per (task, source) of the sends traced.
ipis_end() {
	echo 0 > $T/tracing_on
	res1=$(xb_res_ipis)
	echo "$1,$2,(all),/proc/interrupts RES,$((res1 - res0))" >> $RES
	awk -v tool=$1 -v run=$2 '
	function flush() {
		if (task == "") return
		src = sys != "" ? sys : (path != "" ? path : "kernel")
		n[task "," src " (" via ")"]++
		task = sys = path = via = ""
	}
	/^#/ { next }
	/<stack trace>/ { flush(); t = $1; sub(/-[0-9]+$/, "", t); task = t; next }
	/^ => / {
		f = $2
		# What woke the task: the first frame under the scheduler and
		# wake-up helpers (a futex, a pipe, a socket, an event channel).
		if (via == "" && f !~ /^0x/ && !(f ~ /^(xen_smp_send_reschedule|resched_curr|check_preempt|ttwu_|try_to_wake_up|wake_up_|__wake_up|autoremove_wake|default_wake|woken_wake|pollwake|receiver_wake|ep_poll_callback|ep_autoremove|kick_process|signal_wake_up|complete_signal|__send_signal|send_signal|do_send_sig|complete|swake_up|sched_ttwu|__smp_call|do_notify_parent|irq_work)/)) via = f
		if (sys == "" && f ~ /^(__x64_sys_|__do_sys_|__se_sys_)/) { sys = f; sub(/^__(x64|do|se)_sys_/, "", sys) }
		else if (f ~ /^(asm_|sysvec_|__sysvec_|xen_evtchn_do_upcall|handle_irq_event|__do_softirq|irq_exit_rcu|worker_thread|kthread|cpu_startup_entry|do_idle)/ && path == "" && sys == "") path = f
		next
	}
	END {
		flush()
		for (k in n) print tool "," run "," k "," n[k]
	}' $T/trace >> $IPI
}

# strace_summary TOOL RUN PID: calls by role and system call from
# /tmp/st.txt (strace -f -tt, the first field the thread id).  A thread
# is one in /tmp/tasks.txt ("TID COMM") or one a clone with CLONE_THREAD
# made (read in a first pass: a new thread may call before its clone
# returns in the trace); any other task is a forked child.
strace_summary() {
	awk -v tool=$1 -v run=$2 -v pid=$3 -v tasks=/tmp/tasks.txt '
	BEGIN { while ((getline l < tasks) > 0) { split(l, a, " "); comm[a[1]] = a[2] } }
	FNR == NR {
		if ($3 ~ /^clone3?\(/ && /CLONE_THREAD/) {
			if (/unfinished/) pending[$1] = 1
			else if (match($0, /= [0-9]+$/)) thread[substr($0, RSTART + 2)] = 1
		} else if ($3 == "<..." && $4 ~ /^clone3?$/ && pending[$1] && match($0, /= [0-9]+$/)) {
			thread[substr($0, RSTART + 2)] = 1
			pending[$1] = 0
		}
		next
	}
	$3 ~ /^[a-z_0-9]+\(/ {
		name = $3; sub(/\(.*/, "", name)
		tid = $1
		if (tid == pid) role = "main"
		else if ((tid in comm) && (comm[tid] == "xr-teardown" || comm[tid] == "xenreaper-teard")) role = "worker"
		else if ((tid in comm) || (tid in thread)) role = "other thread"
		else role = "child"
		n[role "," name]++
	}
	END { for (k in n) print tool "," run "," k "," n[k] }' /tmp/st.txt /tmp/st.txt >> $SYS
}

# store_paths TOOL RUN PID: the xenstore requests of the main thread and
# the workers by path (domids and numbers as N), from /tmp/st.txt: each
# request is a write of its 16-byte header, then one of its payload, which
# begins with the path (a transaction's end or a directory too).
store_paths() {
	awk -v tool=$1 -v run=$2 -v pid=$3 -v tasks=/tmp/tasks.txt '
	BEGIN { while ((getline l < tasks) > 0) { split(l, a, " "); comm[a[1]] = a[2] } }
	$3 ~ /^write\([0-9]+,$/ && $4 ~ /^"[\/@]/ {
		tid = $1
		if (tid == pid) role = "main"
		else if ((tid in comm) && (comm[tid] == "xr-teardown" || comm[tid] == "xenreaper-teard")) role = "worker"
		else next
		p = $0; sub(/^[^"]*"/, "", p); sub(/\\0.*|".*/, "", p)
		gsub(/[0-9]+/, "N", p)
		n[role "," p]++
	}
	END { for (k in n) print tool "," run "," k "," n[k] }' /tmp/st.txt >> $PATHS
}

guest() {
	_d=$(xb_guest $1 $MIB) || fail "create $1 ($MIB MiB)"
	echo $_d
}

# Each tool tears down two guests a run: one under strace (which stretches
# every call and wakes tasks itself), one under ftrace alone for the IPIs.
# The harness waits on watches (xbtool wait-node) and physinfo (wait-free),
# never on a polling loop of its own; what it does still sends IPIs, under
# its own task names (xbtool, sh, strace, timeout).
xl_run() {
	d=$(guest at-xl-s$1)
	: > /tmp/tasks.txt
	timeout 300 strace -f -tt -s 64 -o /tmp/st.txt xl destroy $d 2>/tmp/st.err || fail "xl destroy $d under strace"
	# xl is the first process strace started: the first thread id seen.
	strace_summary xl $1 "$(awk 'NR == 1 { print $1 }' /tmp/st.txt)"
	d=$(guest at-xl-i$1)
	target=$(( $(xb_free_pages) + $($XB_TOOL pages $d) - 256 ))
	ipis_begin
	xl destroy $d || fail "xl destroy $d"
	$XB_TOOL wait-free $target 60000 >/dev/null || fail "xl run $1: memory not back"
	ipis_end xl $1
}

# daemon_teardown D: request it and wait for done.
daemon_teardown() {
	xb_request $1 || fail "request $1"
	$XB_TOOL wait-node $XB_ROOT/job/$1/state done 120000 >/dev/null ||
		fail "daemon run $run: job $1 ended $(xb_state $1)"
}

daemon_run() {
	d=$(guest at-daemon-s$1)
	xb_daemon_start_fresh || fail "xenreaperd starts"
	xb_daemon_ready || fail "no teardown process ready"
	for t in /proc/$XB_DAEMON_PID/task/* $(pgrep -P $XB_DAEMON_PID | sed 's|.*|/proc/&/task/&|'); do
		echo "${t##*/} $(cat $t/comm)"
	done > /tmp/tasks.txt
	tg=$(xb_trace_targets)
	strace -f -tt -s 64 -o /tmp/st.txt $tg 2>/tmp/st.err & st_pid=$!
	xb_trace_attached /tmp/st.err "$tg" || fail "strace did not attach to xenreaperd and its teardown process"
	daemon_teardown $d
	kill -INT $st_pid; wait $st_pid
	# The threads libxl's contexts started meanwhile (libxenstore's
	# readers) are still there; the forked children are gone.
	for t in /proc/$XB_DAEMON_PID/task/*; do echo "${t##*/} $(cat $t/comm)"; done >> /tmp/tasks.txt
	strace_summary daemon $1 $XB_DAEMON_PID
	store_paths daemon $1 $XB_DAEMON_PID
	d=$(guest at-daemon-i$1)
	ipis_begin
	daemon_teardown $d
	ipis_end daemon $1
	xb_daemon_stop
}

xl list >/dev/null && strace -o /dev/null true && xenstore-read /local/domain/0/name >/dev/null || fail "warm-up"
for run in $(seq 1 $RUNS); do
	xl_run $run
	daemon_run $run
	for tool in xl daemon; do
		calls=$(awk -F, -v t=$tool -v r=$run '$1 == t && $2 == r { n += $5 } END { print n + 0 }' $SYS)
		ipis=$(awk -F, -v t=$tool -v r=$run '$1 == t && $2 == r { n += $5 } END { print n + 0 }' $IPI)
		xb_note "run $run $tool: $calls system calls, $ipis resched IPIs traced"
	done
done
[ "$(wc -l < $SYS)" -gt 1 ] && [ "$(wc -l < $IPI)" -gt 1 ] || fail "figures measured"
xb_ok "$(($(wc -l < $SYS) - 1)) syscall rows, $(($(wc -l < $IPI) - 1)) IPI rows"
xb_emit xen-attr-syscalls.csv $SYS
xb_emit xen-attr-ipis.csv $IPI
xb_emit xen-attr-paths.csv $PATHS
xb_emit xen-attr-res.csv $RES
xb_done
