#!/bin/sh
# The Prometheus alerting rules, config/xenreaper.rules.yml: promtool check
# rules accepts them, promtool test rules passes tests/prom/*.test.yml (a
# host where each alert fires, hosts where it must not), every alert has
# such a test and a paragraph in xenreaper-metrics(7), and every
# xen_teardown_ metric they read is one daemon/metrics.c writes.  Skipped
# without promtool (Debian's prometheus package: scripts/install-deps).
# TAP on stdout.
srcdir=${srcdir:-.}
rules=$srcdir/config/xenreaper.rules.yml
man=$srcdir/man/xenreaper-metrics.7
tmp=${TMPDIR:-/tmp}/test-rules.$$

n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $*"; }
diag() { sed 's/^/# /' "$1"; }
check() {
	what=$1
	shift
	if "$@" > "$tmp/out" 2>&1; then
		ok "$what"
	else
		not_ok "$what"
		diag "$tmp/out"
	fi
}

if ! command -v promtool > /dev/null 2>&1; then
	echo "1..0 # SKIP promtool is not installed (apt-get install prometheus)"
	exit 0
fi
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT

check "promtool check rules accepts $rules" promtool check rules "$rules"
for test in "$srcdir"/tests/prom/*.test.yml; do
	check "promtool test rules: $(basename "$test")" promtool test rules "$test"
done

alerts=$(sed -n 's/^ *- alert: *//p' "$rules")
[ -n "$alerts" ] && ok "the rules define alerts ($(echo $alerts | wc -w))" || not_ok "the rules define alerts"
for alert in $alerts; do
	if grep -q "alertname: $alert\$" "$srcdir"/tests/prom/*.test.yml; then
		ok "$alert has a promtool test"
	else
		not_ok "$alert has a promtool test in tests/prom/"
	fi
	if grep -qx "\.It Sy $alert" "$man"; then
		ok "$alert is documented in xenreaper-metrics(7)"
	else
		not_ok "$alert is documented in xenreaper-metrics(7) (.It Sy $alert)"
	fi
done

# The daemon's names, not guesses: each one the rules read is written by
# metrics.c (as the start of a quoted sample or HELP name there).
for metric in $(grep -o 'xen_teardown_[a-z_]*' "$rules" | sort -u); do
	if grep -q "\"$metric[\"{ ]" "$srcdir/daemon/metrics.c"; then
		ok "$metric is written by daemon/metrics.c"
	else
		not_ok "$metric is written by daemon/metrics.c"
	fi
done
echo "1..$n"
