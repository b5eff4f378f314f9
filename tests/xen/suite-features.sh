#!/bin/sh
# make check's real-Xen suite, second boot: console cost of scrub probes,
# metrics, the entry points and the client (35-49), then the faults
# (SIGKILL in 5 rounds, stop mid-teardown, a failing destroy) and the
# daemon under AddressSanitizer (50-99).  One boot, not two: a boot and
# its set-up cost some 25 s.  50-early-start goes first, as its early hook
# starts a daemon before xenstored that no other scenario could run
# beside.  XENBENCH=no skips it.
[ "${XENBENCH:-yes}" = no ] && { echo "1..0 # SKIP XENBENCH=no"; exit 0; }
dir=$(dirname "$0")
features=$(ls "$dir"/scenarios/3[5-9]-*.sh "$dir"/scenarios/4[0-9]-*.sh | xargs -n1 basename | sed 's/\.sh$//')
# 58-guests (the real guests by hand) is in make check-guests: make check
# tears the same kinds down under the unit (systemd/45-guests-unit), beside
# plain xl in that boot, and 58-guests would add three minutes here.
faults=$(ls "$dir"/scenarios/[5-9][0-9]-*.sh | xargs -n1 basename | sed 's/\.sh$//' |
	grep -v -e '^50-early-start$' -e '^58-guests$')
# Five SIGKILL rounds (55-faults), each kill moment once; the 4.20 boot
# (suite-420.sh) runs each once more, on the other Xen.
exec "$dir/xenbench" --timeout 2400 --boot-timeout 400 --env XB_FAULT_ROUNDS=5 \
	--log "${abs_top_builddir:-.}/tests/xen/xenbench-features.log" \
	--builddir "${abs_top_builddir:-$(pwd)}" 50-early-start $features $faults
