# The clients on real Xen: how a DOMAIN is read (a name that starts with
# digits is a name), the UUID guard (a request carrying the UUID that
# xenstore's vm node names is refused when the hypervisor's differs), the front running the running hypervisor's xl when
# two versions are installed, what list/status show (orphans with their
# reason, held-by, rate, stalled), wait-free's quick answers, and `xl
# create` through the front: dry runs and usage errors exactly as the
# real xl's, and a create with memory to spare run at once.
. $XB_LIB
xb_clients
base=$(xb_free_pages)
xb_daemon_start || { xb_not_ok "xenreaperd starts"; xb_done; }

# --- a gone guest whose name starts with another job's domid
v=$(xb_guest victim 128) || xb_not_ok "create victim"
$XR destroy --wait victim >/dev/null 2>&1
f=$(xb_guest ${v}fast 128) || xb_not_ok "create ${v}fast"
$XR destroy --wait ${v}fast >/dev/null 2>&1
xb_note "victim was domain $v, ${v}fast domain $f; both torn down"
$XR status ${v}fast > /tmp/st.out 2>&1; rc=$?
sed 's/^/XQTAP #   /' /tmp/st.out
xb_check "'status ${v}fast' shows domain $f, not domain $v (exit $rc)" grep -q "^domain $f (${v}fast)" /tmp/st.out
xb_check "  with its average release rate" grep -qE '^  rate +[0-9.]+ [MG]iB/s on average' /tmp/st.out
$XR --json status $f > /tmp/st.json 2>&1
xb_check "  --json carries the rate as a number" grep -qE '"rate_mib_s":[0-9]+\.[0-9]' /tmp/st.json
xb_check "  and no time left once done" grep -q '"eta_s":null,"stalled":false' /tmp/st.json

xb_phase "a gone guest whose name starts with another job'"
# --- xenstore's vm node is libxl's /vm/<uuid>, whose directory bears the
# domain's name, and a request carries that UUID: the client asks xenstore
# alone (issue 18, part 2; issue 41).  One the hypervisor contradicts is
# refused by xenreaperd's UUID guard: nothing is destroyed, and a caller
# that waits is told why.
g=$(xb_guest guarded 128) || xb_not_ok "create guarded"
uuid=$($XB_TOOL uuid $g)
vm=$(xb_read /local/domain/$g/vm)
xb_is "$vm" "/vm/$uuid" "libxl's /local/domain/$g/vm names the hypervisor's UUID"
# A vm node naming another UUID whose directory has no name (as a guest
# xl preserved has): the client asks the hypervisor, which contradicts it
# on a running domain, and refuses by itself.
forged=01234567-89ab-cdef-0123-456789abcdef
xenstore-write /local/domain/$g/vm /vm/$forged
$XR destroy --wait $g > /tmp/guard-client.out 2>&1; rc=$?
sed 's/^/XQTAP #   /' /tmp/guard-client.out
xb_is $rc 1 "destroy --wait with a vm naming another UUID, its directory nameless, exits 1"
xb_check "  the client saying the domain changed while it was looked up (hypervisor $uuid)" \
	grep -q "domain $g changed while it was being looked up: the hypervisor gives UUID $uuid" /tmp/guard-client.out
xb_is "$(xb_read $XB_ROOT/request/$g)" "" "  and requesting nothing"
# The vm directory bearing the domain's name, as libxl writes it: one
# reading names the forged UUID, so the daemon's guard must refuse it.
xenstore-write /local/domain/$g/vm /vm/$forged /vm/$forged/name guarded
$XR destroy --wait $g > /tmp/guard.out 2>&1; rc=$?
sed 's/^/XQTAP #   /' /tmp/guard.out
xb_is $rc 1 "destroy --wait with xenstore naming another UUID exits 1"
xb_check "  saying xenreaperd refused it: UUID $uuid, not the requested one; nothing destroyed" \
	grep -q "has UUID $uuid, not the requested $forged.*nothing was destroyed" /tmp/guard.out
xb_is "$(xb_state $g)" failed "  its job reads failed"
xb_check "  and guest $g is still there" $XB_TOOL pages $g
forged=76543210-89ab-cdef-0123-456789abcdef
xenstore-write /local/domain/$g/vm /vm/$forged /vm/$forged/name guarded
$FRONT destroy --async --wait guarded > /tmp/guard-front.out 2>&1; rc=$?
sed 's/^/XQTAP #   /' /tmp/guard-front.out
xb_is $rc 1 "the xl front's request is refused too (exit 1)"
xb_check "  saying why" grep -q "not the requested $forged.*nothing was destroyed" /tmp/guard-front.out
xb_check "  and guest $g is still there" $XB_TOOL pages $g
xenstore-write /local/domain/$g/vm "$vm"
$XR destroy --wait guarded > /dev/null 2>&1; rc=$?
xb_is $rc 0 "with xenstore consistent again, destroy by name works"

xb_phase "xenstore's vm node is libxl's /vm/<uuid>, and a "
# --- two xen-utils versions; the front runs the running hypervisor's
# (4.17 on Debian 12, 4.20 on Debian 13)
run=$(cat /sys/hypervisor/version/major).$(cat /sys/hypervisor/version/minor)
xb_note "hypervisor $run"
mkdir -p /tmp/fakelib /tmp/origlib
cat > /tmp/twoversions.sh <<EOS
mount --bind /usr/lib /tmp/origlib || exit 9
for e in /tmp/origlib/*; do ln -s "\$e" /tmp/fakelib/; done
mkdir -p /tmp/fakelib/xen-4.99/bin
printf '#!/bin/sh\necho FAKE-XL-4.99 "\$@"\n' > /tmp/fakelib/xen-4.99/bin/xl
chmod +x /tmp/fakelib/xen-4.99/bin/xl
mount --bind /tmp/fakelib /usr/lib || exit 9
ls -d /usr/lib/xen-* | tr '\n' ' '; echo
strace -f -e trace=execve -o /tmp/front.trace $FRONT domname 0; echo "rc \$?"
EOS
unshare -m sh /tmp/twoversions.sh > /tmp/two.out 2>&1
sed 's/^/XQTAP #   /' /tmp/two.out
xb_check "with $run and 4.99 installed, the front runs $run's xl" grep -qx Domain-0 /tmp/two.out
xb_check "  (execve of /usr/lib/xen-$run/bin/xl)" grep -q "execve(\"/usr/lib/xen-$run/bin/xl\"" /tmp/front.trace
xb_check "  never 4.99's" sh -c "! grep -q FAKE-XL /tmp/two.out"

xb_phase "two xen-utils versions; the front runs the runni"
# --- an orphan: list shows its reason, status what holds it
d=$(xb_guest held 128) || xb_not_ok "create held"
xb_hold_page holder $d; xb_is $? 0 "a dom0 helper (pid $holder) maps a page of domain $d"
xl destroy $d
xb_wait_state $d zombie 60
# The eta says stalled once nothing has come back for 5 s.
i=0; while [ "$(xb_read $XB_ROOT/job/$d/eta)" != stalled ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
$XR list > /tmp/list.out 2>&1
sed 's/^/XQTAP #   /' /tmp/list.out
xb_check "list shows the orphan with its reason" grep -qE "^ +$d +held +zombie .* stalled +orphan " /tmp/list.out
xb_check "  and what holds it" grep -qE "^ +held by: .*$holder xbtool" /tmp/list.out
$XR --json list > /tmp/list.json
xb_check "--json list carries reason orphan, held_by, stalled and eta null" \
	grep -qE "\"domid\":$d,\"name\":\"held\",[^}]*\"reason\":\"orphan\"[^}]*\"eta_s\":null,\"stalled\":true[^}]*\"held_by\":\"[^\"]*$holder xbtool" /tmp/list.json
$XR status $d > /tmp/zombie.out 2>&1
sed 's/^/XQTAP #   /' /tmp/zombie.out
xb_check "status says orphan" grep -qE '^  reason +orphan \(a dead domain another toolstack left behind\)' /tmp/zombie.out
xb_check "  prints held-by naming the helper" grep -qE "^  held by +.*$holder xbtool" /tmp/zombie.out
xb_check "  and that it is stalled" grep -qE '^  time left +stalled' /tmp/zombie.out
kill -TERM $holder; wait $holder 2>/dev/null
xb_wait_state $d done 120
xb_is "$(xb_state $d)" done "the orphan's job ends done once the helper lets go"

xb_phase "an orphan"
# --- wait-free: quick answers
$XR wait-free 1M > /tmp/wf.out 2>&1; rc=$?
xb_is $rc 0 "wait-free 1M: exit 0 at once ($(cat /tmp/wf.out))"
$XR wait-free 1T > /tmp/wf.out 2>&1; rc=$?
xb_is $rc 1 "wait-free 1T: exit 1, nothing can free that much"
xb_check "  saying why: $(cat /tmp/wf.out)" grep -q "no teardown is under way" /tmp/wf.out
$XR --json wait-free 1T > /tmp/wf.json 2>/dev/null
xb_check "  --json: result cannot, with the figures" grep -qE '^\{"result":"cannot","need_pages":268435456,"free_pages":[0-9]+,"releasing_pages":0,' /tmp/wf.json
$XR wait-free 512 > /tmp/wf.out 2>&1; rc=$?
xb_is $rc 2 "wait-free 512 (no unit): usage error, exit 2"
xb_check "  saying a unit is needed" grep -q "K, M, G or T" /tmp/wf.out

xb_phase "wait-free"
# --- xl create through the front: what builds nothing is exactly xl's
cat > /tmp/small.cfg <<EOF
name = "small"
uuid = "5bd9f4a6-2c1e-4f0b-9d43-8a7e61c0b2d5"
type = "pv"
kernel = "$XB_KERNEL"
memory = 128
vcpus = 1
EOF
same() {
	desc=$1; shift
	real_out=$(xl "$@" 2>&1); real_rc=$?
	front_out=$($FRONT "$@" 2>&1); front_rc=$?
	if [ "$real_out" = "$front_out" ] && [ $real_rc = $front_rc ]; then
		xb_ok "xl $desc: same output and exit status ($real_rc) through the front"
	else
		xb_not_ok "xl $desc through the front"
		xb_note "  real $real_rc: $(printf '%s' "$real_out" | head -c 300)"
		xb_note "  front $front_rc: $(printf '%s' "$front_out" | head -c 300)"
	fi
}
same "create -n (dry run)" create -n /tmp/small.cfg
same "create -n with key=value" create -n /tmp/small.cfg memory=96 'name="other"'
same "create -n with a key=value xl cannot parse (fails)" create -n /tmp/small.cfg name=other
same "-N create (global dry run)" -N create /tmp/small.cfg
same "create cfg key=value -p (an option after key=value: usage)" create /tmp/small.cfg memory=96 -p
same "create without a config (fails)" create
same "create of a missing file (fails)" create /tmp/no-such.cfg
same "create with an unknown option (fails)" create -Z /tmp/small.cfg
$FRONT create -n /tmp/small.cfg memory=96 > /tmp/dry.out 2>&1
xb_check "  (the dry run shows memory=96 from the command line)" grep -q '"target_memkb": 98304' /tmp/dry.out
$FRONT create --wait-memory-timeout x /tmp/small.cfg > /tmp/bad.out 2>&1; rc=$?
xb_is $rc 2 "the front's own --wait-memory-timeout with a bad value: exit 2"
xb_check "  saying what is accepted: $(cat /tmp/bad.out)" grep -q "number of seconds" /tmp/bad.out
free_before=$(xb_free_pages)
xb_time t $FRONT -v create -p /tmp/small.cfg > /tmp/create.out 2>&1; rc=$?
head -n 2 /tmp/create.out | sed 's/^/XQTAP #   /'
[ $rc = 0 ] || grep -iE 'error|fail|cannot|invalid' /tmp/create.out | head -n 12 | sed 's/^/XQTAP #   /'
xb_is $rc 0 "xl create with memory to spare through the front: exit 0 ($t ms)"
xb_check "  no wait" sh -c "! grep -q 'waiting for memory' /tmp/create.out"
xb_check "  the front's estimate, with -v: 132 MiB needed (128, a 1.5 MiB pool, 1 MiB, rounded up to 2)" grep -q "132 MiB needed" /tmp/create.out
s=$(xl domid small 2>/dev/null)
xb_check "  the guest exists (domain $s)" test -n "$s"
xb_note "  it took $(( (free_before - $(xb_free_pages)) / 256 )) MiB of free memory"
xl destroy small

xb_wait_memory $base "all memory back"
xb_daemon_stop
[ $XB_FAILED -eq 0 ] || xb_daemon_log 20
xb_phase "xl create through the front"
xb_done
