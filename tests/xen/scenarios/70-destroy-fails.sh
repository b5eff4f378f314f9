# A libxl_domain_destroy that fails on real Xen, then recovers.  libxl takes
# a per-domain lock file under /var/lib/xen (libxl__lock_domain_userdata in
# devices_destroy_cb) after it has removed the guest's xenstore nodes and
# before it forks the child that makes the hypercall; with /var/lib/xen
# read-only that open(O_CREAT) fails with EROFS, the destroy returns
# ERROR_LOCK_FAIL and the domain stays alive (paused).  Planned daemon
# behaviour: the job stays destroying with an error node saying why, is
# retried with back-off (1 s doubling up to 60 s), and ends done once the
# cause is removed (failed after 10 attempts: not exercised here, it takes
# about 4 minutes of back-off).
. $XB_LIB
XB_DAEMON_LOG=/tmp/xenreaperd-destroy-fails.log XB_DAEMON_STAMP=1
: > $XB_DAEMON_LOG
base=$(xb_free_pages)
xb_guest dfail 128 > /tmp/dfail.domid & xb_guest dfail-by 128 > /tmp/dfail-by.domid & wait
d=$(cat /tmp/dfail.domid) by=$(cat /tmp/dfail-by.domid)
xb_check "two guests created" test -n "$d" -a -n "$by"
uuid=$($XB_TOOL uuid $d) pages=$($XB_TOOL pages $d) by_uuid=$($XB_TOOL uuid $by) by_pages=$($XB_TOOL pages $by)
xb_daemon_start || { xb_not_ok "xenreaperd starts"; xb_done; }

mount --bind /var/lib/xen /var/lib/xen && mount -o remount,bind,ro /var/lib/xen
xb_check "/var/lib/xen is read-only for libxl's lock file" sh -c '! touch /var/lib/xen/probe 2>/dev/null'
xb_request $d
# The first attempt's outcome: an error node on the job, whatever its state.
xb_wait_node $XB_ROOT/job/$d/error '*' 30 >/dev/null
st=$(xb_state $d) err=$(xb_read $XB_ROOT/job/$d/error)
xb_note "after the first failed attempt: state $st, error: $err"
xb_note "what libxl left: domain $d pages $($XB_TOOL pages $d || echo gone) ($($XB_TOOL info $d)), flags: $(xl list $d 2>/dev/null | awk 'NR == 2 { print $5 }')"
for p in /local/domain/$d /vm/$uuid /libxl/$d; do
	xb_note "  xenstore $p: $(xenstore-exists $p 2>/dev/null && echo present || echo removed)"
done
xb_note "  /var/lib/xen: $(ls /var/lib/xen | grep "\.$d\." | tr '\n' ' ')"
grep -v '^[0-9]* <[0-9]>' $XB_DAEMON_LOG | sed 's/^/XQTAP #   libxl: /' | head -8
xb_check "the domain is still alive, with all its pages" test "$($XB_TOOL pages $d)" = "$pages"
xb_is "$st" destroying "a failed destroy leaves the job destroying (to be retried), not failed"
xb_check "the job's error node says why" test -n "$err"

# Retries while the cause is there: each one is one 'cannot open lockfile'
# from libxl, stamped with the daemon log's monotonic ms.
until=$(($(xb_ms) + 20000))
while [ "$(grep -c 'cannot open lockfile' $XB_DAEMON_LOG)" -lt 3 ] && [ $(xb_ms) -lt $until ]; do
	sleep 0.2
done
stamps=$(grep 'cannot open lockfile' $XB_DAEMON_LOG | awk '{ print $1 }' | tr '\n' ' ')
gaps=$(echo $stamps | awk '{ for (i = 2; i <= NF; i++) printf "%d ", $i - $(i - 1) }')
xb_note "attempts at (ms) $stamps; gaps $gaps"
xb_check "at least 3 attempts while the cause lasts" test "$(echo $stamps | wc -w)" -ge 3
xb_check "back-off: first gap about 1 s, second about 2 s (gaps: $gaps)" sh -c "echo $gaps |
	awk '{ exit !(\$1 >= 900 && \$1 < 1900 && \$2 >= 1800 && \$2 < 3800) }'"
xb_check "the domain is still alive while retrying" $XB_TOOL pages $d

umount /var/lib/xen
xb_check "/var/lib/xen is writable again" sh -c 'touch /var/lib/xen/probe && rm /var/lib/xen/probe'
xb_wait_final $d 90
xb_is "$(xb_state $d)" done "once the cause is gone, the job ends done"
xb_check "domain $d is gone" sh -c "! $XB_TOOL list | grep -q $uuid"
xb_is "$(xb_read $XB_ROOT/job/$d/error)" "" "a done job carries no error"
xb_is "$($XB_TOOL uuid $by) $($XB_TOOL pages $by)" "$by_uuid $by_pages" "the bystander is untouched"

# Leave dom0 clean whatever happened.
xb_daemon_stop
$XB_TOOL pages $d >/dev/null 2>&1 && xl destroy $d
xl destroy $by
xb_wait_memory $base "all memory back"
[ $XB_FAILED -eq 0 ] || xb_daemon_log 40
xb_done
