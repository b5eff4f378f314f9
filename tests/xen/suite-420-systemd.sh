#!/bin/sh
# The package on Debian 13's Xen 4.20: systemd/40-package in a systemd
# dom0 booted on the 4.20 hypervisor from the Debian 13 root, with the
# packages root-420.sh built and linted inside that root (systemd 257:
# the installed unit through its systemd-analyze verify and security).
# Three vCPUs, as the 4.20 core boot: with two, its dpkg runs that stop
# and start services took up to twice as long (147 s against 75 s for
# xen-utils-common's, one run each).  XB_PACKAGE_CASES=release: the cases
# that depend on the release, not the maintainer scripts' own logic (the
# Debian 12 boot runs the upgrade too).
# XENBENCH=no skips it.
[ "${XENBENCH:-yes}" = no ] && { echo "1..0 # SKIP XENBENCH=no"; exit 0; }
b=${abs_top_builddir:-$(pwd)}
exec "$(dirname "$0")/xenbench" --systemd --xen 4.20 --smp 3 --timeout 1500 --boot-timeout 400 \
	--debs "$b/tests/xen/debs-4.20" --env XB_PACKAGE_CASES=release \
	--log "$b/tests/xen/xenbench-systemd-4.20.log" \
	--builddir "$b" package
