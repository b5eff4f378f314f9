#!/bin/sh
# The whole unit suite (every tests/unit test of `make check`) built by
# clang with AddressSanitizer, LeakSanitizer and UndefinedBehaviorSanitizer,
# none of them recovering: any report fails its test.  The build also
# carries libFuzzer's coverage hooks, so tests/fuzz/run-fuzz.sh links its
# fuzzers against the same objects.  TAP on stdout.
. "${srcdir:-.}/tests/sanitize/lib.sh"

ASAN_CFLAGS="-g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all -fsanitize=fuzzer-no-link"
ASAN_LDFLAGS="-fsanitize=address,undefined"
require_clang "-fsanitize=address,undefined,fuzzer-no-link"

# Reports end the program with a failing status; leaks are reported at exit.
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:halt_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1}
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export ASAN_OPTIONS UBSAN_OPTIONS

# Built under the sub-build's lock (the test programs too); the tests then
# run without it, so tests/fuzz/run-fuzz.sh can build its fuzzers there
# meanwhile.  The list is the sub-build's own: the outer make's TESTS may be
# just this script.
built=0
if sanitize_build asan "$ASAN_CFLAGS" "$ASAN_LDFLAGS" all; then
	tests=$(sanitize_make asan list-unit-tests 2>/dev/null)
	programs=$(echo "$tests" | grep -v '\.sh$')
	# shellcheck disable=SC2086
	sanitize_make asan CFLAGS="$ASAN_CFLAGS -Werror" $programs >>"$build_log" 2>&1 && built=1
fi
set -- $tests
echo "1..$(($# + 2))"
if [ $built = 1 ] && [ -n "$tests" ]; then
	ok "clang build with -fsanitize=address,undefined, no warnings"
else
	not_ok "clang build with -fsanitize=address,undefined, no warnings"
	tail -n 40 "$build_log" | diag
fi
(cd "$abs_top_builddir/build-asan" &&
 submake -s -k -j"$jobs" check-TESTS check_PROGRAMS="$(echo $programs)" TESTS="$tests") >/dev/null 2>&1
sanitize_report asan "ASan+UBSan" "$@"
sanitize_repeat asan "ASan+UBSan" tests/unit/test-reaper
[ $failed -eq 0 ]
