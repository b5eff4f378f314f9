# xenreaperd on a hypervisor that reports its scrub backlog in physinfo
# (issue 20, xen-patches/4.17) and on one that does not, with a sync job
# on a 1 GiB guest (done only once its pages are scrubbed; 256 MiB on
# Debian's, where the point is where the figure comes from, and a sync
# job waits for the whole guest to be scrubbed under emulation).
#  - Patched (XEN_SYSCTL_PHYSCAP_scrub_pages set): the daemon says it
#    reads physinfo, scrub/source reads physinfo, no heap dump reaches the
#    console ring, and no reading of a poller (physinfo every 20 ms,
#    xbtool physinfo-trace) after
#    the job's finished time still shows pages to scrub.  How long after
#    the backlog's last non-zero reading the job was done is a figure (the
#    goal is one progress interval, 250 ms here), not a check.
#  - Debian's (the bit clear; scrub_pages is 0 whatever is dirty): that 0
#    is not taken for clean: the daemon asks the heap dump, and
#    scrub/source reads heap-dump.  The core boot runs this one alone on
#    Debian's hypervisor; 15-scrub-pages runs on the patched one.
# The guest has no devices: the point is the backlog after the release,
# which a vif or disk does not change.
. $XB_LIB
XB_DAEMON_LOG=/tmp/xenreaperd-scrub-exact.log
: > $XB_DAEMON_LOG
mib=1024
[ -z "${XB_HYPERVISOR:-}" ] && mib=256
field() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
cap=$(field scrub_cap "$($XB_TOOL physinfo)")
if [ -z "${XB_HYPERVISOR:-}" ]; then
	xb_is "$cap" 0 "Debian's hypervisor: no XEN_SYSCTL_PHYSCAP_scrub_pages"
else
	xb_check "xbtool physinfo reads the capability ($cap; 15-scrub-pages checks it is set)" test -n "$cap"
fi
printf '[default]\nscrub = sync\n[daemon]\nprogress-interval = 250ms\n' > /tmp/exact.conf
base=$(xb_free_pages)
d=$(xb_guest exact $mib) || { xb_not_ok "create a $mib MiB guest"; xb_done; }
xb_daemon_start -c /tmp/exact.conf || { xb_not_ok "xenreaperd starts"; xb_done; }
xl dmesg -c > /dev/null
poller=
if [ "$cap" = 1 ]; then
	rm -f /tmp/exact.readings
	$XB_TOOL physinfo-trace /tmp/exact.readings 120000 &
	poller=$!
	xb_wait_log . 10 /tmp/exact.readings || xb_not_ok "the physinfo poller reads"
fi
xb_request $d
xb_wait_final $d 120
[ -n "$poller" ] && { sleep 0.3; kill $poller; wait $poller 2>/dev/null; }
xb_is "$(xb_state $d)" done "the sync job ends done"
xb_is "$(xb_read $XB_ROOT/job/$d/scrub-pages)" 0 "  with scrub-pages 0"
dumps=$(xl dmesg | grep -c 'heap\[node=')
if [ "$cap" = 1 ]; then
	xb_check "patched: xenreaperd says it reads the backlog from physinfo" \
		grep -q 'the hypervisor reports its scrub backlog (physinfo scrub_pages)' $XB_DAEMON_LOG
	xb_is "$(xb_read $XB_ROOT/scrub/source)" physinfo "  scrub/source reads physinfo"
	xb_is "$dumps" 0 "  no heap dump reached the console ring"
	finished=$(xb_read $XB_ROOT/job/$d/finished | tr -d .)
	late=$(awk -v f=$finished '$1 > f && $2 > 0' /tmp/exact.readings | wc -l)
	last_dirty=$(awk '$2 > 0 { t = $1 } END { print t }' /tmp/exact.readings)
	xb_check "  readings of physinfo: $(wc -l < /tmp/exact.readings), the highest $(sort -k2 -n /tmp/exact.readings | tail -n 1 | cut -d' ' -f2) pages; none after the job was done shows pages to scrub" \
		test -n "$last_dirty" -a "$late" = 0
	xb_note "done $((finished - ${last_dirty:-$finished})) ms after the last reading with pages to scrub (progress-interval 250 ms)"
	xb_note "$(grep 'scrubbed' $XB_DAEMON_LOG | tail -n 1)"
else
	xb_is "$(xb_read $XB_ROOT/scrub/source)" heap-dump "Debian's hypervisor: physinfo's 0 is not taken for clean; scrub/source reads heap-dump"
	xb_check "  the daemon asked the heap dump ($dumps heap lines in the console ring)" test "$dumps" -gt 0
	xb_check "  and never said it reads physinfo" sh -c "! grep -q 'reports its scrub backlog' $XB_DAEMON_LOG"
fi
xb_wait_memory $base "$mib MiB returned to the free pool"
[ $XB_FAILED -eq 0 ] || xb_daemon_log 30
xb_daemon_stop
xb_done
