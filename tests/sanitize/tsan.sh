#!/bin/sh
# The tests that run the daemon's worker threads (the reaper, the job
# state machine, the threads lent for stuck teardowns, and the journal
# sink the daemon's threads log to, on the real worker pool) built by clang with ThreadSanitizer: a data race, a
# lock-order inversion or a thread leak fails the test.  TAP on stdout.
. "${srcdir:-.}/tests/sanitize/lib.sh"

TSAN_CFLAGS="-g -O1 -fno-omit-frame-pointer -fsanitize=thread"
TSAN_LDFLAGS="-fsanitize=thread"
require_clang "-fsanitize=thread"

TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:report_thread_leaks=1}
export TSAN_OPTIONS

set -- tests/unit/test-reaper tests/unit/test-job tests/unit/test-stuck tests/unit/test-journal
echo "1..$(($# + 2))"
if sanitize_build tsan "$TSAN_CFLAGS" "$TSAN_LDFLAGS" "$@"; then
	ok "clang build with -fsanitize=thread, no warnings"
else
	not_ok "clang build with -fsanitize=thread, no warnings"
	tail -n 40 "$build_log" | diag
fi
# Only these are built here, so check-TESTS, not check (which builds all).
sanitize_make tsan -k check-TESTS check_PROGRAMS="$*" TESTS="$*" >/dev/null 2>&1
sanitize_report tsan "TSan" "$@"
sanitize_repeat tsan "TSan" tests/unit/test-reaper
[ $failed -eq 0 ]
