# Benchmark (printed, never asserted): in one boot, for each size, the time
# from asking to memory back with plain `xl destroy` and with xenreaperd,
# the time `xl destroy --async` blocks its caller, the daemon's memory and
# its idle wake-ups.  Under emulation only the ratios mean much.
. $XB_LIB
XL_FRONT="env LD_LIBRARY_PATH=$XB_BUILD/libxl-hook/.libs $XB_BUILD/libxl-hook/.libs/xl"
base=$(xb_free_pages)
xb_daemon_start || exit 1
pid=$XB_DAEMON_PID
rss() { awk '/^VmRSS/ { print $2 }' /proc/$pid/status; }
xb_note "xenreaperd RSS idle at start: $(rss) KiB"

# back_ms BASE: wait until free memory is back to BASE, print when (ms).
back_ms() { $XB_TOOL wait-free $(($1 - 256)) 120000 >/dev/null; xb_ms; }

for mib in 512 2048; do
	d=$(xb_guest xl$mib $mib) || exit 1
	t0=$(xb_ms); xl destroy $d; t1=$(xb_ms); t2=$(back_ms $base)
	xl_block=$((t1 - t0)) xl_back=$((t2 - t0))

	d=$(xb_guest rd$mib $mib) || exit 1
	uuid=$($XB_TOOL uuid $d)
	t0=$(xb_ms); xenstore-write $XB_ROOT/request/$d $uuid; t1=$(xb_ms); t2=$(back_ms $base)
	rd_block=$((t1 - t0)) rd_back=$((t2 - t0))
	xb_wait_state $d done 60

	d=$(xb_guest fr$mib $mib) || exit 1
	t0=$(xb_ms); $XL_FRONT destroy --async $d; t1=$(xb_ms); t2=$(back_ms $base)
	fr_block=$((t1 - t0)) fr_back=$((t2 - t0))
	xb_wait_state $d done 60

	xb_note "$mib MiB: request to memory back: xl destroy ${xl_back} ms, xenreaperd ${rd_back} ms (ratio $(awk -v a=$rd_back -v b=$xl_back 'BEGIN { printf "%.2f", a / b }'))"
	xb_note "$mib MiB: caller blocked: xl destroy ${xl_block} ms, xenstore-write ${rd_block} ms, xl destroy --async ${fr_block} ms (ratio $(awk -v a=$fr_block -v b=$xl_block 'BEGIN { printf "%.3f", a / b }'))"
	xb_note "$mib MiB: xl destroy --async request to memory back ${fr_back} ms"
done
xb_note "xenreaperd RSS after the teardowns: $(rss) KiB, peak $(awk '/^VmHWM/ { print $2 }' /proc/$pid/status) KiB"

# Idle wake-ups: context switches of all its threads over 10 s.
ctx() { cat /proc/$pid/task/*/status | awk '/ctxt_switches/ { n += $2 } END { print n }'; }
c0=$(ctx); sleep 10; c1=$(ctx)
xb_note "idle wake-ups: $((c1 - c0)) context switches in 10 s ($(awk -v n=$((c1 - c0)) 'BEGIN { printf "%.1f", n / 10 }') per second)"
xb_daemon_stop
xb_ok "benchmark ran"
