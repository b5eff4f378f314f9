# A zombie explained, on real Xen: a dom0 helper maps one page of a guest
# (libxenforeignmemory, as a leftover dom0 process would), the guest is torn
# down, and the job must turn zombie with held-by naming the helper by pid
# and name; once the helper lets go, the job ends done and the memory is
# back.  This is the long zombie the unit tests show with test doubles.
. $XB_LIB
base=$(xb_free_pages)
xb_daemon_start || { xb_not_ok "xenreaperd starts"; xb_done; }
d=$(xb_guest held 256) || { xb_not_ok "create a 256 MiB guest"; xb_done; }
xb_hold_page holder $d
xb_check "a dom0 helper (pid $holder) maps a page of domain $d ($(cat /tmp/hold.$d.ready /tmp/hold.$d.err 2>/dev/null | head -c 80))" test -s /tmp/hold.$d.ready
xb_request $d
xb_wait_state $d zombie 60
xb_is "$(xb_state $d)" zombie "the job turns zombie while the page is mapped"
held=$(xb_read $XB_ROOT/job/$d/held-by)
xb_note "  held-by: $held"
case $held in *"$holder xbtool"*) xb_ok "held-by names the helper by pid and name" ;;
*) xb_not_ok "held-by names the helper by pid and name ($holder xbtool)" ;; esac
case $held in *" page"*" held"*) xb_ok "  and says how many pages are held" ;; *) xb_not_ok "  and says how many pages are held" ;; esac
xb_check "the daemon's zombie line says what holds it" grep -q "is a zombie: dead, .*$holder xbtool" /tmp/xenreaperd.log
xb_check "the domain is dead, not gone" sh -c "$XB_TOOL info $d | grep -q 'dying=1'"
kill -TERM $holder; wait $holder 2>/dev/null
xb_wait_state $d done 120
xb_is "$(xb_state $d)" done "once the helper lets go, the job ends done"
xb_is "$(xb_read $XB_ROOT/job/$d/held-by)" "" "  and held-by is gone"
xb_wait_memory $base "all its memory is back"
xb_daemon_stop
[ $XB_FAILED -eq 0 ] || xb_daemon_log 30
xb_done
