#!/bin/sh
# make check's last real-Xen boot: dom0 with systemd as PID 1 and the real
# xenreaperd.service.  XENBENCH=no skips it.
[ "${XENBENCH:-yes}" = no ] && { echo "1..0 # SKIP XENBENCH=no"; exit 0; }
exec "$(dirname "$0")/xenbench" --systemd --timeout 1800 --boot-timeout 400 \
	--log "${abs_top_builddir:-.}/tests/xen/xenbench-systemd.log" \
	--builddir "${abs_top_builddir:-$(pwd)}"
