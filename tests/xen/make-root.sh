#!/bin/sh
# make-root.sh: a Debian dom0 root for the real-Xen bench, made on the host
# with mmdebstrap, and the project built inside it against that root's
# libxen, so that xenbench --xen VERSION can boot that Debian's hypervisor
# and kernel with this root shared into dom0 in place of the host's.
#
# usage: make-root.sh SUITE DIR            make (or reuse) the root in DIR
#        make-root.sh --build DIR BUILDDIR configure and build the project
#                                          inside DIR, into BUILDDIR
#        make-root.sh --debs DIR OUTDIR    build the Debian packages inside
#                                          DIR (tests/xen/build-deb there:
#                                          dpkg-buildpackage, then lintian)
#                                          into OUTDIR
#
# The root comes from the mirror this machine's apt already uses (the first
# URIs: of /etc/apt/sources.list.d/*.sources, else of sources.list), with
# the suite named here: the machine's own apt sources are not changed.  It
# holds the suite's Xen (hypervisor, utilities, xenstore-utils, libxen-dev),
# its kernel, busybox-static and what the core scenarios run in dom0, and
# the project's build dependencies (scripts/install-deps, debian/control).
# DIR/.xenreaper-root says what the root was made of; a second run with the
# same suite, mirror and packages reuses DIR without fetching anything.
# It is made in DIR.new and renamed, so an interrupted run leaves no root
# that looks whole.  Two runs for one DIR take turns (DIR.lock).
#
# --build bind-mounts the source tree and BUILDDIR into DIR at the paths
# they have on the host, so the build tree's absolute paths are the same on
# the host, in the chroot and in dom0 (where xenbench shares them at those
# paths too).  A source tree configured in tree (the host's own build)
# cannot also be built out of tree, so then what git tracks, and leaves
# unignored, is copied to BUILDDIR/src and built from there.
# Prints what it did and how long it took; exits 0, 1 on failure, 2 on
# usage.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(cd "$here/../.." && pwd)
usage() { echo "usage: make-root.sh SUITE DIR | --build DIR BUILDDIR | --debs DIR OUTDIR" >&2; exit 2; }
die() { echo "make-root.sh: $*" >&2; exit 1; }
# The heavy work (mmdebstrap, the builds in the chroot) in the idle
# scheduling and I/O classes: make check runs it beside a boot, which a
# niced build still slowed about fourfold (16-scrub-exact 84 s, 11 alone;
# 20-daemon 421 s, a check missing its bound), an idle one much less (32
# s; 172 s, passing), the build itself 15 % slower.  Alone, it runs at
# full speed.
idle() { chrt -i 0 ionice -c 3 nice -n 19 "$@"; }

# What dom0 and the build need, beside the suite's Xen (added per suite).
packages="linux-image-amd64 xenstore-utils libxen-dev
	busybox-static cpio kmod xz-utils gzip psmisc procps iproute2 bridge-utils
	strace valgrind curl ca-certificates
	build-essential autoconf automake libtool pkg-config
	libinih-dev libsystemd-dev mandoc systemd systemd-sysv debhelper lintian
	clang llvm prometheus"

# The suite's Xen (Debian names its packages by Xen's major.minor), and
# the clang whose sanitizer runtimes the unit suite's sub-builds link.
xen_of_suite() {
	case $1 in
	bookworm) echo 4.17 ;;
	trixie) echo 4.20 ;;
	*) return 1 ;;
	esac
}
clang_rt_of_suite() {
	case $1 in
	bookworm) echo libclang-rt-14-dev ;;
	trixie) echo libclang-rt-19-dev ;;
	esac
}
# systemd.pc, which debian/rules reads the unit directory from: in systemd
# itself up to Debian 12, in systemd-dev from 13.
systemd_pc_of_suite() {
	case $1 in
	trixie) echo systemd-dev ;;
	esac
}

# The mirror the machine's apt uses: deb822 sources first, then one-line.
host_mirror() {
	m=$(awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }' /etc/apt/sources.list.d/*.sources 2>/dev/null)
	[ -n "$m" ] || m=$(awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' \
		/etc/apt/sources.list 2>/dev/null)
	[ -n "$m" ] || return 1
	echo "$m"
}

make_root() {
	suite=$1 dir=$2
	xenv=$(xen_of_suite "$suite") || die "no Xen version known for suite '$suite' (known: bookworm 4.17, trixie 4.20)"
	command -v mmdebstrap >/dev/null || die "mmdebstrap is missing: run scripts/install-deps"
	mirror=$(host_mirror) || die "no Debian mirror found in /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list"
	all="xen-hypervisor-$xenv-amd64 xen-utils-$xenv $(clang_rt_of_suite "$suite") $(systemd_pc_of_suite "$suite") $(echo $packages)"
	want="suite=$suite mirror=$mirror xen=$xenv packages=$all"
	if [ -f "$dir/.xenreaper-root" ] && [ "$(cat "$dir/.xenreaper-root")" = "$want" ]; then
		echo "make-root.sh: $dir is a $suite root already (Xen $xenv, from $mirror): reused"
		return 0
	fi
	[ "$(id -u)" = 0 ] || die "making a root needs root (mmdebstrap's root mode)"
	start=$(date +%s)
	rm -rf "$dir.new"
	mkdir -p "$(dirname "$dir")"
	echo "make-root.sh: making a $suite root in $dir from $mirror (Xen $xenv)"
	# No recommends: what dom0 runs is listed.
	idle mmdebstrap --variant=apt --mode=root --format=directory \
		--aptopt='APT::Install-Recommends "false"' \
		--include="$(echo $all | tr ' ' ',')" \
		"$suite" "$dir.new" "$mirror" > "$dir.log" 2>&1 ||
		{ tail -n 30 "$dir.log" >&2; die "mmdebstrap failed (log $dir.log)"; }
	for f in "boot/xen-$xenv-amd64.gz" "usr/lib/xen-$xenv/bin/xenstored" "usr/include/libxl.h"; do
		[ -e "$dir.new/$f" ] || die "the new root has no /$f"
	done
	ls "$dir.new"/boot/vmlinuz-* >/dev/null 2>&1 || die "the new root has no kernel in /boot"
	echo "$want" > "$dir.new/.xenreaper-root"
	rm -rf "$dir"
	mv "$dir.new" "$dir"
	echo "make-root.sh: $suite root made in $(( $(date +%s) - start )) s ($(du -sxm "$dir" | cut -f1) MiB)"
}

# The host paths PATH.. mounted at the same paths inside ROOT, for CMD.
in_root() {
	root=$1 build=$2; shift 2
	mounted=
	unmount() { for m in $mounted; do umount "$m" 2>/dev/null || umount -l "$m"; done; }
	trap unmount EXIT
	for p in /proc /sys /dev "$srcdir" "$build"; do
		mkdir -p "$root$p"
		mount --bind "$p" "$root$p" || die "cannot bind $p into $root"
		mounted="$root$p $mounted"
	done
	idle chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 "$@"
	rc=$?
	unmount; mounted=
	trap - EXIT
	return $rc
}

# root_and_outside ROOT DIR: root and outside set to their absolute paths;
# ROOT must be one that make_root made, DIR (made if missing) outside it.
root_and_outside() {
	root=$(cd "$1" && pwd) || die "no root '$1'"
	[ -f "$root/.xenreaper-root" ] || die "$root is no root made by make-root.sh"
	outside=$(realpath -m "$2")
	case $outside/ in "$root"/*) die "$2 must lie outside the root, not in $root" ;; esac
	mkdir -p "$outside"
}

build_in_root() {
	root_and_outside "$1" "$2"
	build=$outside
	start=$(date +%s)
	# An in-tree configured source tree (a developer's) cannot also be
	# built out of tree: build a copy of what git tracks and leaves
	# unignored, as build-deb does.
	src=$srcdir
	if [ -f "$srcdir/config.status" ]; then
		src=$build/src
		mkdir -p "$src"
		if git -C "$srcdir" rev-parse --git-dir >/dev/null 2>&1; then
			(cd "$srcdir" && git ls-files -z -c -o --exclude-standard | xargs -0 tar -cf - --) | tar -xf - -C "$src"
		else
			die "$srcdir is configured in tree and no git checkout to copy from"
		fi
	fi
	script="set -e; cd '$src'; [ -x configure ] && [ configure -nt configure.ac ] || autoreconf -fi >/dev/null 2>&1
		mkdir -p '$build/obj'; cd '$build/obj'
		[ -f Makefile ] || '$src/configure' -q
		make -j2"
	in_root "$root" "$build" sh -c "$script" > "$build/build.log" 2>&1 ||
		{ tail -n 30 "$build/build.log" >&2; die "the build in $root failed (log $build/build.log)"; }
	warnings=$(grep -c 'warning:' "$build/build.log" || true)
	echo "make-root.sh: built in $root in $(( $(date +%s) - start )) s, $warnings warning(s) (log $build/build.log); tree $build/obj"
}

# debs_in_root ROOT OUTDIR: build-deb run inside ROOT, against its libxen,
# debhelper and lintian, on a copy of what git tracks and leaves unignored
# (the root has no git, and the source tree may be configured in place);
# then the running suite's xen-utils-common package, fetched inside ROOT,
# in OUTDIR/xen for 40-package's reinstall under the diversion.
debs_in_root() {
	root_and_outside "$1" "$2"
	out=$outside
	start=$(date +%s)
	rm -rf "$out/src"; mkdir -p "$out/src"
	(cd "$srcdir" && git ls-files -z -c -o --exclude-standard | xargs -0 tar -cf - --) | tar -xf - -C "$out/src" ||
		die "cannot copy the source tree (git ls-files in $srcdir)"
	in_root "$root" "$out" sh -c "'$out/src/tests/xen/build-deb' '$out'" > "$out/build-deb.log" 2>&1 ||
		{ tail -n 30 "$out/build-deb.log" >&2; die "the packages did not build in $root (log $out/build-deb.log)"; }
	rm -rf "$out/src"
	v=$(chroot "$root" dpkg-query -W -f='${Version}' xen-utils-common 2>/dev/null) || v=
	mkdir -p "$out/xen"
	# mmdebstrap left the root no package lists: fetch them first.
	[ -n "$v" ] && in_root "$root" "$out" sh -c "apt-get update -qq && cd '$out/xen' && apt-get download -qq 'xen-utils-common=$v'" >/dev/null 2>&1 ||
		echo "make-root.sh: no xen-utils-common $v package fetched into $out/xen"
	echo "make-root.sh: $(tail -n 1 "$out/build-deb.log") (inside $root; $(( $(date +%s) - start )) s in all)"
}

case ${1:-} in
--build) [ $# -eq 3 ] || usage; build_in_root "$2" "$3" ;;
--debs) [ $# -eq 3 ] || usage; debs_in_root "$2" "$3" ;;
-*|'') usage ;;
*)	[ $# -eq 2 ] || usage
	# One maker of a root at a time: scripts/quickstart starts one early,
	# and root-420.sh's waits here for it, then reuses what it made.
	mkdir -p "$(dirname "$2")"
	exec 9> "$2.lock"
	flock 9 || die "cannot lock $2.lock"
	make_root "$1" "$2" ;;
esac
