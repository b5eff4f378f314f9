# A teardown that does not return, on real Xen (issue 16, section 3):
#  1. libxl's domain lock held by another process (flock -o, as
#     systemd/50-service does): the job reads stuck after stuck-after,
#     naming the holder's pid and command line; the next request runs
#     beside it (jobs = 1) in the slot it gives up; status, list and the
#     metrics show it; asked again (`xenreaper destroy`), its teardown
#     process is ended and a new one started, which waits on the lock
#     again (issue 39); it ends done once the lock goes.
#  2. A disk whose script= sleeps on remove far past the deadline: stuck,
#     naming the script, its arguments and its age; libxl kills it after
#     its own 40 s and the teardown goes on to its end.
#  3. A stop with a stuck teardown: not held by it; the job stays stuck in
#     xenstore and resumes, to done, on the next start.
# The daemon runs by hand with stuck-after = 5s (the shortest a policy in
# this scenario can use without calling device removal under emulation
# stuck) and a metrics file in dom0's /tmp.
. $XB_LIB
export LD_LIBRARY_PATH=$XB_BUILD/libxl-hook/.libs
XR=$XB_BUILD/libxl-hook/.libs/xenreaper
W=/tmp/xb56
rm -rf $W; mkdir -p $W
cat > $W/policy.conf <<EOF
[daemon]
jobs = 1
stuck-after = 5s
metrics = $W/xenreaper.prom
EOF
for m in loop xen-blkback; do modprobe $m 2>/dev/null; done

# lock_domain D: hold libxl's domain lock of D from another process until
# unlock_domain; HOLDER is its pid (flock(1) itself: -o hands its command
# no descriptor of the lock).
lockfile() { echo /var/lib/xen/userdata-l.$1.$($XB_TOOL uuid $1).domain-userdata-lock; }
lock_domain() {
	flock -o $(lockfile $1) sleep 600 > /dev/null 2>&1 &
	holder=$!
	# flock(1) takes the lock before it forks sleep: held once sleep runs
	# (30 s: a hang guard for an exec over 9p on a loaded host).
	xb_until 30 pgrep -P $holder > /dev/null
}
unlock_domain() { kill $(pgrep -P $holder) $holder 2>/dev/null; wait $holder 2>/dev/null; }
# held_by_matches D PATTERN SECONDS: until job D's held-by matches the
# shell PATTERN (it is worked out again every 5 s); HELD is the last read.
held_by_matches() {
	_end=$(($(date +%s) + $3))
	while held=$(xb_read $XB_ROOT/job/$1/held-by); do
		case $held in $2) return 0 ;; esac
		[ $(date +%s) -ge $_end ] && return 1
		sleep 0.2
	done
	return 1
}

base=$(xb_free_pages)
xb_guest stuck-lock 96 > $W/a.domid & xb_guest stuck-next 96 > $W/b.domid & wait
a=$(cat $W/a.domid) b=$(cat $W/b.domid)
xb_check "two 96 MiB guests created" test -n "$a" -a -n "$b"
xb_daemon_start -c $W/policy.conf || { xb_not_ok "xenreaperd starts"; xb_done; }

# --- 1. libxl's domain lock held by another process
lock_domain $a
xb_check "libxl's domain lock of domain $a held by pid $holder" sh -c "! flock -n $(lockfile $a) true"
t0=$(xb_ms)
xb_request $a
# Hang guard: stuck-after is 5 s; an emulated dom0 under load takes
# seconds more to get the destroy to the lock and the sample after it.
st=$(xb_wait_node $XB_ROOT/job/$a/state stuck 90)
t1=$(xb_ms)
xb_is "$st" stuck "domain $a's teardown, waiting on the lock, reads stuck"
xb_note "  stuck $((t1 - t0)) ms after the request (stuck-after 5 s)"
held=$(xb_read $XB_ROOT/job/$a/held-by)
xb_note "  held-by: $held"
case $held in
*"domain lock /var/lib/xen/userdata-l.$a."*"is held by pid $holder (flock -o "*"sleep 600), and the teardown waits for it"*)
	xb_ok "  held-by names the lock, its holder's pid and command line, and that the daemon waits" ;;
*)	xb_not_ok "  held-by names the lock, its holder's pid and command line, and that the daemon waits" ;;
esac
xb_check "  xenreaper status says stuck and on what it waits" \
	sh -c "$XR status $a > $W/status.out && grep -q ': stuck: its teardown has not returned' $W/status.out &&
		grep -q '^  waiting on  .*pid $holder (flock' $W/status.out"
sed 's/^/XQTAP #   | /' $W/status.out
xb_check "  xenreaper list shows it stuck, with a waiting-on line" \
	sh -c "$XR list > $W/list.out && grep -Eq '^ *$a +stuck-lock +stuck ' $W/list.out &&
		grep -q 'waiting on: .*pid $holder' $W/list.out"
xb_check "  the metrics count one stuck job" \
	xb_wait_log '^xen_teardown_jobs\{state="stuck"\} 1$' 30 $W/xenreaper.prom
helper=$(pgrep -f "xenreaper-teardown [a-z]+ $a " | head -n 1)
xb_check "  its teardown process (pid $helper) waits on the lock" \
	grep -Eq -- "-> FLOCK +ADVISORY +WRITE +$helper " /proc/locks

t2=$(xb_ms)
xb_request $b
xb_wait_final $b 120
t3=$(xb_ms)
xb_is "$(xb_state $b)" done "the next request (jobs = 1) is torn down beside the stuck one"
xb_note "  in $((t3 - t2)) ms"
xb_is "$(xb_state $a)" stuck "  while domain $a is still stuck"

# Asked again: taken back, and a new teardown process waits on the lock.
$XR destroy $a > $W/again.out 2>&1; rc=$?
xb_is "$rc" 0 "asked again, \`xenreaper destroy $a\` takes its stuck teardown back ($(head -c 200 $W/again.out))"
xb_check "  the daemon says so" xb_wait_log "domain $a \(stuck-lock\): its stuck teardown is taken back \(asked again\)" 30
xb_check "  the job's error says its process was ended" \
	sh -c "xenstore-read $XB_ROOT/job/$a/error | grep -q 'was ended to take it back'"
st=$(xb_wait_node $XB_ROOT/job/$a/state stuck 90)
xb_is "$st" stuck "  its new teardown waits on the lock again: stuck again"
again=$(pgrep -f "xenreaper-teardown [a-z]+ $a " | head -n 1)
xb_check "  in a new process (pid $again, was $helper)" test -n "$again" -a "$again" != "$helper"
xb_check "  the old one is gone" sh -c "! kill -0 $helper 2>/dev/null"

unlock_domain $holder
t4=$(xb_ms)
xb_wait_final $a 120
t5=$(xb_ms)
xb_is "$(xb_state $a)" done "once the lock goes, the stuck teardown ends done"
xb_note "  $((t5 - t4)) ms after the holder died"
xb_is "$(xb_read $XB_ROOT/job/$a/held-by)" "" "  with no held-by"
# It is no longer stuck once its pages fall or its destroy returns,
# whichever the daemon sees first.
xb_check "  the log says it goes on" xb_wait_log "domain $a .*its stuck teardown (returned|releases pages again) after" 10

xb_phase "1. libxl's domain lock held by another process"
# --- 2. a script= hotplug script that sleeps on remove far past the deadline
truncate -s 16M $W/disk.img
loop=$(losetup -f --show $W/disk.img) || { xb_not_ok "a loop device for the disk"; xb_done; }
loop_mm=$(stat -L -c %t:%T $loop)
# On add the wrapper does what libxl waits for itself (Debian's block
# script is slow under emulation, see 49-children); on remove it sleeps,
# in a child it waits for, so that libxl's SIGKILL of the script at 40 s
# ends the script at once (the sleep it leaves is killed at the end).
cat > $W/slow-block <<EOF
#!/bin/bash
case \$1 in
add)	xenstore-write "\$XENBUS_PATH/physical-device" $loop_mm "\$XENBUS_PATH/physical-device-path" $loop \
		"\$XENBUS_PATH/hotplug-status" connected ;;
remove)	sleep 600 & echo \$! > $W/sleep.pid; echo \$\$ > $W/script.pid; wait ;;
esac
EOF
chmod +x $W/slow-block
c=$(xb_guest stuck-script 96 "disk = [ 'script=$W/slow-block,vdev=xvda,access=rw,target=$loop' ]") ||
	{ xb_not_ok "create a guest whose disk's script sleeps on remove"; xb_done; }
t0=$(xb_ms)
xb_request $c
# Hang guard as above; the script starts after the backend closed (libxl
# gives that 10 s).
st=$(xb_wait_node $XB_ROOT/job/$c/state stuck 90)
t1=$(xb_ms)
xb_is "$st" stuck "domain $c's teardown, in its sleeping hotplug script, reads stuck"
xb_note "  stuck $((t1 - t0)) ms after the request"
# The script may start after the job is called stuck (libxl first waits
# for the backend to close), and held-by is worked out every 5 s: 20 s.
xb_wait_log . 30 $W/script.pid
xb_check "  held-by names the hotplug script, its pid, arguments and how long it has run" \
	held_by_matches $c "*hotplug script pid $(cat $W/script.pid 2>/dev/null) (/bin/bash $W/slow-block remove) running for * s*" 20
xb_note "  held-by: $held"
# libxl's own bound on the script is 40 s (LIBXL_HOTPLUG_TIMEOUT), then
# SIGKILL; 120 s is the hang guard beyond it.
xb_wait_final $c 120
t2=$(xb_ms)
xb_note "  final $((t2 - t0)) ms after the request: $(xb_state $c) $(xb_read $XB_ROOT/job/$c/error)"
xb_check "  libxl killed the script at its own timeout, and the teardown went on to its end" \
	sh -c "[ \"\$(xenstore-read $XB_ROOT/job/$c/state)\" = done ] && ! $XB_TOOL pages $c > /dev/null 2>&1"
kill $(cat $W/sleep.pid 2>/dev/null) 2>/dev/null
grep -E "slow-block|killing execution" /var/log/xen/xen-hotplug.log $XB_DAEMON_LOG 2>/dev/null |
	tail -n 3 | sed 's/^/XQTAP #   | /'
losetup -d $loop

xb_phase "2. a script= hotplug script that sleeps on remov"
# --- 3. a stop does not wait for a stuck teardown; it resumes on restart
e=$(xb_guest stuck-stop 96) || { xb_not_ok "create a guest for the stop"; xb_done; }
lock_domain $e
xb_request $e
xb_is "$(xb_wait_node $XB_ROOT/job/$e/state stuck 90)" stuck "domain $e, its lock held, reads stuck"
pid=$XB_DAEMON_PID
t0=$(xb_ms)
kill -TERM $pid; wait $pid; rc=$?
t1=$(xb_ms)
XB_DAEMON_PID=
xb_is "$rc" 0 "SIGTERM with only a stuck teardown: the daemon exits 0 at once"
xb_note "  in $((t1 - t0)) ms"
xb_is "$(xb_read $XB_ROOT/daemon/state)" stopped "  daemon/state = stopped"
xb_is "$(xb_state $e)" stuck "  the job stays stuck in xenstore"
xb_check "  the log says it is left to resume" grep -q "stopping; 1 stuck teardown(s) resume on restart" $XB_DAEMON_LOG
end=$(($(date +%s) + 30))
while pgrep -f "xenreaper-teardown [a-z]+ $e " > /dev/null && [ $(date +%s) -lt $end ]; do sleep 0.1; done
xb_check "  its teardown process ended with the daemon" sh -c "! pgrep -f '[x]enreaper-teardown [a-z]+ $e ' > /dev/null"
unlock_domain $holder
xb_daemon_start -c $W/policy.conf || xb_not_ok "xenreaperd starts again"
xb_wait_final $e 120
xb_is "$(xb_state $e)" done "  the next start resumes it to done"
xb_wait_memory $base "every guest's memory is back"
xb_daemon_stop
[ $XB_FAILED -eq 0 ] || { tail -n 30 /var/log/xen/xen-hotplug.log; xb_daemon_log 40; }
xb_phase "3. a stop does not wait for a stuck teardown; it"
xb_done
