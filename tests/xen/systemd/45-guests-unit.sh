# xenbench: hap
# Real guests (issue 16) under the daemon's own unit: each kind torn down
# by plain `xl destroy` and by `xl destroy --async --wait` with xenreaperd
# running from units/xenreaperd.service (DevicePolicy=closed, the reduced
# capabilities, ProtectSystem=strict), compared as in guests/common.inc:
# what the sandbox stops a hotplug script or libxl from doing shows here.
# Before 50-service, whose last act kills xenstored.
# The default kinds: admin, one booted guest with what the unit's sandbox
# can break (loop devices to detach under DevicePolicy=, an image under
# /tmp, a logical volume, a vif), file-fail, a remove that fails, and dm,
# a PV guest's QEMU serving a framebuffer and a qdisk image, which libxl
# must stop from inside the sandbox.  Each kind costs a minute or more
# under emulation.  hvm (an HVM guest's QEMU, hence `hap`) is stopped by
# the same libxl call as dm's, so make check leaves it out (55 s);
# XB_GUEST_KINDS="admin file-fail dm hvm" runs it under the unit, and make
# check-guests runs every kind by hand.
. $XB_LIB
. $XB_SRC/tests/xen/guests/common.inc
xb_backends
LOG_MARK() { journalctl -q -n 0 --show-cursor --no-pager | sed -n 's/^-- cursor: //p'; }
LOG_SINCE() { journalctl -q --after-cursor "$1" -o cat --no-pager 2>/dev/null; }
xb_check "a volume group on a loop-backed physical volume" xb_lvm xbvg $W/pv.img 64
base=$(xb_free_pages)
xb_check "systemctl start xenreaperd" systemctl start xenreaperd.service
# What the unit's mount namespace makes of /tmp (PrivateTmp=no under
# ProtectSystem=strict): the host's, to see an image in, read-only.
pid=$(systemctl show -p MainPID --value xenreaperd.service)
xb_check "under the unit, the host's /tmp is visible" nsenter -t $pid -m test -x $W/vif-probe
xb_check "  and read-only" nsenter -t $pid -m sh -c "! touch $W/written 2>/dev/null"
WAYS="xl daemon"
for k in ${XB_GUEST_KINDS:-admin file-fail dm}; do run_kind $k; done

# The unit as it was (PrivateTmp=yes): Debian's block script cannot see an
# image under /tmp, leaves its loop device attached and exits 0; the job
# must say so, and the front warn.
drop=/run/systemd/system/xenreaperd.service.d
mkdir -p $drop && printf '[Service]\nPrivateTmp=yes\n' > $drop/xb-private-tmp.conf
systemctl daemon-reload && systemctl restart xenreaperd.service
if d=$(create file-tmp hidden 2> $W/hidden.err); then
	$FRONT destroy --async --wait $d > $W/hidden.out 2>&1
	xb_is "$(losetup -j /tmp/xb-hidden.img | wc -l)" 1 "with PrivateTmp=yes, the loop device of an image under /tmp is left attached"
	xb_check "  the job's error names it, and PrivateTmp= ($(xb_read $XB_ROOT/job/$d/error | cut -c1-240))" \
		sh -c "xenstore-read $XB_ROOT/job/$d/error | grep -q 'loop.*still attached to /tmp/xb-hidden.img.*PrivateTmp='"
	xb_is "$(xb_read $XB_ROOT/job/$d/state)" done "  the job is done all the same"
	xb_check "  xl destroy --async --wait warns of it ($(grep warning $W/hidden.out | cut -c1-120))" grep -q "warning: .*left behind" $W/hidden.out
	for l in $(losetup -j /tmp/xb-hidden.img | cut -d: -f1); do losetup -d $l; done
else
	xb_not_ok "create a guest with an image under /tmp"; sed 's/^/XQTAP #   /' $W/hidden.err
fi
rm -f $drop/xb-private-tmp.conf; systemctl daemon-reload
systemctl stop xenreaperd.service
xb_wait_memory $base "every guest's memory is back"
[ $XB_FAILED -eq 0 ] || { tail -n 40 /var/log/xen/xen-hotplug.log | sed 's/^/XQTAP #   hotplug: /';
	journalctl -u xenreaperd -o cat --no-pager | tail -n 30 | sed 's/^/XQTAP #   daemon: /'; }
xb_done
