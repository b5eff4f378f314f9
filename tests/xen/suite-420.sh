#!/bin/sh
# make check's real-Xen suite on Debian 13's Xen 4.20 (issue 17), last
# boot: the core scenarios again (SIGKILL at each kill moment, teardowns,
# zombies, orphans, policy, the client and the memory hand-off) on 4.20's
# hypervisor, xenstored and libxl, then systemd/40-package's cases that
# depend on the release, with Debian 13's systemd 257 and the packages
# root-420.sh built and linted in the root (the installed unit through
# its systemd-analyze verify and security).  The project is built inside
# a Debian 13 root (tests/xen/make-root.sh: made from the host's mirror
# on the first run, 4 to 7 minutes, early by scripts/quickstart check;
# cached in the build tree after).  One systemd boot for both: a second
# boot cost some 90 s, and the core scenarios need nothing that systemd
# as PID 1 changes (its xenreaperd unit is there, not started).  The TAP
# names carry the Xen dom0 saw ("xen-4.20.5-pre 20-daemon: ...").
# XENBENCH=no skips it.
[ "${XENBENCH:-yes}" = no ] && { echo "1..0 # SKIP XENBENCH=no"; exit 0; }
b=${abs_top_builddir:-$(pwd)}
# 3 CPUs: the policy scenario moves one into a second cpupool; with two,
# the package's dpkg runs that stop and start services took up to twice
# as long (147 s against 75 s for xen-utils-common's, one run each).  Five
# SIGKILL rounds, each of 55-faults' five kill moments once, as on 4.17;
# first, as on 4.17: after the six others its rounds took 100 s longer.
# No 21-parallel (86 s of this boot): every round of 55-faults has three
# teardowns at once on 4.20's libxl and xenstored, and 21-parallel's
# rounds run on 4.17 (`xenbench --xen 4.20 parallel` runs it here).
# XB_PACKAGE_CASES=release: the cases that depend on the release, not the
# maintainer scripts' own logic (the Debian 12 boot runs the upgrade too).
# Scenarios named as arguments run instead (make check-420-package: package).
[ $# -gt 0 ] || set -- faults daemon zombie orphan policy client handoff package
exec "$(dirname "$0")/xenbench" --systemd --xen 4.20 --smp 3 --timeout 2400 --boot-timeout 400 \
	--debs "$b/tests/xen/debs-4.20" --env XB_FAULT_ROUNDS=5 --env XB_PACKAGE_CASES=release \
	--log "$b/tests/xen/xenbench-4.20.log" \
	--builddir "$b" "$@"
