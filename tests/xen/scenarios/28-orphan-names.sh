# Orphan protection by the name a guest died with, and reloads that change
# whether orphans are adopted (issue 21, defects 3 and 10).  Guests are
# paused and have no devices: the point is xenstore's name node and the
# hypervisor's dead domain, which a held page keeps (as in 27-orphan);
# devices would only lengthen the teardowns.
# - A guest created as web--incoming (libxl's name for a guest migrating in)
#   and renamed web (as libxl does when the migration ends), left dead by
#   plain `xl destroy`: protected by `protect = web`, never adopted.
# - A guest created as web and renamed old (`xl rename`), left dead: adopted,
#   under the name old.
# - orphans = ignore leaves a dead guest alone; a reload to adopt adopts it.
. $XB_LIB
base=$(xb_free_pages)
printf '[daemon]\nprotect = web\n[default]\norphans = adopt\n' > /tmp/names.conf
xb_daemon_start -c /tmp/names.conf || { xb_not_ok "xenreaperd starts"; xb_done; }

# hold_and_kill DOMID: a dom0 helper maps a page of DOMID, then plain xl
# destroys it: dead, held.  Sets HOLDER.
hold_and_kill() {
	xb_hold_page HOLDER $1
	xl destroy $1 && $XB_TOOL info $1 | grep -q 'dying=1'
}

mig=$(xb_guest web--incoming 128) || { xb_not_ok "create web--incoming"; xb_done; }
xb_check "guest $mig renamed web--incoming -> web (as a migration's end does)" xl rename web--incoming web
xb_is "$(xb_read /local/domain/$mig/name)" web "  xenstore names it web"
hold_and_kill $mig; h_mig=$HOLDER
xb_check "  left dead by plain xl destroy, a page held" $XB_TOOL info $mig
xb_check "the daemon finds it protected by the name it died with" \
	xb_wait_log "domain $mig \\(web, .*protected: not adopting it" 30
xb_is "$(xb_state $mig)" "" "  and gives it no job"

old=$(xb_guest web 128) || { xb_not_ok "create web"; xb_done; }
xb_check "guest $old renamed web -> old (xl rename)" xl rename web old
hold_and_kill $old; h_old=$HOLDER
xb_wait_state $old zombie 60
xb_is "$(xb_read $XB_ROOT/job/$old/reason)" orphan "a guest renamed away from web is adopted when it dies"
xb_is "$(xb_read $XB_ROOT/job/$old/name)" old "  under the name it died with"

# orphans = ignore, then a reload to adopt.
printf '[daemon]\nprotect = web\n[default]\norphans = ignore\n' > /tmp/names.conf
kill -HUP $XB_DAEMON_PID
xb_check "reload to orphans = ignore" xb_wait_log "policy reloaded" 30
ign=$(xb_guest ignored 128) || { xb_not_ok "create ignored"; xb_done; }
hold_and_kill $ign; h_ign=$HOLDER
xb_check "a dead guest in a pool set to ignore is left alone" \
	xb_wait_log "domain $ign \\(ignored, .*orphans = ignore" 30
xb_is "$(xb_state $ign)" "" "  with no job"
printf '[daemon]\nprotect = web\n[default]\norphans = adopt\n' > /tmp/names.conf
kill -HUP $XB_DAEMON_PID
xb_wait_state $ign zombie 30
xb_is "$(xb_read $XB_ROOT/job/$ign/reason)" orphan "after a reload to adopt, it is adopted"
xb_is "$(xb_state $mig)" "" "  while the protected one still has no job"

kill -TERM $h_mig $h_old $h_ign; wait $h_mig $h_old $h_ign 2>/dev/null
xb_wait_state $old done 60
xb_is "$(xb_state $old)" done "once the pages are let go, the adopted orphans end done"
xb_wait_state $ign done 60
xb_is "$(xb_state $ign)" done "  both"
xb_check "  and the protected one went by itself (its last mapping gone)" \
	sh -c "$XB_TOOL wait-gone $mig 60000 >/dev/null"
xb_wait_memory $base "all memory back"
xb_daemon_stop
[ $XB_FAILED -eq 0 ] || xb_daemon_log 40
xb_done
