# A teardown process SIGKILLed mid-teardown (issue 39), at four points of
# the teardown of guests with a vif and a disk through Debian's block
# script (its remove; the add is lib.sh's fast one).  start: as soon as
# the process shows the request (it was started ahead of it); script: while a hotplug script it forked runs; child:
# while libxl's destroy child runs (after the guest's xenstore directory
# is gone), on a 1 GiB guest so that it runs long enough to be seen;
# stub: with the guest gone and its stub domain not yet, so that libxl,
# which finds a stub domain through the guest's directory, cannot.
# Debian builds no stub domains: a plain guest stands in for one, named
# in the guest's image/device-model-domid and its own target node as
# libxl names a real one, with a disk whose first remove sleeps to hold
# its destroy back.
# The job must end done, the daemon reap what the process left (it is
# their subreaper: no zombie), and dom0 be left as plain `xl destroy`
# leaves such a guest, which one more shows.  The guests killed at start
# and in a script, and that reference, have a device model too (a
# framebuffer: libxl starts QEMU for it, and kills it in the destroy).
. $XB_LIB
W=/tmp/xb23
rm -rf $W; mkdir -p $W
xb_backends
xb_fast_hotplug $W
base=$(xb_free_pages)
xb_daemon_start || { xb_not_ok "xenreaperd starts"; xb_done; }

# make NAME MIB [CONFIG-LINE]: the guest, paused; its domid.
make_guest() {
	truncate -s 4M $W/$1.img
	xb_guest $1 $2 "disk = [ 'format=raw,vdev=xvda,script=$W/block-fast,target=$W/$1.img' ]" \
		"vif = [ 'bridge=$XB_BRIDGE,script=$W/vif-fast' ]" "$3"
}

# killer DOMID POINT: SIGKILL the teardown process of DOMID at POINT, and
# say what it saw; 1 if the point never came.
killer() {
	_d=$1 _pt=$2 _end=$(($(date +%s) + 120)) _h= _pages=$($XB_TOOL pages $1)
	while [ $(date +%s) -lt $_end ]; do
		if [ -z "$_h" ]; then
			_h=$(pgrep -f "xenreaper-teardown (idle|low|normal) $_d " | head -n 1)
			# What it runs as: parent, nice, command line.
			[ -n "$_h" ] && echo "$(cut -d' ' -f4,19 /proc/$_h/stat 2>/dev/null) $(tr '\0' ' ' < /proc/$_h/cmdline 2>/dev/null)" > $W/$_pt.helper
		fi
		if [ -n "$_h" ]; then
			case $_pt in
			start)
				kill -9 $_h && { echo "killed $_h as it took the request"; return 0; } ;;
			script)
				_c=$(pgrep -P $_h -f 'scripts/block|scripts/vif-bridge|block-fast|vif-fast' | head -n 1)
				[ -n "$_c" ] && kill -9 $_h &&
					{ echo "killed $_h while its hotplug script $_c ran: $(tr '\0' ' ' < /proc/$_c/cmdline 2>/dev/null)"; return 0; } ;;
			stub)
				# The guest's directory gone, its stub domain's
				# disk script asleep in its remove.
				[ -s $W/stub-script.pid ] && ! xenstore-exists /local/domain/$_d &&
					kill -9 $_h && { echo "killed $_h with the guest's directory gone and its stub domain's script $(cat $W/stub-script.pid) running"; return 0; } ;;
			child)
				# The domain's pages fall only inside the destroy
				# hypercall, which libxl's destroy child makes: kill
				# at the first page gone (xbtool polls every ms).
				_r=$($XB_TOOL kill-when $_h 9 0 60000 below $_d $_pages)
				_left=${_r##*saw=}
				case $_left in ''|*[!0-9]*) echo "no fall seen ($_r)"; return 1 ;; esac
				[ "$_left" -gt 0 ] && { echo "killed $_h while its destroy child ran: $_r"; return 0; }
				echo "the domain was gone first ($_r)"; return 1 ;;
			esac
			kill -0 $_h 2>/dev/null || { echo "process $_h ended before point $_pt"; return 1; }
		fi
		sleep 0.01
	done
	echo "never saw point $_pt"
	return 1
}

# The stand-in stub domain's disk: its first remove sleeps.
cat > $W/stub-block <<EOF
#!/bin/bash
if [ "\$1" = remove ] && mkdir $W/stub-slept 2>/dev/null; then
	echo \$\$ > $W/stub-script.pid
	sleep 600 & echo \$! > $W/stub-sleep.pid
	wait
	exit 0
fi
exec $W/block-fast "\$@"
EOF
chmod +x $W/stub-block

xb_phase "guests with a vif and a block-script disk"
truncate -s 4M $W/kill-stub-dm.img
(xb_guest kill-stub-dm 96 "disk = [ 'format=raw,vdev=xvda,script=$W/stub-block,target=$W/kill-stub-dm.img' ]" > $W/stub-dm.domid) &
pids=$!
for g in "start 96 dm" "script 96 dm" "child 1024" "stub 96" "ref 96 dm"; do
	set -- $g
	(make_guest kill-$1 $2 "${3:+vfb = [ 'vnc=1,vnclisten=127.0.0.1' ]}" > $W/$1.domid) &
	pids="$pids $!"
done
for p in $pids; do wait $p; done
for p in start script child stub stub-dm ref; do
	eval d_$(echo $p | tr - _)=$(cat $W/$p.domid 2>/dev/null)
	[ -s $W/$p.domid ] || { xb_not_ok "create guest kill-$p"; cat /tmp/kill-$p.create.log; xb_done; }
done
xenstore-write /local/domain/$d_stub/image/device-model-domid $d_stub_dm /local/domain/$d_stub_dm/target $d_stub
for p in start script ref; do
	eval d=\$d_$p
	xb_check "guest kill-$p (domain $d) has its device model: $(pgrep -f -- "-xen-domid $d( |\$)" | tr '\n' ' ')" \
		pgrep -f -- "-xen-domid $d( |\$)"
done

xb_phase "plain xl destroy, for reference"
xl destroy $d_ref > $W/ref.log 2>&1
xb_leftovers $d_ref $W/kill-ref.img > $W/ref.left
xb_note "what xl destroy left: $(cat $W/ref.left | tr '\n' ';' | sed 's/;$//')"

for p in start script child stub; do
	xb_phase "killed at $p"
	eval d=\$d_$p
	stubdom= left="the domain is (still alive|dying)"
	# Killed at stub, the guest may still be dying (libxl's destroy child
	# had not finished), or gone with its stub domain left.
	[ $p = stub ] && stubdom=" $d_stub_dm [0-9a-f-]{36}" left="(the domain is (still alive|dying)|its stub domain $d_stub_dm is still alive)"
	killer $d $p > $W/$p.kill &
	k=$!
	xb_request $d
	wait $k; rc=$?
	xb_check "the teardown process of domain $d was SIGKILLed at $p ($(cat $W/$p.kill))" test $rc = 0
	# Started ahead of its request, it had lowered its priority before.
	seen=$(cat $W/$p.helper 2>/dev/null | sed 's/ *$//')
	xb_check "  it was a child of the daemon at the default priority, low (nice 10), its request shown on its command line: $seen" \
		sh -c "echo '$seen' | grep -Eq '^$XB_DAEMON_PID 10 [^ ]*/xenreaper-teardown low $d [0-9a-f-]{36} 0$stubdom\$'"
	xb_wait_final $d 240
	xb_is "$(xb_state $d)" done "  the job ends done"
	xb_check "  the domain is gone" sh -c "! $XB_TOOL info $d >/dev/null 2>&1"
	xb_check "  the daemon saw its process killed and started it again" \
		grep -Eq "domain $d .*its teardown process \(pid [0-9]+\) was killed by signal 9; $left" $XB_DAEMON_LOG
	xb_leftovers $d $W/kill-$p.img > $W/$p.left
	xb_is "$(cat $W/$p.left | tr '\n' ';')" "$(cat $W/ref.left | tr '\n' ';')" "  dom0 is left as xl destroy leaves it"
done
xb_check "the stub domain $d_stub_dm was destroyed after the guest ($(grep -c "its stub domain is $d_stub_dm" $XB_DAEMON_LOG) record of it in the log)" \
	sh -c "! $XB_TOOL info $d_stub_dm >/dev/null 2>&1"
# Its first remove script, left asleep by the killed process, is woken.
kill $(cat $W/stub-sleep.pid 2>/dev/null) 2>/dev/null
xb_leftovers $d_stub_dm $W/kill-stub-dm.img > $W/stub-dm.left
xb_is "$(cat $W/stub-dm.left | tr '\n' ';')" "$(cat $W/ref.left | tr '\n' ';')" "  and dom0 is left as xl destroy leaves a guest"
xb_wait_memory $base "every guest's memory is back"
# What the killed processes left ran to its end and was reaped here.
end=$(($(date +%s) + 60))
while [ $(date +%s) -lt $end ] && [ -n "$(xb_daemon_working)" ]; do sleep 0.2; done
xb_is "$(xb_daemon_working | wc -l)" 0 "nothing of the teardowns still runs under the daemon (idle teardown processes kept: $(pgrep -P $XB_DAEMON_PID | wc -l))"
xb_is "$(ps -eo stat= | grep -c '^Z')" 0 "no zombie process in dom0"
grep -E "teardown process|teardown attempt" $XB_DAEMON_LOG | head -n 12 | while read -r l; do xb_note "  $l"; done
xb_daemon_stop
xb_done
