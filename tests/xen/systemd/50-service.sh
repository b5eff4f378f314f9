# xenreaperd under systemd as PID 1: the real unit (Type=notify, hardened)
# starts after Debian's xen init script, shows its STATUS line, tears a
# guest down, is restarted by systemd after kill -9 with the job still
# completing, reloads, stops cleanly, and stops within its bound with a
# teardown stuck.
. $XB_LIB
# journal_wait PATTERN SECONDS: until the unit's journal has PATTERN, at
# most SECONDS of wall time (journalctl itself is slow under emulation).
journal_wait() {
	_end=$(($(date +%s) + $2))
	until journalctl -u xenreaperd.service --no-pager -o cat | grep -q "$1" || [ $(date +%s) -ge $_end ]; do
		sleep 0.2
	done
}
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

d=$(xb_guest unit1 256) || xb_not_ok "create a 256 MiB guest"
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
# libxl_domain_destroy return, and only then exits; the job is done.  To
# be sure the stop lands mid-teardown, the destroy is held in its process:
# libxl takes the domain's userdata lock (flock(2), under /var/lib/xen)
# before the hypercall, and this scenario holds that lock until the stop
# has been seen.
d=$(xb_guest unit3 256) || xb_not_ok "create 256 MiB guest"
lockfile=/var/lib/xen/userdata-l.$d.$($XB_TOOL uuid $d).domain-userdata-lock
flock -o $lockfile sleep 600 & holder=$!
end=$(($(date +%s) + 30))
while flock -n $lockfile true && [ $(date +%s) -lt $end ]; do sleep 0.1; done
xb_check "libxl's lock for domain $d held by the scenario" sh -c "! flock -n $lockfile true"
# The hold must end before the daemon would call the teardown stuck (the
# policy's stuck-after, 30 s, and no more while stopping: reaper.h), after
# which a stop no longer waits for it: so the checks made while it is held
# are only those that need it, and the time it was held is noted.
t_held=$(date +%s)
xb_request $d
xb_wait_state $d destroying 30
xb_is "$(xb_state $d)" destroying "  the teardown is in its process, waiting for the lock"
systemctl stop xenreaperd.service & stopper=$!
xb_check "  systemctl stop: daemon/state reads stopping while the teardown runs" \
	$XB_TOOL wait-node $XB_ROOT/daemon/state stopping 30000
xb_is "$(systemctl is-active xenreaperd.service)" deactivating "  the unit is deactivating meanwhile"
# journald takes the daemon's stderr stream in its own time: wait for the line.
journal_wait "stopping once 1 running teardown" 10
kill $(pgrep -P $holder) $holder 2>/dev/null
xb_note "the teardown was held for $(($(date +%s) - t_held)) s (stuck after 30 s)"
journalctl -u xenreaperd.service --no-pager -o cat > /tmp/journal.out 2>&1
xb_check "  the journal says it waits for the running teardown" grep -q "stopping once 1 running teardown" /tmp/journal.out
wait $stopper; rc=$?
xb_is "$rc" 0 "  systemctl stop returns once the teardown is done"
xb_is "$(xb_read $XB_ROOT/daemon/state)" stopped "  daemon/state is stopped after stop"
xb_is "$(xb_state $d)" done "  and the job it waited for is done"
xb_check "  its domain is gone" sh -c "! $XB_TOOL pages $d >/dev/null"
xb_wait_memory $base "all memory returned"

# systemctl stop with a teardown stuck on that lock (issue 39): the stop
# does not wait for it and ends within the unit's TimeoutStopSec on the
# daemon's own exit; its teardown process ends with the daemon, the job
# stays stuck in xenstore, and the next start resumes it, to done once
# the lock goes.  stuck-after = 5s from a policy a drop-in gives.  A guest
# without devices: the lock is taken before libxl touches any.
mkdir -p /tmp/xb50 && printf '[daemon]\nstuck-after = 5s\n' > /tmp/xb50/policy.conf
drop=/run/systemd/system/xenreaperd.service.d
mkdir -p $drop && printf '[Service]\nExecStart=\nExecStart=%s -c /tmp/xb50/policy.conf\n' "$XB_DAEMON" > $drop/xb-stuck.conf
d=$(xb_guest unit4 96) || xb_not_ok "create 96 MiB guest"
lockfile=/var/lib/xen/userdata-l.$d.$($XB_TOOL uuid $d).domain-userdata-lock
flock -o $lockfile sleep 600 & holder=$!
end=$(($(date +%s) + 30))
while flock -n $lockfile true && [ $(date +%s) -lt $end ]; do sleep 0.1; done
systemctl daemon-reload
xb_check "systemctl start xenreaperd with stuck-after = 5s" systemctl start xenreaperd.service
xb_request $d
xb_is "$(xb_wait_node $XB_ROOT/job/$d/state stuck 60)" stuck "domain $d, its lock held by pid $holder, reads stuck"
xb_check "  held-by names the holder ($(xb_read $XB_ROOT/job/$d/held-by | cut -c1-160))" \
	sh -c "xenstore-read $XB_ROOT/job/$d/held-by | grep -q 'held by pid $holder '"
helper=$(pgrep -f "[x]enreaper-teardown [a-z]+ $d ")
xb_check "  its teardown process runs (pid ${helper:-none})" test -n "$helper"
t0=$(xb_ms)
systemctl stop xenreaperd.service; rc=$?
t1=$(xb_ms)
xb_is "$rc" 0 "systemctl stop with the teardown stuck"
xb_check "  ends within the unit's bound: $((t1 - t0)) ms, TimeoutStopSec=$(systemctl show -p TimeoutStopUSec --value xenreaperd.service)" \
	test $((t1 - t0)) -lt 90000
xb_is "$(systemctl show -p Result --value xenreaperd.service)" success "  on the daemon's own exit (systemd killed nothing: Result=success)"
xb_check "  its teardown process ended with it" sh -c "! kill -0 ${helper:-0} 2>/dev/null"
xb_is "$(xb_state $d)" stuck "  the job stays stuck in xenstore"
kill $(pgrep -P $holder) $holder 2>/dev/null
rm -f $drop/xb-stuck.conf; systemctl daemon-reload
xb_check "the next start, the lock gone" systemctl start xenreaperd.service
xb_wait_state $d done 60
xb_is "$(xb_state $d)" done "  resumes the job, to done"
xb_check "  its domain is gone" sh -c "! $XB_TOOL pages $d >/dev/null"

# xenstored gone: the idle daemon notices at its next watchdog ping, says
# so and exits non-zero for systemd to restart it.  (Last: Xen cannot
# restart xenstored.)
xb_check "systemctl start xenreaperd again" systemctl start xenreaperd.service
restarts=$(systemctl show -p NRestarts --value xenreaperd.service)
# Debian's init script runs oxenstored (else xenstored) with this pid file.
store=$(cat /run/xenstore.pid 2>/dev/null || pidof oxenstored xenstored)
xb_check "xenstored's pid (${store:-none})" test -n "$store"
kill -9 $store
t0=$(date +%s)
journal_wait "lost the connection to xenstored" 90
journalctl -u xenreaperd.service --no-pager -o cat > /tmp/journal.out 2>&1
xb_check "xenstored killed: the daemon logs that it lost the connection (after $(($(date +%s) - t0)) s; its watchdog pings every 15 s)" \
	grep -q "lost the connection to xenstored" /tmp/journal.out
end=$(($(date +%s) + 30))
while [ "$(systemctl show -p NRestarts --value xenreaperd.service)" = "$restarts" ] && [ $(date +%s) -lt $end ]; do sleep 0.2; done
xb_check "  and systemd restarts it (NRestarts $restarts -> $(systemctl show -p NRestarts --value xenreaperd.service))" \
	test "$(systemctl show -p NRestarts --value xenreaperd.service)" != "$restarts"
[ $XB_FAILED -eq 0 ] || sed 's/^/  journal: /' /tmp/journal.out | tail -n 30
xb_done
