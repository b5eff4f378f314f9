#!/bin/sh
# make check's real-Xen suite, second boot: first the faults (a start
# before xenstored, SIGKILL in 5 rounds, stuck teardowns, stop
# mid-teardown, a failing destroy, the daemon under AddressSanitizer:
# 50-99), then the features (console cost of scrub probes, metrics, the
# entry points and the client: 35-49).  One boot for both: each boot
# costs its start.  50-early-start comes first, its hook running before
# xenstored; the fault rounds come before the features, as on 4.20, where
# after six other scenarios they took 100 s longer.
# XENBENCH=no skips it.
[ "${XENBENCH:-yes}" = no ] && { echo "1..0 # SKIP XENBENCH=no"; exit 0; }
dir=$(dirname "$0")
# 58-guests (the real guests by hand) is in make check-guests: make check
# tears the same kinds down under the unit (systemd/45-guests-unit), beside
# plain xl in that boot, and 58-guests would add three minutes here.
# One ls per group: ls sorts what it is given, and the faults come first.
names=$( { ls "$dir"/scenarios/[5-9][0-9]-*.sh; ls "$dir"/scenarios/3[5-9]-*.sh "$dir"/scenarios/4[0-9]-*.sh; } |
	xargs -n1 basename | sed 's/\.sh$//' | grep -v '^58-guests$')
# Five SIGKILL rounds (55-faults), each kill moment once; the 4.20 boot
# (suite-420.sh) runs each once more, on the other Xen.
exec "$dir/xenbench" --timeout 3600 --boot-timeout 400 --env XB_FAULT_ROUNDS=5 \
	--log "${abs_top_builddir:-.}/tests/xen/xenbench-features.log" \
	--builddir "${abs_top_builddir:-$(pwd)}" $names
