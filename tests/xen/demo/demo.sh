# The quick-start demo: an asynchronous teardown, seen through xenstore.
. $XB_LIB
say() { echo; echo "==> $*"; }
say "starting xenreaperd"
xb_daemon_start || { tail /tmp/xenreaperd.log; exit 1; }
xenstore-ls /tool/xenreaper/daemon
say "creating a paused 2 GiB PV guest (about 15 s under emulation)"
domid=$(xb_guest demo 2048) || exit 1
xl list
say "free memory: $(( $(xb_free_pages) / 256 )) MiB"
uuid=$($XB_TOOL uuid $domid)
say "xenstore-write /tool/xenreaper/request/$domid $uuid"
t0=$(xb_ms); xenstore-write /tool/xenreaper/request/$domid $uuid; t1=$(xb_ms)
echo "the request returned in $((t1 - t0)) ms; the daemon does the rest:"
last=
while :; do
	line="state=$(xb_state $domid) pages-left=$(xb_read $XB_ROOT/job/$domid/pages-left) progress=$(xb_read $XB_ROOT/job/$domid/progress)%"
	[ "$line" != "$last" ] && echo "  $(( $(xb_ms) - t0 )) ms  $line"
	last=$line
	case $line in state=done*|state=failed*) break ;; esac
	sleep 0.05
done
say "xenstore-ls /tool/xenreaper/job/$domid"
xenstore-ls /tool/xenreaper/job/$domid
say "free memory: $(( $(xb_free_pages) / 256 )) MiB"
say "the daemon's log"
cat /tmp/xenreaperd.log
xb_daemon_stop
