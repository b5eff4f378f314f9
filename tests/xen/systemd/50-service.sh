# xenreaperd under systemd as PID 1: the real unit (Type=notify, hardened)
# starts after Debian's xen init script, shows its STATUS line, tears a
# guest down, is restarted by systemd after kill -9 with the job still
# completing, reloads, and stops cleanly.
. $XB_LIB
xb_check "Debian's xen init script started Xen (xen.service active)" systemctl is-active -q xen.service
base=$(xb_free_pages)
xb_check "systemctl start xenreaperd" systemctl start xenreaperd.service
xb_is "$(systemctl is-active xenreaperd.service)" active "xenreaperd.service is active"
systemctl status --no-pager xenreaperd.service > /tmp/status.out 2>&1
sed 's/^/XQTAP #   /' /tmp/status.out | head -n 12
xb_check "  active (running)" grep -q 'active (running)' /tmp/status.out
xb_check "  with its STATUS line" grep -q 'Status: "idle' /tmp/status.out
xb_is "$(xb_read $XB_ROOT/daemon/state)" running "daemon/state is running (READY=1 came after the watches)"

# One daemon per host: a second one started by hand refuses at once,
# names the running one, and touches nothing in xenstore.
pid1=$(systemctl show -p MainPID --value xenreaperd.service)
$XB_DAEMON > /tmp/second.out 2>&1; rc=$?
xb_is "$rc" 3 "a second xenreaperd exits with status 3"
xb_check "  saying which pid runs ($(head -c 120 /tmp/second.out))" grep -q "already running as pid $pid1" /tmp/second.out
xb_is "$(xb_read $XB_ROOT/daemon/pid)" "$pid1" "  and daemon/pid still names the service's daemon"
xb_is "$(systemctl show -p KillMode --value xenreaperd.service)" mixed "the unit stops with KillMode=mixed"

d=$(xb_guest unit1 1024) || xb_not_ok "create 1 GiB guest"
xb_request $d
xb_wait_state $d done 60
xb_is "$(xb_state $d)" done "teardown through the service"
xb_wait_memory $base "memory returned"

# kill -9 mid-teardown: systemd restarts it and the job completes.
pid1=$(systemctl show -p MainPID --value xenreaperd.service)
d=$(xb_guest unit2 2048) || xb_not_ok "create 2 GiB guest"
xb_request $d
left=$($XB_TOOL wait-below $d 524288 60000)
kill -9 $pid1
xb_check "killed mid-teardown (domain held $left of 524288 pages)" test -n "$left"
i=0; pid2=$pid1
while [ $i -lt 150 ]; do
	pid2=$(systemctl show -p MainPID --value xenreaperd.service)
	[ "$pid2" != "$pid1" ] && [ "$pid2" != 0 ] && [ "$(systemctl is-active xenreaperd.service)" = active ] && break
	sleep 0.2; i=$((i + 1))
done
xb_check "systemd restarted xenreaperd (pid $pid1 -> $pid2)" test "$pid2" != "$pid1" -a "$pid2" != 0
xb_is "$(systemctl show -p NRestarts --value xenreaperd.service)" 1 "  once (NRestarts)"
xb_wait_state $d done 60
xb_is "$(xb_state $d)" done "the interrupted job completed after the restart"
xb_wait_memory $base "all memory returned"

xb_check "systemctl reload xenreaperd" systemctl reload xenreaperd.service
xb_is "$(systemctl is-active xenreaperd.service)" active "  still active after reload"
journalctl -u xenreaperd.service --no-pager -o cat > /tmp/journal.out 2>&1
xb_check "the journal has the job transitions" grep -q "destroying -> done" /tmp/journal.out
xb_check "  and the reload" grep -q "policy reloaded" /tmp/journal.out

# systemctl stop mid-teardown: the daemon says stopping, lets the running
# libxl_domain_destroy return, and only then exits; the job is done.
d=$(xb_guest unit3 2048) || xb_not_ok "create 2 GiB guest"
xb_request $d
left=$($XB_TOOL wait-below $d 524288 60000)
( while :; do xb_read $XB_ROOT/daemon/state; sleep 0.05; done ) > /tmp/states.out 2>&1 &
watcher=$!
xb_check "systemctl stop xenreaperd mid-teardown (domain held $left pages)" systemctl stop xenreaperd.service
kill $watcher; wait $watcher 2>/dev/null
xb_check "  daemon/state read stopping while the teardown finished" grep -qx stopping /tmp/states.out
xb_is "$(xb_read $XB_ROOT/daemon/state)" stopped "  daemon/state is stopped after stop"
xb_is "$(xb_state $d)" done "  and the job it waited for is done"
xb_check "  its domain is gone" sh -c "! $XB_TOOL pages $d >/dev/null"
# journald takes the daemon's stderr stream in its own time: wait for the line.
i=0; while ! journalctl -u xenreaperd.service --no-pager -o cat | grep -q "stopping once 1 running teardown" && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
journalctl -u xenreaperd.service --no-pager -o cat > /tmp/journal.out 2>&1
xb_check "  the journal says it waited for the running teardown" grep -q "stopping once 1 running teardown" /tmp/journal.out
xb_wait_memory $base "all memory returned"

# xenstored gone: the idle daemon notices at its next watchdog ping, says
# so and exits non-zero for systemd to restart it.  (Last: Xen cannot
# restart xenstored.)
xb_check "systemctl start xenreaperd again" systemctl start xenreaperd.service
restarts=$(systemctl show -p NRestarts --value xenreaperd.service)
kill -9 $(cat /run/xenstored.pid 2>/dev/null || pidof xenstored)
i=0; while ! journalctl -u xenreaperd.service --no-pager -o cat | grep -q "lost the connection to xenstored" && [ $i -lt 450 ]; do sleep 0.2; i=$((i + 1)); done
journalctl -u xenreaperd.service --no-pager -o cat > /tmp/journal.out 2>&1
xb_check "xenstored killed: the daemon logs that it lost the connection (within $((i / 5)) s)" grep -q "lost the connection to xenstored" /tmp/journal.out
i=0; while [ "$(systemctl show -p NRestarts --value xenreaperd.service)" = "$restarts" ] && [ $i -lt 100 ]; do sleep 0.2; i=$((i + 1)); done
xb_check "  and systemd restarts it (NRestarts $restarts -> $(systemctl show -p NRestarts --value xenreaperd.service))" \
	test "$(systemctl show -p NRestarts --value xenreaperd.service)" != "$restarts"
[ $XB_FAILED -eq 0 ] || sed 's/^/  journal: /' /tmp/journal.out | tail -n 30
xb_done
