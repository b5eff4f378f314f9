# A destroy child that fork(2) left waiting for ever on a lock, on real Xen.
# libxl forks a domain's destroy child from the worker; one forked while
# another worker is inside libxencall's buffer cache waits on its mutex for
# ever, before any hypercall (seen once in `make bench`'s batch of eight
# with jobs = 4, too rare to wait for).  tests/xen/forkhang.so, preloaded
# into xenreaperd, makes exactly that child on the first fork after
# /tmp/forkhang.arm appears.  The daemon must find it within seconds, kill
# it and say why, and tear the domain down on the retry, with nothing else
# killed and the job never called stuck.  The guest has no devices, on
# purpose: the first fork of its destroy is then the destroy child (with a
# vif or disk it would be a hotplug script, which the daemon also ends,
# but that is not the child this is about).
. $XB_LIB
XB_DAEMON_LOG=/tmp/xenreaperd-forklock.log
: > $XB_DAEMON_LOG
SHIM=$XB_BUILD/tests/xen/.libs/forkhang.so ARM=/tmp/forkhang.arm
base=$(xb_free_pages)
rm -f $ARM $ARM.pid
xb_guest fhang 128 > /tmp/fhang.domid & xb_guest fhang-by 128 > /tmp/fhang-by.domid & wait
d=$(cat /tmp/fhang.domid) by=$(cat /tmp/fhang-by.domid)
xb_check "two guests created" test -n "$d" -a -n "$by"
xb_check "the fault is built ($SHIM)" test -f $SHIM
XB_DAEMON_WRAP="env LD_PRELOAD=$SHIM XB_FORKHANG_ARM=$ARM" xb_daemon_start ||
	{ xb_not_ok "xenreaperd starts with the fault preloaded"; xb_done; }
touch $ARM
xb_request $d
xb_wait_final $d 120
hung=$(cat $ARM.pid 2>/dev/null)
xb_check "the fault fired once: the arm file was taken and a child made (pid ${hung:-none})" \
	sh -c "test ! -e $ARM && test -n '$hung'"
xb_check "the job ends done" test "$(xb_state $d)" = done
xb_check "its domain is gone" sh -c "! $XB_TOOL info $d >/dev/null 2>&1"
xb_check "xenreaperd killed that child, saying why" \
	grep -q "killed pid $hung, a child libxl forked from xenreaperd and left waiting for ever on a lock" $XB_DAEMON_LOG
xb_check "  and no other" test "$(grep -c 'left waiting for ever on a lock' $XB_DAEMON_LOG)" = 1
xb_check "  the destroy it held failed and was tried again" grep -q "domain $d .*libxl_domain_destroy failed" $XB_DAEMON_LOG
xb_check "  never called stuck: the child was seen long before stuck-after" \
	sh -c "! grep -q 'is stuck' $XB_DAEMON_LOG"
xb_check "the bystander lives on, not dying" sh -c "$XB_TOOL info $by | grep -q 'dying=0'"
# The fault is spent: the next teardown's children are the real ones.
xb_request $by
xb_wait_final $by 120
xb_check "the bystander's teardown then ends done" test "$(xb_state $by)" = done
xb_check "  with no child killed" test "$(grep -c 'left waiting for ever on a lock' $XB_DAEMON_LOG)" = 1
xb_wait_memory $base "all their memory is back"
[ $XB_FAILED -eq 0 ] || xb_daemon_log 30
xb_daemon_stop
xb_done
