# Parallel teardowns, round after round, in one daemon: XB_PARALLEL_JOBS
# workers (default 4) and XB_PARALLEL_GUESTS guests (default 4) requested
# by one xenstore-write, XB_PARALLEL_ROUNDS times (default 6).  Every job
# must end done with its domain gone.  What it guards: each worker
# destroys through a libxl context of its own, and libxl forks the
# domain's destroy child from the worker while the other workers run libxl.
# In libxl's default child mode one context reaped another's destroy child
# and that destroy never returned (seen on 4.17 and 4.20: the domain gone,
# no child left).  And libxencall keeps its buffer cache under one
# process-wide mutex that no fork handler takes, so a destroy child forked
# while another worker was inside it waits for ever before its first
# hypercall (seen in `make bench`'s batch of eight with jobs = 4); the
# daemon kills such a child (forklock.c) and the teardown is tried again.
# And the daemon's own lock around its hypercalls must never be held into
# libxl, whose fork handler takes libxl's lock first: a worker making its
# libxl context under it while another forked deadlocked the daemon (seen
# on 4.20, round 1).
# On a failure it prints what the daemon's children and threads wait in.
# The guests have no devices, and say so: the races are between the forks
# of destroy children and the hypercalls around them, which a guest's
# hotplug scripts only spread apart; the guests with a vif and disks are
# torn down in parallel under the unit (45-guests-unit).
. $XB_LIB
ROUNDS=${XB_PARALLEL_ROUNDS:-6}
N=${XB_PARALLEL_GUESTS:-4} JOBS=${XB_PARALLEL_JOBS:-4} MIB=128
base=$(xb_free_pages)
XB_DAEMON_LOG=/tmp/xenreaperd-parallel.log
: > $XB_DAEMON_LOG
printf '[daemon]\njobs = %s\n' $JOBS > /tmp/parallel.conf
xb_daemon_start -c /tmp/parallel.conf || { xb_not_ok "xenreaperd starts with jobs = $JOBS"; xb_done; }

# children: what the daemon's threads and children wait in (a destroy
# child waiting on a futex is the hang this scenario guards against).
children() {
	for _s in /proc/[0-9]*/stat; do
		_p=${_s%/stat}; _p=${_p#/proc/}
		[ "$(cut -d' ' -f4 $_s 2>/dev/null)" = "$XB_DAEMON_PID" ] || continue
		xb_note "  child $_p $(cat /proc/$_p/comm 2>/dev/null) state $(cut -d' ' -f3 $_s) wchan $(cat /proc/$_p/wchan 2>/dev/null) syscall $(cut -d' ' -f1-3 /proc/$_p/syscall 2>/dev/null)"
		head -n 8 /proc/$_p/stack 2>/dev/null | while read -r l; do xb_note "    $l"; done
		command -v gdb >/dev/null &&
			timeout 60 gdb -batch -p $_p -ex bt 2>/dev/null | grep '^#' | while read -r l; do xb_note "    $l"; done
	done
	for _t in /proc/$XB_DAEMON_PID/task/*; do
		xb_note "  thread ${_t##*/} $(cat $_t/comm) wchan $(cat $_t/wchan 2>/dev/null) syscall $(cut -d' ' -f1-3 $_t/syscall 2>/dev/null)"
		head -n 6 $_t/stack 2>/dev/null | while read -r l; do xb_note "    $l"; done
	done
}
stuck=0
for round in $(seq 1 $ROUNDS); do
	pids= doms=
	for i in $(seq 1 $N); do
		(xb_guest par$round-$i $MIB > /tmp/par$round-$i.domid) &
		pids="$pids $!"
	done
	for p in $pids; do wait $p; done
	args=
	for i in $(seq 1 $N); do
		d=$(cat /tmp/par$round-$i.domid 2>/dev/null)
		[ -n "$d" ] || { xb_not_ok "round $round: create guest $i"; cat /tmp/par$round-$i.create.log; continue; }
		doms="$doms $d"
		args="$args $XB_ROOT/request/$d $($XB_TOOL uuid $d)"
	done
	xenstore-write $args
	ended=
	for d in $doms; do
		xb_wait_final $d 120
		ended="$ended $d:$(xb_state $d)"
	done
	left=$(for d in $doms; do $XB_TOOL info $d >/dev/null 2>&1 && echo $d; done)
	notdone=$(echo $ended | tr ' ' '\n' | grep -v ':done$')
	if [ -n "$doms" ] && [ -z "$left" ] && [ -z "$notdone" ]; then
		xb_ok "round $round: $N teardowns at once, all done and their domains gone ($ended )"
	else
		xb_not_ok "round $round: $N teardowns at once, all done and their domains gone"
		xb_note "  jobs:$ended; domains still there: $(echo $left)"
		for d in $doms; do xb_note "  domain $d: $($XB_TOOL info $d 2>&1)"; done
		children
		stuck=1
		break
	fi
done
[ $stuck = 0 ] && xb_wait_memory $base "all their memory is back"
[ $stuck = 0 ] || xb_daemon_log 30
xb_check "no teardown was ever reported stuck" sh -c "! grep -q 'has not returned' $XB_DAEMON_LOG"
# A destroy child forked while another worker was inside libxencall waits
# for ever on its cache mutex; forklock.c kills it and the teardown is
# tried again, which the rounds above count as done.  How often, for the
# record (a race: most runs see none).
xb_note "destroy children killed waiting on an inherited lock: $(grep -c 'left waiting for ever on a lock' $XB_DAEMON_LOG)"
grep 'left waiting for ever on a lock\|libxl_domain_destroy failed' $XB_DAEMON_LOG | head -n 8 | while read -r l; do xb_note "  $l"; done
xb_daemon_stop
xb_done
