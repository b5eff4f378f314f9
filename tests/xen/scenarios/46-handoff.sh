# The memory hand-off on real Xen: the host is filled so that a second
# guest of the same size cannot start until the first is gone; the first
# one's teardown is asked for while xenreaperd is held stopped (SIGSTOP),
# so the request waits and nothing is released.  The real `xl create` of
# the second guest then fails with Xen's out-of-memory error; through the
# front with a 3 s bound it waits, names the teardown it waited on and
# runs xl anyway (which fails the same way); through the front with the
# default bound it waits, printing progress, until xenreaperd is let go,
# and the guest is created.  Deterministic: nothing moves until SIGCONT.
. $XB_LIB
xb_clients
base=$(xb_free_pages)
xb_daemon_start || { xb_not_ok "xenreaperd starts"; xb_done; }
resume() { kill -CONT $XB_DAEMON_PID 2>/dev/null; }
oom() { grep -qiE 'out of memory|cannot allocate memory' "$1"; }

# Two guests of half the free memory and 128 MiB more: one fits, with
# ~250 MiB to spare; the second is ~250 MiB short while the first exists.
mib=$((base / 256))
size=$((mib / 2 + 128))
xb_note "$mib MiB free; guests of $size MiB"
a=$(xb_guest first $size) || { xb_not_ok "create the first guest of $size MiB"; xb_done; }
left=$(($(xb_free_pages) / 256))
xb_note "with the first guest (domain $a): $left MiB free"
cat > /tmp/second.cfg <<EOF
name = "second"
type = "pv"
kernel = "$XB_KERNEL"
memory = $size
maxmem = $size
vcpus = 1
EOF

# Hold the teardown back: the request waits, since the daemon cannot run.
kill -STOP $XB_DAEMON_PID
$XR destroy first > /tmp/req.out 2>&1; rc=$?
xb_is $rc 0 "teardown of the first guest requested"
xb_is "$(xb_read $XB_ROOT/request/$a)" "$($XB_TOOL uuid $a)" "  the request waits in xenstore (xenreaperd stopped)"

# wait-free, as another toolstack would use it.
$XR --json wait-free ${size}M --timeout 2 > /tmp/wf.json 2>&1; rc=$?
sed 's/^/XQTAP #   /' /tmp/wf.json
xb_is $rc 3 "wait-free ${size}M --timeout 2 times out (exit 3): the request is not served"
xb_check "  --json names the teardown waited on, as requested, holding ~$size MiB" \
	grep -qE "^\{\"result\":\"timeout\",[^{]*\"releasing_pages\":[0-9]+,\"teardowns\":1,\"requested\":1,.*\"waiting_on\":\{\"domid\":$a,\"name\":\"first\",[^}]*\"state\":\"requested\"" /tmp/wf.json
$XR wait-free $((mib * 2))M > /tmp/wf.out 2>&1; rc=$?
xb_is $rc 1 "wait-free $((mib * 2))M fails at once (exit 1): the teardown cannot free that much"
xb_check "  saying so: $(cat /tmp/wf.out)" grep -q "will release only" /tmp/wf.out

# 1. The real xl: Xen's out-of-memory error.
xb_time t_real xl create -p /tmp/second.cfg > /tmp/real.out 2>&1; rc=$?
grep -iE 'error|memory' /tmp/real.out | head -n 4 | sed 's/^/XQTAP #   real xl: /'
xb_check "the real xl create fails (exit $rc, after $t_real ms)" test $rc -ne 0
xb_check "  with Xen's out-of-memory error" oom /tmp/real.out
xb_check "  and leaves no guest 'second'" sh -c "! xl domid second >/dev/null 2>&1"

# 2. The front with a 3 s bound: waits, says on what, runs xl anyway.
xb_time t_bound $FRONT create --wait-memory-timeout 3 -p /tmp/second.cfg > /tmp/bound.out 2>&1; rc=$?
grep -v '^ *$' /tmp/bound.out | head -n 4 | sed 's/^/XQTAP #   front, 3 s: /'
xb_check "the front with --wait-memory-timeout 3 waits" grep -q "^xl: waiting for memory: " /tmp/bound.out
xb_check "  says which teardown it waited on" grep -q "waiting on domain $a (first), requested but not yet taken by xenreaperd.*; running xl create anyway" /tmp/bound.out
xb_check "  then runs the real xl, whose error is its own (exit $rc)" sh -c "[ $rc -ne 0 ] && grep -qiE 'out of memory|cannot allocate memory' /tmp/bound.out"
xb_note "  blocked $t_bound ms in all"

# 3. The front with the default bound: waits until the memory is back.
$XB_TOOL time /tmp/front.ms $FRONT create -p /tmp/second.cfg > /tmp/front.out 2>&1 &
front=$!
i=0; while ! grep -q "waiting for memory" /tmp/front.out 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
xb_check "the front waits, printing progress on stderr" grep -q "^xl: waiting for memory: [0-9]* of [0-9]* MiB free, [0-9]* MiB to come back from domain $a (first), requested" /tmp/front.out
sleep 2	# it must still be waiting: nothing can move while xenreaperd is stopped
xb_check "  still waiting 2 s later (the request cannot be served)" kill -0 $front
xb_check "  nothing created meanwhile" sh -c "! xl domid second >/dev/null 2>&1"
cont=$(xb_ms)
resume
wait $front; rc=$?
done_ms=$(xb_ms)
grep -v '^ *$' /tmp/front.out | sed 's/^/XQTAP #   front: /' | head -n 12
xb_is $rc 0 "once xenreaperd is let go, xl create through the front succeeds"
xb_check "  it said how long it waited" grep -qE "^xl: waited [0-9.]+ s for memory: [0-9]+ MiB free, [0-9]+ MiB needed" /tmp/front.out
# How many lines the teardown itself gets depends on its speed (one a
# second at most): shown above, not counted.
b=$(xl domid second 2>/dev/null)
xb_check "  the new guest is there (domain $b)" test -n "$b"
xb_note "  $(xl list second 2>/dev/null | tail -n 1)"
xb_is "$(xb_state $a)" done "  the first guest's teardown is done"
xb_note "front blocked $(cat /tmp/front.ms) ms in all, $((done_ms - cont)) ms of it after SIGCONT (teardown, then xl create)"

resume
xl destroy second
xb_wait_memory $base "all memory back"
xb_daemon_stop
[ $XB_FAILED -eq 0 ] || xb_daemon_log 30
xb_done
