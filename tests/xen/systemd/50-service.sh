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
xb_check "systemctl stop xenreaperd" systemctl stop xenreaperd.service
xb_is "$(xb_read $XB_ROOT/daemon/state)" stopped "daemon/state is stopped after stop"
[ $XB_FAILED -eq 0 ] || sed 's/^/  journal: /' /tmp/journal.out | tail -n 30
xb_done
