# The daemon's memory on real Xen: a build of xenreaperd with
# AddressSanitizer, LeakSanitizer and UBSan (the test command's clang
# sub-build, build-asan/) goes through a teardown, a SIGHUP reload and a
# SIGTERM stop: no memory error, no leak, exit 0.  valgrind's memcheck
# cannot do this on Xen 4.17: its Xen support ends at sysctl/domctl
# interface version 0x12 and 4.17 speaks 0x15, so it refuses the daemon's
# hypercalls (ENOSYS); memcheck runs the daemon's core on the test doubles
# instead (tests/sanitize/valgrind.sh).  The refusal is shown below.
. $XB_LIB
asan=$XB_BUILD/build-asan/daemon/xenreaperd
[ -x "$asan" ] || { xb_not_ok "the ASan build of the daemon exists ($asan; make check builds it)"; xb_done; }
base=$(xb_free_pages)
if command -v valgrind >/dev/null; then
	probe=$(valgrind -q --log-file=/tmp/valgrind-probe.log $XB_TOOL free-pages 2>/dev/null)
	xb_note "for the record, xbtool free-pages under valgrind printed '$probe' (without: $(xb_free_pages)); valgrind said:"
	sed 's/^/XQTAP #   valgrind: /' /tmp/valgrind-probe.log | head -3
fi

XB_DAEMON=$asan
XB_DAEMON_LOG=/tmp/xenreaperd-asan.log
: > $XB_DAEMON_LOG
rm -f /tmp/asan-report.*
# Reports go to /tmp/asan-report.PID; any of them fails the run.  libxl's destroy
# child is a fork: it leaves with _exit, so no leak check runs there.
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:log_path=/tmp/asan-report
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:log_path=/tmp/asan-report
cat > /tmp/memcheck.conf <<'CONF'
[daemon]
progress-interval = 250ms
CONF
xb_daemon_start -c /tmp/memcheck.conf || { xb_not_ok "the ASan build of xenreaperd starts"; xb_done; }
xb_ok "the ASan build of xenreaperd starts on real Xen"
d=$(xb_guest memcheck 256) || { xb_not_ok "create a 256 MiB guest"; xb_done; }
xb_request $d
xb_wait_final $d 120
xb_is "$(xb_state $d)" done "a teardown under ASan ends done"
xb_check "its domain is gone" sh -c "! $XB_TOOL pages $d >/dev/null"
sed -i 's/250ms/500ms/' /tmp/memcheck.conf
kill -HUP $XB_DAEMON_PID
i=0; while ! grep -q 'policy reloaded' $XB_DAEMON_LOG && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
xb_check "SIGHUP reloaded the policy" grep -q 'policy reloaded' $XB_DAEMON_LOG
kill -TERM $XB_DAEMON_PID
wait $XB_DAEMON_PID; rc=$?
XB_DAEMON_PID=
xb_is "$rc" 0 "the daemon exits 0 on SIGTERM (a report would make it fail)"
reports=$(ls /tmp/asan-report.* 2>/dev/null | wc -l)
xb_is "$reports" 0 "no AddressSanitizer, LeakSanitizer or UBSan report"
[ "$reports" -eq 0 ] || cat /tmp/asan-report.* | head -40 | sed 's/^/XQTAP #   asan: /'
xb_wait_memory $base "all memory back"
unset ASAN_OPTIONS UBSAN_OPTIONS
xb_done
