# Per-pool policy on real Xen: a sync pool's job waits in scrubbing until
# the heap dump says its pages are clean; a deferred pool's job is done
# while scrubbing is still pending; preserved dead guests are torn down
# automatically only in a pool whose policy says so; SIGHUP with a bad
# file keeps the old policy.  Needs 3 CPUs for a second cpupool.
#
# Xen scrubs freed pages on idle CPUs, and an idle emulated CPU scrubs 2 GiB
# about as fast as the teardown frees it.  To see a backlog, the scrub
# cases run on a busy host, as a loaded production host would be: busy
# loops on every dom0 vCPU (Pool-0) and a spinning guest in p1.  There
# the backlog hardly moves (482000 of a 2 GiB guest's 524288 pages still
# pending at the probe after its release), so 512 MiB guests show it as
# well; the sync job then waits for one CPU to scrub them (Xen scrubs a
# node with one CPU at a time), some 15 s under emulation.
. $XB_LIB
ncpu=$(xl info | awk '/^nr_cpus/ { print $3 }')
if [ "${ncpu:-0}" -lt 3 ]; then
	xb_not_ok "a second cpupool needs 3 CPUs, this boot has $ncpu (run xenbench --smp 3)"
	xb_done
fi
xl cpupool-cpu-remove Pool-0 2 && xl cpupool-create name=\"p1\" cpus=[\"2\"] >/dev/null
xb_check "cpupool p1 created on CPU 2" sh -c "xl cpupool-list | grep -q '^p1 '"

cat > /tmp/xr.conf <<'CONF'
[daemon]
scrub-probe-interval = 200ms
[pool:Pool-0]
scrub = deferred
teardown = request
[pool:p1]
scrub = sync
teardown = shutdown,crash
grace = 3s
CONF
xb_check "the policy file passes --check-config" sh -c "$XB_DAEMON --check-config /tmp/xr.conf >/dev/null"
xb_daemon_start -c /tmp/xr.conf || { xb_not_ok "xenreaperd starts with the policy"; xb_done; }
xb_is "$(xb_read $XB_ROOT/daemon/config)" /tmp/xr.conf "daemon/config names the policy file"

# A guest that keeps p1's only CPU busy for the scrub cases.
spinner=$(xb_guest_booting spinner 128 $(xb_initrd spin 'while :; do :; done') 'pool = "p1"')

# watch DOMID [CMD]: poll the job, its share of the backlog and the global
# figure every 50 ms until done/failed; one line per sample.  CMD runs
# once, after the job has been seen scrubbing for 2 s.
watch_job() {
	t0=$(xb_ms); : > /tmp/watch.$1; since=
	while :; do
		s=$(xb_state $1) now=$(( $(xb_ms) - t0 ))
		echo "$now $s $(xb_read $XB_ROOT/job/$1/scrub-pages) $(xb_read $XB_ROOT/scrub/pages)" >> /tmp/watch.$1
		case $s in done|failed) break ;; esac
		if [ "$s" = scrubbing ] && [ -n "${2:-}" ]; then
			[ -z "$since" ] && since=$now
			[ $((now - since)) -ge 2000 ] && { $2; set -- $1; }
		fi
		[ $now -gt 120000 ] && break
		sleep 0.05
	done
}

def=$(xb_guest def 512) || xb_not_ok "create a 512 MiB guest in Pool-0"
syn=$(xb_guest syn 512 'pool = "p1"') || xb_not_ok "create a 512 MiB guest in p1"
busy=
for i in $(seq 1 $(nproc)); do nice -n 19 sh -c 'while :; do :; done' & busy="$busy $!"; done
show_samples() { sed 's/^/XQTAP #     ms state share backlog: /' /tmp/watch.$1 | tail -n 12; }

# --- deferred: done while the heap dump still reports pending scrub
# scrub/probed may be left by an earlier daemon (said if this fails).
probed_before=$(xb_read $XB_ROOT/scrub/probed)
xb_request $def; watch_job $def
xb_is "$(xb_state $def)" done "deferred job ends done"
xb_is "$(xb_read $XB_ROOT/job/$def/policy)" deferred "  under policy deferred"
t_done=$(awk '$2 == "done" { print $1; exit }' /tmp/watch.$def)
# Deferred jobs are already done: the daemon spends a heap dump on them
# only once releases have settled (5 s), so wait for that probe: one after
# the job finished (a probe before its release reads none of its pages).
fin=$(xb_read $XB_ROOT/job/$def/finished)
probed_after() { awk -v p="$(xb_read $XB_ROOT/scrub/probed)" -v f="$fin" 'BEGIN { exit !(p != "" && f != "" && p > f) }'; }
i=0; while ! probed_after && [ $i -lt 200 ]; do sleep 0.1; i=$((i+1)); done
pending=$(xb_read $XB_ROOT/scrub/pages)
share=$(xb_read $XB_ROOT/job/$def/scrub-pages)
after=no; probed_after && after=yes
xb_check "deferred job done while the probe after it ($after) reports ${pending:-no} pages pending (job's share ${share:-?})" \
	test "$after" = yes -a "${pending:-0}" -gt 0 -a "${share:-0}" -gt 0
[ "$after" = yes ] && [ "${pending:-0}" -gt 0 ] || {
	show_samples $def; xb_note "    finished $fin; probed $probed_before before the request, $(xb_read $XB_ROOT/scrub/probed) now"; }
xb_is "$(xb_read $XB_ROOT/scrub/source)" heap-dump "scrub figure comes from the heap dump"
xb_check "per-node figure published" test -n "$(xb_read $XB_ROOT/scrub/node/0)"
xb_note "deferred 512 MiB: request to done ${t_done} ms"

# Two guests that power themselves off at once, preserved: one per pool.
# Started only now: p1's automatic teardown is a sync job, whose probes
# would otherwise come between the deferred release and its figure (and
# the figure would then wait for the least gap between deferred probes).
poff=$(xb_initrd poweroff 'poweroff -f')
auto=$(xb_guest_booting poff-auto 128 $poff 'pool = "p1"' 'on_poweroff = "preserve"')
manual=$(xb_guest_booting poff-manual 128 $poff 'pool = "Pool-0"' 'on_poweroff = "preserve"')
xb_check "two self-powering-off guests started" test -n "$auto" -a -n "$manual"

xb_phase "deferred"
# --- sync: scrubbing with pending > 0 while the CPUs are busy, then done
# with 0 once they go idle and Xen scrubs.
stop_busy() { kill $busy 2>/dev/null; busy=; }
xb_request $syn
watch_job $syn stop_busy
stop_busy
xb_is "$(xb_state $syn)" done "sync job ends done"
xb_is "$(xb_read $XB_ROOT/job/$syn/policy)" sync "  under policy sync"
xb_is "$(xb_read $XB_ROOT/job/$syn/pool)" p1 "  in pool p1"
seen=$(awk '$2 == "scrubbing" && $3 > 0' /tmp/watch.$syn | wc -l)
xb_check "sync job seen in scrubbing with its share > 0 ($seen samples, max $(awk '$2 == "scrubbing" { if ($3 > m) m = $3 } END { print m + 0 }' /tmp/watch.$syn) pages)" test "$seen" -gt 0
[ "$seen" -gt 0 ] || show_samples $syn
xb_is "$(xb_read $XB_ROOT/job/$syn/scrub-pages)" 0 "sync job done with scrub-pages 0"
t_scrub=$(awk '$2 == "scrubbing" { print $1; exit }' /tmp/watch.$syn)
t_done=$(awk '$2 == "done" { print $1; exit }' /tmp/watch.$syn)
xb_note "sync 512 MiB: request to scrubbing ${t_scrub:-?} ms, to done ${t_done:-?} ms"

xb_phase "sync"
# --- automatic teardown of preserved dead guests
i=0; while ! $XB_TOOL info $manual 2>/dev/null | grep -q 'shutdown=1' && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
xb_check "guest $manual powered off and was preserved" sh -c "$XB_TOOL info $manual | grep -q 'shutdown=1 reason=0'"
xb_wait_state $auto done 60
xb_is "$(xb_state $auto)" done "preserved dead guest in the auto pool torn down"
xb_is "$(xb_read $XB_ROOT/job/$auto/reason)" poweroff "  recorded with reason poweroff"
xb_check "no domain $auto left" sh -c "! $XB_TOOL pages $auto >/dev/null"
sleep 5
xb_check "the same guest in a request-only pool is left alone" $XB_TOOL pages $manual
xb_check "  with no job" test -z "$(xb_state $manual)"

xb_phase "automatic teardown of preserved dead guests"
# --- SIGHUP with a bad file keeps the old policy
sed 's/^scrub = deferred/scrub = sometimes/' /tmp/xr.conf > /tmp/xr.bad && cp /tmp/xr.bad /tmp/xr.conf
kill -HUP $XB_DAEMON_PID
i=0; while [ -z "$(xb_read $XB_ROOT/daemon/config-error)" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
err=$(xb_read $XB_ROOT/daemon/config-error)
case $err in *"xr.conf:4: scrub"*) xb_ok "bad reload published in daemon/config-error with its line" ;;
*) xb_not_ok "bad reload published in daemon/config-error"; xb_note "  got: $err" ;; esac
xb_request $manual
xb_wait_state $manual done 30
xb_is "$(xb_read $XB_ROOT/job/$manual/policy)" deferred "old policy still in force after the bad reload"
sed 's/^scrub = sometimes/scrub = deferred/' /tmp/xr.conf > /tmp/xr.good && cp /tmp/xr.good /tmp/xr.conf
kill -HUP $XB_DAEMON_PID
i=0; while [ -n "$(xb_read $XB_ROOT/daemon/config-error)" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
xb_is "$(xb_read $XB_ROOT/daemon/config-error)" "" "a good reload clears daemon/config-error"
xb_check "daemon survived both reloads" kill -0 $XB_DAEMON_PID

xb_request $spinner; xb_wait_state $spinner done 60
xb_daemon_stop
[ $XB_FAILED -eq 0 ] || xb_daemon_log 40
xb_phase "SIGHUP with a bad file keeps the old policy"
xb_done
