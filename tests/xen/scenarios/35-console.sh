# What the scrub probes cost Xen's console ring: 20 deferred teardowns of
# 256 MiB guests, in four batches of five, must displace no more than a
# small share of the messages `xl dmesg` showed before them.  Each probe is
# a heap dump (debug key H, ~43 lines per NUMA node) into a ring of 16 KiB
# by default, where boot and crash messages live.
#
# XB_CONSOLE_DAEMON (xenbench --env) runs another xenreaperd binary through
# the same teardowns, to measure an older one for comparison.
. $XB_LIB
share_max=25	# percent of the earlier messages the 20 teardowns may push out
daemon=${XB_CONSOLE_DAEMON:-$XB_DAEMON}
base=$(xb_free_pages)
XB_DAEMON=$daemon
xb_daemon_start -v || { xb_not_ok "xenreaperd starts"; xb_done; }
xb_note "daemon: $daemon"

# The ring before: with console_timestamps=boot every line is unique.
xl dmesg > /tmp/dmesg.before
before=$(wc -l < /tmp/dmesg.before)
dumps_before=$(grep -c "'H' pressed" /tmp/dmesg.before)

n=0
for batch in 1 2 3 4; do
	pids=
	for g in 1 2 3 4 5; do xb_guest con$batch$g 256 > /tmp/con$batch$g.domid & pids="$pids $!"; done
	wait $pids
	for g in 1 2 3 4 5; do
		d=$(cat /tmp/con$batch$g.domid)
		[ -n "$d" ] && { xb_request $d; n=$((n + 1)); }
	done
	for g in 1 2 3 4 5; do
		d=$(cat /tmp/con$batch$g.domid)
		[ -n "$d" ] && xb_wait_state $d done 120
	done
done
xb_is "$n" 20 "20 guests of 256 MiB created and their teardowns requested"
done_n=0
for batch in 1 2 3 4; do for g in 1 2 3 4 5; do
	d=$(cat /tmp/con$batch$g.domid); [ "$(xb_state $d)" = done ] && done_n=$((done_n + 1))
done; done
xb_is "$done_n" 20 "all 20 deferred teardowns done"
xb_wait_memory $base "all their memory back"
# The daemon probes until the backlog reads 0, at most once a minute.
i=0; while [ "$(xb_read $XB_ROOT/scrub/pages)" != 0 ] && [ $i -lt 1500 ]; do sleep 0.1; i=$((i + 1)); done
xb_is "$(xb_read $XB_ROOT/scrub/pages)" 0 "the scrub backlog was measured drained"
xl dmesg > /tmp/dmesg.after
probes=$(grep -c "scrub backlog .* pages (heap-dump" /tmp/xenreaperd.log)
dumps=$(( $(grep -c "'H' pressed" /tmp/dmesg.after) - dumps_before ))
# Earlier lines no longer in the ring were pushed out by what came after.
displaced=$(grep -vxFf /tmp/dmesg.after /tmp/dmesg.before | wc -l)
share=$((displaced * 100 / (before > 0 ? before : 1)))
# Lines of the last dump: its header, the zone lines, the unscrubbed lines.
per_dump=$(awk "/'H' pressed/ { on = 1; n = 1; next }
	on && /heap\[|unscrubbed/ { n++; next } on { last = n; on = 0 } END { print on ? n : last }" /tmp/dmesg.after)
echo "console: teardowns=20 probes=${probes} dumps-in-ring=${dumps} lines-before=${before} displaced=${displaced} share=${share}%"
xb_note "console: teardowns=20 probes=${probes} dumps-in-ring=${dumps} lines-before=${before} displaced=${displaced} (${share}%) lines-per-dump=${per_dump:-?}"
xb_check "20 deferred teardowns displaced ${share}% of the ${before} earlier console lines (at most ${share_max}%)" \
	test "$share" -le "$share_max"
xb_check "  with ${probes} heap-dump probe(s) for 20 teardowns" test "${probes:-99}" -le 6
xb_daemon_stop
[ $XB_FAILED -eq 0 ] || xb_daemon_log 30
xb_done
