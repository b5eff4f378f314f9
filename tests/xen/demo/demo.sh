# The quick-start demo: asynchronous teardown through xenstore, then
# through `xl destroy --async --wait` and the xenreaper command.
. $XB_LIB
export LD_LIBRARY_PATH=$XB_BUILD/libxl-hook/.libs
PATH=$XB_BUILD/libxl-hook/.libs:$PATH	# the xl front first, as an admin would set it up
say() { echo; echo "==> $*"; }
say "starting xenreaperd"
xb_daemon_start || { tail /tmp/xenreaperd.log; exit 1; }
xenstore-ls /tool/xenreaper/daemon

say "creating a paused 2 GiB PV guest 'demo' (about 15 s under emulation)"
domid=$(xb_guest demo 2048) || exit 1
xl list
say "free memory: $(( $(xb_free_pages) / 256 )) MiB"
uuid=$($XB_TOOL uuid $domid)
say "xenstore-write /tool/xenreaper/request/$domid $uuid"
t0=$(xb_ms); xenstore-write /tool/xenreaper/request/$domid $uuid
echo "the request is written; the daemon does the rest:"
last=
while :; do
	# One read of the whole job (xenstore-ls), so a line never mixes two
	# moments (separate reads are ~300 ms apart under emulation).
	line=$(xenstore-ls $XB_ROOT/job/$domid 2>/dev/null | awk -F' = ' '
		{ gsub(/^ +|"/, "", $1); gsub(/"/, "", $2); v[$1] = $2 }
		END { if (v["state"] != "") printf "state=%s pages-left=%s progress=%s%% rate=%s MiB/s eta=%s",
			v["state"], v["pages-left"], v["progress"], v["rate"] ? v["rate"] : "-", v["eta"] ? v["eta"] : "-" }')
	[ -n "$line" ] && [ "$line" != "$last" ] && echo "  +$(( $(xb_ms) - t0 )) ms  $line"
	last=$line
	case $line in state=done*|state=failed*) break ;; esac
	sleep 0.05
done
say "xenstore-ls /tool/xenreaper/job/$domid"
xenstore-ls /tool/xenreaper/job/$domid
say "free memory: $(( $(xb_free_pages) / 256 )) MiB"

say "creating another 2 GiB guest 'demo2'"
xb_guest demo2 2048 >/dev/null || exit 1
say "xl destroy --async --wait demo2"
# Through a pipe it prints a line per second; on a terminal it draws a bar.
xl destroy --async --wait demo2 2>&1 | cat
say "xenreaper list"
xenreaper list
say "the daemon's log"
cat /tmp/xenreaperd.log
xb_daemon_stop
