# A start with the history full (issue 21, defect 11): 512 done jobs kept
# under job/ (the retention cap), as earlier runs leave them, and one guest
# to tear down.  The daemon must reach `running` without reading the
# history first, take a request at once, and read the history after, the
# newest record first, each made dom0-only.  That the cap holds once the
# whole history is read is test-review2's: here the read of all 512 took
# 54 s of the boot.  The records are removed at the end, or each daemon
# the later scenarios of the boot start would read them all again beside
# what those scenarios measure.  The time to `running` is noted beside a
# start with no history in the same boot; figures, not bounds (make bench
# is where speed is judged).  The guest has no devices: the point is
# xenstore's history, not the teardown.
. $XB_LIB
printf '[daemon]\nretention = 2h\n' > /tmp/history.conf
t0=$(xb_ms)
xb_daemon_start -c /tmp/history.conf || { xb_not_ok "xenreaperd starts"; xb_done; }
t_empty=$(($(xb_ms) - t0))
xb_daemon_stop
xenstore-rm $XB_ROOT/job
n=512
# The records, as path/value pairs, a line each, written by one
# xenstore-write per thousand pairs (a shell loop building one command
# line took minutes under emulation).
awk -v n=$n -v now=$(date +%s) -v root=$XB_ROOT 'BEGIN {
	for (i = 0; i < n; i++) {
		p = root "/job/" (20000 + i); t = now - 3000 + i
		printf "%s/uuid 00000000-0000-4000-8000-000000000000\n", p
		printf "%s/name old%d\n%s/pool Pool-0\n%s/state done\n", p, i, p, p
		printf "%s/reason request\n%s/policy deferred\n%s/priority low\n", p, p, p
		printf "%s/pages-total 256\n%s/pages-left 0\n%s/progress 100\n%s/scrub-pages 0\n", p, p, p, p
		printf "%s/requested %d.000\n%s/started %d.100\n%s/finished %d.500\n", p, t, p, t, p, t
	}
}' > /tmp/history.pairs
xb_check "$n finished jobs planted under job/" sh -c "xargs -n 2000 xenstore-write < /tmp/history.pairs"
xb_is "$(xenstore-list $XB_ROOT/job | wc -l)" $n "  all there"
last=$XB_ROOT/job/$((20000 + n - 1))
xenstore-chmod -r $last n0 b5	# an admin opened one to domain 5
xb_check "  one of them opened to domain 5" sh -c "xenstore-ls -p $last | grep -q 'b5)'"
d=$(xb_guest history 128) || { xb_not_ok "create a guest"; xb_done; }
t0=$(xb_ms)
xb_daemon_spawn -c /tmp/history.conf
xb_check "xenreaperd starts with the history full" xb_daemon_running 120
t_run=$(($(xb_ms) - t0))
xb_request $d
xb_wait_final $d 120
t_req=$(($(xb_ms) - t0))
xb_is "$(xb_state $d)" done "a request made at once is done"
# The history is read after the start, two records a loop turn, from the
# end of job/'s listing: xenstored lists children in the order they were
# made, so the newest planted record, the one opened to domain 5, comes
# first.  About 36 xenstore round trips a record, at 1 to 15 ms each under
# emulation (the last on a loaded host): the guard is long.
private() { xenstore-ls -p $last > /tmp/history.perms 2>/dev/null && [ -s /tmp/history.perms ] &&
	! grep -qv 'n0)' /tmp/history.perms; }
xb_check "the history is read after the start: the newest record, opened to domain 5, is dom0-only again (xenstore-ls -p)" \
	xb_until 120 private
t_hist=$(($(xb_ms) - t0))
xb_check "  and still there" xb_read $last/state
xb_note "no history: running after $t_empty ms; with $n done jobs kept: running after $t_run ms, the request done after $t_req ms, the newest record read after $t_hist ms"
xb_daemon_stop
xenstore-rm $XB_ROOT/job
[ $XB_FAILED -eq 0 ] || xb_daemon_log 30
xb_done
