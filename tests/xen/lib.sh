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
# xb_time VAR CMD...: run CMD, set VAR to the ms it blocked (its own start-up
# included, xbtool's not); returns CMD's status.
xb_time() {
	_xb_var=$1; shift
	$XB_TOOL time /tmp/xb_time.ms "$@"; _xb_rc=$?
	eval "$_xb_var=\$(cat /tmp/xb_time.ms)"
	return $_xb_rc
}
xb_free_pages() { $XB_TOOL free-pages; }

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
# (busybox applets by name); prints its path.
xb_initrd() {
	if [ ! -f /tmp/$1.cpio.gz ]; then
		rm -rf /tmp/$1.d; mkdir -p /tmp/$1.d/bin
		cp /bin/busybox /tmp/$1.d/bin/busybox
		printf '#!/bin/busybox sh\n/bin/busybox --install -s /bin\nexport PATH=/bin\n%s\n' "$2" > /tmp/$1.d/init
		chmod +x /tmp/$1.d/init
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
# xb_wait_log PATTERN SECONDS [FILE]: until the daemon's log (or FILE) has
# a line matching the extended regex PATTERN: what it decided, when the
# decision leaves no node to watch (a domain it does not adopt).
xb_wait_log() {
	_xb_end=$(($(date +%s) + $2))
	until grep -qE "$1" "${3:-$XB_DAEMON_LOG}" 2>/dev/null; do
		[ $(date +%s) -ge $_xb_end ] && return 1
		sleep 0.1
	done
}
# On failure, the daemon's log is what explains it.
xb_daemon_log() { sed 's/^/  daemon: /' $XB_DAEMON_LOG | tail -n "${1:-20}"; }

# Benchmarks: the 9p share is read-only, so figures reach the host on the
# serial console.  xb_emit NAME FILE prints FILE as "XQCSV NAME SEQ LINE"
# lines and a closing "XQCSV-END NAME COUNT"; xenbench --bench writes them
# to BUILDDIR/bench-out/NAME only if the scenario ended with status 0 and
# no line went missing on the way.  NAME: [a-z0-9._-] only.
xb_emit() {
	awk -v n="$1" '{ print "XQCSV " n " " NR " " $0; fflush() }
		NR % 40 == 0 { system("sleep 0.05") }	# let the UART keep up
		END { print "XQCSV-END " n " " NR }' "$2"
}
