# The clients of issue 21 (defects 8, 9, 11) on real Xen.  A guest named by a hostile tenant
# (a quote, a backslash, braces and a real newline followed by a forged
# Prometheus sample) is shown escaped, one line per job, by xenreaper list
# and status and by the front's progress.  A waiting client finds out,
# within its stated bound, that a xenreaperd which says it runs does not
# answer (SIGSTOP while `xl destroy --async --wait` waits: exit 4, naming
# the pid; SIGCONT: the daemon goes on), while a daemon under a long
# teardown (a vif whose hotplug script takes 8 s to go offline) answers
# all along, and an idle daemon makes no wake-up.  And with 512 finished
# jobs kept in xenstore, the front's `xl create --wait-memory-timeout S`
# and `xenreaper wait-free --timeout S` keep their bounds.
. $XB_LIB
xb_clients
base=$(xb_free_pages)
xb_daemon_start || { xb_not_ok "xenreaperd starts"; xb_done; }
pid=$XB_DAEMON_PID

# The domid a new paused guest got (names with a newline are awkward to
# look up by name).
newest() { $XB_TOOL list | awk 'NR > 1 && $1 > max { max = $1 } END { print max }'; }

# --- a guest name that forges lines
printf 'name = "evil\\"\\\\{x}\\nxenreaper_jobs_total{state=\\"done\\"} 99"\ntype = "pv"\nkernel = "%s"\nmemory = 128\nvcpus = 1\n' \
	"$XB_KERNEL" > /tmp/evil.cfg
xl create -p /tmp/evil.cfg > /tmp/evil.out 2>&1; rc=$?
xb_is $rc 0 "xl create accepts a name with a quote, a backslash, braces and a newline"
e=$(newest)
xb_is "$(xenstore-read -R /local/domain/$e/name | sed -n 2p)" 'xenreaper_jobs_total{state="done"} 99' \
	"  domain $e's name in xenstore has a real newline before a forged sample"
want='evil"\\{x}\nxenreaper_jobs_total{state="done"} 99'
$FRONT destroy --async --wait $e > /tmp/evil-front.out 2>&1; rc=$?
sed 's/^/XQTAP #   front: /' /tmp/evil-front.out
xb_is $rc 0 "xl destroy --async --wait $e through the front: done"
xb_check "  no line the front printed starts with the forged sample" sh -c "! grep -q '^xenreaper_jobs_total' /tmp/evil-front.out"
xb_check "  its last line names the guest escaped" grep -qF "domain $e ($want): done" /tmp/evil-front.out
$XR list > /tmp/evil-list.out 2>&1
sed 's/^/XQTAP #   list: /' /tmp/evil-list.out
xb_is "$(grep -c "^ *$e " /tmp/evil-list.out)" 1 "xenreaper list: one line for the job"
xb_check "  no line starts with the forged sample" sh -c "! grep -q '^xenreaper_jobs_total' /tmp/evil-list.out"
xb_check "  the name column shows it escaped" grep -qF 'evil"\\{x}\nxenreaper_jobs' /tmp/evil-list.out
$XR status $e > /tmp/evil-status.out 2>&1
sed 's/^/XQTAP #   status: /' /tmp/evil-status.out
xb_check "xenreaper status $e: no line starts with the forged sample" sh -c "! grep -q '^xenreaper_jobs_total' /tmp/evil-status.out"
head -n 1 /tmp/evil-status.out > /tmp/evil-first.out
xb_check "  its first line names the guest escaped" grep -qF "domain $e ($want): done" /tmp/evil-first.out
$XR --json status $e > /tmp/evil.json 2>&1
xb_check "  --json carries the name as it is, as a JSON string" \
	grep -qF '"name":"evil\"\\{x}\nxenreaper_jobs_total{state=\"done\"} 99"' /tmp/evil.json
xb_phase "forged names"

# --- a long teardown: a vif whose hotplug script takes 8 s to go offline
modprobe xen-netback 2>/dev/null
cat > /tmp/xb-slow-vif <<'EOS'
#!/bin/sh
# A vif hotplug script that is slow to let go (libxl waits for it).
echo "$(date +%s.%N) $1" >> /tmp/xb-slow-vif.log
case "$1" in
online|add) xenstore-write "$XENBUS_PATH/hotplug-status" connected ;;
offline|remove) sleep 8 ;;
esac
EOS
chmod +x /tmp/xb-slow-vif
slow_guest() { xb_guest $1 128 'vif = [ "script=/tmp/xb-slow-vif" ]'; }
l=$(slow_guest slow1) || xb_not_ok "create slow1 with the slow vif"
# Every ping and answer, stamped: a ping's node appears, then the daemon
# removes it (each is a watch event on ping/).
xenstore-watch $XB_ROOT/ping 2>/dev/null | $XB_TOOL stamp > /tmp/pings.log &
pinglog=$!
xb_time t env XENREAPER_WAIT_TIMEOUT=3 $XR destroy --wait slow1 > /tmp/slow1.out 2>&1; rc=$?
kill $pinglog 2>/dev/null
xb_is $rc 0 "under a long teardown ($t ms; the hotplug script sleeps 8 s), xenreaper destroy --wait with a 3 s bound: done"
# Answer latencies: from each ping's creation to its removal.
awk '$2 ~ /\/ping\/./ { if ($2 in seen) { d = $1 - seen[$2]; if (d > max) max = d; n++; delete seen[$2] } else seen[$2] = $1 }
     END { printf "%d %d\n", n, max }' /tmp/pings.log > /tmp/pings.sum
read answered slowest < /tmp/pings.sum
xb_check "  the daemon answered the pings meanwhile ($answered answered, the slowest in $slowest ms)" test "$answered" -ge 2
xb_phase "long teardown"

# --- SIGSTOP while xl destroy --async --wait waits
s=$(slow_guest slow2) || xb_not_ok "create slow2 with the slow vif"
xenstore-watch $XB_ROOT/ping 2>/dev/null | $XB_TOOL stamp > /tmp/pings2.log &
pinglog=$!
# The front's lines and its exit status, each stamped with monotonic ms.
(XENREAPER_WAIT_TIMEOUT=3 $FRONT destroy --async --wait slow2 2>&1; echo "exit $?") |
	$XB_TOOL stamp > /tmp/slow2.out &
front=$!
xb_is "$(xb_wait_node $XB_ROOT/job/$s/state destroying 60)" destroying "  its teardown under way (domain $s)"
stopped=$(xb_mono_ms)	# (just before the signal)
kill -STOP $pid
wait $front
kill $pinglog 2>/dev/null
xb_note "  SIGSTOP at $stopped ms; the last pings and the front's lines at:"
sed 's/^/XQTAP #   ping: /' /tmp/pings2.log | tail -n 6
sed 's/^/XQTAP #   front: /' /tmp/slow2.out
rc=$(sed -n 's/^[0-9]* exit //p' /tmp/slow2.out)
took=$(( $(sed -n 's/^\([0-9]*\) exit .*/\1/p' /tmp/slow2.out) - stopped ))
xb_is "$rc" 4 "SIGSTOP while xl destroy --async --wait waits: the front exits 4 (not answering)"
xb_check "  $took ms after the SIGSTOP: within its 3 s bound and the 2 s between pings, plus 1 s for the emulated machine" \
	test "$took" -le 6000
xb_check "  naming the pid and what it waited for" sh -c "grep -q 'xenreaperd (pid $pid) has not answered' /tmp/slow2.out && grep -q 'the teardown of domain $s' /tmp/slow2.out"
kill -CONT $pid
xb_is "$(xb_wait_node $XB_ROOT/job/$s/state 'done|failed' 120)" done "SIGCONT: the daemon goes on, and the teardown ends done"
xb_check "  the client left no ping behind" test -z "$(xenstore-list $XB_ROOT/ping 2>/dev/null)"
xb_phase "SIGSTOP"

# --- an idle daemon, nobody waiting: no wake-up.  Idle is once the scrub
# probe that slow2's release scheduled has run and read no backlog: the
# deferred settle time puts it 5 s after the release, and the least gap
# between probes up to 60 s after the one before.  scrub/pages alone still
# shows the probe before the release (it changes only when a probe runs),
# so waiting on it let that probe fall inside the window (one run in the
# last test command: 45 switches).  The metrics file that probe changed is
# written at most METRICS_MIN_GAP_MS (1 s) after it.
xb_wait_node $XB_ROOT/daemon/active-jobs 0 60 >/dev/null
fin=$(xb_read $XB_ROOT/job/$s/finished)
xb_wait_probe_clean "$fin" 90
xb_check "  a scrub probe after slow2 finished ($fin) read no backlog (probed $(xb_read $XB_ROOT/scrub/probed))" \
	xb_probed_clean "$fin"
switches() { cat /proc/$pid/task/*/status | awk '/ctxt_switches/ { n += $2 } END { print n }'; }
p0=$(xb_read $XB_ROOT/scrub/probed)
c0=$(switches); sleep 5; c1=$(switches)
xb_is "$c1" "$c0" "idle, nobody waiting: no context switch in any of the daemon's threads over 5 s"
[ "$c1" = "$c0" ] || xb_note "  scrub/probed was $p0 before the window, $(xb_read $XB_ROOT/scrub/probed) after"

# --- 512 finished jobs kept: the memory wait keeps its bound.  The host
# is filled so that a second guest of the same size does not fit; the
# first one's teardown is asked for while xenreaperd is held stopped, so
# the request waits and nothing is released (as in 46-handoff), and the
# answer bound (XENREAPER_WAIT_TIMEOUT) is set well past the memory bound.
# The records are planted as a killed daemon would have left them (state,
# uuid, finished: what a reading can look at), with raw xenstore writes:
# one xenstore-write per node costs a process start under emulation.
cat > /tmp/xs-jobs.py <<'EOS'
import socket, struct, sys
XS_WRITE, XS_RM, XS_ERROR = 11, 13, 16
s = socket.socket(socket.AF_UNIX)
s.connect("/run/xenstored/socket")
def req(kind, payload):
    s.sendall(struct.pack("<IIII", kind, 0, 0, len(payload)) + payload)
    head = b""
    while len(head) < 16:
        head += s.recv(16 - len(head))
    kind_back, _, _, n = struct.unpack("<IIII", head)
    body = b""
    while len(body) < n:
        body += s.recv(n - len(body))
    if kind_back == XS_ERROR and body.rstrip(b"\0") != b"ENOENT":
        sys.exit("xenstore: %s" % body)
cmd, first, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for d in range(first, first + n):
    job = "/tool/xenreaper/job/%d" % d
    if cmd == "rm":
        req(XS_RM, job.encode() + b"\0")
        continue
    for leaf, value in (("uuid", "%08x-0000-4000-8000-%012x" % (d, d)),
                        ("finished", "1700000002.600"), ("state", "done")):
        req(XS_WRITE, ("%s/%s" % (job, leaf)).encode() + b"\0" + value.encode())
EOS
t0=$(xb_ms)
python3 /tmp/xs-jobs.py plant 1000 512 || xb_not_ok "plant 512 finished jobs"
xb_is "$(xenstore-list $XB_ROOT/job | grep -c '^1[0-5][0-9][0-9]$')" 512 "512 finished jobs planted under job/ ($(( $(xb_ms) - t0 )) ms to write them)"
mib=$(($(xb_free_pages) / 256))
size=$((mib / 2 + 128))
first=$(xb_guest first $size) || xb_not_ok "create the first guest of $size MiB"
cat > /tmp/second.cfg <<EOC
name = "second"
type = "pv"
kernel = "$XB_KERNEL"
memory = $size
maxmem = $size
vcpus = 1
EOC
kill -STOP $pid
$XR destroy first > /tmp/req.out 2>&1
xb_is "$(xb_read $XB_ROOT/request/$first)" "$($XB_TOOL uuid $first)" "the first guest's teardown is requested and waits (xenreaperd held stopped)"
xb_time t_real xl create -p /tmp/second.cfg > /tmp/real.out 2>&1
xb_check "the real xl create of a second guest that size fails ($t_real ms)" sh -c "! xl domid second >/dev/null 2>&1"
for bound in 3 8; do
	xb_time t env XENREAPER_WAIT_TIMEOUT=120 $FRONT create --wait-memory-timeout $bound -p /tmp/second.cfg > /tmp/bound.out 2>&1
	waited=$(sed -n 's/.*short after \([0-9.]*\) s, waiting on .*running xl create anyway/\1/p' /tmp/bound.out)
	grep -v '^ *$' /tmp/bound.out | head -n 3 | sed 's/^/XQTAP #   /'
	xb_check "xl create --wait-memory-timeout $bound with 512 finished jobs kept: waits, then gives up after ${waited:-?} s, running xl anyway ($t ms in all, the real xl's included)" \
		sh -c "grep -q '^xl: waiting for memory' /tmp/bound.out && [ -n '$waited' ] && awk 'BEGIN { exit !($waited <= $bound + 1) }'"
done
xb_time t env XENREAPER_WAIT_TIMEOUT=120 $XR wait-free ${size}M --timeout 3 > /tmp/wf.out 2>&1; rc=$?
waited=$(sed -n 's/.*short after \([0-9.]*\) s, waiting on .*/\1/p' /tmp/wf.out)
xb_is $rc 3 "xenreaper wait-free ${size}M --timeout 3 with 512 kept: times out (exit 3)"
xb_check "  after ${waited:-?} s of waiting ($t ms in all, start-up included)" \
	sh -c "[ -n '$waited' ] && awk 'BEGIN { exit !($waited <= 4) }'"
kill -CONT $pid
xb_is "$(xb_wait_node $XB_ROOT/job/$first/state 'done|failed' 120)" done "SIGCONT: the first guest's teardown is served"
python3 /tmp/xs-jobs.py rm 1000 512
xb_is "$(xenstore-list $XB_ROOT/job | grep -c '^1[0-5][0-9][0-9]$')" 0 "the planted jobs are removed"

xb_wait_memory $base "all memory back"
xb_daemon_stop
[ $XB_FAILED -eq 0 ] || xb_daemon_log 30
xb_done
