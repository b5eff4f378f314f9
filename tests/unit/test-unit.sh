#!/bin/sh
# The generated systemd unit, units/xenreaperd.service: it has the settings
# the daemon relies on (Type=notify, reload by SIGHUP, watchdog) and the
# sandbox units/README.md describes, its man: links name our pages, and
# systemd-analyze verify accepts it (run on a copy whose ExecStart= is the
# daemon just built, since verify wants an existing program); its
# systemd-analyze security exposure stays at most 3.0.  Run from the build
# directory.  TAP on stdout.
srcdir=${srcdir:-.}
unit=units/xenreaperd.service
tmp=${TMPDIR:-/tmp}/test-unit.$$
trap 'rm -rf "$tmp"' EXIT

n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $*"; }
skip() { n=$((n + 1)); echo "ok $n # SKIP $*"; }
diag() { sed 's/^/# /' "$1"; }

if [ ! -r "$unit" ]; then
	echo "1..0"
	echo "Bail out! $unit is missing (run make first)"
	exit 1
fi
mkdir -p "$tmp" || exit 1

# KEY=VALUE lines that must be in the unit exactly.
for line in \
	Type=notify NotifyAccess=main 'ExecReload=/bin/kill -HUP $MAINPID' \
	Restart=on-failure RestartSec=1 WatchdogSec=30s KillMode=mixed RestartPreventExitStatus=3 \
	NoNewPrivileges=yes ProtectSystem=strict PrivateTmp=no ProtectHome=read-only \
	ProtectKernelTunables=yes ProtectKernelModules=yes ProtectControlGroups=yes \
	RestrictRealtime=yes LockPersonality=yes MemoryDenyWriteExecute=yes \
	SystemCallArchitectures=native RestrictNamespaces=yes DevicePolicy=closed \
	'DeviceAllow=/dev/xen/privcmd rw' 'DeviceAllow=/dev/xen/xenbus rw' \
	'DeviceAllow=/dev/xen/evtchn rw' 'DeviceAllow=/dev/xen/gntdev rw' \
	'DeviceAllow=/dev/xen/hypercall rw' 'DeviceAllow=block-loop rw' WantedBy=multi-user.target; do
	if grep -qxF "$line" "$unit"; then
		ok "$line"
	else
		not_ok "$line"
	fi
done

# KEY= lines that must name (at least) these words.
has() {
	key=$1
	shift
	value=$(sed -n "s/^$key=//p" "$unit" | tr '\n' ' ')
	for word; do
		case " $value " in
		*" $word "*) ;;
		*) not_ok "$key= has $word (it is: $value)"; return ;;
		esac
	done
	ok "$key= has $*"
}
has After xenstored.service xen.service proc-xen.mount
has Wants xenstored.service xen.service proc-xen.mount
has ReadWritePaths -/run/xen -/var/lib/xen -/var/log/xen
has RuntimeDirectory xen-hotplug xenreaperd
has RestrictAddressFamilies AF_UNIX
has CapabilityBoundingSet CAP_KILL

if grep -q '^Requires=' "$unit"; then
	not_ok "no Requires= (the Xen units differ between Debian and upstream: Wants=)"
else
	ok "no Requires="
fi
if grep '^CapabilityBoundingSet=' "$unit" | grep -q 'CAP_SYS_ADMIN'; then
	not_ok "CapabilityBoundingSet= leaves CAP_SYS_ADMIN out"
else
	ok "CapabilityBoundingSet= leaves CAP_SYS_ADMIN out"
fi
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
case $exec_start in
/*/xenreaperd) ok "ExecStart= is an absolute path to xenreaperd ($exec_start)" ;;
*) not_ok "ExecStart= is an absolute path to xenreaperd (it is: $exec_start)" ;;
esac
if grep -q '@[a-z_]*@' "$unit"; then
	not_ok "every @variable@ is substituted"
else
	ok "every @variable@ is substituted"
fi

# Documentation=man:PAGE(SECTION) names pages of ours.
: > "$tmp/docs"
for doc in $(sed -n 's/^Documentation=//p' "$unit"); do
	case $doc in
	man:*\(*\))
		page=${doc#man:}
		section=${page#*\(}
		page=${page%%\(*}.${section%\)}
		[ -r "$srcdir/man/$page" ] || echo "$doc: no man/$page" >> "$tmp/docs"
		;;
	esac
done
if [ -s "$tmp/docs" ]; then
	not_ok "Documentation= names our man pages"
	diag "$tmp/docs"
else
	ok "Documentation= names our man pages"
fi

if ! command -v systemd-analyze >/dev/null 2>&1; then
	skip "systemd-analyze verify: systemd-analyze is not installed"
	skip "systemd-analyze security: systemd-analyze is not installed"
	echo "1..$n"
	exit 0
fi

# verify checks that ExecStart= exists and is executable: use the daemon
# of this build.  The man: links are checked above (man-db may be absent).
daemon=$(pwd)/daemon/xenreaperd
if [ -x "$daemon" ]; then
	sed "s|^ExecStart=.*|ExecStart=$daemon|" "$unit" > "$tmp/xenreaperd.service"
	if systemd-analyze verify --man=no "$tmp/xenreaperd.service" > "$tmp/verify" 2>&1 &&
	   ! [ -s "$tmp/verify" ]; then
		ok "systemd-analyze verify"
	else
		not_ok "systemd-analyze verify"
		diag "$tmp/verify"
	fi
else
	not_ok "systemd-analyze verify: $daemon is not built"
fi

# The sandbox must not erode: exposure 3.0 at most (the unit scores 2.6).
checked=$tmp/xenreaperd.service
[ -r "$checked" ] || checked=$unit
if ! systemd-analyze security --help 2>/dev/null | grep -q -- '--offline'; then
	skip "systemd-analyze security: this systemd has no --offline"
elif systemd-analyze security --offline=true --threshold=30 "$checked" \
	> "$tmp/security" 2>&1; then
	ok "systemd-analyze security: $(grep -o 'exposure level.*' "$tmp/security")"
else
	not_ok "systemd-analyze security --threshold=30"
	diag "$tmp/security"
fi

echo "1..$n"
