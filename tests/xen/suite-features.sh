#!/bin/sh
# make check's real-Xen suite, second boot: console cost of scrub probes,
# metrics, the entry points and the client (30-49).  XENBENCH=no skips it.
[ "${XENBENCH:-yes}" = no ] && { echo "1..0 # SKIP XENBENCH=no"; exit 0; }
dir=$(dirname "$0")
names=$(ls "$dir"/scenarios/3[5-9]-*.sh "$dir"/scenarios/4[0-9]-*.sh 2>/dev/null | xargs -n1 basename | sed 's/\.sh$//')
exec "$dir/xenbench" --timeout 1800 --boot-timeout 400 \
	--log "${abs_top_builddir:-.}/tests/xen/xenbench-features.log" \
	--builddir "${abs_top_builddir:-$(pwd)}" $names
