# `teardown = crash` beside xl's core dumps (issue 21, defect 7).  A guest
# whose on_crash is coredump-destroy stays crashed while xl's domain-death
# handler dumps its core, then xl destroys it; the daemon must leave it to
# xl (its job fails, saying why) and the dump must be whole.  A guest that
# xl preserved is torn down after the grace period, as before.  Grace is
# 0 s: before the fix the daemon destroyed the dumping guest at once.  The
# guests have no devices: the point is the crash and xl's handling of it.
#
# A guest xl preserved with rename-restart, torn down through the front by
# the name xl gave it (issue 41, item 1): libxl_domain_preserve points its
# "vm" node at a new UUID while the hypervisor keeps the old one, which
# the guard checks, and the restarted guest shares.  It powers off when
# asked (`xl shutdown`), so that its restart idles instead of preserving
# copies of itself; it has a vif and a read-only disk (the restart attaches
# the disk again, which the block script allows only read-only), and
# after its teardown dom0 must hold nothing of it.
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

xb_phase "a guest preserved by rename-restart, through the front"
xb_clients
xb_backends
mkdir -p /tmp/xb31 && xb_fast_hotplug /tmp/xb31
truncate -s 16M /tmp/renamed.img
loop=$(losetup -f --show /tmp/renamed.img) || xb_not_ok "a loop device for the disk"
stoppable=$(xb_initrd stoppable 'while :; do sleep 3600; done')
first=$(xb_guest_booting renamed 96 $stoppable 'on_poweroff = "rename-restart"' \
	"disk = [ 'format=raw,vdev=xvda,access=ro,script=/tmp/xb31/block-fast,target=$loop' ]" \
	"vif = [ 'bridge=$XB_BRIDGE,script=/tmp/xb31/vif-fast' ]") ||
	xb_not_ok "create a guest whose on_poweroff is rename-restart"
hv_uuid=$($XB_TOOL uuid $first)
xl shutdown renamed >/tmp/renamed.shutdown.log 2>&1 || xb_not_ok "xl shutdown renamed"
# Wait on xl's work: the first domain renamed, a new one named renamed.
end=$(($(date +%s) + 180)) kept_name= again=
while [ $(date +%s) -lt $end ]; do
	kept_name=$(xb_read /local/domain/$first/name)
	again=$(xl domid renamed 2>/dev/null)
	case $kept_name in renamed-*) [ -n "$again" ] && [ "$again" != "$first" ] && break ;; esac
	sleep 0.5
done
case $kept_name in renamed-2*Z) xb_ok "xl preserved domain $first as $kept_name" ;;
*) xb_not_ok "xl preserved domain $first (its name: '$kept_name')" ;; esac
xb_check "  and restarted it as domain $again" test -n "$again" -a "$again" != "$first"
vm=$(xb_read /local/domain/$first/vm)
xb_check "  its vm node names another UUID than the hypervisor's ($vm)" \
	test -n "$vm" -a "$vm" != "/vm/$hv_uuid"
xb_is "$($XB_TOOL uuid $again)" "$hv_uuid" "  the restarted guest has the hypervisor UUID of the preserved one"
$FRONT destroy --async --wait "$kept_name" >/tmp/renamed.front.out 2>&1; rc=$?
xb_is $rc 0 "xl destroy --async --wait $kept_name through the front"
xb_is "$(xb_state $first)" done "  its job is done"
xb_is "$(xb_read $XB_ROOT/job/$first/uuid)" "$hv_uuid" "  for the hypervisor's UUID"
xb_check "  domain $first is gone" sh -c "$XB_TOOL wait-gone $first 60000 >/dev/null"
left=$(xb_leftovers $first)
xb_is "$left" "" "  and dom0 holds nothing of it"
xb_is "$(xl domid renamed 2>/dev/null)" "$again" "  the restarted guest still runs"
[ $XB_FAILED -eq 0 ] || { cat /tmp/renamed.front.out; cat /tmp/renamed.shutdown.log; } | sed 's/^/  front: /'
xl destroy renamed
losetup -d $loop 2>/dev/null
rm -f /var/lib/xen/dump/*
xb_wait_memory $base "all memory back"
xb_daemon_stop
[ $XB_FAILED -eq 0 ] || { xb_daemon_log 30; tail -n 20 /var/log/xen/xl-dumped.log | sed 's/^/  xl: /'; }
xb_done
