# xenreaperd under valgrind's memcheck on real Xen, through a teardown, a
# SIGHUP reload and a SIGTERM stop: no memory errors, no definite leaks.
# libxl's destroy child is a fork of the daemon: it runs under valgrind too,
# silently (--child-silent-after-fork), so only the daemon is judged.
. $XB_LIB
XB_DAEMON_LOG=/tmp/xenreaperd-valgrind.log
: > $XB_DAEMON_LOG
command -v valgrind >/dev/null || { xb_not_ok "valgrind is installed (scripts/install-deps)"; xb_done; }
VG=/tmp/valgrind-daemon.log
base=$(xb_free_pages)

# Can memcheck pass Xen 4.17's hypercalls at all?  One sysctl (physinfo).
probe=$(valgrind -q --log-file=/tmp/valgrind-probe.log $XB_TOOL free-pages 2>/dev/null)
xb_note "xbtool free-pages under valgrind: '$probe' (plain: $(xb_free_pages))"
sed 's/^/XQTAP #   valgrind: /' /tmp/valgrind-probe.log | head -8
xb_check "valgrind passes a Xen 4.17 sysctl through (physinfo)" sh -c "echo '$probe' | grep -Eq '^[0-9]+$'"

cat > /tmp/vg.conf <<'CONF'
[daemon]
progress-interval = 250ms
CONF
XB_DAEMON_WRAP="valgrind --tool=memcheck --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=99 --child-silent-after-fork=yes --log-file=$VG"
xb_daemon_spawn -c /tmp/vg.conf
XB_DAEMON_WRAP=
if ! xb_daemon_running 120; then
	xb_not_ok "xenreaperd starts under valgrind"
	grep -v '^==[0-9]*== *$' $VG | head -20 | sed 's/^/XQTAP #   valgrind: /'
	xb_daemon_log 10
	kill -KILL $XB_DAEMON_PID 2>/dev/null; wait $XB_DAEMON_PID 2>/dev/null
	xb_done
fi
xb_ok "xenreaperd starts under valgrind"

d=$(xb_guest vg 128)
xb_request $d
xb_wait_final $d 300
xb_is "$(xb_state $d)" done "a teardown under valgrind ends done"
xb_check "its domain is gone" sh -c "! $XB_TOOL pages $d >/dev/null"

sed -i 's/250ms/500ms/' /tmp/vg.conf
kill -HUP $XB_DAEMON_PID
i=0; while ! grep -q 'policy reloaded' $XB_DAEMON_LOG && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
xb_check "SIGHUP reloaded the policy" grep -q 'policy reloaded' $XB_DAEMON_LOG

kill -TERM $XB_DAEMON_PID
wait $XB_DAEMON_PID; rc=$?
XB_DAEMON_PID=
xb_is "$rc" 0 "the daemon exits 0 on SIGTERM under valgrind (99 = valgrind found errors)"
errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' $VG | tail -n 1)
definite=$(sed -n 's/.*definitely lost: \([0-9,]*\) bytes.*/\1/p' $VG | tail -n 1)
xb_is "$errors" 0 "valgrind: no memory errors"
xb_is "${definite:-0}" 0 "valgrind: no definite leaks"
grep -E 'definitely|indirectly|possibly|still reachable|ERROR SUMMARY|WARNING' $VG | sed 's/^/XQTAP #   valgrind: /' | head -12
[ $XB_FAILED -eq 0 ] || grep -v '^==[0-9]*== *$' $VG | head -60 | sed 's/^/XQTAP #   valgrind: /'

$XB_TOOL pages $d >/dev/null 2>&1 && xl destroy $d
xb_wait_memory $base "all memory back"
xb_done
