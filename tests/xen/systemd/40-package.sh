# xenbench: writable-root debs
# The Debian packages (debian/, built on the host by tests/xen/build-deb)
# installed with apt in a systemd dom0, as on a real Xen host: the service
# is enabled and comes up by itself; plain `xl destroy --async` (no PATH
# edit) goes through the front that the diversion of /usr/sbin/xl puts
# there, while Debian's xl stays reachable and every other xl command runs
# the real xl of the running hypervisor; a reinstall keeps one diversion;
# the -dev package compiles and links a client; xen-utils-common
# reinstalled writes its xl to the diverted name; `apt remove` stops the
# service and gives back /usr/sbin/xl unchanged; `apt purge` removes the
# conffile.  Runs before 50-service, which ends by killing xenstored, and
# leaves dom0 as it found it (the bench's runtime unit included).
. $XB_LIB
export DEBIAN_FRONTEND=noninteractive
xl_was=$(readlink /usr/sbin/xl)
xl_stat=$(stat -c '%F %U:%G' /usr/sbin/xl)
xb_check "dom0's root is writable (an overlay over the shared one)" touch /usr/sbin/.xb-writable
rm -f /usr/sbin/.xb-writable
xb_check "Debian's /usr/sbin/xl is a symlink ($xl_was), not diverted" \
	sh -c "[ -L /usr/sbin/xl ] && [ -z \"\$(dpkg-divert --list /usr/sbin/xl)\" ]"
ls $XB_DEBS/xenreaper_*.deb $XB_DEBS/libxenreaper1_*.deb $XB_DEBS/libxenreaper-dev_*.deb > /tmp/debs.list 2>&1
xb_check "the three packages were built ($(cd $XB_DEBS 2>/dev/null && echo *.deb))" test "$(wc -l < /tmp/debs.list)" = 3

# The bench's own unit (in /run, pointing at the build tree) would shadow
# the package's: put it aside.  This build machine is a container whose
# policy-rc.d refuses every service start; a real host has none.
mv /run/systemd/system/xenreaperd.service /run/xb-runtime-unit.service
[ -e /usr/sbin/policy-rc.d ] && mv /usr/sbin/policy-rc.d /usr/sbin/policy-rc.d.xb
systemctl daemon-reload

# --- install
t0=$(xb_ms)
apt-get install -y $(cat /tmp/debs.list) > /tmp/apt-install.out 2>&1; rc=$?
xb_is "$rc" 0 "apt-get install ./xenreaper ./libxenreaper1 ./libxenreaper-dev ($(( $(xb_ms) - t0 )) ms)"
[ $rc -eq 0 ] || sed 's/^/XQTAP #   /' /tmp/apt-install.out | tail -n 20
for p in xenreaper libxenreaper1 libxenreaper-dev; do
	xb_is "$(dpkg-query -W -f='${Status}' $p 2>&1)" "install ok installed" "  $p is installed"
done
xb_is "$(dpkg-divert --truename /usr/sbin/xl)" /usr/libexec/xl "/usr/sbin/xl is diverted to /usr/libexec/xl"
xb_is "$(readlink /usr/libexec/xl)" "$xl_was" "  Debian's xl moved there unchanged"
xb_is "$(readlink -f /usr/sbin/xl)" /usr/libexec/xenreaper/xl "  and /usr/sbin/xl is the front"
xb_is "$(command -v xl)" /usr/sbin/xl "root's PATH finds xl where it always did"
/usr/libexec/xl info > /tmp/xl-info.out 2>&1
xb_check "Debian's xl is still reachable: /usr/libexec/xl info runs xl 4.17" \
	grep -q "^xen_minor *: 17" /tmp/xl-info.out

xb_is "$(systemctl is-enabled xenreaperd.service 2>&1)" enabled "xenreaperd.service is enabled"
i=0; while [ "$(systemctl is-active xenreaperd.service)" != active ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
xb_is "$(systemctl is-active xenreaperd.service)" active "  and came up by itself"
xb_is "$(systemctl show -p FragmentPath --value xenreaperd.service)" /lib/systemd/system/xenreaperd.service \
	"  from the package's unit"
pid=$(systemctl show -p MainPID --value xenreaperd.service)
xb_is "$(readlink /proc/$pid/exe)" /usr/sbin/xenreaperd "  running /usr/sbin/xenreaperd"
xb_is "$(xb_read $XB_ROOT/daemon/pid)" "$pid" "  which publishes daemon/pid"
xb_check "the policy is a conffile" sh -c "dpkg-query -W -f='\${Conffiles}' xenreaper | grep -q ' /etc/xen/xenreaper.conf '"
xb_check "the man pages are installed" test -f /usr/share/man/man8/xenreaperd.8.gz -a -f /usr/share/man/man1/xenreaper.1.gz \
	-a -f /usr/share/man/man5/xenreaper.conf.5.gz -a -f /usr/share/man/man7/xenreaper-xenstore.7.gz

# --- the front: plain xl, pass-through and destroy --async
xl info > /tmp/front-info.out 2>&1
xb_check "xl info through the front runs the real xl" grep -q "^xen_minor *: 17" /tmp/front-info.out
# A decoy toolstack newer than the running hypervisor: the front must take
# the xl of the running version (4.17), as Debian's wrapper does.
mkdir -p /usr/lib/xen-9.99/bin
printf '#!/bin/sh\necho "decoy xl 9.99"\n' > /usr/lib/xen-9.99/bin/xl
chmod +x /usr/lib/xen-9.99/bin/xl
xl info > /tmp/front-info.out 2>&1
if grep -q "^xen_minor *: 17" /tmp/front-info.out; then
	xb_ok "  with a newer /usr/lib/xen-9.99 present, still the running 4.17's xl"
else
	xb_not_ok "  with a newer /usr/lib/xen-9.99 present, still the running 4.17's xl"
	xb_note "  xl info said: $(head -c 200 /tmp/front-info.out)"
fi
rm -rf /usr/lib/xen-9.99
base=$(xb_free_pages)
d=$(xb_guest pkg1 1024) || xb_not_ok "xl create (through the front) a 1 GiB guest"
t0=$(xb_ms)
xl destroy --async pkg1 > /tmp/destroy.out 2>&1; rc=$?
xb_is "$rc" 0 "xl destroy --async pkg1 through /usr/sbin/xl ($(( $(xb_ms) - t0 )) ms)"
[ $rc -eq 0 ] || sed 's/^/XQTAP #   /' /tmp/destroy.out
xb_wait_state $d done 60
xb_is "$(xb_state $d)" done "  the service tore domain $d down"
xb_check "  it is gone (xl list pkg1 fails)" sh -c "! xl list pkg1 >/dev/null 2>&1"
xb_wait_memory $base "  memory returned"
xenreaper list > /tmp/list.out 2>&1
xb_check "xenreaper list shows the job" grep -q "pkg1" /tmp/list.out

# --- the -dev package: a client compiles and links with pkg-config
cat > /tmp/client.c <<'EOF'
#include <stdio.h>
#include <xenreaper.h>
int main(void)
{
	struct xenreaper *h;
	int rc = xenreaper_open(&h);
	if (rc)
		return 1;
	printf("running=%d\n", xenreaper_daemon_running(h));
	xenreaper_close(h);
	return 0;
}
EOF
cc -o /tmp/client /tmp/client.c $(pkg-config --cflags --libs libxenreaper) > /tmp/cc.out 2>&1
xb_check "libxenreaper-dev: a client builds with pkg-config --cflags --libs libxenreaper" test -x /tmp/client
xb_is "$(/tmp/client 2>&1)" running=1 "  and, linked to libxenreaper.so.1, sees the daemon running"

# --- reinstall (the upgrade path): one diversion, the service restarted
t0=$(xb_ms)
dpkg -i $XB_DEBS/xenreaper_*.deb > /tmp/dpkg-reinstall.out 2>&1; rc=$?
xb_is "$rc" 0 "dpkg -i xenreaper again (preinst/postinst upgrade; $(( $(xb_ms) - t0 )) ms)"
xb_is "$(dpkg-divert --list /usr/sbin/xl | wc -l)" 1 "  still one diversion"
xb_is "$(readlink -f /usr/sbin/xl)" /usr/libexec/xenreaper/xl "  /usr/sbin/xl is still the front"
xb_is "$(readlink /usr/libexec/xl)" "$xl_was" "  Debian's xl still unchanged"
pid2=$(systemctl show -p MainPID --value xenreaperd.service)
xb_check "  the service was restarted (pid $pid -> $pid2) and is active" \
	sh -c "[ '$pid2' != '$pid' ] && [ '$pid2' != 0 ] && systemctl is-active -q xenreaperd.service"

# --- xen-utils-common reinstalled under the diversion: dpkg writes its xl
# to the diverted name (removed first, to see it come back), not over the front.
xuc=$(ls $XB_DEBS/xen/xen-utils-common_*.deb 2>/dev/null | head -n 1)
if [ -n "$xuc" ]; then
	rm /usr/libexec/xl
	t0=$(xb_ms)
	dpkg -i $xuc > /tmp/dpkg-xuc.out 2>&1; rc=$?
	xb_is "$rc" 0 "dpkg -i xen-utils-common ($(basename $xuc); $(( $(xb_ms) - t0 )) ms)"
	[ $rc -eq 0 ] || sed 's/^/XQTAP #   /' /tmp/dpkg-xuc.out | tail -n 10
	xb_is "$(readlink /usr/libexec/xl)" "$xl_was" "  its xl was written to /usr/libexec/xl"
	xb_is "$(readlink -f /usr/sbin/xl)" /usr/libexec/xenreaper/xl "  /usr/sbin/xl is still the front"
else
	xb_note "no xen-utils-common package in $XB_DEBS/xen: its reinstall under the diversion was not tried"
fi

# --- remove: service stopped, xl given back byte for byte
t0=$(xb_ms)
apt-get remove -y xenreaper > /tmp/apt-remove.out 2>&1; rc=$?
xb_is "$rc" 0 "apt-get remove xenreaper ($(( $(xb_ms) - t0 )) ms)"
[ $rc -eq 0 ] || sed 's/^/XQTAP #   /' /tmp/apt-remove.out | tail -n 20
xb_is "$(systemctl is-active xenreaperd.service)" inactive "  the service is stopped"
xb_is "$(xb_read $XB_ROOT/daemon/state)" stopped "  daemon/state is stopped"
xb_check "  no diversion of /usr/sbin/xl is left" test -z "$(dpkg-divert --list /usr/sbin/xl)"
xb_is "$(stat -c '%F %U:%G' /usr/sbin/xl 2>&1) -> $(readlink /usr/sbin/xl)" "$xl_stat -> $xl_was" \
	"  /usr/sbin/xl is Debian's symlink again, same target"
xb_check "  /usr/libexec/xl is gone" test ! -e /usr/libexec/xl -a ! -L /usr/libexec/xl
xb_is "$(dpkg -S /usr/sbin/xl 2>&1)" "xen-utils-common: /usr/sbin/xl" "  owned by xen-utils-common"
xl info > /tmp/plain-info.out 2>&1
xb_check "  plain xl info works" grep -q "^xen_minor *: 17" /tmp/plain-info.out
xb_is "$(dpkg-query -W -f='${Status}' xenreaper)" "deinstall ok config-files" "  only the conffile is left"
xb_check "  /etc/xen/xenreaper.conf is still there" test -f /etc/xen/xenreaper.conf

# --- purge: the conffile and the unit's enablement go
t0=$(xb_ms)
apt-get purge -y xenreaper libxenreaper1 libxenreaper-dev > /tmp/apt-purge.out 2>&1; rc=$?
xb_is "$rc" 0 "apt-get purge xenreaper libxenreaper1 libxenreaper-dev ($(( $(xb_ms) - t0 )) ms)"
[ $rc -eq 0 ] || sed 's/^/XQTAP #   /' /tmp/apt-purge.out | tail -n 20
xb_check "  /etc/xen/xenreaper.conf is removed" test ! -e /etc/xen/xenreaper.conf
xb_check "  the enablement link is removed" test ! -e /etc/systemd/system/multi-user.target.wants/xenreaperd.service
xb_check "  nothing of the packages is known to dpkg" \
	sh -c "! dpkg-query -W -f='\${db:Status-Status}\n' xenreaper libxenreaper1 libxenreaper-dev 2>/dev/null | grep -qv '^not-installed$'"
xb_check "  libxenreaper.so.1 is gone" sh -c "! ls /usr/lib/*/libxenreaper.so* >/dev/null 2>&1"

# Leave dom0 as it was for the scenarios after this one.
mv /run/xb-runtime-unit.service /run/systemd/system/xenreaperd.service
[ -e /usr/sbin/policy-rc.d.xb ] && mv /usr/sbin/policy-rc.d.xb /usr/sbin/policy-rc.d
systemctl daemon-reload
if [ $XB_FAILED -gt 0 ]; then
	journalctl -u xenreaperd.service --no-pager -o cat 2>&1 | tail -n 20 | sed 's/^/XQTAP #   journal: /'
	sed 's/^/XQTAP #   apt: /' /tmp/apt-install.out | tail -n 10
fi
xb_done
