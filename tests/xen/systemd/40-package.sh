# xenbench: writable-root debs
# The Debian packages (debian/, built by tests/xen/build-deb on the host
# for 4.17, inside the Debian 13 root for 4.20) installed with apt in a
# systemd dom0, as on a real Xen host: the service is enabled and comes up
# by itself; plain `xl destroy --async` (no PATH edit) goes through the
# front that the diversion of /usr/sbin/xl puts there, while Debian's xl
# stays reachable and every other xl command runs the real xl of the
# running hypervisor; a reinstall keeps one diversion; the -dev package
# compiles and links a client; xen-utils-common reinstalled writes its xl
# to the diverted name; with the running version's xl gone, the front runs
# Debian's wrapper at its diverted name; `apt remove` waits, with a bound
# and progress, for the teardowns the daemon accepted, marks failed what
# did not finish and the requests left over (their waiting callers see it;
# a reinstall leaves those jobs alone), stops the service and gives back
# /usr/sbin/xl unchanged; `apt purge` removes the conffile and the xenstore
# tree.  Each apt or dpkg run costs 20 to 65 s under emulation, so the
# cases share them.  Runs before 50-service, which ends by killing
# xenstored, and leaves dom0 as it found it (the bench's runtime unit
# included).
# XB_PACKAGE_CASES chooses the cases: all (the default), upgrade or
# release.  upgrade leaves out the remove that waits for accepted
# teardowns and its reinstall (two apt runs and a zombie), whose logic
# tests/unit/test-maintscripts.sh covers case by case; release leaves out
# the upgrade and xen-utils-common's reinstall too, keeping what depends
# on the release: apt, dpkg, systemd, the diversion against its
# xen-utils-common, the front against its xl.  make check runs upgrade on
# Debian 12 and release on 13.
. $XB_LIB
export DEBIAN_FRONTEND=noninteractive
xl_was=$(readlink /usr/sbin/xl)
# The running hypervisor's minor version: Debian 12's 4.17 or 13's 4.20.
minor=$(cat /sys/hypervisor/version/minor)
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
# dpkg as on a host with a local disk, not over 9p: its database copied
# up into the overlay's RAM once (17 s), and no fsync (as container image
# builds run it).  Each apt or dpkg run below took 7 to 10 s less so.
echo force-unsafe-io > /etc/dpkg/dpkg.cfg.d/xb-unsafe-io
find /var/lib/dpkg -type f -exec touch -a {} +

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
xb_check "Debian's xl is still reachable: /usr/libexec/xl info runs xl 4.$minor" \
	grep -q "^xen_minor *: $minor" /tmp/xl-info.out

xb_is "$(systemctl is-enabled xenreaperd.service 2>&1)" enabled "xenreaperd.service is enabled"
i=0; while [ "$(systemctl is-active xenreaperd.service)" != active ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
xb_is "$(systemctl is-active xenreaperd.service)" active "  and came up by itself"
# Debian 12 keeps units in /lib/systemd/system, 13 in /usr/lib/systemd/system.
unit=$(dpkg -L xenreaper | grep '/systemd/system/xenreaperd.service$')
xb_is "$(systemctl show -p FragmentPath --value xenreaperd.service)" "${unit:-no unit in the package}" \
	"  from the package's unit ($unit)"
# The installed unit as this release's systemd judges it (252 on Debian 12,
# 257 on 13): verify says nothing, and the sandbox's exposure stays at most
# 3.0, as tests/unit/test-unit.sh asks of the source unit.
sv=$(systemctl --version | awk 'NR == 1 { print $2 }')
systemd-analyze verify --man=no "$unit" > /tmp/verify.out 2>&1; rc=$?
xb_check "  systemd $sv: systemd-analyze verify accepts it" sh -c "[ $rc -eq 0 ] && ! [ -s /tmp/verify.out ]"
[ -s /tmp/verify.out ] && sed 's/^/XQTAP #   verify: /' /tmp/verify.out | head -n 10
systemd-analyze security --threshold=30 xenreaperd.service > /tmp/security.out 2>&1; rc=$?
xb_is "$rc" 0 "  systemd $sv: systemd-analyze security, the running service: $(grep -o 'exposure level.*' /tmp/security.out)"
pid=$(systemctl show -p MainPID --value xenreaperd.service)
xb_is "$(readlink /proc/$pid/exe)" /usr/sbin/xenreaperd "  running /usr/sbin/xenreaperd"
xb_is "$(xb_read $XB_ROOT/daemon/pid)" "$pid" "  which publishes daemon/pid"
xb_check "the teardown process is installed off PATH, where the daemon looks for it" \
	test -x /usr/libexec/xenreaper/xenreaper-teardown -a ! -e /usr/sbin/xenreaper-teardown
xb_check "the policy is a conffile" sh -c "dpkg-query -W -f='\${Conffiles}' xenreaper | grep -q ' /etc/xen/xenreaper.conf '"
xb_check "the man pages are installed" test -f /usr/share/man/man8/xenreaperd.8.gz -a -f /usr/share/man/man1/xenreaper.1.gz \
	-a -f /usr/share/man/man5/xenreaper.conf.5.gz -a -f /usr/share/man/man7/xenreaper-xenstore.7.gz
rules=/usr/share/xenreaper/prometheus/xenreaper.rules.yml
xb_check "the Prometheus alerting rules are installed, and promtool accepts them" \
	sh -c "test -f $rules && { ! command -v promtool >/dev/null || promtool check rules $rules >/dev/null; }"

# --- the front: plain xl, pass-through and destroy --async
xl info > /tmp/front-info.out 2>&1
xb_check "xl info through the front runs the real xl" grep -q "^xen_minor *: $minor" /tmp/front-info.out
# A decoy toolstack newer than the running hypervisor: the front must take
# the xl of the running version, as Debian's wrapper does.
mkdir -p /usr/lib/xen-9.99/bin
printf '#!/bin/sh\necho "decoy xl 9.99"\n' > /usr/lib/xen-9.99/bin/xl
chmod +x /usr/lib/xen-9.99/bin/xl
xl info > /tmp/front-info.out 2>&1
if grep -q "^xen_minor *: $minor" /tmp/front-info.out; then
	xb_ok "  with a newer /usr/lib/xen-9.99 present, still the running 4.$minor's xl"
else
	xb_not_ok "  with a newer /usr/lib/xen-9.99 present, still the running 4.$minor's xl"
	xb_note "  xl info said: $(head -c 200 /tmp/front-info.out)"
fi
rm -rf /usr/lib/xen-9.99
base=$(xb_free_pages)
d=$(xb_guest pkg1 128) || xb_not_ok "xl create (through the front) a 128 MiB guest"
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

cases=${XB_PACKAGE_CASES:-all}
case $cases in all|upgrade|release) ;; *) xb_not_ok "XB_PACKAGE_CASES is all, upgrade or release, not '$cases'" ;; esac

# --- reinstall (the upgrade path): one diversion, the service restarted
if [ "$cases" != release ]; then
t0=$(xb_ms)
dpkg -i $XB_DEBS/xenreaper_*.deb > /tmp/dpkg-reinstall.out 2>&1; rc=$?
xb_is "$rc" 0 "dpkg -i xenreaper again (preinst/postinst upgrade; $(( $(xb_ms) - t0 )) ms)"
xb_is "$(dpkg-divert --list /usr/sbin/xl | wc -l)" 1 "  still one diversion"
xb_is "$(readlink -f /usr/sbin/xl)" /usr/libexec/xenreaper/xl "  /usr/sbin/xl is still the front"
xb_is "$(readlink /usr/libexec/xl)" "$xl_was" "  Debian's xl still unchanged"
pid2=$(systemctl show -p MainPID --value xenreaperd.service)
xb_check "  the service was restarted (pid $pid -> $pid2) and is active" \
	sh -c "[ '$pid2' != '$pid' ] && [ '$pid2' != 0 ] && systemctl is-active -q xenreaperd.service"
fi

# --- xen-utils-common reinstalled under the diversion: dpkg writes its xl
# to the diverted name (removed first, to see it come back), not over the
# front.  Not in release: how dpkg honours a diversion did not change
# between the releases, and this dpkg run is the longest of the scenario
# (53 s on 4.20); the install above shows the diversion taken against
# each release's own xen-utils-common.
if [ "$cases" != release ]; then
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
fi

# --- the front's fallback is Debian's wrapper at its diverted name: with
# the running version's xl gone (its tools removed before the reboot), the
# wrapper's own diagnosis reaches the admin, not the front's exit 127.
ver=$(cat /sys/hypervisor/version/major).$(cat /sys/hypervisor/version/minor)
mv /usr/lib/xen-$ver/bin/xl /usr/lib/xen-$ver/bin/xl.xb-aside
xl info > /tmp/front-noxl.out 2>&1; rc=$?
mv /usr/lib/xen-$ver/bin/xl.xb-aside /usr/lib/xen-$ver/bin/xl
xb_check "with $ver's xl gone, xl through the front runs Debian's wrapper, which says so: $(head -c 160 /tmp/front-noxl.out)" \
	grep -q "^ERROR: *Unable to execute /usr/lib/xen-$ver/bin/xl" /tmp/front-noxl.out
xb_is "$rc" 127 "  and exits with the wrapper's status"
xb_check "  not with the front's own 'cannot find the real xl'" sh -c "! grep -q 'xenreaper front' /tmp/front-noxl.out"

# --- remove while teardowns are accepted: prerm waits for them, with a
# bound (XENREAPER_REMOVE_TIMEOUT) and progress; what cannot finish (a
# zombie: a dom0 helper holds a page of it) is marked failed, so the
# caller still waiting on it sees an error, and a reinstall acts on none.
if [ "$cases" = all ]; then
z=$(xb_guest pkgz 128) || xb_not_ok "create pkgz"
rm -f /tmp/hold.ready
$XB_TOOL hold-page $z /tmp/hold.ready 2>/tmp/hold.err &
holder=$!
i=0; while [ ! -s /tmp/hold.ready ] && kill -0 $holder 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
xl destroy --async pkgz > /tmp/destroy-z.out 2>&1; rc=$?
xb_is "$rc" 0 "xl destroy --async pkgz (a dom0 helper holds one of its pages): accepted"
xb_is "$(xb_wait_node $XB_ROOT/job/$z/state zombie 60)" zombie "  and a zombie: its teardown cannot finish"
XENREAPER_WAIT_TIMEOUT=600 xenreaper wait $z > /tmp/wait-z.out 2>&1 &
waiter=$!
a=$(xb_guest pkga 256) || xb_not_ok "create pkga"
xl destroy --async pkga > /tmp/destroy-a.out 2>&1; rc=$?
xb_is "$rc" 0 "xl destroy --async pkga: accepted"
t0=$(xb_ms)
XENREAPER_REMOVE_TIMEOUT=20 apt-get remove -y xenreaper > /tmp/apt-remove-busy.out 2>&1; rc=$?
xb_is "$rc" 0 "apt-get remove xenreaper with both accepted (XENREAPER_REMOVE_TIMEOUT=20; $(( $(xb_ms) - t0 )) ms)"
grep '^xenreaper:' /tmp/apt-remove-busy.out | sed 's/^/XQTAP #   /'
xb_check "  it waited, saying for what" grep -q "^xenreaper: waiting for [12] teardown(s) xenreaperd has accepted" /tmp/apt-remove-busy.out
xb_check "  then gave up at its bound, saying what becomes of them" \
	grep -q "^xenreaper: 1 teardown(s) still not done after 2[0-9] s; removing xenreaperd anyway: they will be marked failed" /tmp/apt-remove-busy.out
xb_is "$(xb_state $a)" done "  the teardown that could finish did (domain $a)"
xb_is "$(xb_state $z)" failed "  the zombie's job is failed, not left pending"
xb_check "  saying why: $(xb_read $XB_ROOT/job/$z/error | head -c 100)" sh -c "xenstore-read $XB_ROOT/job/$z/error | grep -q 'package was removed'"
xb_check "  and apt's output names it" grep -q "^xenreaper: removed with teardowns not done; marked failed in xenstore.*domain(s) $z" /tmp/apt-remove-busy.out
wait $waiter; rc=$?
xb_is "$rc" 1 "  the caller still waiting on it (xenreaper wait $z) ends: exit 1"
xb_check "  with the reason: $(tail -n 1 /tmp/wait-z.out | head -c 160)" grep -q "failed: not torn down: the xenreaper package was removed" /tmp/wait-z.out

t0=$(xb_ms)
apt-get install -y $(cat /tmp/debs.list) > /tmp/apt-reinstall.out 2>&1; rc=$?
xb_is "$rc" 0 "apt-get install again ($(( $(xb_ms) - t0 )) ms)"
xb_is "$(xb_wait_node $XB_ROOT/daemon/state running 60)" running "  xenreaperd runs again"
xb_is "$(xb_state $z)" failed "  and leaves the failed job alone"
xb_check "  domain $z still exists, dead and held (nothing acted on it)" $XB_TOOL pages $z
kill -TERM $holder; wait $holder 2>/dev/null
xb_check "  and once the helper lets go, it is gone" sh -c "$XB_TOOL wait-gone $z 60000 >/dev/null"
fi

# --- remove with the service stopped and a request left: the request
# recorded while the daemon is stopped (the caller was told so, exit 3)
# becomes a failed job, never served by a reinstall; the removal does not
# wait (nothing was accepted), and gives /usr/sbin/xl back unchanged.
systemctl stop xenreaperd.service
xb_is "$(xb_read $XB_ROOT/daemon/state)" stopped "systemctl stop: daemon/state is stopped"
r=$(xb_guest pkgr 128) || xb_not_ok "create pkgr"
xl destroy --async pkgr > /tmp/destroy-r.out 2>&1; rc=$?
xb_is "$rc" 3 "with the service stopped, xl destroy --async pkgr is recorded (exit 3)"
xb_is "$(xb_read $XB_ROOT/request/$r)" "$($XB_TOOL uuid $r)" "  request/$r waits in xenstore"
XENREAPER_WAIT_TIMEOUT=600 xenreaper wait $r > /tmp/wait-r.out 2>&1 &
waiter=$!
prom=/var/lib/prometheus/node-exporter/xenreaper.prom
had_prom=no; [ -f $prom ] && had_prom=yes
t0=$(xb_ms)
apt-get remove -y xenreaper > /tmp/apt-remove.out 2>&1; rc=$?
xb_is "$rc" 0 "apt-get remove xenreaper with the request left ($(( $(xb_ms) - t0 )) ms)"
[ $rc -eq 0 ] || sed 's/^/XQTAP #   /' /tmp/apt-remove.out | tail -n 20
grep '^xenreaper:' /tmp/apt-remove.out | sed 's/^/XQTAP #   /'
xb_check "  nothing was accepted, so it did not wait" sh -c "! grep -q '^xenreaper: waiting' /tmp/apt-remove.out"
xb_check "  no request is left" test -z "$(xenstore-list $XB_ROOT/request 2>/dev/null)"
xb_is "$(xb_state $r)" failed "  the request became a failed job"
xb_is "$(xb_read $XB_ROOT/job/$r/uuid)" "$($XB_TOOL uuid $r)" "  for the UUID asked for"
wait $waiter; rc=$?
xb_is "$rc" 1 "  the caller waiting on it ends: exit 1"
xb_check "  with the reason" grep -q "package was removed" /tmp/wait-r.out
xb_check "  and domain $r, whose request was left, still runs" $XB_TOOL pages $r
xl destroy pkgr
xb_is "$(systemctl is-active xenreaperd.service)" inactive "  the service is stopped"
xb_check "  no diversion of /usr/sbin/xl is left" test -z "$(dpkg-divert --list /usr/sbin/xl)"
xb_is "$(stat -c '%F %U:%G' /usr/sbin/xl 2>&1) -> $(readlink /usr/sbin/xl)" "$xl_stat -> $xl_was" \
	"  /usr/sbin/xl is Debian's symlink again, same target"
xb_check "  /usr/libexec/xl is gone" test ! -e /usr/libexec/xl -a ! -L /usr/libexec/xl
xb_is "$(dpkg -S /usr/sbin/xl 2>&1)" "xen-utils-common: /usr/sbin/xl" "  owned by xen-utils-common"
xl info > /tmp/plain-info.out 2>&1
xb_check "  plain xl info works" grep -q "^xen_minor *: $minor" /tmp/plain-info.out
xb_is "$(dpkg-query -W -f='${Status}' xenreaper)" "deinstall ok config-files" "  only the conffile is left"
xb_check "  /etc/xen/xenreaper.conf is still there" test -f /etc/xen/xenreaper.conf
if [ $had_prom = yes ]; then
	xb_check "  the metrics file the daemon wrote is gone" test ! -e $prom
else
	xb_note "  (no metrics file was written: is prometheus-node-exporter's directory there?)"
fi

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
xb_check "  and so is xenreaperd's xenstore tree" sh -c "! xenstore-exists $XB_ROOT"

# Leave dom0 as it was for the scenarios after this one.
mv /run/xb-runtime-unit.service /run/systemd/system/xenreaperd.service
[ -e /usr/sbin/policy-rc.d.xb ] && mv /usr/sbin/policy-rc.d.xb /usr/sbin/policy-rc.d
rm -f /etc/dpkg/dpkg.cfg.d/xb-unsafe-io
systemctl daemon-reload
if [ $XB_FAILED -gt 0 ]; then
	journalctl -u xenreaperd.service --no-pager -o cat 2>&1 | tail -n 20 | sed 's/^/XQTAP #   journal: /'
	sed 's/^/XQTAP #   apt: /' /tmp/apt-install.out | tail -n 10
fi
xb_done
