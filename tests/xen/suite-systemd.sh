#!/bin/sh
# make check's second real-Xen boot: dom0 with systemd as PID 1 and the
# real xenreaperd.service.  XENBENCH=no skips it.
[ "${XENBENCH:-yes}" = no ] && { echo "1..0 # SKIP XENBENCH=no"; exit 0; }
exec "$(dirname "$0")/xenbench" --systemd --builddir "${abs_top_builddir:-$(pwd)}"
