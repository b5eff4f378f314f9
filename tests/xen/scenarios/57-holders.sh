# Zombies with real holders, on real Xen (issue 16, section 2):
#  1. A PV guest with a framebuffer (vfb), for which libxl starts a
#     device-model QEMU in dom0 (Debian's qemu-system-xen), booted with
#     the dom0 kernel, whose fbfront (built in) makes the QEMU map its framebuffer (a paused guest's
#     QEMU maps nothing, and its domain went at once, QEMU stopped or not:
#     seen on the first run), the QEMU
#     stopped with SIGSTOP: libxl's SIGHUP stays pending, the QEMU keeps
#     its mappings of the guest and its vfb/vkbd backends do not close.
#     The job must say so: held-by names that QEMU by pid and command line
#     (-xen-domid D), stopped, and not the other guest's QEMU; after
#     SIGCONT it ends done.
#  2. xenconsoled stopped with SIGSTOP while a guest is torn down: whether
#     a dead domain lingers while it does not run (it maps each guest's
#     console ring), and that held-by names it then, and does not name a
#     running xenstored or xenconsoled.
. $XB_LIB
W=/tmp/xb57
rm -rf $W; mkdir -p $W
cat > $W/policy.conf <<EOF
[daemon]
stuck-after = 5s
EOF
dm_pid() { xb_read /local/domain/$1/image/device-model-pid; }

base=$(xb_free_pages)
# Two framebuffer guests, so that one QEMU is not the only suspect.
initrd=$(xb_front_initrd)
xb_guest_booting dm-stopped 96 "$initrd" 'vfb = [ "vnc=1,vnclisten=127.0.0.1" ]' > $W/a.domid 2> $W/a.err &
xb_guest_booting dm-other 96 "$initrd" 'vfb = [ "vnc=1,vnclisten=127.0.0.1" ]' > $W/b.domid 2> $W/b.err &
wait
a=$(cat $W/a.domid) b=$(cat $W/b.domid)
xb_check "two PV guests with a vfb created" test -n "$a" -a -n "$b"
[ -n "$a" ] && [ -n "$b" ] || { sed 's/^/XQTAP #   | /' $W/a.err $W/b.err; xb_done; }
# Under emulation a kernel boots in tens of seconds; the bound is a guard
# for one whose fbfront never connects.
for d in $a $b; do
	s=$(xb_wait_node /local/domain/0/backend/vfb/$d/0/state 4 300)
	xb_is "$s" 4 "domain $d's fbfront connected (vfb backend state 4): its QEMU maps the framebuffer"
done
qa=$(dm_pid $a) qb=$(dm_pid $b)
xb_check "libxl started a device model for each (pids $qa, $qb)" sh -c "kill -0 $qa && kill -0 $qb"
xb_note "  $(tr '\0' ' ' < /proc/$qa/cmdline | cut -c1-200)"
xb_daemon_start -c $W/policy.conf || { xb_not_ok "xenreaperd starts"; xb_done; }

# --- 1. the device model stopped
kill -STOP $qa
t0=$(xb_ms)
xb_request $a
# Hang guard: libxl gives each of the QEMU's backends 10 s to close, then
# goes on; the job is a zombie once the destroy returned and a second
# passed (stuck meanwhile, perhaps: noted).
st=$(xb_wait_node $XB_ROOT/job/$a/state 'zombie|done|failed' 120)
t1=$(xb_ms)
xb_note "  state $st $((t1 - t0)) ms after the request; log: $(grep -c "domain $a .*is stuck" $XB_DAEMON_LOG) stuck line(s)"
xb_is "$st" zombie "the teardown of domain $a, its device model stopped, leaves a zombie"
held=$(xb_read $XB_ROOT/job/$a/held-by)
xb_note "  held-by: $held"
case $held in
*"$qa "*"(its device model: "*"-xen-domid $a "*") (stopped)"*)
	xb_ok "  held-by names its device model by pid and command line, stopped" ;;
*)	xb_not_ok "  held-by names its device model by pid and command line, stopped" ;;
esac
case $held in *"$qb "*) xb_not_ok "  and not the other guest's QEMU ($qb)" ;;
*) xb_ok "  and not the other guest's QEMU ($qb)" ;; esac
# Named as a holder is "PID COMM"; the text may still say why they are not.
case $held in *[0-9]" xenconsoled"*|*[0-9]" xenstored"*|*[0-9]" oxenstored"*) xb_not_ok "  nor a running xenstored or xenconsoled" ;;
*) xb_ok "  nor a running xenstored or xenconsoled" ;; esac
xb_check "  the domain is dead, not gone" sh -c "$XB_TOOL info $a | grep -q 'dying=1'"
kill -CONT $qa
# Zombie retries back off to a minute; a domain event (the QEMU's
# mappings going) wakes the daemon at once: 120 s is the hang guard.
xb_wait_final $a 120
xb_is "$(xb_state $a)" done "after SIGCONT the QEMU exits on its pending SIGHUP and the job ends done"
xb_check "  the QEMU is gone" sh -c "! kill -0 $qa 2>/dev/null"
xl destroy dm-other > $W/xl.out 2>&1
xb_is $? 0 "plain xl destroy of the other guest"

# --- 2. xenconsoled stopped while a guest is torn down
c=$(xb_guest console-held 96) || { xb_not_ok "create a guest"; xb_done; }
cons=$(pgrep -x xenconsoled | head -1)
xb_check "xenconsoled runs (pid $cons)" test -n "$cons"
kill -STOP $cons
xb_request $c
st=$(xb_wait_node $XB_ROOT/job/$c/state 'zombie|done|failed' 120)
held=$(xb_read $XB_ROOT/job/$c/held-by)
xb_note "  with xenconsoled stopped, domain $c's job reads $st; held-by: $held"
if [ "$st" = zombie ]; then
	xb_note "  a dead domain lingers while xenconsoled does not run: it holds the console ring"
	case $held in *"$cons xenconsoled (stopped"*) xb_ok "  held-by names the stopped xenconsoled" ;;
	*) xb_not_ok "  held-by names the stopped xenconsoled" ;; esac
else
	xb_note "  a dead domain does not wait for xenconsoled: it holds nothing Xen waits for"
	xb_is "$st" done "  the job ends done without xenconsoled"
fi
kill -CONT $cons
xb_wait_final $c 120
xb_is "$(xb_state $c)" done "with xenconsoled running again, the job is done"
xb_wait_memory $base "every guest's memory is back"
xb_daemon_stop
[ $XB_FAILED -eq 0 ] || { tail -n 30 /var/log/xen/xen-hotplug.log; xb_daemon_log 40; }
xb_done
