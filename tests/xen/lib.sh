# lib.sh: what scenarios in tests/xen/ share.  Runs inside dom0, sourced by
# each scenario.  Assertions print "XQTAP ok/not ok DESCRIPTION"; xenbench
# on the host numbers them and turns them into TAP.
XB_TOOL=$XB_BUILD/tests/xen/xbtool
XB_DAEMON=$XB_BUILD/daemon/xenreaperd
XB_ROOT=/tool/xenreaper
XB_FAILED=0
# Where xb_daemon_start appends the daemon's output; a scenario may set its
# own before starting the daemon.
XB_DAEMON_LOG=/tmp/xenreaperd.log

xb_ok()      { echo "XQTAP ok $*"; }
xb_not_ok()  { echo "XQTAP not ok $*"; XB_FAILED=$((XB_FAILED + 1)); }
xb_note()    { echo "XQTAP # $*"; }
# xb_phase WHAT: note that WHAT ended, and how long the scenario has run
# (where a long run's time goes).
XB_T0=$(date +%s)
xb_phase()   { xb_note "phase: $* at $(($(date +%s) - XB_T0)) s"; }
# xb_check DESCRIPTION COMMAND...: ok if COMMAND succeeds.
# (Helpers use _xb_ names: sh has no locals, and scenarios use short ones.)
xb_check()   { _xb_desc=$1; shift; if "$@"; then xb_ok "$_xb_desc"; else xb_not_ok "$_xb_desc"; fi; }
# xb_is GOT WANT DESCRIPTION
xb_is() {
	if [ "$1" = "$2" ]; then xb_ok "$3"; else xb_not_ok "$3"; xb_note "  got '$1', want '$2'"; fi
}
# Exit status for the end of a scenario: non-zero if any assertion failed.
xb_done()    { exit $((XB_FAILED > 0)); }

xb_ms()         { $XB_TOOL ms; }
# xb_mono_ms: now on the monotonic clock that xbtool stamp's lines carry.
xb_mono_ms()    { echo | $XB_TOOL stamp | cut -d' ' -f1; }
# xb_time VAR CMD...: run CMD, set VAR to the ms it blocked (its own start-up
# included, xbtool's not); returns CMD's status.
xb_time() {
	_xb_var=$1; shift
	$XB_TOOL time /tmp/xb_time.ms "$@"; _xb_rc=$?
	eval "$_xb_var=\$(cat /tmp/xb_time.ms)"
	return $_xb_rc
}
xb_free_pages() { $XB_TOOL free-pages; }
# xb_window FILE FROM TO: the values of FILE's "WALL_MS VALUE" lines inside
# it; xb_pct P: the P-th percentile of the numbers on stdin (nearest rank).
xb_window() { awk -v a=$2 -v b=$3 '$1 >= a && $1 <= b { print $2 }' $1; }
xb_pct() { sort -n | awk -v p=$1 '{ v[NR] = $1 } END { if (!NR) exit 1; i = int((p * NR + 99) / 100); print v[i < 1 ? 1 : i] }'; }
# xb_ticks PID / xb_tree_ticks PID: a process's CPU ticks (user and
# system), without and with those of the children it has waited for.
xb_ticks() { sed 's/.*) //' /proc/$1/stat | awk '{ print $12 + $13 }'; }
xb_tree_ticks() { sed 's/.*) //' /proc/$1/stat | awk '{ print $12 + $13 + $14 + $15 }'; }

# _xb_create XL-CREATE-FLAGS NAME MIB [CONFIG-LINE...]: a one-vCPU PV guest
# with the dom0 kernel; prints its domid.
_xb_create() {
	_xb_flags=$1 _xb_name=$2 _xb_mib=$3; shift 3
	{
		echo "name = \"$_xb_name\""
		echo "type = \"pv\""
		echo "kernel = \"$XB_KERNEL\""
		echo "memory = $_xb_mib"
		echo "maxmem = $_xb_mib"
		echo "vcpus = 1"
		for _xb_line in "$@"; do echo "$_xb_line"; done
	} > /tmp/$_xb_name.cfg
	xl create $_xb_flags /tmp/$_xb_name.cfg >/tmp/$_xb_name.create.log 2>&1 || {
		cat /tmp/$_xb_name.create.log >&2; return 1; }
	xl domid "$_xb_name"
}

# xb_guest NAME MIB [CONFIG-LINE...]: create a paused PV guest; prints its domid.
# Paused is enough: `xl create -p` allocates and populates all its memory.
xb_guest() { _xb_create -p "$@"; }

# xb_initrd NAME COMMAND: a tiny busybox initramfs whose init runs COMMAND
# (busybox applets by name); prints its path.  Its /sbin/poweroff, which
# the kernel runs when dom0 asks the guest to power off (xl shutdown), is
# there before init runs, so such a request is never lost.
xb_initrd() {
	if [ ! -f /tmp/$1.cpio.gz ]; then
		rm -rf /tmp/$1.d; mkdir -p /tmp/$1.d/bin /tmp/$1.d/sbin
		cp /bin/busybox /tmp/$1.d/bin/busybox
		printf '#!/bin/busybox sh\n/bin/busybox --install -s /bin\nexport PATH=/bin\n%s\n' "$2" > /tmp/$1.d/init
		printf '#!/bin/busybox sh\nexec /bin/busybox poweroff -f\n' > /tmp/$1.d/sbin/poweroff
		chmod +x /tmp/$1.d/init /tmp/$1.d/sbin/poweroff
		(cd /tmp/$1.d && find . | cpio -o -H newc 2>/dev/null | gzip -1) > /tmp/$1.cpio.gz
	fi
	echo /tmp/$1.cpio.gz
}

# xb_guest_booting NAME MIB INITRD [CONFIG-LINE...]: like xb_guest, but
# running, with INITRD (from xb_initrd) as its whole userland.
xb_guest_booting() {
	_xb_name=$1 _xb_mib=$2 _xb_initrd=$3; shift 3
	_xb_create "" "$_xb_name" "$_xb_mib" "ramdisk = \"$_xb_initrd\"" \
		'extra = "console=hvc0 rdinit=/init quiet"' "$@"
}

# xb_wait_memory BASELINE_PAGES DESCRIPTION: free memory back to its
# baseline (within 1 MiB: xenstored and the console may hold a page or two).
xb_wait_memory() {
	if _xb_waited=$($XB_TOOL wait-free $(($1 - 256)) 60000); then
		xb_ok "$2 (back after ${_xb_waited} ms)"
	else
		xb_not_ok "$2"; xb_note "  free $(xb_free_pages) pages, baseline $1"
	fi
}

# xb_hold_page VAR DOMID: a dom0 helper (xbtool hold-page) maps a page of
# DOMID and keeps it until killed, as a leftover dom0 process would; VAR is
# set to its pid.  Call it directly, not in $(...): the helper must be the
# scenario's own child, to kill and wait for.  Returns once the page is
# mapped (/tmp/hold.DOMID.ready reads "held"); fails if the helper exits
# first or 10 s pass (its stderr: /tmp/hold.DOMID.err).
xb_hold_page() {
	rm -f /tmp/hold.$2.ready
	$XB_TOOL hold-page $2 /tmp/hold.$2.ready 2>/tmp/hold.$2.err &
	eval "$1=\$!"
	_xb_i=0
	while [ ! -s /tmp/hold.$2.ready ] && kill -0 $! 2>/dev/null && [ $_xb_i -lt 100 ]; do
		sleep 0.1; _xb_i=$((_xb_i + 1))
	done
	test -s /tmp/hold.$2.ready
}

# xb_clients: the build's clients, as the scenarios of the front and the
# library run them: LD_LIBRARY_PATH for libxenreaper, XR the xenreaper
# command, FRONT the xl front.
xb_clients() {
	export LD_LIBRARY_PATH=$XB_BUILD/libxl-hook/.libs
	XR=$XB_BUILD/libxl-hook/.libs/xenreaper
	FRONT=$XB_BUILD/libxl-hook/.libs/xl
}

xb_read()    { xenstore-read "$@" 2>/dev/null; }
xb_state()   { xb_read $XB_ROOT/job/$1/state; }
# xb_request DOMID [UUID]: ask xenreaperd for a teardown, as a client would.
xb_request() { xenstore-write $XB_ROOT/request/$1 "${2:-$($XB_TOOL uuid $1)}"; }
# xb_wait_state DOMID STATE SECONDS: poll the job until it reaches STATE.
xb_wait_state() {
	_xb_i=0
	while [ $_xb_i -lt $(($3 * 10)) ]; do
		[ "$(xb_state $1)" = "$2" ] && return 0
		sleep 0.1; _xb_i=$((_xb_i + 1))
	done
	return 1
}
# xb_wait_node PATH VALUE SECONDS: wait (a xenstore watch, no polling) until
# PATH reads VALUE ('*' any, '-' absent, 'a|b' either); prints the value.
xb_wait_node() {
	_xb_got=$($XB_TOOL wait-node "$1" "$2" $(($3 * 1000))); _xb_rc=$?
	echo "${_xb_got#* }"
	return $_xb_rc
}
# xb_wait_final DOMID SECONDS: wait until the job is done or failed.
xb_wait_final() { xb_wait_node $XB_ROOT/job/$1/state 'done|failed' $2 >/dev/null; }
# xb_uuid_alive UUID: does some domain carry UUID?
xb_uuid_alive() { $XB_TOOL list | awk -v u="$1" '$2 == u { f = 1 } END { exit !f }'; }

# xb_daemon_spawn [ARGS]: start xenreaperd in the background, appending its
# output to $XB_DAEMON_LOG, and return at once; XB_DAEMON_PID is its pid.
# XB_DAEMON_WRAP is a command to run it under (e.g. valgrind: same pid);
# XB_DAEMON_STAMP=1 prefixes each log line with monotonic ms (xbtool stamp).
xb_daemon_spawn() {
	if [ -n "${XB_DAEMON_STAMP:-}" ]; then
		rm -f /tmp/xb-stamp.fifo; mkfifo /tmp/xb-stamp.fifo
		$XB_TOOL stamp < /tmp/xb-stamp.fifo >> $XB_DAEMON_LOG &
		${XB_DAEMON_WRAP:-} $XB_DAEMON "$@" > /tmp/xb-stamp.fifo 2>&1 &
	else
		${XB_DAEMON_WRAP:-} $XB_DAEMON "$@" >> $XB_DAEMON_LOG 2>&1 &
	fi
	XB_DAEMON_PID=$!
}
# xb_daemon_running [SECONDS]: wait until the daemon XB_DAEMON_PID has
# published its pid and daemon/state = running (default 60 s: a guard
# against a daemon that never gets there, not a measure; a start that took
# over 10 s was seen with three emulated machines on two cores, in
# 55-faults, the daemon then running normally).  A killed daemon leaves
# "running" behind, hence the pid first.
xb_daemon_running() {
	$XB_TOOL wait-node $XB_ROOT/daemon/pid $XB_DAEMON_PID $((${1:-60} * 1000)) >/dev/null &&
		$XB_TOOL wait-node $XB_ROOT/daemon/state running $((${1:-60} * 1000)) >/dev/null &&
		return 0
	echo "xenreaperd did not start:" >&2; tail -20 $XB_DAEMON_LOG >&2
	return 1
}
# xb_daemon_start [ARGS]: xb_daemon_spawn, then wait until it runs.
xb_daemon_start() { xb_daemon_spawn "$@"; xb_daemon_running; }
# xb_daemon_start_fresh [ARGS]: xb_daemon_start with no job records left
# by earlier daemons.  A daemon starting over hundreds of them reads them a
# few at a time in its first seconds (reaper_load_history): a bench that
# measures one teardown, or dom0 idle just after the start, would count
# that once-per-start reading as the teardown's (one attribution run read
# 1617 system calls per teardown with it, xenstore requests for nine old
# records among them).  Only while no daemon of ours runs.
xb_daemon_start_fresh() {
	[ -z "${XB_DAEMON_PID:-}" ] || return 1
	xenstore-rm $XB_ROOT/job 2>/dev/null
	xb_daemon_start "$@"
}
xb_daemon_stop() {
	[ -n "${XB_DAEMON_PID:-}" ] || return 0
	kill -TERM $XB_DAEMON_PID 2>/dev/null; wait $XB_DAEMON_PID 2>/dev/null
	XB_DAEMON_PID=
}
# xb_lock_holders: the processes holding xenreaperd's single-instance lock,
# as "pid:comm" (e.g. a libxl destroy child that outlived its daemon).
xb_lock_holders() {
	for _xb_p in $(fuser /run/xenreaperd/xenreaperd.pid 2>/dev/null); do
		printf '%s:%s ' $_xb_p "$(cat /proc/$_xb_p/comm 2>/dev/null)"
	done
}
# xb_until SECONDS COMMAND [ARGS]: until COMMAND succeeds, polled every
# 0.1 s, for what no xenstore watch reports (xb_wait_node is for nodes);
# fails once SECONDS have passed.
xb_until() {
	_xb_end=$(($(date +%s) + $1)); shift
	until "$@"; do
		[ $(date +%s) -ge $_xb_end ] && return 1
		sleep 0.1
	done
}
# xb_wait_log PATTERN SECONDS [FILE]: until the daemon's log (or FILE) has
# a line matching the extended regex PATTERN: what it decided, when the
# decision leaves no node to watch (a domain it does not adopt).
xb_wait_log() { xb_until $2 grep -qE "$1" "${3:-$XB_DAEMON_LOG}" 2>/dev/null; }
# xb_wait_probe_clean FINISHED SECONDS: until a scrub probe made at or
# after FINISHED (a job's finished time) has read no backlog, then 1.1 s
# past that probe, for the metrics write a probe may hold back
# (METRICS_MIN_GAP_MS): the daemon has nothing left to do.  A probe is a
# time, not a state to watch for ("newer than"), hence the polling.  Fails
# if no such probe came within SECONDS (deferred probes come at most once
# a minute, and one that still sees a backlog schedules the next).
xb_probed_clean() {
	awk -v p="$(xb_read $XB_ROOT/scrub/probed)" -v f="$1" -v n="$(xb_read $XB_ROOT/scrub/pages)" \
		'BEGIN { exit !(f != "" && p + 0 >= f + 0 && n == "0") }'
}
xb_wait_probe_clean() {
	xb_until $2 xb_probed_clean "$1" || return 1
	until awk -v p="$(xb_read $XB_ROOT/scrub/probed)" -v now="$(date +%s.%N)" \
		'BEGIN { exit !(now >= p + 1.1) }'; do sleep 0.1; done
}
# On failure, the daemon's log is what explains it.
xb_daemon_log() { sed 's/^/  daemon: /' $XB_DAEMON_LOG | tail -n "${1:-20}"; }

# Benchmarks: the 9p share is read-only, so figures reach the host on the
# serial console.  xb_emit NAME FILE prints FILE as "XQCSV NAME SEQ LINE"
# lines and a closing "XQCSV-END NAME COUNT"; xenbench --bench writes them
# to BUILDDIR/bench-out/NAME only if the scenario ended with status 0 and
# no line went missing on the way.  NAME: [a-z0-9._-] only.
# xb_res_ipis: the resched IPIs dom0 has taken so far, all vCPUs together
# (/proc/interrupts' RES line), for a bench to take a difference of.
# xb_daemon_ready: wait (up to 10 s) until the teardown process the daemon
# keeps ready has the hypervisor open (its libxl context is made just
# after); 1 if none did.
xb_daemon_ready() {
	_i=0
	while [ $_i -lt 100 ]; do
		for _c in $(pgrep -P $XB_DAEMON_PID); do
			ls -l /proc/$_c/fd 2>/dev/null | grep -q /dev/xen/privcmd && return 0
		done
		sleep 0.1; _i=$((_i + 1))
	done
	return 1
}
# xb_trace_targets: strace's -p for the daemon and the processes it has
# already started (strace -f follows only those started once attached).
xb_trace_targets() { echo "-p $XB_DAEMON_PID $(pgrep -P $XB_DAEMON_PID | sed 's/^/-p /' | tr '\n' ' ')"; }
# xb_trace_attached ERR TARGETS: wait (up to 10 s) until strace, its
# stderr in ERR, says it attached to each of TARGETS (xb_trace_targets').
xb_trace_attached() {
	_n=$(($(echo $2 | wc -w) / 2)) _i=0
	while [ "$(grep -c attached $1 2>/dev/null)" -lt $_n ] && [ $_i -lt 100 ]; do sleep 0.1; _i=$((_i + 1)); done
	[ "$(grep -c attached $1 2>/dev/null)" -ge $_n ]
}
# xb_daemon_working: the daemon's children, but for the idle teardown
# processes it keeps ready, whose command line ends in "idle".
xb_daemon_working() {
	for _c in $(pgrep -P $XB_DAEMON_PID); do
		tr '\0' ' ' < /proc/$_c/cmdline 2>/dev/null | grep -Eq '/xenreaper-teardown [a-z]+ idle *$' || echo $_c
	done
}
xb_res_ipis() { awk '$1 == "RES:" { for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i } END { print n + 0 }' /proc/interrupts; }

xb_emit() {
	awk -v n="$1" '{ print "XQCSV " n " " NR " " $0; fflush() }
		NR % 40 == 0 { system("sleep 0.05") }	# let the UART keep up
		END { print "XQCSV-END " n " " NR }' "$2"
}

# --- Real guests (issue 16): the devices admins give their guests.
XB_BRIDGE=xenbr0
# xb_backends: the dom0 backends and the bridge vifs join (Debian's
# vif-bridge adds each vif to it), made if missing.
xb_backends() {
	for _xb_m in loop xen-blkback xen-netback bridge; do modprobe $_xb_m 2>/dev/null; done
	ip link show $XB_BRIDGE >/dev/null 2>&1 || ip link add $XB_BRIDGE type bridge
	ip link set $XB_BRIDGE up
}
# xb_syslog: a syslog daemon for the hotplug scripts' `logger` lines when
# there is no journal (without systemd nothing listens on /dev/log).
xb_syslog() {
	[ -S /dev/log ] && return 0
	busybox syslogd -n -O /tmp/syslog.log &
	# A guard for a syslogd that never binds, not a measure: it takes
	# under a second.
	xb_until 30 test -S /dev/log
}
# xb_fast_hotplug DIR: DIR/block-fast and DIR/vif-fast, hotplug scripts
# (script= in a guest's disk and vif) whose add (online) writes in a
# command or two what Debian's script would, and whose remove (offline),
# the teardown under test, execs Debian's own.  Under emulation Debian's
# block add holds its lock for many seconds: of three guests created in
# parallel, the third's add, queued behind the other two, passed the 40 s
# libxl gives a hotplug script (LIBXL_HOTPLUG_TIMEOUT, fixed at build) and
# was killed.  The adds are setup, not what is tested.
xb_fast_hotplug() {
cat > $1/block-fast <<EOF
#!/bin/bash
case \$1 in add)
	p=\$(xenstore-read "\$XENBUS_PATH/params") || exit 1
	if [ -f "\$p" ]; then
		dev=\$(losetup -f --show "\$p") || exit 1
		xenstore-write "\$XENBUS_PATH/node" "\$dev"
	else
		dev=\$(readlink -f "\$p")
	fi
	exec xenstore-write "\$XENBUS_PATH/physical-device" "\$(stat -L -c %t:%T "\$dev")" \\
		"\$XENBUS_PATH/physical-device-path" "\$dev" "\$XENBUS_PATH/hotplug-status" connected ;;
esac
exec /etc/xen/scripts/block "\$@"
EOF
cat > $1/vif-fast <<EOF
#!/bin/bash
case \$1 in online|add)
	ip link set dev "\$vif" master $XB_BRIDGE up &&
		exec xenstore-write "\$XENBUS_PATH/hotplug-status" connected
	exit 1 ;;
esac
exec /etc/xen/scripts/vif-bridge "\$@"
EOF
	chmod +x $1/block-fast $1/vif-fast
}
# xb_lvm VG FILE MIB: a volume group VG on a loop-backed physical volume of
# MIB on FILE.  LVM_SYSTEM_DIR keeps its backups off the read-only root, and
# with no udev in dom0 lvm makes its own device nodes.
xb_lvm() {
	mkdir -p /tmp/lvm && export LVM_SYSTEM_DIR=/tmp/lvm
	cat > /tmp/lvm/lvm.conf <<EOC
backup { backup = 0 archive = 0 }
activation { udev_sync = 0 udev_rules = 0 monitoring = 0 }
devices { obtain_device_list_from_udev = 0 }
global { use_lvmlockd = 0 }
EOC
	truncate -s ${3}M $2 && _xb_pv=$(losetup -f --show $2) &&
		pvcreate -q $_xb_pv >/dev/null && vgcreate -q $1 $_xb_pv >/dev/null
}
# xb_front_initrd: an initramfs whose init loads blkfront and netfront (the
# dom0 kernel's own modules: guests boot that kernel) and then idles, so
# that the guest's disk and vif connect.
xb_front_initrd() {
	_xb_k=$(uname -r)
	if [ ! -f /tmp/xb-fronts.cpio.gz ]; then
		rm -rf /tmp/xb-fronts.d; mkdir -p /tmp/xb-fronts.d/bin /tmp/xb-fronts.d/lib
		cp /bin/busybox /tmp/xb-fronts.d/bin/busybox
		for _xb_m in xen-blkfront xen-netfront; do
			cp "$(modinfo -n $_xb_m)" /tmp/xb-fronts.d/lib/ || return 1
		done
		printf '#!/bin/busybox sh\n/bin/busybox --install -s /bin\nexport PATH=/bin\n%s\n' \
			'for m in /lib/*.ko*; do insmod $m; done; echo fronts loaded; while :; do sleep 3600; done' \
			> /tmp/xb-fronts.d/init
		chmod +x /tmp/xb-fronts.d/init
		(cd /tmp/xb-fronts.d && find . | cpio -o -H newc 2>/dev/null | gzip -1) > /tmp/xb-fronts.cpio.gz
	fi
	echo /tmp/xb-fronts.cpio.gz
}
# xb_leftovers DOMID [IMAGE...]: what is left in dom0 of domain DOMID after
# its teardown, one line per kind of thing and nothing when nothing is,
# with DOMID written D so that two teardowns' lists compare as text: its
# backend directories (by type), its domain directory, its interfaces and
# bridge ports, the loop devices on IMAGE, its device-model processes.
xb_leftovers() {
	_xb_b=$(for _xb_t in $(xenstore-list /local/domain/0/backend 2>/dev/null); do
		xenstore-list /local/domain/0/backend/$_xb_t/$1 >/dev/null 2>&1 && echo $_xb_t; done | tr '\n' ' ')
	[ -n "$_xb_b" ] && echo "backends in xenstore: $_xb_b"
	xenstore-list /local/domain/$1 >/dev/null 2>&1 && echo "its /local/domain/D directory"
	_xb_i=$(ls /sys/class/net | grep "^vif$1\." | sed "s/^vif$1\./vifD./" | tr '\n' ' ')
	[ -n "$_xb_i" ] && echo "interfaces: $_xb_i"
	_xb_i=$(ls /sys/class/net/$XB_BRIDGE/brif 2>/dev/null | grep "^vif$1\." | sed "s/^vif$1\./vifD./" | tr '\n' ' ')
	[ -n "$_xb_i" ] && echo "ports on $XB_BRIDGE: $_xb_i"
	_xb_d=$1; shift
	for _xb_img; do
		_xb_i=$(losetup -j $_xb_img | wc -l)
		[ $_xb_i -gt 0 ] && echo "loop devices on its image in ${_xb_img%/*}: $_xb_i"
	done
	_xb_i=$(pgrep -f -- "-xen-domid $_xb_d( |\$)" | wc -l)
	[ $_xb_i -gt 0 ] && echo "device-model processes: $_xb_i"
	return 0
}

# xenbench --env XB_TRACE=1: every scenario's commands on the console, for
# a scenario that stops saying anything.
# With it, every 60 s, what runs in dom0 and the hotplug scripts' log.
if [ "${XB_TRACE:-0}" = 1 ]; then
	set -x
	# Not a job of the scenario's shell, which may `wait` for its own.
	( ( set +x; while sleep 60; do
		ps -eo pid,ppid,etimes,stat,wchan:20,args | awk '$6 !~ /^\[/' | sed 's/^/XQ-PS /'
		tail -n 5 /var/log/xen/xen-hotplug.log 2>/dev/null | sed 's/^/XQ-HP /'
	done ) & )
fi
