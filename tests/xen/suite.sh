#!/bin/sh
# make check's entry to the real-Xen suite: every scenario in one boot.
# XENBENCH=no skips it (exit 77), e.g. on a machine that cannot run QEMU.
[ "${XENBENCH:-yes}" = no ] && { echo "1..0 # SKIP XENBENCH=no"; exit 0; }
# 3 CPUs: the policy scenario moves one into a second cpupool.
exec "$(dirname "$0")/xenbench" --smp 3 --builddir "${abs_top_builddir:-$(pwd)}"
