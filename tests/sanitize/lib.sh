# lib.sh: the clang sub-builds behind tests/sanitize/*.sh and
# tests/fuzz/run-fuzz.sh; sourced, not run.  TAP helpers too.
#
# A sub-build is the same source tree built again with CC=clang and
# sanitizer flags in $abs_top_builddir/build-KIND, while the main build
# stays on gcc.  configure refuses a VPATH build from a source tree that is
# itself configured (quickstart builds in place), so the sources are first
# copied by `make distdir` (exactly what the tarball holds) into
# build-KIND/src, and build-KIND is a VPATH build of that copy: configured
# once, then only brought up to date.  The main build's make
# variables never leak in (MAKEFLAGS is dropped), so `make check TESTS=...`
# or CFLAGS=... given to the outer make cannot change what is run here.

srcdir=${srcdir:-.}
abs_top_builddir=${abs_top_builddir:-$(pwd)}
MAKE=${MAKE:-make}
jobs=$(nproc 2>/dev/null || echo 1)

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
diag() { sed 's/^/#   /'; }

# make without anything inherited from the outer make.
submake() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES $MAKE "$@"
}

# Skip the whole test (TAP plan 0) unless clang links FLAGS (a program of
# SOURCE, default an empty main).
require_clang() {
	probe=$(mktemp "${TMPDIR:-/tmp}/sanitize-probe.XXXXXX") || exit 1
	if ! command -v clang >/dev/null 2>&1; then
		echo "1..0 # SKIP clang is not installed (sh scripts/install-deps, or apt-get install clang libclang-rt-14-dev llvm)"
		rm -f "$probe"; exit 0
	fi
	source='int main(void) { return 0; }'
	[ $# -gt 1 ] && source=$2
	if ! echo "$source" | clang $1 -x c - -o "$probe" >/dev/null 2>&1; then
		echo "1..0 # SKIP clang cannot link $1 (apt-get install libclang-rt-14-dev)"
		rm -f "$probe"; exit 0
	fi
	rm -f "$probe"
	# Reports name files and lines only with a symbolizer.
	if [ -z "${ASAN_SYMBOLIZER_PATH:-}" ] && command -v llvm-symbolizer >/dev/null 2>&1; then
		ASAN_SYMBOLIZER_PATH=$(command -v llvm-symbolizer)
		export ASAN_SYMBOLIZER_PATH
	fi
}

# sanitize_make KIND ARGS...: make ARGS in build-KIND, one make at a time
# (tests/sanitize/asan.sh and tests/fuzz/run-fuzz.sh share build-asan).
sanitize_make() {
	kind=$1
	shift
	(
		flock 9 &&
		cd "$abs_top_builddir/build-$kind" &&
		submake -s -j"$jobs" "$@"
	) 9>"$abs_top_builddir/build-$kind.lock"
}

# sanitize_sync KIND: build-KIND/src made equal to what `make distdir`
# gives now, touching only what changed (a test may be reading the rest),
# changed files stamped now so make rebuilds from them; a changed configure
# or Makefile.in starts build-KIND afresh.  Under the sub-build's lock.
sanitize_sync() {
	sub=$abs_top_builddir/build-$1 new=$abs_top_builddir/build-$1.new
	rm -rf "$new"
	(cd "$abs_top_builddir" && submake -s distdir distdir="build-$1.new") || return 1
	if [ -d "$sub/src" ] && ! { cmp -s "$new/configure" "$sub/src/configure" &&
				    cmp -s "$new/Makefile.in" "$sub/src/Makefile.in"; }; then
		rm -rf "$sub"
	fi
	if [ ! -d "$sub/src" ]; then
		mkdir -p "$sub" && mv "$new" "$sub/src"
		return
	fi
	(cd "$new" && find . -type f) | while IFS= read -r f; do
		cmp -s "$new/$f" "$sub/src/$f" && continue
		mkdir -p "$(dirname "$sub/src/$f")" && cp -f "$new/$f" "$sub/src/$f" || exit 1
	done || return 1
	(cd "$sub/src" && find . -type f) | while IFS= read -r f; do
		[ -e "$new/$f" ] || rm -f "$sub/src/$f"
	done
	rm -rf "$new"
}

# sanitize_build KIND CFLAGS LDFLAGS TARGETS...: bring build-KIND up to date
# and make TARGETS there; 0 on success, else the reason is in $build_log.
# Warnings are errors here: clang must find nothing gcc did not.
sanitize_build() {
	kind=$1 cflags=$2 ldflags=$3
	shift 3
	sub=$abs_top_builddir/build-$kind
	build_log=$sub.log
	(
		flock 9 || exit 1
		# New flags need a new configure.
		if [ -f "$sub/Makefile" ] && [ "$(cat "$sub/flags" 2>/dev/null)" != "$cflags | $ldflags" ]; then
			rm -rf "$sub" || exit 1
		fi
		sanitize_sync "$kind" || exit 1
		if [ ! -f "$sub/Makefile" ]; then
			(cd "$sub" && ./src/configure -q CC=clang CFLAGS="$cflags" LDFLAGS="$ldflags") ||
				exit 1
			echo "$cflags | $ldflags" > "$sub/flags"
		fi
		cd "$sub" && submake -s -j"$jobs" CFLAGS="$cflags -Werror" "$@"
	) 9>"$sub.lock" >"$build_log" 2>&1
}

# The sanitizer's report in LOG (a test's log), else its last lines.
report_excerpt() {
	grep -v -E '^(ok|PASS:) ' "$1" > "$1.excerpt"
	sed -n '/==[0-9]*==ERROR\|WARNING: ThreadSanitizer\|runtime error:\|LeakSanitizer/,$p' \
		"$1.excerpt" | head -n 50 | grep . || tail -n 30 "$1.excerpt"
	rm -f "$1.excerpt"
}

# sanitize_report KIND WHAT TESTS...: one TAP line per test run by
# `make check` in build-KIND, from its .trs; a failure shows its report.
sanitize_report() {
	kind=$1 what=$2
	shift 2
	for t in "$@"; do
		base=$abs_top_builddir/build-$kind/${t%.sh}
		result=$(sed -n 's/^:global-test-result: //p' "$base.trs" 2>/dev/null)
		case $result in
		PASS) ok "$t under $what" ;;
		SKIP) n=$((n + 1)); echo "ok $n - $t under $what # SKIP" ;;
		*)
			not_ok "$t under $what (${result:-not run})"
			[ -f "$base.log" ] && report_excerpt "$base.log" | diag
			echo "#   whole log: $base.log"
			;;
		esac
	done
}

# sanitize_repeat KIND WHAT TEST: run TEST (a program in build-KIND) again
# $SANITIZE_REPEAT times, until the first failure.  A race between threads
# shows only in some schedules; one pass alone proves little.
sanitize_repeat() {
	kind=$1 what=$2 t=$3
	count=${SANITIZE_REPEAT:-20}
	log=$abs_top_builddir/build-$kind/$t.repeat.log
	i=0
	while [ $i -lt "$count" ]; do
		i=$((i + 1))
		if ! (cd "$abs_top_builddir/build-$kind" && srcdir=./src "./$t") >"$log" 2>&1; then
			not_ok "$t $count more times under $what: run $i failed"
			report_excerpt "$log" | diag
			echo "#   whole log: $log"
			return
		fi
	done
	ok "$t $count more times under $what (threads interleave differently each run)"
}
