# xenbench: hap
# What the memory wait counts (issue 21, defect 4), on real Xen.
# 1. A PVH guest of 128 MiB with shadow_memory = 64 (with HAP: a 64 MiB
#    paging pool that libxl sets and Xen keeps outside tot_pages, and gives
#    back with the domain) is replaced through the front by one of the
#    same config, on a host packed by a paused filler guest so that free
#    memory plus the old guest's tot_pages falls short of the new one's
#    need (194 MiB) while adding its pool covers it.  Its teardown is asked
#    for while xenreaperd is held stopped (SIGSTOP), so nothing moves:
#    wait-free must wait (exit 3 at its time-out), not say "cannot" (exit
#    1), and the front must wait, printing progress, and create the guest
#    once xenreaperd is let go.  Counting tot_pages only, both said
#    "cannot" and the front ran xl create at once, which failed.
# 2. A zombie (a page of it mapped by a dom0 helper) whose pages stopped
#    falling: memory/releasing drops to 0 while it is still a zombie, and
#    the client counts nothing of it.
# 3. The wait's line names the guest that holds most escaped (issue 41): a
#    paused guest, no devices (the point is its name), named with an
#    escape sequence that would retitle a terminal, a newline and 60
#    characters, its teardown requested while xenreaperd is held stopped;
#    `xenreaper wait-free` into a file and on a terminal (script(1)'s pty)
#    shows the name escaped and writes no raw control character but \r.
. $XB_LIB
xb_clients
base=$(xb_free_pages)
xb_daemon_start || { xb_not_ok "xenreaperd starts"; xb_done; }
resume() { kill -CONT $XB_DAEMON_PID 2>/dev/null; }

pvh_cfg() {
	cat > /tmp/$1.cfg <<EOF
name = "$1"
type = "pvh"
kernel = "$XB_KERNEL"
memory = 128
maxmem = 128
vcpus = 1
shadow_memory = 64
EOF
}
pvh_cfg old48
pvh_cfg new48
need=$((194 * 256))	# 128 + 64 + libxl's 2 MiB: xenreaper(1), THE XL FRONT
pool=$((64 * 256))

# 1. The same size, on a packed host.
free0=$(xb_free_pages)
if ! xl create -p /tmp/old48.cfg > /tmp/old48.log 2>&1; then
	sed 's/^/XQTAP #   /' /tmp/old48.log
	xb_not_ok "create a PVH guest (needs HAP)"; xb_done
fi
a=$(xl domid old48)
tot=$($XB_TOOL pages $a)
taken=$((free0 - $(xb_free_pages)))
xb_note "PVH guest old48 (domain $a): $tot pages in tot_pages; creating it took $taken pages"
xb_check "  Xen holds at least its 64 MiB pool for it outside tot_pages" test $((taken - tot)) -ge $pool
filler=$(($(xb_free_pages) / 256 - 40))
f=$(xb_guest filler48 $filler) || { xb_not_ok "create a paused filler guest of $filler MiB"; xb_done; }
free=$(xb_free_pages)
xb_note "filler48 (domain $f, $filler MiB): $free pages ($((free / 256)) MiB) left free"
xb_check "  less free than the guest's 128 MiB" test $free -lt $((128 * 256))
xb_check "  free + its tot_pages ($((free + tot))) short of the $need pages needed" test $((free + tot)) -lt $need
xb_check "  free + tot_pages + pool ($((free + tot + pool))) enough" test $((free + tot + pool)) -ge $need

kill -STOP $XB_DAEMON_PID
$XR destroy old48 > /tmp/req48.out 2>&1; rc=$?
xb_is $rc 0 "teardown of old48 requested (xenreaperd held stopped: the request waits)"
$XR --json wait-free 194M --timeout 2 > /tmp/wf48.json 2>&1; rc=$?
sed 's/^/XQTAP #   /' /tmp/wf48.json
xb_is $rc 3 "wait-free 194M waits (exit 3 at its 2 s time-out), rather than 'cannot' (exit 1)"
xb_check "  counting the old guest's tot_pages and its paging pool ($((tot + pool)) pages)" \
	grep -q "\"releasing_pages\":$((tot + pool)),\"teardowns\":1," /tmp/wf48.json

$XB_TOOL time /tmp/front48.ms $FRONT create -p /tmp/new48.cfg > /tmp/front48.out 2>&1 &
front=$!
i=0
while kill -0 $front 2>/dev/null && ! grep -q "waiting for memory" /tmp/front48.out && [ $i -lt 600 ]; do
	sleep 0.1; i=$((i + 1))
done
grep -v '^ *$' /tmp/front48.out | head -n 4 | sed 's/^/XQTAP #   front: /'
xb_check "the front waits for old48's memory" \
	grep -q "^xl: waiting for memory: [0-9]* of 194 MiB free, $(((tot + pool) / 256)) MiB to come back from domain $a (old48), requested" /tmp/front48.out
xb_check "  instead of running xl create at once (still waiting: xenreaperd is stopped)" kill -0 $front
xb_check "  and nothing was created meanwhile" sh -c "! xl domid new48 >/dev/null 2>&1"
resume
wait $front; rc=$?
grep -v '^ *$' /tmp/front48.out | tail -n 3 | sed 's/^/XQTAP #   front: /'
xb_is $rc 0 "once xenreaperd is let go, the guest of the same size is created"
b=$(xl domid new48 2>/dev/null)
xb_check "  new48 is there (domain $b)" test -n "$b"
xb_is "$(xb_state $a)" done "  and old48's teardown is done"
xb_note "front blocked $(cat /tmp/front48.ms) ms in all"
xl destroy new48
xl destroy filler48

# 2. A zombie whose pages stopped falling counts nothing.
z=$(xb_guest zomb48 128) || { xb_not_ok "create a 128 MiB guest"; xb_done; }
xb_hold_page holder $z; xb_is $? 0 "a dom0 helper maps a page of domain $z"
xb_request $z
xb_wait_node $XB_ROOT/job/$z/state zombie 60 >/dev/null
xb_is "$(xb_state $z)" zombie "torn down, it is a zombie"
xb_note "  held-by: $(xb_read $XB_ROOT/job/$z/held-by)"
last=$(xb_read $XB_ROOT/job/$z/last-release)
xb_check "  last-release says when its pages last fell ($last)" test -n "$last"
# Down to the helper's page in Xen and in the daemon's count: nothing
# more can fall, so the 0 below is the last word on it.
xb_wait_node $XB_ROOT/job/$z/pages-left 1 30 >/dev/null
xb_is "$($XB_TOOL pages $z)/$(xb_read $XB_ROOT/job/$z/pages-left)" 1/1 "  down to the page the helper holds, in Xen and in pages-left"
# The daemon looks again at the zombie's retries (1, 2, 4 s of back-off):
# the first one after the 5 s window rewrites memory/releasing.
xb_wait_node $XB_ROOT/memory/releasing 0 30 >/dev/null
xb_is "$(xb_read $XB_ROOT/memory/releasing)" 0 "  memory/releasing drops to 0 once its pages stopped falling"
xb_is "$(xb_state $z)" zombie "  while it is still a zombie"
$XR --json wait-free 1T > /tmp/z48.json 2>&1; rc=$?
sed 's/^/XQTAP #   /' /tmp/z48.json
xb_is $rc 1 "wait-free 1T: cannot (exit 1)"
xb_check "  its result says cannot, not an error" grep -q '^{"result":"cannot",' /tmp/z48.json
uncounted="  with nothing releasing and no teardown counted: the zombie's pages do not count"
if grep -q '"releasing_pages":0,"teardowns":0,' /tmp/z48.json; then
	xb_ok "$uncounted"
else
	xb_not_ok "$uncounted"
	# What there was to count, for whoever reads a failure.
	xb_note "  at $(date +%s.%N): memory/releasing $(xb_read $XB_ROOT/memory/releasing)"
	for j in $(xenstore-list $XB_ROOT/job); do
		st=$(xb_read $XB_ROOT/job/$j/state)
		case $st in done|failed) continue ;; esac
		xb_note "  job $j: $st, last-release $(xb_read $XB_ROOT/job/$j/last-release), reason $(xb_read $XB_ROOT/job/$j/reason)"
	done
	xenstore-list $XB_ROOT/request 2>/dev/null | sed 's/^/XQTAP #   request: /'
	$XB_TOOL list | sed 's/^/XQTAP #   /'
	$XR --json wait-free 1T 2>&1 | sed 's/^/XQTAP #   again: /'
	xb_daemon_log 40
fi
kill -TERM $holder; wait $holder 2>/dev/null
xb_wait_node $XB_ROOT/job/$z/state done 60 >/dev/null
xb_is "$(xb_state $z)" done "once the helper lets go, the zombie's job is done"

# 3. A hostile name in the wait's line.  Memory back first, so that what
# is free does not grow by the 32 MiB asked for beyond it while it waits.
xb_wait_memory $base "the memory of parts 1 and 2 is back"
evil=$(printf '\033]0;pwned\007\nforged abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefgh')
shown='\x1b]0;pwned\a\nforged abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefgh'
e=$(xb_guest evil48 128) || xb_not_ok "create a 128 MiB guest"
xb_check "guest $e renamed with an escape sequence, a newline and 60 characters (xl rename)" \
	xl rename evil48 "$evil"
kill -STOP $XB_DAEMON_PID
$XR destroy $e > /tmp/evil48.req 2>&1
xb_is $? 0 "teardown of domain $e requested (xenreaperd held stopped: the request waits)"
# Ask for 32 MiB more than is free: its 128 MiB coming back would cover it.
ask=$(($(xb_free_pages) / 256 + 32))
$XR wait-free ${ask}M --timeout 2 > /tmp/evil48.plain 2>&1; rc=$?
cat -v /tmp/evil48.plain | head -n 3 | sed 's/^/XQTAP #   plain: /'
xb_is $rc 3 "wait-free ${ask}M into a file waits for it (exit 3 at its 2 s time-out)"
xb_check "  its line names domain $e escaped" \
	grep -qF "to come back from domain $e ($shown), requested" /tmp/evil48.plain
xb_is "$(LC_ALL=C grep -c '[[:cntrl:]]' /tmp/evil48.plain)" 0 "  and has no raw control character"
script -qec "stty cols 250; $XR wait-free ${ask}M --timeout 2" /tmp/evil48.tty < /dev/null > /dev/null 2>&1
rc=$?
sed -n '/waiting for memory/p' /tmp/evil48.tty | tr '\r' '\n' | cat -v | grep -v '^ *$' | head -n 2 |
	sed 's/^/XQTAP #   tty: /'
xb_is $rc 3 "wait-free ${ask}M on a terminal waits too (exit 3)"
xb_check "  its bar line names domain $e escaped" grep -qF "(domain $e ($shown), requested" /tmp/evil48.tty
xb_is "$(tr -d '\r\n' < /tmp/evil48.tty | LC_ALL=C grep -c '[[:cntrl:]]')" 0 \
	"  and writes no raw control character but carriage returns (and script's newlines)"
resume
xb_wait_node $XB_ROOT/job/$e/state done 60 >/dev/null
xb_is "$(xb_state $e)" done "once xenreaperd is let go, its teardown is done"

xb_wait_memory $base "all memory back"
xb_daemon_stop
[ $XB_FAILED -eq 0 ] || xb_daemon_log 30
xb_done
