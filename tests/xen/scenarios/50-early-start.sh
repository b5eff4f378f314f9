# xenreaperd started before xenstored (early/50-early-start.sh started it,
# under a restart-on-failure supervisor, before dom0's xenstored ran): it
# must end up running and serving requests once xenstored is up, and say
# exactly once, in one log line, that it is waiting for xenstored.
# First in its boot: until it stops that daemon, no other scenario could
# start one (the single-instance lock).
. $XB_LIB
E=/tmp/early
xb_check "the early hook ran before xenstored" test -s /tmp/xb-early-$XB_SCENARIO.log
sed 's/^/XQTAP #   early: /' /tmp/xb-early-$XB_SCENARIO.log

# xenstored is up now (the prelude started it after the hook).
state=$(xb_wait_node $XB_ROOT/daemon/state running 60)
xb_is "$state" running "the early daemon reaches daemon/state = running once xenstored is up"
pid=$(xb_read $XB_ROOT/daemon/pid)
xb_is "$pid" "$(cat $E/pid)" "daemon/pid is the supervised daemon's"
starts=$(grep -c " start " $E/events)
xb_note "supervisor: $starts start(s): $(tr '\n' ';' < $E/events)"
xb_is "$starts" 1 "the daemon started once (it waited, it did not exit for a restart)"

domid=$(xb_guest early 128)
xb_request $domid
xb_wait_final $domid 60
xb_is "$(xb_state $domid)" done "a request after xenstored came up is served"
xb_check "its domain is gone" sh -c "! $XB_TOOL pages $domid >/dev/null"

waiting=$(grep -ci 'xenstored' $E/daemon.log)
xb_is "$waiting" 1 "the log has exactly one line about xenstored"
sed 's/^/XQTAP #   daemon: /' $E/daemon.log | head -20

kill -TERM $pid
xb_wait_node $XB_ROOT/daemon/state stopped 30 >/dev/null
i=0; while [ -d /proc/$pid ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
xb_check "the daemon stopped on SIGTERM" test ! -d /proc/$pid
xb_check "the supervisor saw a clean exit" sh -c "grep -q ' exit [0-9]* status 0' $E/events"
# Its job record stays for the retention time: the fault rounds that
# follow in this boot count every job they did not ask for.
xenstore-rm $XB_ROOT/job/$domid 2>/dev/null
xb_done
