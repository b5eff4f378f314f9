#!/bin/sh
# make check's third real-Xen boot: dom0 with systemd as PID 1 and the
# real xenreaperd.service.  40-package runs its upgrade cases: the remove
# that waits for accepted teardowns, and its reinstall, are
# test-maintscripts.sh's in make check (`xenbench --systemd --env
# XB_PACKAGE_CASES=all package` runs them on real Xen, about 100 s more).
# XENBENCH=no skips it.
[ "${XENBENCH:-yes}" = no ] && { echo "1..0 # SKIP XENBENCH=no"; exit 0; }
# The packages prebuild.sh built, unless a source they are made of changed
# since (then xenbench builds them again).
b=${abs_top_builddir:-$(pwd)}
src=$(cd "$(dirname "$0")/../.." && pwd)
deb=$(ls "$b"/tests/xen/debs-4.17/xenreaper_*.deb 2>/dev/null | head -n 1)
debs=
[ -n "$deb" ] && [ -z "$(find "$src"/daemon "$src"/libxl-hook "$src"/debian "$src"/units "$src"/config \
	"$src"/man "$src"/configure.ac "$src"/Makefile.am -newer "$deb" -print -quit 2>/dev/null)" ] &&
	debs="--debs $b/tests/xen/debs-4.17"
exec "$(dirname "$0")/xenbench" --systemd --timeout 1800 --boot-timeout 400 --env XB_PACKAGE_CASES=upgrade \
	$debs --log "$b/tests/xen/xenbench-systemd.log" --builddir "$b"
