# `teardown = crash` beside xl's core dumps (issue 21, defect 7).  A guest
# whose on_crash is coredump-destroy stays crashed while xl's domain-death
# handler dumps its core, then xl destroys it; the daemon must leave it to
# xl (its job fails, saying why) and the dump must be whole.  A guest that
# xl preserved is torn down after the grace period, as before.  Grace is
# 0 s: before the fix the daemon destroyed the dumping guest at once.  The
# guests have no devices: the point is the crash and xl's handling of it.
. $XB_LIB
base=$(xb_free_pages)
mkdir -p /var/lib/xen/dump
rm -f /var/lib/xen/dump/*
printf '[default]\nteardown = crash\ngrace = 0s\n' > /tmp/crash.conf
xb_daemon_start -c /tmp/crash.conf || { xb_not_ok "xenreaperd starts"; xb_done; }
crash=$(xb_initrd crash 'echo c > /proc/sysrq-trigger')
dumped=$(xb_guest_booting dumped 128 $crash 'on_crash = "coredump-destroy"') ||
	{ xb_not_ok "create a guest that crashes, on_crash = coredump-destroy"; xb_done; }
kept=$(xb_guest_booting kept 128 $crash 'on_crash = "preserve"') ||
	{ xb_not_ok "create a guest that crashes, on_crash = preserve"; xb_done; }
state=$(xb_wait_node $XB_ROOT/job/$dumped/state 'done|failed' 120)
xb_is "$state" failed "the guest xl dumps is not torn down: its job fails"
err=$(xb_read $XB_ROOT/job/$dumped/error)
case $err in *"dumps its core"*) xb_ok "  saying why" ;;
*) xb_not_ok "  saying why"; xb_note "  error: $err" ;; esac
xb_is "$(xb_read $XB_ROOT/job/$dumped/reason)" crash "  (an automatic job, reason crash)"
xb_check "xl destroys it after its dump" sh -c "$XB_TOOL wait-gone $dumped 300000 >/dev/null"
size=$(stat -c %s /var/lib/xen/dump/dumped 2>/dev/null || echo 0)	# xl names it by the guest
xb_check "  and the dump is whole ($size bytes for 128 MiB)" test "$size" -ge $((120 * 1048576))
xb_check "  xl reports no failed dump" sh -c "! grep -q 'core dump failed' /var/log/xen/xl-dumped.log"
xb_wait_final $kept 120
xb_is "$(xb_state $kept)" done "the guest xl preserved is torn down after the grace period"
xb_is "$(xb_read $XB_ROOT/job/$kept/reason)" crash "  with reason crash"
rm -f /var/lib/xen/dump/*
xb_wait_memory $base "all memory back"
xb_daemon_stop
[ $XB_FAILED -eq 0 ] || { xb_daemon_log 30; tail -n 20 /var/log/xen/xl-dumped.log | sed 's/^/  xl: /'; }
xb_done
