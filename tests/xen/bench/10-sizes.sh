# Benchmark, per guest size (issue 10, measures 1, 2 and 7): how long each
# way of asking for a teardown blocks its caller, and how long from the ask
# until the guest's memory is free again, side by side in one boot:
#   caller blocked   xl destroy, xl destroy --async (the front),
#                    xenreaper destroy, and the caller floor: one
#                    xenstore-write of one node that nobody watches
#   memory back      xl destroy, the teardown floor (xbtool floor-destroy:
#                    libxl_domain_destroy with its context made first),
#                    xenreaperd deferred (asked by xl destroy --async), and
#                    xenreaperd sync (asked by xenreaper destroy), with
#                    request-to-clean (its job done once the scrub backlog
#                    is measured 0)
#   daemon           RSS idle and after the jobs (at rest: 50-daemon.sh)
# Each size XB_BENCH_RUNS times (default 3), in three phases: xl destroy and
# the floors with no daemon running, then xenreaperd deferred, then sync;
# within a phase tools interleave run by run so that drift hits them
# alike.  Guests are created a few at a time in
# parallel, then destroyed one by one with nothing else running.  Every
# program is run once first: the first exec over 9p reads it from the host
# (seconds under emulation), which is no teardown's cost.  Times are
# xbtool's, from the fork (or the floor's call), so shell start-ups stay
# out.  Figures go to the host (xb_emit): xen-sizes.csv, xen-daemon.csv,
# xen-trace-TOOL.dat (pages left over time for one 2 GiB guest) and
# xen-machine.txt.  A failed measurement fails the scenario: no figure
# from it reaches the host.
. $XB_LIB
export LD_LIBRARY_PATH=$XB_BUILD/libxl-hook/.libs
XL_FRONT=$XB_BUILD/libxl-hook/.libs/xl
CLI=$XB_BUILD/libxl-hook/.libs/xenreaper
SIZES=${XB_BENCH_SIZES:-512 1024 2048 3072}
RUNS=${XB_BENCH_RUNS:-3}
PAR=${XB_BENCH_PAR:-4}		# guests created at once
FLOOR_NODE=/local/domain/0/xenreaper-bench-floor
TRACE_MIB=2048			# the size whose first run is traced for the plot
CSV=/tmp/xen-sizes.csv
echo "measure,size_mib,tool,run,value_ms" > $CSV
echo "measure,size_mib,tool,run,value" > /tmp/xen-daemon.csv

# On failure, what dom0 was doing (a hung call shows in its wait channel).
fail() {
	xb_not_ok "$*"
	ps -eo pid,stat,wchan:24,etime,args | grep -v ' \[' | tail -n 25 | sed 's/^/XQTAP #   ps: /'
	xl list | sed 's/^/XQTAP #   xl list: /'
	xb_daemon_log 30
	xb_done
}
# Each measured command is bounded: a hang fails the bench loudly.
T="timeout 200"

# create_par MIB NAME...: the guests at once (in the background); each
# NAME's domid in /tmp/NAME.domid.
create_par() {
	_mib=$1; shift
	_pids=
	for _n in "$@"; do
		rm -f /tmp/$_n.domid
		(xb_guest $_n $_mib > /tmp/$_n.domid) &
		_pids="$_pids $!"
	done
	# Not a bare `wait`: the daemon is a child of this shell too.
	for _p in $_pids; do wait $_p; done
	for _n in "$@"; do
		[ -s /tmp/$_n.domid ] || { cat /tmp/$_n.create.log; fail "create $_n ($_mib MiB)"; }
	done
}

# one TOOL RUN MIB DOMID: tear DOMID down with TOOL and record the figures.
one() {
	_tool=$1 _run=$2 _mib=$3 _d=$4
	_uuid=$($XB_TOOL uuid $_d) || fail "uuid of $_d"
	_pages=$($XB_TOOL pages $_d) || fail "pages of $_d"
	_target=$(( $(xb_free_pages) + _pages - 256 ))
	_trace=
	[ $_mib = $TRACE_MIB ] && [ $_run = 1 ] && _trace="-t /tmp/xen-trace-$_tool.dat:$_d"
	rm -f /tmp/m.ms
	case $_tool in
	xl) $T $XB_TOOL back $_trace /tmp/m.ms $_target xl destroy $_d ;;
	xl-async) $T $XB_TOOL back $_trace /tmp/m.ms $_target $XL_FRONT destroy --async $_d ;;
	floor) $T $XB_TOOL floor-destroy $_trace /tmp/m.ms $_target $_d ;;
	sync)	$T $XB_TOOL back -n $XB_ROOT/job/$_d/state=done /tmp/m.ms $_target \
			$CLI destroy $_d >/dev/null ;;
	esac
	_rc=$?
	read _blocked _back _clean < /tmp/m.ms || fail "$_tool $_mib MiB run $_run: no figures"
	[ $_rc = 0 ] && [ "$_blocked" -ge 0 ] && [ "$_back" -ge 0 ] ||
		fail "$_tool $_mib MiB run $_run: status $_rc, blocked ${_blocked} ms, back ${_back} ms"
	$XB_TOOL wait-gone $_d 60000 >/dev/null || fail "$_tool $_mib MiB run $_run: domain $_d not gone"
	case $_tool in xl|floor) ;; *)
		xb_wait_final $_d 120 && [ "$(xb_state $_d)" = done ] ||
			fail "$_tool $_mib MiB run $_run: job $_d ended $(xb_state $_d)" ;;
	esac
	case $_tool in
	xl) echo "caller,$_mib,xl,$_run,$_blocked"; echo "back,$_mib,xl,$_run,$_back" ;;
	xl-async) echo "caller,$_mib,xl-async,$_run,$_blocked"
		echo "back,$_mib,xenreaper-deferred,$_run,$_back" ;;
	floor) echo "floor-call,$_mib,floor,$_run,$_blocked"; echo "back,$_mib,floor,$_run,$_back" ;;
	sync)	[ "${_clean:--1}" -ge 0 ] || fail "sync $_mib MiB run $_run: job not seen done"
		echo "caller,$_mib,xenreaper,$_run,$_blocked"
		echo "back,$_mib,xenreaper-sync,$_run,$_back"; echo "clean,$_mib,xenreaper-sync,$_run,$_clean" ;;
	esac >> $CSV
	xb_note "$_mib MiB run $_run $_tool: blocked $_blocked ms, memory back $_back ms${_clean:+, clean $_clean ms}"
}

# floor RUN MIB: the caller floor, one xenstore-write of a node no one
# watches (what any client pays at least to hand a teardown over).
floor_write() {
	timeout 60 $XB_TOOL time /tmp/f.ms xenstore-write $FLOOR_NODE "$($XB_TOOL uuid 0)" ||
		fail "caller floor: xenstore-write failed"
	read _f < /tmp/f.ms
	echo "caller,$2,xenstore-write,$1,$_f" >> $CSV
	# What a client pays before doing anything: exec and loading
	# libxenreaper (with libxenstore and libxenctrl).
	timeout 60 $XB_TOOL time /tmp/f.ms $CLI --version >/dev/null ||
		fail "client start-up: xenreaper --version failed"
	read _f < /tmp/f.ms
	echo "caller,$2,client-startup,$1,$_f" >> $CSV
}

# phase TOOLS...: every size, every run, each TOOL once per run; guests
# made PAR at a time (fewer if memory is short), then torn down in order.
phase() {
	tools="$*"
	for mib in $SIZES; do
		todo=
		for run in $(seq 1 $RUNS); do
			for tool in $tools; do todo="$todo $tool:$run"; done
		done
		set -- $todo
		while [ $# -gt 0 ]; do
			fit=$(( ($(xb_free_pages) / 256 - 256) / mib ))
			k=$PAR; [ $fit -lt $k ] && k=$fit
			[ $k -ge 1 ] || fail "no room for a $mib MiB guest ($(($(xb_free_pages) / 256)) MiB free)"
			batch= names=
			while [ $# -gt 0 ] && [ $k -gt 0 ]; do
				batch="$batch $1"; names="$names b${mib}-${1%%:*}-${1#*:}"
				shift; k=$((k - 1))
			done
			create_par $mib $names
			for item in $batch; do
				one ${item%%:*} ${item#*:} $mib $(cat /tmp/b${mib}-${item%%:*}-${item#*:}.domid)
				# The caller floor, once per size and run, beside xl's.
				[ ${item%%:*} = xl ] && floor_write ${item#*:} $mib
			done
		done
		xb_phase "$tools, $mib MiB"
	done
}

{
	echo "xen_version=$(xl info | awk -F': ' '/^xen_version/ { print $2 }')"
	echo "dom0_kernel=$(uname -r)"
	echo "nr_cpus=$(xl info | awk -F': ' '/^nr_cpus/ { print $2 }')"
	echo "dom0_mem_mib=$(awk '/^MemTotal/ { print int($2 / 1024) }' /proc/meminfo)"
	echo "free_mib_at_start=$(($(xb_free_pages) / 256))"
} > /tmp/xen-machine.txt

# Warm-up: every program once (from 9p into dom0's page cache).
xl list >/dev/null && $XL_FRONT list >/dev/null &&
	xenstore-write $FLOOR_NODE warm && xenstore-read $FLOOR_NODE >/dev/null &&
	$XB_TOOL time /tmp/f.ms true && xb_free_pages >/dev/null || fail "warm-up"
$XB_TOOL floor-destroy 2>/dev/null	# usage only: loads libxl

# Plain xl and the floors, with no daemon: what a host without xenreaper
# pays (and nothing of the daemon's in the floors).
phase xl floor

xb_daemon_start_fresh || fail "xenreaperd starts"
pid=$XB_DAEMON_PID
$CLI list >/dev/null || fail "warm-up: xenreaper list"
rss() { awk -v f="$1:" '$1 == f { print $2 }' /proc/$pid/status; }
echo "rss-idle-kib,0,xenreaperd,1,$(rss VmRSS)" >> /tmp/xen-daemon.csv

# Deferred (the default policy), asked by the front.
phase xl-async
echo "rss-after-jobs-kib,0,xenreaperd,1,$(rss VmRSS)" >> /tmp/xen-daemon.csv
echo "rss-peak-kib,0,xenreaperd,1,$(rss VmHWM)" >> /tmp/xen-daemon.csv
xb_note "xenreaperd: RSS $(rss VmRSS) KiB after the jobs"
xb_daemon_stop

# Sync: the same daemon with scrub = sync for every pool, asked by
# `xenreaper destroy` (its caller figure does not depend on the policy).
printf '[default]\nscrub = sync\n' > /tmp/sync.conf
xb_daemon_start_fresh -c /tmp/sync.conf || fail "xenreaperd starts with scrub = sync"
phase sync
xb_daemon_stop

n=$(($(wc -l < $CSV) - 1))
xb_ok "$n figures measured"
xb_emit xen-sizes.csv $CSV
xb_emit xen-daemon.csv /tmp/xen-daemon.csv
xb_emit xen-machine.txt /tmp/xen-machine.txt
for f in /tmp/xen-trace-*.dat; do
	[ -e "$f" ] && xb_emit $(basename $f) $f
done
xb_done
