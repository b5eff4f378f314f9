#!/bin/sh
# The Debian maintainer scripts' xenstore side (debian/xenreaper.prerm and
# .postrm) against a stand-in xenstore: the xenstore-* tools of
# xenstore-utils replaced by shell functions' scripts over a directory
# tree (a node is a directory, its value the file "value" in it), and
# dpkg-divert by one that does nothing.  On remove, prerm waits for the
# teardowns xenreaperd has accepted, bounded and saying so; postrm marks
# failed every job not finished and turns every request left into a failed
# job, so that nothing stale remains for a reinstall, and removes the
# daemon's metrics file, so that no stale figure is served.  Real Xen runs the
# scripts for real: tests/xen/systemd/40-package.sh.  TAP on stdout.
srcdir=${srcdir:-.}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-maintscripts.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
check() { desc=$1; shift; if "$@"; then ok "$desc"; else not_ok "$desc"; fi; }
is() { if [ "$1" = "$2" ]; then ok "$3"; else not_ok "$3"; echo "#   got '$1', want '$2'"; fi; }

# The stand-in tools, on PATH before the real ones.
mkdir -p "$tmp/bin" "$tmp/xs"
XS=$tmp/xs
export XS
cat > "$tmp/bin/xenstore-read" <<'EOS'
#!/bin/sh
for key; do [ -f "$XS$key/value" ] || { echo "couldn't read path $key" >&2; exit 1; }; done
for key; do cat "$XS$key/value"; echo; done
EOS
cat > "$tmp/bin/xenstore-write" <<'EOS'
#!/bin/sh
while [ $# -ge 2 ]; do mkdir -p "$XS$1"; printf '%s' "$2" > "$XS$1/value"; shift 2; done
EOS
cat > "$tmp/bin/xenstore-list" <<'EOS'
#!/bin/sh
[ -d "$XS$1" ] || exit 1
for d in "$XS$1"/*/; do [ -d "$d" ] && basename "$d"; done
exit 0
EOS
cat > "$tmp/bin/xenstore-rm" <<'EOS'
#!/bin/sh
for key; do rm -rf "$XS$key"; done
EOS
cat > "$tmp/bin/xenstore-exists" <<'EOS'
#!/bin/sh
[ -d "$XS$1" ]
EOS
# No change ever comes: a watch lasts until timeout(1) ends it.
cat > "$tmp/bin/xenstore-watch" <<'EOS'
#!/bin/sh
exec sleep 1000
EOS
cat > "$tmp/bin/dpkg-divert" <<'EOS'
#!/bin/sh
echo "$*" >> "$XS/../divert.log"
EOS
chmod +x "$tmp/bin"/*
PATH=$tmp/bin:$PATH
export PATH
unset DPKG_ROOT

w() { xenstore-write "$@"; }
r() { xenstore-read "$1" 2>/dev/null; }
R=/tool/xenreaper
UA=aaaaaaaa-0000-4000-8000-000000000005
UB=bbbbbbbb-0000-4000-8000-000000000007

# --- prerm: nothing accepted, no wait
w $R/daemon/state running $R/daemon/active-jobs 0 $R/request ""
sh "$srcdir/debian/xenreaper.prerm" remove > "$tmp/prerm.out" 2>&1; rc=$?
is $rc 0 "prerm remove with nothing accepted: exit 0"
check "  and no wait" test ! -s "$tmp/prerm.out"

# --- prerm: a teardown that does not finish; the bound ends the wait
w $R/daemon/active-jobs 1
start=$(date +%s)
XENREAPER_REMOVE_TIMEOUT=2 sh "$srcdir/debian/xenreaper.prerm" remove > "$tmp/prerm.out" 2>&1; rc=$?
took=$(($(date +%s) - start))
is $rc 0 "prerm remove with a teardown that does not finish: exit 0 once its bound is over"
check "  after about its bound of 2 s ($took s)" test $took -ge 2 -a $took -le 4
check "  it said what it waited for" grep -q "^xenreaper: waiting for 1 teardown(s) xenreaperd has accepted" "$tmp/prerm.out"
check "  and what becomes of it" grep -q "^xenreaper: 1 teardown(s) still not done after [0-9]* s; removing xenreaperd anyway: they will be marked failed" "$tmp/prerm.out"
XENREAPER_REMOVE_TIMEOUT=soon sh "$srcdir/debian/xenreaper.prerm" remove > "$tmp/prerm.out" 2>&1; rc=$?
is $rc 0 "prerm with XENREAPER_REMOVE_TIMEOUT=soon: exit 0"
check "  saying the value is not a number of seconds" grep -q "XENREAPER_REMOVE_TIMEOUT='soon' is not a whole number of seconds" "$tmp/prerm.out"
sh "$srcdir/debian/xenreaper.prerm" upgrade > "$tmp/prerm.out" 2>&1; rc=$?
is "$rc:$(cat "$tmp/prerm.out")" "0:" "prerm upgrade never waits: the new daemon resumes the jobs"
w $R/daemon/state stopped
XENREAPER_REMOVE_TIMEOUT=2 sh "$srcdir/debian/xenreaper.prerm" remove > "$tmp/prerm.out" 2>&1
check "prerm remove with the daemon stopped: no wait (nothing would move)" test ! -s "$tmp/prerm.out"

# --- postrm: what is left is failed, never left for a reinstall
w $R/job/5/uuid $UA $R/job/5/name web $R/job/5/state destroying
w $R/job/6/uuid cccccccc-0000-4000-8000-000000000006 $R/job/6/state done $R/job/6/finished 1700000000.000
w $R/job/9/uuid dddddddd-0000-4000-8000-000000000009 $R/job/9/state queued
w $R/job/7/uuid eeeeeeee-0000-4000-8000-000000000007 $R/job/7/state failed $R/job/7/pages-total 100
w $R/request/7 $UB /local/domain/7/name db
w $R/ping/300-1-2 "wait 5"
sh "$srcdir/debian/xenreaper.postrm" remove > "$tmp/postrm.out" 2>&1; rc=$?
is $rc 0 "postrm remove: exit 0"
check "  the diversion is given back" grep -q -- "--remove --rename --divert /usr/libexec/xl /usr/sbin/xl" "$tmp/divert.log"
is "$(r $R/job/5/state)" failed "  a job cut off destroying is failed"
check "  saying why" sh -c "xenstore-read $R/job/5/error | grep -q 'the xenreaper package was removed'"
check "  when" sh -c "xenstore-read $R/job/5/finished | grep -qE '^[0-9]+\.[0-9]{3}$'"
is "$(r $R/job/9/state)" failed "  a queued job is failed"
is "$(r $R/job/6/state)/$(r $R/job/6/finished)" done/1700000000.000 "  a done job is left as it is"
check "  no request is left" test -z "$(xenstore-list $R/request)"
is "$(r $R/job/7/state)/$(r $R/job/7/uuid)/$(r $R/job/7/name)" "failed/$UB/db" \
	"  the request became a failed job for its UUID, with the guest's name"
check "  replacing the earlier guest's record there" test -z "$(r $R/job/7/pages-total)"
check "  no ping is left (nobody answers now)" test ! -d "$XS$R/ping"
check "  and it says which domains: $(cat "$tmp/postrm.out")" \
	grep -q "^xenreaper: removed with teardowns not done; marked failed in xenstore, their domains may still exist: domain(s) 5 9 7$" "$tmp/postrm.out"
sh "$srcdir/debian/xenreaper.postrm" remove > "$tmp/postrm.out" 2>&1
check "postrm remove again: nothing left to fail" test ! -s "$tmp/postrm.out"

# --- postrm remove: the metrics file goes, wherever the policy put it
# (in a DPKG_ROOT, which also keeps xenstore out of it).
root=$tmp/root
prom=$root/var/lib/prometheus/node-exporter
mkdir -p "$root/etc/xen" "$prom" "$root/srv"
: > "$prom/xenreaper.prom"
: > "$prom/other.prom"
DPKG_ROOT=$root sh "$srcdir/debian/xenreaper.postrm" remove > "$tmp/postrm.out" 2>&1; rc=$?
is "$rc:$(cat "$tmp/postrm.out")" 0: "postrm remove without a policy file: exit 0, nothing said"
check "  the metrics file at the daemon's default path is removed" test ! -e "$prom/xenreaper.prom"
check "  another program's file there is not" test -e "$prom/other.prom"
printf '\357\273\277[daemon]\r\nmetrics = /srv/xr.prom\r\n[pool:x]\r\nscrub = sync\r\n' > "$root/etc/xen/xenreaper.conf"
: > "$root/srv/xr.prom"
: > "$prom/xenreaper.prom"
DPKG_ROOT=$root sh "$srcdir/debian/xenreaper.postrm" remove > "$tmp/postrm.out" 2>&1
check "the file metrics = names in [daemon] is removed (a policy with a BOM and CRLF)" test ! -e "$root/srv/xr.prom"
check "  not the default one it does not use" test -e "$prom/xenreaper.prom"
printf '[daemon]\n; metrics = /srv/xr.prom\nmetrics = off\n' > "$root/etc/xen/xenreaper.conf"
: > "$root/srv/xr.prom"
DPKG_ROOT=$root sh "$srcdir/debian/xenreaper.postrm" remove > "$tmp/postrm.out" 2>&1
check "with metrics = off nothing is removed" test -e "$root/srv/xr.prom" -a -e "$prom/xenreaper.prom"
printf '[daemon]\nmetrics = /srv/notes.txt\n' > "$root/etc/xen/xenreaper.conf"
: > "$root/srv/notes.txt"
DPKG_ROOT=$root sh "$srcdir/debian/xenreaper.postrm" remove > "$tmp/postrm.out" 2>&1
check "  nor with a value the daemon refuses (not a .prom file)" test -e "$root/srv/notes.txt"
sh "$srcdir/debian/xenreaper.postrm" upgrade > "$tmp/postrm.out" 2>&1; rc=$?
is $rc 0 "postrm upgrade: exit 0 (the new daemon writes the file on)"

sh "$srcdir/debian/xenreaper.postrm" purge > "$tmp/postrm.out" 2>&1; rc=$?
is $rc 0 "postrm purge: exit 0"
check "  xenreaperd's xenstore tree is gone" test ! -d "$XS$R"
check "  and nothing else of xenstore" test -d "$XS/local/domain/7"
echo "1..$n"
[ $failed -eq 0 ]
