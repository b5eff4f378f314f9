#!/bin/sh
# make check's third real-Xen boot: dom0 with systemd as PID 1 and the
# real xenreaperd.service.  40-package runs its upgrade cases: the remove
# that waits for accepted teardowns, and its reinstall, are
# test-maintscripts.sh's in make check (`xenbench --systemd --env
# XB_PACKAGE_CASES=all package` runs them on real Xen, about 100 s more).
# XENBENCH=no skips it.
[ "${XENBENCH:-yes}" = no ] && { echo "1..0 # SKIP XENBENCH=no"; exit 0; }
exec "$(dirname "$0")/xenbench" --systemd --timeout 1800 --boot-timeout 400 --env XB_PACKAGE_CASES=upgrade \
	--log "${abs_top_builddir:-.}/tests/xen/xenbench-systemd.log" \
	--builddir "${abs_top_builddir:-$(pwd)}"
