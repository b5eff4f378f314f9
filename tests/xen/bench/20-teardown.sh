# Benchmark (printed, never asserted): in one boot, for each size, the time
# from asking to memory back with plain `xl destroy` and with xenreaperd,
# the time `xl destroy --async` blocks its caller, the daemon's memory and
# its idle wake-ups.  Under emulation only the ratios mean much.  Times are
# taken by xbtool around the command (fork to exit, fork to free memory
# back), so the shell's own process start-ups stay out of them.
. $XB_LIB
export LD_LIBRARY_PATH=$XB_BUILD/libxl-hook/.libs
XL_FRONT=$XB_BUILD/libxl-hook/.libs/xl
base=$(xb_free_pages)
xb_daemon_start || exit 1
pid=$XB_DAEMON_PID
rss() { awk '/^VmRSS/ { print $2 }' /proc/$pid/status; }
xb_note "xenreaperd RSS idle at start: $(rss) KiB"
ratio() { awk -v a=$1 -v b=$2 'BEGIN { printf "%.3f", a / b }'; }
# measure VAR CMD...: VAR_block and VAR_back, from xbtool back.
measure() {
	_v=$1; shift
	$XB_TOOL back /tmp/m.ms $(($base - 256)) "$@"
	read _b _k < /tmp/m.ms
	eval "${_v}_block=$_b ${_v}_back=$_k"
}

for mib in 512 2048; do
	d=$(xb_guest xl$mib $mib) || exit 1
	measure xl xl destroy $d

	d=$(xb_guest rd$mib $mib) || exit 1
	measure rd xenstore-write $XB_ROOT/request/$d $($XB_TOOL uuid $d)
	xb_wait_state $d done 60

	d=$(xb_guest fr$mib $mib) || exit 1
	measure fr $XL_FRONT destroy --async $d
	xb_wait_state $d done 60

	xb_note "$mib MiB, ask to memory back: xl destroy ${xl_back} ms; xenreaperd via xenstore-write ${rd_back} ms (ratio $(ratio $rd_back $xl_back)); via xl destroy --async ${fr_back} ms (ratio $(ratio $fr_back $xl_back))"
	xb_note "$mib MiB, caller blocked: xl destroy ${xl_block} ms; xenstore-write ${rd_block} ms; xl destroy --async ${fr_block} ms (ratio $(ratio $fr_block $xl_block))"
done
xb_time spawn $XB_TOOL ms >/dev/null
xb_time spawn_xs xenstore-read $XB_ROOT/daemon/pid >/dev/null
xb_note "for scale: starting a trivial static-ish process takes ${spawn} ms here, xenstore-read ${spawn_xs} ms"
xb_note "xenreaperd RSS after the teardowns: $(rss) KiB, peak $(awk '/^VmHWM/ { print $2 }' /proc/$pid/status) KiB"

# Idle wake-ups: context switches of all its threads over 10 s.
ctx() { cat /proc/$pid/task/*/status | awk '/ctxt_switches/ { n += $2 } END { print n }'; }
c0=$(ctx); sleep 10; c1=$(ctx)
xb_note "idle: $((c1 - c0)) context switches in 10 s ($(awk -v n=$((c1 - c0)) 'BEGIN { printf "%.1f", n / 10 }') wake-ups per second)"
xb_daemon_stop
xb_ok "benchmark ran"
