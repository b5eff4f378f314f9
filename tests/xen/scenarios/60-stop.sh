# SIGTERM in the middle of a teardown, then a restart.  Planned behaviour:
# on SIGTERM the daemon takes no more requests, publishes daemon/state =
# stopping, lets the libxl_domain_destroy calls already running return (so
# libxl's destroy child and hotplug scripts are never signalled), then exits
# 0 with daemon/state = stopped.  A second SIGTERM while stopping exits at
# once, leaving the job destroying; a restart resumes it to done.
. $XB_LIB
XB_DAEMON_LOG=/tmp/xenreaperd-stop.log
: > $XB_DAEMON_LOG
base=$(xb_free_pages)
xb_guest stop1 1024 > /tmp/stop1.domid & xb_guest stop2 2048 > /tmp/stop2.domid & wait
d1=$(cat /tmp/stop1.domid) d2=$(cat /tmp/stop2.domid)
xb_check "1 GiB and 2 GiB guests created" test -n "$d1" -a -n "$d2"
p1=$($XB_TOOL pages $d1)

# --- one SIGTERM while the hypercall is releasing pages
xb_daemon_start || { xb_not_ok "xenreaperd starts"; xb_done; }
pid=$XB_DAEMON_PID
# Watch for "stopping" from before the signal: it may last under a second.
$XB_TOOL wait-node $XB_ROOT/daemon/state stopping 30000 > /tmp/stop.seen &
watcher=$!
xb_request $d1
saw=$($XB_TOOL kill-when $pid 15 0 60000 below $d1 $((p1 * 9 / 10)))
xb_note "SIGTERM sent when domain $d1 held $saw (of $p1 pages)"
t0=$(xb_ms)
wait $pid; rc=$?
t1=$(xb_ms)
left=$($XB_TOOL pages $d1 2>/dev/null || echo gone)
wait $watcher
xb_note "exit after $((t1 - t0)) ms (as seen from the shell); job $(xb_state $d1); domain $d1: $left"
xb_is "$(cut -d' ' -f2 /tmp/stop.seen)" stopping "daemon/state = stopping was published while the teardown ran"
xb_is "$rc" 0 "the daemon exits 0 after SIGTERM"
xb_is "$(xb_read $XB_ROOT/daemon/state)" stopped "daemon/state = stopped after the exit"
xb_is "$left" gone "the running destroy completed before the exit (domain $d1 gone)"
bad=$(grep -Ei 'libxl.*(error|fail|signal|killed)' $XB_DAEMON_LOG | head -3)
xb_is "$bad" "" "libxl reported no error or killed child"
xb_daemon_start || xb_not_ok "xenreaperd restarts"
xb_wait_final $d1 60
xb_is "$(xb_state $d1)" done "after the restart the job is done"

# --- a second SIGTERM while stopping: exit at once, job left destroying
pid=$XB_DAEMON_PID
# This one sends the second SIGTERM as soon as "stopping" is published.
$XB_TOOL kill-when $pid 15 0 20000 node $XB_ROOT/daemon/state stopping > /tmp/stop.second &
second=$!
xb_request $d2
saw=$($XB_TOOL kill-when $pid 15 0 60000 node $XB_ROOT/job/$d2/state destroying)
wait $pid; rc=$?
wait $second; second_rc=$?
st=$(xb_state $d2)
xb_note "first SIGTERM when the job read destroying ($saw); second: $(cat /tmp/stop.second); exit status $rc; job $st; daemon/state $(xb_read $XB_ROOT/daemon/state); domain $d2: $($XB_TOOL pages $d2 2>/dev/null || echo gone)"
xb_is "$second_rc" 0 "the second SIGTERM was sent while stopping"
xb_is "$st" destroying "a second SIGTERM exits at once and leaves the job destroying"
xb_note "lock holders at the restart: $(xb_lock_holders)"
xb_daemon_start || xb_not_ok "xenreaperd restarts at once after the second SIGTERM"
xb_wait_final $d2 60
xb_is "$(xb_state $d2)" done "the restart resumes the job to done"
xb_check "domain $d2 is gone" sh -c "! $XB_TOOL pages $d2 >/dev/null"

xb_daemon_stop
for d in $d1 $d2; do $XB_TOOL pages $d >/dev/null 2>&1 && xl destroy $d; done
xb_wait_memory $base "all memory back"
[ $XB_FAILED -eq 0 ] || xb_daemon_log 40
xb_done
