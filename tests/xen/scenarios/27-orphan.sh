# Orphans on real Xen: plain `xl destroy` (the real one, not the front or
# the daemon) of a guest whose page a dom0 helper maps leaves a dead domain
# behind; xenreaperd must adopt it (reason orphan, state zombie, held-by
# naming the helper), touch nothing else, adopt it exactly once across a
# restart, and end the job done with the memory back once the helper lets
# go.  A paused guest and one that shut down are never adopted.
. $XB_LIB
base=$(xb_free_pages)
xb_daemon_start || { xb_not_ok "xenreaperd starts"; xb_done; }
poff=$(xb_initrd poweroff 'poweroff -f')
off=$(xb_guest_booting orph-off 128 $poff 'on_poweroff = "preserve"') || xb_not_ok "create a guest that powers off"
paused=$(xb_guest orph-paused 128) || xb_not_ok "create a paused guest"
d=$(xb_guest orph-victim 512) || { xb_not_ok "create a 512 MiB guest"; xb_done; }
paused_pages=$($XB_TOOL pages $paused)
xb_hold_page holder $d; xb_is $? 0 "a dom0 helper (pid $holder) maps a page of domain $d"
xb_check "plain xl destroy returns" xl destroy $d
xb_check "  and leaves domain $d dead, not gone" sh -c "$XB_TOOL info $d | grep -q 'dying=1'"
xb_wait_state $d zombie 60
xb_is "$(xb_read $XB_ROOT/job/$d/reason)" orphan "the daemon adopts it with reason orphan"
xb_is "$(xb_state $d)" zombie "  in state zombie"
xb_is "$(xb_read $XB_ROOT/job/$d/name)" orph-victim "  with the name it had alive"
xb_is "$(xb_read $XB_ROOT/job/$d/uuid)" "$($XB_TOOL uuid $d)" "  and the UUID the hypervisor reports"
held=$(xb_read $XB_ROOT/job/$d/held-by)
xb_note "  held-by: $held"
case $held in *"$holder xbtool"*) xb_ok "  held-by names the helper by pid and name" ;;
*) xb_not_ok "  held-by names the helper ($holder xbtool)" ;; esac
xb_check "  one log line says what holds it" grep -q "domain $d (orph-victim.*adopted as an orphan" /tmp/xenreaperd.log

# Nothing else touched; the shut-down guest waits for someone to decide.
i=0; while ! $XB_TOOL info $off 2>/dev/null | grep -q 'shutdown=1' && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
sleep 5	# longer than the 3 s settle time: it would have been adopted by now
xb_is "$(xb_state $paused)" "" "a paused guest is not adopted"
xb_is "$($XB_TOOL pages $paused)" "$paused_pages" "  nor touched"
xb_check "a guest that shut down ($($XB_TOOL info $off)) is not adopted" test -z "$(xb_state $off)"

# kill -9 and a restart while the orphan is still there: still one job.
kill -9 $XB_DAEMON_PID; wait $XB_DAEMON_PID 2>/dev/null
xb_daemon_start || xb_not_ok "xenreaperd restarts"
sleep 5	# again past the settle time
xb_is "$(xenstore-list $XB_ROOT/job | grep -cx $d)" 1 "after a restart there is still exactly one job for it"
xb_is "$(xb_read $XB_ROOT/job/$d/reason)" orphan "  with reason orphan"
xb_is "$(grep -c "domain $d (orph-victim.*adopted as an orphan" /tmp/xenreaperd.log)" 1 "  adopted once, resumed after"

kill -TERM $holder; wait $holder 2>/dev/null
xb_wait_state $d done 120
xb_is "$(xb_state $d)" done "once the helper lets go, the orphan's job ends done"
xb_check "  with its duration" test -n "$(xb_read $XB_ROOT/job/$d/finished)"
xb_check "  and domain $d is gone" sh -c "! $XB_TOOL pages $d >/dev/null"
xl destroy $off; xl destroy $paused
xb_wait_memory $base "all memory back"
xb_daemon_stop
[ $XB_FAILED -eq 0 ] || xb_daemon_log 30
xb_done
