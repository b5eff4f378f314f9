#!/bin/sh
# The libFuzzer targets of tests/fuzz, built in the ASan+UBSan sub-build
# (tests/sanitize/lib.sh).  For each: every seed and every regression
# input (tests/fuzz/regressions/TARGET, inputs that once failed) is run
# once, then it fuzzes for FUZZ_SECONDS (default 10; 0: replay only).  Any
# crash, sanitizer report, leak, timeout or broken invariant fails it; the
# input is left in tests/fuzz/work/TARGET/ with the line that reproduces it.
# FUZZ_TARGETS picks targets (default: all); FUZZ_JOBS how many fuzz at
# once (default: one per CPU).  New coverage is kept in
# tests/fuzz/work/TARGET/corpus, so later runs start from there.  An input
# that runs longer than 30 s counts as a hang.
# TAP on stdout.
. "${srcdir:-.}/tests/sanitize/lib.sh"

seconds=${FUZZ_SECONDS:-10}
targets=${FUZZ_TARGETS:-fuzz-config fuzz-heapdump fuzz-layout fuzz-intake fuzz-resume fuzz-xl-front fuzz-cli}
fuzz_jobs=${FUZZ_JOBS:-$jobs}
case $seconds in *[!0-9]*|'') echo "Bail out! FUZZ_SECONDS=$seconds: expected whole seconds"; exit 1 ;; esac

ASAN_CFLAGS="-g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all -fsanitize=fuzzer-no-link"
ASAN_LDFLAGS="-fsanitize=address,undefined"
require_clang "-fsanitize=address,undefined,fuzzer" \
	'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { return 0; }'
# A smaller quarantine than ASan's 256 MiB: a run frees and allocates a
# whole fake host, and fresh pages for each cost fuzz-intake a third of
# its speed.
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:quarantine_size_mb=16}
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export ASAN_OPTIONS UBSAN_OPTIONS

# Per target: its seeds, each regression input, the fuzzing run.
plan=1
for t in $targets; do
	r=$(find "$srcdir/tests/fuzz/regressions/$t" -type f 2>/dev/null | grep -c .)
	plan=$((plan + 1 + r + (seconds > 0)))
done
echo "1..$plan"
bins=
for t in $targets; do bins="$bins tests/fuzz/$t"; done
if sanitize_build asan "$ASAN_CFLAGS" "$ASAN_LDFLAGS" $bins; then
	ok "libFuzzer targets built with -fsanitize=fuzzer,address,undefined, no warnings"
else
	not_ok "libFuzzer targets built with -fsanitize=fuzzer,address,undefined, no warnings"
	tail -n 40 "$build_log" | diag
fi

work=$abs_top_builddir/tests/fuzz/work
corpus=$srcdir/tests/fuzz/corpus
regressions=$srcdir/tests/fuzz/regressions

# The seed files of TARGET: its own, and the repository's real files.
seed_files() {
	find "$corpus/$1" -type f
	case $1 in
	fuzz-config)
		find "$srcdir/config" "$srcdir/tests/unit/bad-configs" -name '*.conf'
		ls "$srcdir"/tests/unit/data/*.conf ;;
	fuzz-heapdump) echo "$srcdir/tests/unit/data/heap-dump-sample.txt" ;;
	esac
}

# A run's report without libFuzzer's own frames and input dumps, or its
# last lines.
fuzz_excerpt() {
	sed -n '/==[0-9]*==ERROR\|runtime error:\|fuzz: invariant broken\|ALARM\|out-of-memory/,/^SUMMARY/p' "$1" |
		grep -a -v ' in fuzzer::\|__sanitizer_print_stack_trace\|libc\.so\|libc_start\| in _start \|pthread_kill\|raise signal\| in abort \|^NOTE: \|^ *Combine libFuzzer' |
		head -n 40 | grep -a . || tail -n 20 "$1"
}

# Just what went wrong: the invariant, or the report's first line and
# the first frames below it.
fuzz_reason() {
	awk '/fuzz: invariant broken|ERROR: libFuzzer: (timeout|out-of-memory)/ && !seen {
			seen = 1; print; next
		}
		/runtime error:|==ERROR: [A-Za-z]*Sanitizer/ && !seen { seen = 1; frames = 2; print; next }
		frames > 0 && /^ *#[0-9]+ / && !/ in fuzzer::|__sanitizer_|__interceptor_|libc\.so/ {
			print; frames--
		}' "$1"
}

# Replay, then fuzz, TARGET; TAP lines (numbered later) into work/TARGET.tap.
fuzz_target() {
	t=$1 bin=$abs_top_builddir/build-asan/tests/fuzz/$1 dir=$work/$1
	rm -rf "$dir/artifacts" && mkdir -p "$dir/corpus" "$dir/artifacts" || return
	: > "$dir.tap"
	files=$(seed_files "$t" 2>/dev/null | sort)
	nfiles=$(echo "$files" | grep -c .)
	fixed=$(find "$regressions/$t" -type f 2>/dev/null | sort)
	fuzz_from=$files
	if [ ! -x "$bin" ] || [ "$nfiles" -eq 0 ]; then
		why=$([ -x "$bin" ] && echo "no seed inputs in $corpus/$t" || echo "not built")
		for i in x $fixed $([ "$seconds" -gt 0 ] && echo y); do
			echo "not ok - $t: $why" >> "$dir.tap"
		done
		return
	fi
	# shellcheck disable=SC2086
	if "$bin" -timeout=30 -rss_limit_mb=2048 $files > "$dir/replay.log" 2>&1; then
		echo "ok - $t: $nfiles seed inputs run cleanly" >> "$dir.tap"
	else
		{
			echo "not ok - $t: a seed input fails"
			fuzz_excerpt "$dir/replay.log" | diag
			echo "#   whole log: $dir/replay.log"
		} >> "$dir.tap"
	fi
	# One by one: libFuzzer stops at the first failing input.
	for f in $fixed; do
		if "$bin" -timeout=30 -rss_limit_mb=2048 "$f" > "$dir/regression.log" 2>&1; then
			echo "ok - $t: regression ${f##*/regressions/} passes" >> "$dir.tap"
			fuzz_from="$fuzz_from $f"
		else
			{
				echo "not ok - $t: regression ${f##*/regressions/} fails again"
				fuzz_reason "$dir/regression.log" | diag
				echo "#   reproduce: FUZZ_VERBOSE=1 $bin $f"
			} >> "$dir.tap"
		fi
	done
	[ "$seconds" -gt 0 ] || return
	# Reading the corpus back is part of the time: past 1000 inputs
	# (fuzz-intake reads some 30 a second), start again from the seeds.
	if [ "$(find "$dir/corpus" -type f | grep -c .)" -gt 1000 ]; then
		rm -rf "$dir/corpus" && mkdir "$dir/corpus" || return
	fi
	# libFuzzer takes directories: the seeds and the regressions that pass
	# join what earlier runs found (a failing one would only stop it again).
	# shellcheck disable=SC2086
	cp -f $fuzz_from "$dir/corpus/" || return
	# shellcheck disable=SC2086
	"$bin" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 -max_len=8192 \
		-print_final_stats=1 -artifact_prefix="$dir/artifacts/" \
		"$dir/corpus" > "$dir/fuzz.log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/fuzz.log")
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$dir/fuzz.log")
	cov=$(sed -n 's/^#[0-9]*[[:space:]]*DONE[[:space:]]*\(cov: [0-9]*\).*\(corp: [0-9]*\).*/\1, \2/p' "$dir/fuzz.log")
	artifact=$(ls "$dir/artifacts" 2>/dev/null | head -n 1)
	if [ $rc -eq 0 ] && [ -z "$artifact" ]; then
		echo "ok - $t: fuzzed $seconds s, ${runs:-?} runs (${rate:-?}/s, ${cov:-no stats}), no finding" >> "$dir.tap"
	else
		{
			echo "not ok - $t: fuzzing failed (exit $rc) after ${runs:-?} runs"
			fuzz_excerpt "$dir/fuzz.log" | diag
			if [ -n "$artifact" ]; then
				echo "#   input: $dir/artifacts/$artifact"
				echo "#   reproduce: FUZZ_VERBOSE=1 $bin $dir/artifacts/$artifact"
				echo "#   once fixed, keep it: cp $dir/artifacts/$artifact $regressions/$t/"
			fi
			echo "#   whole log: $dir/fuzz.log"
		} >> "$dir.tap"
	fi
}

mkdir -p "$work" || exit 1
running=0
for t in $targets; do
	fuzz_target "$t" &
	running=$((running + 1))
	if [ $running -ge "$fuzz_jobs" ]; then
		wait
		running=0
	fi
done
wait
for t in $targets; do
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "${line#ok - }" ;;
		"not ok - "*) not_ok "${line#not ok - }" ;;
		*) echo "$line" ;;
		esac
	done < "$work/$t.tap"
done
[ $failed -eq 0 ]
