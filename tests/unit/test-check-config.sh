#!/bin/sh
# `xenreaperd --check-config FILE` on every bad policy file in
# tests/unit/bad-configs: exit status 1, and the error names the expected
# line ("# expect-line: N") and says what was wrong ("# expect: TEXT").
# Then the shipped default file passes with status 0.
srcdir=${srcdir:-.}
daemon=${abs_top_builddir:-.}/daemon/xenreaperd
n=0 failed=0
for f in "$srcdir"/tests/unit/bad-configs/*.conf; do
	line=$(sed -n 's/^# expect-line: //p' "$f")
	want=$(sed -n 's/^# expect: //p' "$f")
	out=$("$daemon" --check-config "$f" 2>&1 >/dev/null); rc=$?
	n=$((n + 1))
	if [ $rc -eq 1 ] && printf '%s\n' "$out" | grep -F "$f:$line: " | grep -qF "$want"; then
		echo "ok $n - $(basename "$f"): refused at line $line"
	else
		failed=$((failed + 1))
		echo "not ok $n - $(basename "$f"): want exit 1 and '$f:$line: ...$want...'"
		printf '%s\n' "exit $rc" "$out" | sed 's/^/#   /'
	fi
done
n=$((n + 1))
if "$daemon" --check-config "$srcdir/config/xenreaper.conf" >/dev/null 2>&1; then
	echo "ok $n - the shipped config/xenreaper.conf passes"
else
	failed=$((failed + 1)); echo "not ok $n - the shipped config/xenreaper.conf passes"
fi
n=$((n + 1))
if "$daemon" --check-config /nonexistent/xenreaper.conf 2>&1 | grep -q 'No such file'; then
	echo "ok $n - a missing file named on the command line is an error"
else
	failed=$((failed + 1)); echo "not ok $n - a missing file named on the command line is an error"
fi
echo "1..$n"
[ $failed -eq 0 ]
