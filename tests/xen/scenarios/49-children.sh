# What libxl's children inherit from xenreaperd, on real Xen (issue 21,
# defects 2 and 5).  A guest with a disk on a loop device and a vif on a
# bridge, each through a script= wrapper that, on remove (offline),
# records the signal mask and the ignored signals a command of the script
# starts with and the descriptors it inherits, and runs `timeout 1 sleep
# 5`, then execs Debian's own script (block, vif-bridge).  One such guest
# is torn down through the daemon, the next through plain `xl destroy`:
# the scripts must start the same way under both (nothing blocked, nothing
# ignored), with descriptors 0, 1 and 2 only under the daemon, and
# `timeout` must kill its command.  The wrappers are bash, as Debian's
# scripts are: dash (/bin/sh) clears the mask it is given and would hide
# the defect, bash keeps it.
#
# Every exec in dom0 reads its binary and libraries over 9p under
# emulation, and on a loaded host costs seconds (the note below measures
# it), while libxl gives each hotplug script 40 s: Debian's add (block
# stats every mount, vif-bridge runs a dozen tools) did not finish in time.
# So on add (online) the wrapper does the part libxl waits for itself, in
# one or two commands; remove (offline), the teardown under test, runs
# Debian's script.
. $XB_LIB
W=/tmp/xb49
rm -rf $W; mkdir -p $W
for m in loop xen-blkback xen-netback bridge; do modprobe $m 2>/dev/null; done
ip link add xenbr0 type bridge 2>/dev/null; ip link set xenbr0 up
truncate -s 16M $W/disk.img
loop=$(losetup -f --show $W/disk.img) || { xb_not_ok "a loop device for the guests' disk"; xb_done; }
loop_mm=$(stat -L -c %t:%T $loop)
xb_note "10 execs of /bin/true from bash take $(bash -c 's=$EPOCHREALTIME
	for i in 1 2 3 4 5 6 7 8 9 10; do /bin/true; done
	echo "$s $EPOCHREALTIME"' | awk '{ printf "%d", ($2 - $1) * 1000 }') ms in dom0"

# wrap NAME REAL ADD-COMMANDS: the wrapper $W/NAME around Debian's REAL
# script.  What it records goes to $W/DOMID-NAME.* (dom0's /tmp: the shared
# root is read-only).  The descriptors are those of ls, a command of the
# script: what the script inherited (its own fd 255 is close-on-exec).
wrap() {
	cat > $W/$1 <<EOF
#!/bin/bash
case \$1 in
add|online)
	$3
	exit ;;
remove|offline)
	dom=\${XENBUS_PATH#backend/*/}; out=$W/\${dom%%/*}-$1
	grep -E '^Sig(Blk|Ign):' /proc/self/status > \$out.sig
	ls -l /proc/self/fd > \$out.ls
	s=\$EPOCHREALTIME; timeout --preserve-status 1 sleep 5; rc=\$?
	echo "\$rc \$s \$EPOCHREALTIME" > \$out.timeout ;;
esac
exec $2 "\$@"
EOF
	chmod +x $W/$1
}
wrap block-wrap /etc/xen/scripts/block \
	"xenstore-write \"\$XENBUS_PATH/physical-device\" $loop_mm \"\$XENBUS_PATH/physical-device-path\" $loop \"\$XENBUS_PATH/hotplug-status\" connected"
wrap vif-wrap /etc/xen/scripts/vif-bridge \
	"ip link set dev \"\$vif\" master xenbr0 up && xenstore-write \"\$XENBUS_PATH/hotplug-status\" connected"
guest() {
	xb_guest $1 96 "disk = [ 'script=$W/block-wrap,vdev=xvda,access=rw,target=$loop' ]" \
		"vif = [ 'bridge=xenbr0,script=$W/vif-wrap' ]"
}
sig() { sed -n "s/^$2:[[:space:]]*//p" $W/$1.sig 2>/dev/null; }
# The descriptor numbers, less ls's own directory.
fds() {
	awk '$10 == "->" && $11 !~ /^\/proc\/[0-9]+\/fd$/ { print $9 }' $W/$1.ls 2>/dev/null |
		sort -n | tr '\n' ' ' | sed 's/ $//'
}
timeout_rc() { cut -d' ' -f1 $W/$1.timeout 2>/dev/null; }
timeout_ms() { awk '{ printf "%d", ($3 - $2) * 1000 }' $W/$1.timeout 2>/dev/null; }

base=$(xb_free_pages)
xb_daemon_start || { xb_not_ok "xenreaperd starts"; xb_done; }
d=$(guest kids-daemon) || { xb_not_ok "create a guest with a wrapped disk and vif"; xb_done; }
xb_request $d
# libxl's own bounds: 10 s for each backend to close, 40 s for each script.
xb_wait_final $d 240
xb_is "$(xb_state $d)" done "the daemon tears down domain $d (disk $loop, vif on xenbr0)"
x=$(guest kids-xl) || { xb_not_ok "create the second guest"; xb_done; }
xl destroy kids-xl > $W/xl.out 2>&1; rc=$?
xb_is $rc 0 "plain xl destroy tears down domain $x"
xb_phase "both teardowns"

for s in block-wrap vif-wrap; do
	for who in $d $x; do
		[ $who = $d ] && by=daemon || by=xl
		xb_check "under $by, $s ran on remove and recorded" test -s $W/$who-$s.sig -a -s $W/$who-$s.timeout
		xb_note "  $by $s: SigBlk $(sig $who-$s SigBlk) SigIgn $(sig $who-$s SigIgn)" \
			"fds $(fds $who-$s); timeout 1 sleep 5: status $(timeout_rc $who-$s)" \
			"after $(timeout_ms $who-$s) ms"
	done
	xb_is "$(sig $d-$s SigBlk)" 0000000000000000 "under the daemon, $s's commands block no signal"
	xb_is "$(sig $d-$s SigBlk)" "$(sig $x-$s SigBlk)" "  the same mask as under xl"
	xb_is "$(sig $d-$s SigIgn)" 0000000000000000 "  and ignore none"
	xb_is "$(sig $d-$s SigIgn)" "$(sig $x-$s SigIgn)" "  the same as under xl"
	# 143: sleep died of timeout's SIGTERM; 0: it slept its 5 s out.
	xb_is "$(timeout_rc $d-$s)" 143 "  timeout 1 sleep 5 in it ends sleep with SIGTERM"
	xb_is "$(timeout_rc $x-$s)" 143 "  as it does under xl"
	xb_is "$(fds $d-$s)" "0 1 2" "  and it inherits descriptors 0, 1 and 2 only from the daemon"
	[ "$(fds $d-$s)" = "0 1 2" ] || sed 's/^/XQTAP #     /' $W/$d-$s.ls
done
xb_wait_memory $base "both guests' memory is back"
losetup -d $loop
xb_daemon_stop
[ $XB_FAILED -eq 0 ] || { cat $W/xl.out; tail -n 30 /var/log/xen/xen-hotplug.log; xb_daemon_log 30; }
xb_done
