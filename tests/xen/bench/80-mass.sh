# Benchmark (issue 40, part 1): a host emptied at once.  XB_MASS_GUESTS
# guests (default 48) of XB_MASS_MIB (default 128: the PV domain builder
# needs room for dom0's 58 MiB kernel, so 64 fails; xenbench --mem 9G, as
# make bench boots it, holds them), the first
# XB_MASS_DEVICES of them (default 12, a quarter) with a vif on the bridge
# and a disk image through the block script (lib.sh's fast adds; the
# removes are Debian's), the others without devices (memory is what a
# mass teardown waits on; devices are what makes each teardown slow),
# torn down all at once by:
#   xl-seq   one `xl destroy` after another (a shell loop)
#   xl-par   every `xl destroy` at once
#   async    `xl destroy --async` of each through the front (a shell loop)
#   tx       one xenstore-write of every request (one transaction)
#   tx-jN    as tx, with the policy's jobs = N instead of auto (not in the
#            default list: for choosing auto, XB_MASS_TOOLS="... tx-j8")
# Each XB_MASS_RUNS times (default 1), tools interleaved run by run, with
# the daemon's default policy.  For each: how long the caller was
# blocked, the first domain gone, all memory back, the scrub backlog
# drained (time to clean: key H, as the daemon reads it on Debian's Xen),
# dom0's CPU until all memory was back (/proc/stat; of it, the teardown's
# own processes', xenstored's and the resident client's; in the log, by
# kind and by process name, and the exited processes' by name from the
# kernel's accounting, which also goes to the CSV), and the xenstore p99
# of a resident client during it (xbtool xs-latency) against the 3 s
# before.  For the daemon also: its peak RSS, the most teardowns at once
# (its jobs' started and finished), and that every job ended done.  Then,
# once each for one guest and for the whole batch (tx, under strace, so
# not timed): the daemon's own xenstore requests per job.  What runs
# beside the teardowns is kept to the sampler (xbtool back, every 20 ms)
# and the resident client: dom0 is CPU-bound here, and anything else the
# bench runs is taken from the teardowns.
# Figures go to the host: xen-mass.csv (measure,tool,run,value) and
# xen-mass.dat ("tool run ms pages_back", the free pages gained over time,
# every 20 ms, for the plot).  A failed run fails the scenario and sends
# none.  XB_MASS_REQUESTS=no skips the requests per job.
. $XB_LIB
xb_clients
N=${XB_MASS_GUESTS:-48}
MIB=${XB_MASS_MIB:-128}
DEV=${XB_MASS_DEVICES:-12}
RUNS=${XB_MASS_RUNS:-1}
TOOLS=${XB_MASS_TOOLS:-xl-seq xl-par async tx}
CSV=/tmp/xen-mass.csv
DAT=/tmp/xen-mass.dat
W=/tmp/mass
mkdir -p $W
echo "measure,tool,run,value" > $CSV
printf '%s\n' "shape-guests,all,0,$N" "shape-mib,all,0,$MIB" "shape-with-devices,all,0,$DEV" >> $CSV
: > $DAT
lat_pid=
fail() {
	xb_not_ok "$*"
	[ -n "$lat_pid" ] && kill $lat_pid 2>/dev/null
	ps -eo pid,stat,wchan:24,etime,args | grep -v ' \[' | tail -n 20 | sed 's/^/XQTAP #   ps: /'
	xb_daemon_log 30
	xb_daemon_stop
	xb_done
}
xb_backends
xb_fast_hotplug $W
base=$(xb_free_pages)
XB_DAEMON_LOG=/tmp/xenreaperd-mass.log
: > $XB_DAEMON_LOG

# busy_ticks: dom0's CPU time so far, all vCPUs, in USER_HZ ticks (user,
# nice, system, irq, softirq; not idle, iowait or steal).
busy_ticks() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat; }
ms_of_ticks() { echo $(( $1 * 1000 / $(getconf CLK_TCK) )); }
store_pid=$(cat /run/xenstore.pid 2>/dev/null || pidof oxenstored xenstored)
# Where dom0's CPU went, beside the total: the teardown's own processes
# (every xl destroy and what it waited for, from the shell that waited for
# them; or xenreaperd and its teardown processes, from the daemon, whose
# children they are), xenstored, and the resident client.
cat > $W/xl-tree.sh <<'EOS'
mode=$1; shift
r=0 p=
for d; do
	if [ $mode = seq ]; then xl destroy $d || { r=1; break; }
	else xl destroy $d & p="$p $!"; fi
done
for x in $p; do wait $x || r=1; done
sed 's/.*) //' /proc/$$/stat | awk '{ print $14 + $15 }' > "$XL_TICKS"
exit $r
EOS
# daemon_ticks: xenreaperd's CPU ticks with its teardown processes', those
# it has reaped and those still alive (a helper stays, idle, for the next).
daemon_ticks() {
	_dt=$(xb_tree_ticks $XB_DAEMON_PID)
	for _c in $(cat /proc/$XB_DAEMON_PID/task/$XB_DAEMON_PID/children); do
		_ct=$(xb_tree_ticks $_c 2>/dev/null)
		_dt=$((_dt + ${_ct:-0}))
	done
	echo $_dt
}
# at_once DOMID...: the most of their jobs between started and finished at
# one time, from the job nodes once all are done.  Counted afterwards: a
# process counting them meanwhile, forking a sleep twice a second, took a
# fifth of a dom0 vCPU (measured by cpu_where) from the teardowns.
at_once() {
	: > $W/at-once
	for _d; do
		_s=$(xenstore-read $XB_ROOT/job/$_d/started) && _f=$(xenstore-read $XB_ROOT/job/$_d/finished) || return 1
		printf '%s 1\n%s -1\n' $_s $_f >> $W/at-once
	done
	sort -k1,1n -k2,2n $W/at-once | awk '{ n += $2; if (n > m) m = n } END { print m + 0 }'
}
# cpu_snapshot FILE: every process as "pid name own-ticks children-ticks"
# (children: those it has waited for), digits in names folded (kworker/N:N).
cpu_snapshot() {
	cat /proc/[0-9]*/stat 2>/dev/null | awk '{
		r = $0; sub(/.*\) /, "", r); split(r, f, " ")
		c = substr($0, index($0, "(") + 1); c = substr(c, 1, length(c) - length(r) - 2)
		gsub(/[0-9]+/, "N", c); gsub(/ /, "_", c)
		print $1, c, f[12] + f[13], f[14] + f[15] }' > $1
}
# cpu_where BEFORE AFTER: the names that used most CPU between two
# snapshots, "name=ms ...": a process's own ticks and those of the
# children it waited for meanwhile, so a short-lived child counts once,
# with its parent (a teardown process with xenreaperd, a udev worker with
# systemd-udevd).
cpu_where() {
	awk -v hz=$(getconf CLK_TCK) 'NR == FNR { own[$1] = $3; kids[$1] = $4; next }
		{ t[$2] += $3 - own[$1] + $4 - kids[$1] }
		END { for (c in t) if (t[c] > 0) printf "%d %s\n", t[c] * 1000 / hz, c }' $1 $2 |
		sort -rn | head -n 12 | awk '{ printf "%s%s=%d", (NR > 1 ? " " : ""), $2, $1 }'
}
# stat_split BEFORE AFTER: /proc/stat's cpu line, field by field, in ms.
stat_split() {
	echo "$1 $2" | awk -v hz=$(getconf CLK_TCK) '{ n = split("user nice system idle iowait irq softirq steal", k, " ")
		for (i = 1; i <= n; i++) printf "%s%s=%d", (i > 1 ? " " : ""), k[i], ($(i + 12) - $(i + 1)) * 1000 / hz }'
}
# unscrubbed: the pages key H reports dirty (Debian's Xen has no other figure).
unscrubbed() { $XB_TOOL physinfo -H | tr ' ' '\n' | sed -n 's/^h_unscrubbed=//p'; }
# wait_clean MS: until key H reports nothing to scrub; prints the ms it took.
wait_clean() {
	_t0=$($XB_TOOL ms)
	while :; do
		_u=$(unscrubbed)
		[ "$_u" = 0 ] && break
		[ $(($($XB_TOOL ms) - _t0)) -gt $1 ] && return 1
		sleep 0.5
	done
	echo $(($($XB_TOOL ms) - _t0))
}

# guests TOOL RUN: the batch, created eight at a time; their domids in $doms.
guests() {
	doms=
	i=1
	while [ $i -le $N ]; do
		_pids=
		for j in $(seq $i $((i + 7))); do
			[ $j -le $N ] || break
			if [ $j -le $DEV ]; then
				truncate -s 4M $W/m$j.img
				(xb_guest m$1-$2-$j $MIB \
					"disk = [ 'format=raw,vdev=xvda,script=$W/block-fast,target=$W/m$j.img' ]" \
					"vif = [ 'bridge=$XB_BRIDGE,script=$W/vif-fast' ]" > $W/$j.domid) &
			else
				(xb_guest m$1-$2-$j $MIB > $W/$j.domid) &
			fi
			_pids="$_pids $!"
		done
		for _p in $_pids; do wait $_p; done
		i=$((i + 8))
	done
	for j in $(seq 1 $N); do
		[ -s $W/$j.domid ] || { cat /tmp/m$1-$2-$j.create.log; fail "$1 run $2: create guest $j"; }
		doms="$doms $(cat $W/$j.domid)"
	done
}

# teardown TOOL: the command that asks for every domain of $doms.
teardown_cmd() {
	case $1 in
	xl-seq) echo "env XL_TICKS=$W/xl-ticks sh $W/xl-tree.sh seq $doms" ;;
	xl-par) echo "env XL_TICKS=$W/xl-ticks sh $W/xl-tree.sh par $doms" ;;
	async) echo "sh -c 'for d; do $FRONT destroy --async \$d || exit 1; done' sh $doms" ;;
	tx|tx-j*)
		_args=
		for _d in $doms; do _args="$_args $XB_ROOT/request/$_d $($XB_TOOL uuid $_d)"; done
		echo "xenstore-write $_args" ;;
	esac
}

# run TOOL RUN: one mass teardown, measured.
run() {
	tool=$1 run=$2
	wait_clean 300000 > /dev/null || fail "$tool run $run: the backlog from before never drained"
	guests $tool $run
	pages=0
	for d in $doms; do pages=$((pages + $($XB_TOOL pages $d))); done
	target=$(( $(xb_free_pages) + pages - 256 * N ))
	gone=$(echo $doms | tr ' ' ',')
	set -- $doms; first=$1
	case $tool in xl-*) ;; *)
		case $tool in
		tx-j*) printf '[daemon]\njobs = %s\n' ${tool#tx-j} > $W/jobs.conf
			xb_daemon_start_fresh -c $W/jobs.conf || fail "xenreaperd starts with jobs = ${tool#tx-j}" ;;
		*) xb_daemon_start_fresh || fail "xenreaperd starts" ;;
		esac
		xb_daemon_ready || fail "xenreaperd's teardown process gets ready"
		# daemon_ticks reads them there; without it, it would count none.
		[ -r /proc/$XB_DAEMON_PID/task/$XB_DAEMON_PID/children ] ||
			fail "no /proc/PID/task/PID/children (CONFIG_PROC_CHILDREN): the live teardown processes cannot be counted" ;;
	esac
	$XB_TOOL xs-latency $W/lat.txt & lat_pid=$!
	# An observation window, not a wait for a state: 3 s before.
	sleep 1; i0=$($XB_TOOL ms); sleep 3; i1=$($XB_TOOL ms)
	rm -f $W/xl-ticks
	case $tool in xl-*) d0=0 ;; *) d0=$(daemon_ticks) ;; esac
	[ -r /proc/$lat_pid/stat ] || fail "$tool run $run: the resident client ended early"
	s0=$(xb_ticks $store_pid) c0=$(xb_ticks $lat_pid)
	cpu_snapshot $W/procs0; stat0=$(head -n 1 /proc/stat)
	# The processes that come and go (hotplug scripts and their commands,
	# each xl, libxl's destroy children) leave nothing in /proc: the
	# kernel's accounting keeps what each used as it exits.
	acct=yes; $XB_TOOL acct $W/pacct || acct=no
	cpu0=$(busy_ticks)
	t0=$($XB_TOOL ms)
	eval "timeout 600 $XB_TOOL back -i 20 -t $W/trace:$first -g $gone $W/b.ms $target $(teardown_cmd $tool)"
	rc=$?
	t1=$($XB_TOOL ms)
	cpu1=$(busy_ticks)
	[ $acct = yes ] && $XB_TOOL acct off
	stat1=$(head -n 1 /proc/stat); cpu_snapshot $W/procs1
	[ -r /proc/$lat_pid/stat ] || fail "$tool run $run: the resident client ended early"
	s1=$(xb_ticks $store_pid) c1=$(xb_ticks $lat_pid)
	read blocked back first_gone < $W/b.ms || fail "$tool run $run: no figures"
	[ $rc = 0 ] && [ "$blocked" -ge 0 ] && [ "$back" -ge 0 ] && [ "$first_gone" -ge 0 ] ||
		fail "$tool run $run: status $rc, blocked $blocked ms, back $back ms, first gone $first_gone ms"
	clean=$(wait_clean 600000) || fail "$tool run $run: the backlog did not drain in 600 s"
	clean=$((t1 - t0 + clean))
	kill -TERM $lat_pid; wait $lat_pid 2>/dev/null; lat_pid=
	for d in $doms; do
		$XB_TOOL wait-gone $d 60000 >/dev/null || fail "$tool run $run: domain $d not gone"
	done
	case $tool in xl-*) ;; *)
		notdone=0
		for d in $doms; do
			xb_wait_final $d 120 && [ "$(xb_state $d)" = done ] || notdone=$((notdone + 1))
		done
		[ $notdone = 0 ] || fail "$tool run $run: $notdone job(s) did not end done"
		own=$(( $(daemon_ticks) - d0 ))
		rss=$(awk '/^VmHWM:/ { print $2 }' /proc/$XB_DAEMON_PID/status)
		most=$(at_once $doms) || fail "$tool run $run: a job without its started or finished time"
		echo "daemon-peak-rss-kib,$tool,$run,$rss" >> $CSV
		echo "teardowns-at-once-most,$tool,$run,$most" >> $CSV
		xb_daemon_stop ;;
	esac
	case $tool in xl-*) own=$(cat $W/xl-ticks 2>/dev/null) ;; esac
	[ -n "$own" ] && [ -n "$s0" ] && [ -n "$s1" ] && [ -n "$c0" ] && [ -n "$c1" ] ||
		fail "$tool run $run: no CPU figure of the teardown's own processes, xenstored or the client"
	xb_wait_memory $base "$tool run $run: every page of the $N guests is back"
	idle_p99=$(xb_window $W/lat.txt $i0 $i1 | xb_pct 99) && busy_p99=$(xb_window $W/lat.txt $t0 $((t0 + back)) | xb_pct 99) ||
		fail "$tool run $run: no xenstore samples"
	cpu_ms=$(ms_of_ticks $((cpu1 - cpu0)))
	printf '%s\n' "blocked-ms,$tool,$run,$blocked" "first-gone-ms,$tool,$run,$first_gone" \
		"back-ms,$tool,$run,$back" "clean-ms,$tool,$run,$clean" "dom0-cpu-ms,$tool,$run,$cpu_ms" \
		"xs-p99-us-idle,$tool,$run,$idle_p99" "xs-p99-us-busy,$tool,$run,$busy_p99" \
		"teardown-cpu-ms,$tool,$run,$(ms_of_ticks $own)" "xenstored-cpu-ms,$tool,$run,$(ms_of_ticks $((s1 - s0)))" \
		"client-cpu-ms,$tool,$run,$(ms_of_ticks $((c1 - c0)))" >> $CSV
	awk -v t=$tool -v r=$run 'NR == 1 { f0 = $3 } { print t, r, $1, $3 - f0 }' $W/trace >> $DAT
	xb_note "$N x $MIB MiB ($DEV with devices) run $run $tool: blocked $blocked ms, first gone $first_gone ms, all back $back ms, clean $clean ms, dom0 CPU $cpu_ms ms (the teardown's own processes $(ms_of_ticks $own), xenstored $(ms_of_ticks $((s1 - s0))), the resident client $(ms_of_ticks $((c1 - c0)))); xenstore p99 $idle_p99 us before, $busy_p99 us during"
	xb_note "$tool run $run, dom0's CPU by kind (ms): $(stat_split "$stat0" "$stat1")"
	xb_note "$tool run $run, dom0's CPU by process name (ms): $(cpu_where $W/procs0 $W/procs1)"
	if [ $acct = yes ]; then
		exited=$($XB_TOOL acct-sum $W/pacct)
		xb_note "$tool run $run, of it the processes that exited, by name (ms): $exited"
		echo "exited-cpu-by-name,$tool,$run,$exited" >> $CSV
	else
		xb_note "$tool run $run: no process accounting in this kernel (acct(2)): no split of the processes that exited"
	fi
}

for run in $(seq 1 $RUNS); do
	for tool in $TOOLS; do run $tool $run; done
	xb_phase "run $run"
done

# --- the daemon's xenstore requests per job: one guest, then the batch,
# each requested in one xenstore-write; strace on the daemon's process
# alone (the teardown processes' requests are libxl's, xl makes them too).
# A request is a write of its 16-byte header, then one of its payload.
for n in 1 $N; do
	[ "${XB_MASS_REQUESTS:-yes}" = no ] && break
	N_SAVED=$N; N=$n
	guests req $n
	N=$N_SAVED
	xb_daemon_start_fresh || fail "xenreaperd starts (requests per job)"
	xb_daemon_ready || fail "xenreaperd's teardown process gets ready (requests per job)"
	strace -p $XB_DAEMON_PID -e trace=write,writev -s 0 -o $W/st.txt 2>/dev/null & st_pid=$!
	sleep 1	# strace attaching: a guard, the count starts at its first line
	eval "$(teardown_cmd tx)" || fail "requests per job: xenstore-write for $n"
	for d in $doms; do
		xb_wait_final $d 120 && [ "$(xb_state $d)" = done ] || fail "requests per job: job $d ended $(xb_state $d)"
	done
	# What the daemon publishes after the last job's end counts too: an
	# observation window of 2 s once it reads no job active.
	xb_wait_node $XB_ROOT/daemon/active-jobs 0 60 >/dev/null
	sleep 2
	kill $st_pid; wait $st_pid 2>/dev/null
	xb_daemon_stop
	reqs=$(grep -c 'write[v]*([0-9]*, .*, 16)' $W/st.txt)
	echo "xs-requests-per-job,tx-$n,1,$(awk -v r=$reqs -v n=$n 'BEGIN { printf "%.1f", r / n }')" >> $CSV
	xb_note "the daemon's xenstore requests for $n guest(s) at once: $reqs, $(awk -v r=$reqs -v n=$n 'BEGIN { printf "%.1f", r / n }') per job"
	xb_wait_memory $base "requests per job, $n guest(s): memory back"
done
xb_ok "$(($(wc -l < $CSV) - 1)) mass-teardown figures measured"
xb_emit xen-mass.csv $CSV
xb_emit xen-mass.dat $DAT
xb_done
