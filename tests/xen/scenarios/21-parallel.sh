# Parallel teardowns, round after round, in one daemon: XB_PARALLEL_JOBS
# at once (default 4) of XB_PARALLEL_GUESTS guests (default 4) requested
# by one xenstore-write, XB_PARALLEL_ROUNDS times (default 10).  Each guest
# has a vif on the bridge and a disk image through the block script (the
# fast adds of lib.sh; the removes, the teardown under test, are
# Debian's), so every round runs four teardown processes at once, each
# forking its destroy child and hotplug scripts (issue 39).  Every job must
# end done at its first attempt, no teardown be stuck or killed, no
# process be left behind, and dom0 keep no vif, loop device or backend of
# theirs.  On a failure it prints what the daemon's children wait in.
. $XB_LIB
ROUNDS=${XB_PARALLEL_ROUNDS:-10}
N=${XB_PARALLEL_GUESTS:-4} JOBS=${XB_PARALLEL_JOBS:-4} MIB=96
W=/tmp/xb21
rm -rf $W; mkdir -p $W
xb_backends
xb_fast_hotplug $W
# XB_PARALLEL_REMOVE=fast (the default): the removes, too, in a command or
# two, since Debian's block remove takes the block scripts' global lock and
# four teardowns then wait on it one after another (10 rounds took 455 s
# with Debian's, 253 s without, on 4.17); the processes, the forks and the
# execs are the same.
# XB_PARALLEL_REMOVE=debian runs Debian's.
if [ "${XB_PARALLEL_REMOVE:-fast}" = fast ]; then
	sed -i 's|^exec /etc/xen/scripts/block "\$@"$|[ "$1" = remove ] \&\& { n=$(xenstore-read "$XENBUS_PATH/node" 2>/dev/null); [ -n "$n" ] \&\& losetup -d "$n"; exit 0; }\nexec /etc/xen/scripts/block "$@"|' $W/block-fast
	sed -i 's|^exec /etc/xen/scripts/vif-bridge "\$@"$|case $1 in offline\|remove) ip link set dev "$vif" nomaster 2>/dev/null; exit 0 ;; esac\nexec /etc/xen/scripts/vif-bridge "$@"|' $W/vif-fast
fi
loops0=$(losetup -a | wc -l)
base=$(xb_free_pages)
XB_DAEMON_LOG=/tmp/xenreaperd-parallel.log
: > $XB_DAEMON_LOG
printf '[daemon]\njobs = %s\n' $JOBS > /tmp/parallel.conf
xb_daemon_start -c /tmp/parallel.conf || { xb_not_ok "xenreaperd starts with jobs = $JOBS"; xb_done; }

# children: what the daemon's children (its teardown processes) and
# theirs wait in.
children() {
	for _s in /proc/[0-9]*/stat; do
		_p=${_s%/stat}; _p=${_p#/proc/}
		_pp=$(cut -d' ' -f4 $_s 2>/dev/null)
		[ "$_pp" = "$XB_DAEMON_PID" ] || [ "$(cut -d' ' -f4 /proc/$_pp/stat 2>/dev/null)" = "$XB_DAEMON_PID" ] || continue
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
stuck=0 all=
for round in $(seq 1 $ROUNDS); do
	pids= doms= tc=$(xb_ms)
	for i in $(seq 1 $N); do
		truncate -s 4M $W/par$round-$i.img
		(xb_guest par$round-$i $MIB \
			"disk = [ 'format=raw,vdev=xvda,script=$W/block-fast,target=$W/par$round-$i.img' ]" \
			"vif = [ 'bridge=$XB_BRIDGE,script=$W/vif-fast' ]" > /tmp/par$round-$i.domid) &
		pids="$pids $!"
	done
	for p in $pids; do wait $p; done
	args=
	for i in $(seq 1 $N); do
		d=$(cat /tmp/par$round-$i.domid 2>/dev/null)
		[ -n "$d" ] || { xb_not_ok "round $round: create guest $i"; cat /tmp/par$round-$i.create.log; continue; }
		doms="$doms $d" all="$all $d"
		args="$args $XB_ROOT/request/$d $($XB_TOOL uuid $d)"
	done
	tr=$(xb_ms)
	xenstore-write $args
	ended=
	for d in $doms; do
		xb_wait_final $d 120
		ended="$ended $d:$(xb_state $d)"
	done
	xb_note "round $round: created in $((tr - tc)) ms, torn down in $(($(xb_ms) - tr)) ms"
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
xb_check "every teardown ended at its first attempt (no failed destroy, no process killed)" \
	sh -c "! grep -Eq 'libxl_domain_destroy failed|teardown process|teardown attempt' $XB_DAEMON_LOG"
grep -E 'libxl_domain_destroy failed|teardown process|teardown attempt' $XB_DAEMON_LOG | head -n 8 | while read -r l; do xb_note "  $l"; done
end=$(($(date +%s) + 30))
while [ $(date +%s) -lt $end ] && [ -n "$(xb_daemon_working)" ]; do sleep 0.2; done
xb_is "$(xb_daemon_working | wc -l)" 0 "no process of the daemon's left at work"
while [ $(date +%s) -lt $end ] && [ "$(pgrep -P $XB_DAEMON_PID | wc -l)" != 1 ]; do sleep 0.2; done
xb_is "$(pgrep -P $XB_DAEMON_PID | wc -l)" 1 "  one idle teardown process is kept ready, the others have ended"
xb_is "$(losetup -a | wc -l)" "$loops0" "no loop device left attached"
xb_is "$(ip -o link show | grep -c ' vif[0-9]')" 0 "no vif left in dom0"
left=$(for d in $all; do for t in vbd vif; do xenstore-list /local/domain/0/backend/$t/$d >/dev/null 2>&1 && echo $t/$d; done; done)
xb_is "$(echo $left)" "" "no backend of theirs left in xenstore"
xb_daemon_stop
xb_done
