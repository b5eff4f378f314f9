# Fault injection: rounds of three teardown requests each (one 512 MiB
# guest, two of 128 MiB: 64 MiB is too small for the dom0 kernel that the
# test guests boot), with xenreaperd killed by SIGKILL at a different moment
# every round and restarted.  Kill moments, by round number mod 5:
#   0  before any request is taken (daemon SIGSTOPped, requests written)
#   1  right after the intake transaction of one of the three requests
#      (when its job node appears), or a few ms after the requests landed
#   2  mid-hypercall: the 512 MiB domain's tot_pages has fallen below a
#      random 25-90 % of its pages
#   3  while publishing: right after the big job reads destroying, or right
#      after a small one reads done (the others still pending)
#   4  a random 0-3 s after the requests; then the restarted daemon is
#      killed again during its own start-up (resume), and restarted again
# Two paused bystander guests live through every round and are never
# requested.  At the end one line tallies the outcome:
#   fault-injection: rounds=R requested=N destroyed=D lost=L wrong=W double=X
# where, over the requested domains,
#   lost   = still alive (by UUID), or with no final (done/failed) job
#            carrying its UUID
#   wrong  = destroyed while its job says failed; plus any bystander or other
#            non-requested domain that vanished or changed tot_pages, and any
#            job for a domain nobody requested
#   double = torn down twice: a done job whose domain still exists; two job
#            records with its UUID; more than one intake line ("queued") or
#            more than one final transition (-> done/failed) for it in the
#            daemon log; any transition for it logged after its first final
#            one; or its job's finished time changed after it was first seen
#            final (the job was finished again by a later daemon)
# and all three must be 0, every job final and truthful (done => domain
# gone, failed => an error sentence), memory back to the baseline.
. $XB_LIB
XB_DAEMON_LOG=/tmp/xenreaperd-faults.log
: > $XB_DAEMON_LOG
F=/tmp/faults
rm -rf $F; mkdir -p $F
rounds=${XB_FAULT_ROUNDS:-10}
t_start=$(xb_ms)
# Job records must outlive the scenario: retention well past its length.
printf '[daemon]\nretention = 1h\n' > $F/xr.conf
free0=$(xb_free_pages)

# ms_sleep MS: sleep MS milliseconds (to vary a moment, never to wait for one).
ms_sleep() { sleep "$(($1 / 1000)).$(printf %03d $(($1 % 1000)))"; }
rand() { $XB_TOOL random $1; }
# The job tree in one read: "DOMID FIELD VALUE" lines.
jobs_dump() {
	xenstore-ls -f $XB_ROOT/job 2>/dev/null |
		sed -n "s|^$XB_ROOT/job/\([0-9]*\)/\([a-z-]*\) = \"\(.*\)\"\$|\1 \2 \3|p"
}
jf() { awk -v d=$1 -v f=$2 '$1 == d && $2 == f { sub(/^[^ ]* [^ ]* /, ""); print; exit }' $3; }
# Every non-requested domain must look the same as when first listed.
others_intact() {
	$XB_TOOL list > $F/now
	awk 'NR == FNR { req[$3] = 1; next }
	     FILENAME == ARGV[2] { if (!($2 in req) && $1 != 0) want[$2] = $3; next }
	     { have[$2] = $3 }
	     END { for (u in want) if (have[u] != want[u]) { print u; bad++ } exit bad > 0 }' \
		$F/requested $F/others $F/now
}

# restart: the daemon must start again at once after a kill.  If it does
# not (e.g. its lock is still held), say by whom, then wait for the lock
# and start it anyway so that the later rounds still run.
restart() {
	holders=$(xb_lock_holders)
	xb_daemon_start -c $F/xr.conf 2>/dev/null && return 0
	xb_not_ok "round $r: xenreaperd restarts at once after the kill"
	xb_note "  lock holders when restarted: ${holders:-none}; daemon said: $(tail -n 1 $XB_DAEMON_LOG)"
	until=$(($(xb_ms) + 30000))
	while [ -n "$(xb_lock_holders)" ] && [ $(xb_ms) -lt $until ]; do sleep 0.2; done
	xb_daemon_start -c $F/xr.conf
}

# Jobs that earlier scenarios of the boot left (on 4.20 this one runs
# after them) are no one's here: only a job that is new can be a stray.
jobs_dump > $F/jobs.start
# --- bystanders
xb_guest fby1 128 > $F/by1 & xb_guest fby2 128 > $F/by2 & wait
xb_check "two bystander guests created" test -s $F/by1 -a -s $F/by2
: > $F/requested
$XB_TOOL list > $F/others
cp $F/others $F/bystanders.start
base=$(xb_free_pages)
xb_daemon_start -c $F/xr.conf || { xb_not_ok "xenreaperd starts"; xb_done; }

for r in $(seq 1 $rounds); do
	kind=$(((r - 1) % 5))
	t_round=$(xb_ms)
	# (wait for these three only: the daemon is a child of this shell too)
	xb_guest f${r}b 512 > $F/r$r.b & p1=$!
	xb_guest f${r}s1 128 > $F/r$r.s1 & p2=$!
	xb_guest f${r}s2 128 > $F/r$r.s2 & p3=$!
	wait $p1 $p2 $p3
	big=$(cat $F/r$r.b) s1=$(cat $F/r$r.s1) s2=$(cat $F/r$r.s2)
	if [ -z "$big" ] || [ -z "$s1" ] || [ -z "$s2" ]; then
		xb_not_ok "round $r: three guests created"; continue
	fi
	$XB_TOOL list > $F/r$r.list
	req=
	for d in $big $s1 $s2; do
		line=$(awk -v d=$d '$1 == d' $F/r$r.list)
		# "ROUND DOMID UUID PAGES": a fresh domid and UUID every round.
		echo "$r $line" | awk '{ print $1, $2, $3, $4 }' >> $F/requested
		req="$req $XB_ROOT/request/$d $(echo $line | cut -d' ' -f2)"
	done
	# Everything else alive now must survive this round untouched.
	awk 'NR == FNR { req[$3] = 1; next } !($2 in req)' $F/requested $F/r$r.list > $F/others
	pbig=$(awk -v d=$big '$1 == d { print $3 }' $F/r$r.list)
	pid=$XB_DAEMON_PID
	t_create=$(xb_ms)

	case $kind in
	0)	kill -STOP $pid
		xenstore-write $req	# one transaction: all three at once
		delay=$(rand 300); ms_sleep $delay
		kill -KILL $pid
		moment="before intake: daemon stopped, requests written, SIGKILL +${delay} ms"
		pending=$(xenstore-list $XB_ROOT/request 2>/dev/null | wc -l)
		xb_is "$pending" 3 "round $r: all three requests still pending after a kill before intake" ;;
	1)	if [ $r -le 5 ]; then
			target=$(echo $big $s1 $s2 | cut -d' ' -f$(($(rand 3) + 1)))
			delay=$(rand 20)
			xenstore-write $req
			saw=$($XB_TOOL kill-when $pid 9 $delay 20000 node $XB_ROOT/job/$target/state '*')
			moment="right after intake of domain $target ($saw) +${delay} ms"
		else
			delay=$(rand 150)
			xenstore-write $req
			ms_sleep $delay
			kill -KILL $pid
			moment="${delay} ms after the requests landed (in or around intake)"
		fi ;;
	2)	pct=$((25 + $(rand 66)))
		xenstore-write $req
		saw=$($XB_TOOL kill-when $pid 9 0 60000 below $big $((pbig * pct / 100)))
		moment="mid-hypercall: domain $big below $pct % of $pbig pages ($saw)" ;;
	3)	delay=$(rand 6)
		if [ $r -le 5 ]; then node=$XB_ROOT/job/$big/state want=destroying
		else node=$XB_ROOT/job/$s1/state want=done; fi
		# The watch is set before the request: a 512 MiB teardown can
		# be over before a watcher started after it first looks.
		rm -f $F/kill.ready
		$XB_TOOL kill-when -r $F/kill.ready $pid 9 $delay 60000 node $node $want > $F/kill.out &
		killer=$!
		xb_wait_log '^watching$' 30 $F/kill.ready ||
			xb_not_ok "round $r: the watcher of $node is set before the request"
		xenstore-write $req
		wait $killer
		saw=$(cat $F/kill.out)
		xb_check "round $r: killed when $want was seen ($saw)" \
			sh -c "! grep -q 'saw=timeout' $F/kill.out"
		moment="publish: ${node#$XB_ROOT/} = $want ($saw) +${delay} ms" ;;
	4)	delay=$(rand 3000)
		xenstore-write $req
		ms_sleep $delay
		kill -KILL $pid
		moment="${delay} ms after the requests" ;;
	esac
	wait $pid 2>/dev/null
	states=$(for d in $big $s1 $s2; do printf '%s=%s ' $d "$(xb_state $d)"; done)
	xb_note "round $r (kind $kind): killed $moment; jobs then: $states"

	if [ $kind = 4 ]; then
		# Kill the restarted daemon again while it starts up and resumes.
		xb_daemon_spawn -c $F/xr.conf
		delay=$(rand 80)
		saw=$($XB_TOOL kill-when $XB_DAEMON_PID 9 $delay 20000 node $XB_ROOT/daemon/pid $XB_DAEMON_PID)
		wait $XB_DAEMON_PID 2>/dev/null
		xb_note "round $r: restarted daemon killed during start-up, ${delay} ms after daemon/pid ($saw; daemon/state $(xb_read $XB_ROOT/daemon/state))"
	fi
	restart || { xb_not_ok "round $r: xenreaperd starts once its lock is free"; break; }

	final=0
	for d in $big $s1 $s2; do xb_wait_final $d 60 && final=$((final + 1)); done
	jobs_dump > $F/r$r.jobs
	gone=0 truthful=0
	for d in $big $s1 $s2; do
		u=$(awk -v r=$r -v d=$d '$1 == r && $2 == d { print $3 }' $F/requested)
		st=$(jf $d state $F/r$r.jobs)
		$XB_TOOL list | grep -q " $u " || gone=$((gone + 1))
		case $st in
		done) $XB_TOOL list | grep -q " $u " || truthful=$((truthful + 1)) ;;
		failed) [ -n "$(jf $d error $F/r$r.jobs)" ] && truthful=$((truthful + 1)) ;;
		esac
		# Its first final record, to compare with at the end.
		echo "$d $st $(jf $d finished $F/r$r.jobs)" >> $F/finals
	done
	xb_is "$final/$gone/$truthful" 3/3/3 "round $r: jobs final/domains gone/jobs truthful"
	bad=$(others_intact) || true
	xb_is "$bad" "" "round $r: bystanders and other domains untouched"
	xb_note "round $r: create $((t_create - t_round)) ms, fault and recovery $(($(xb_ms) - t_create)) ms"
done

xb_phase "bystanders"
# --- the tally, over every round, from xenstore and the daemon log
jobs_dump > $F/jobs.end
$XB_TOOL list > $F/now
requested=0 destroyed=0 lost=0 wrong=0 double=0 untruthful=0
while read r d u p; do
	requested=$((requested + 1))
	st=$(jf $d state $F/jobs.end) ju=$(jf $d uuid $F/jobs.end)
	alive=no; grep -q " $u " $F/now && alive=yes
	[ $alive = no ] && destroyed=$((destroyed + 1))
	why=
	if [ $alive = yes ] || [ "$ju" != "$u" ] || { [ "$st" != done ] && [ "$st" != failed ]; }; then
		lost=$((lost + 1)); why="$why lost(alive=$alive state=$st)"
	fi
	if [ $alive = no ] && [ "$st" = failed ]; then wrong=$((wrong + 1)); why="$why destroyed-but-failed"; fi
	if [ "$st" = failed ] && [ -z "$(jf $d error $F/jobs.end)" ]; then
		untruthful=$((untruthful + 1)); why="$why failed-without-error"
	fi
	# The daemon log's view of this domid: its lines in order.
	grep -E "^<[0-9]>domain $d \(" $XB_DAEMON_LOG > $F/log.$d
	intakes=$(grep -cE '\): queued$' $F/log.$d)
	finals=$(grep -cE ' -> (done|failed)([ :]|$)' $F/log.$d)
	after=$(awk '/ -> (done|failed)([ :]|$)/ { if (seen) n++; seen = 1; next } seen && / -> / { n++ } END { print n + 0 }' $F/log.$d)
	records=$(awk -v u=$u '$2 == "uuid" && $3 == u' $F/jobs.end | wc -l)
	refinished=$(awk -v d=$d -v f="$(jf $d finished $F/jobs.end)" '$1 == d && $3 != f' $F/finals | wc -l)
	x=0
	[ "$st" = done ] && [ $alive = yes ] && { x=1; why="$why done-but-alive"; }
	[ "$records" -gt 1 ] && { x=1; why="$why $records-records"; }
	[ "$intakes" -gt 1 ] && { x=1; why="$why $intakes-intakes"; }
	[ "$finals" -gt 1 ] && { x=1; why="$why $finals-finals"; }
	[ "$after" -gt 0 ] && { x=1; why="$why $after-after-final"; }
	[ "$refinished" -gt 0 ] && { x=1; why="$why finished-again"; }
	double=$((double + x))
	[ -n "$why" ] && xb_note "round $r domain $d ($u):$why"
done < $F/requested
# Non-requested domains: the bystanders, checked against the start.
bystanders_ok=yes
while read d u p dying; do
	[ "$d" = 0 ] && continue
	have=$(awk -v u=$u '$2 == u { print $1, $3 }' $F/now)
	if [ "$have" != "$d $p" ]; then
		wrong=$((wrong + 1)); bystanders_ok=no
		xb_note "bystander $d ($u): was $p pages, now '${have:-gone}'"
	fi
done < $F/bystanders.start
# A job for a UUID nobody requested, not there before the scenario.
strays=$(awk 'FILENAME == ARGV[1] { req[$3] = 1; next }
	FILENAME == ARGV[2] { if ($2 == "uuid") old[$1 " " $3] = 1; next }
	$2 == "uuid" && !($3 in req) && !(($1 " " $3) in old) { print $1 }' \
	$F/requested $F/jobs.start $F/jobs.end | tr '\n' ' ')
if [ -n "$strays" ]; then
	wrong=$((wrong + $(echo $strays | wc -w))); xb_note "jobs for domains nobody requested: $strays"
fi

tally="fault-injection: rounds=$rounds requested=$requested destroyed=$destroyed lost=$lost wrong=$wrong double=$double"
xb_note "$tally"
echo "$tally"
xb_is "$requested" $((rounds * 3)) "every round requested three teardowns"
xb_is "$lost/$wrong/$double" 0/0/0 "lost/wrong/double are all 0"
xb_is "$untruthful" 0 "every failed job carries an error sentence"
xb_is "$bystanders_ok" yes "the bystanders kept their UUID and tot_pages"
xb_wait_memory $base "all memory of the requested guests back"

xb_phase "the tally, over every round, from xenstore and t"
# --- leave dom0 clean
xb_daemon_stop
for b in $(cat $F/by1 $F/by2); do xl destroy $b; done
awk '{ print $1 }' $F/now | while read d; do [ "$d" = 0 ] || xl destroy $d 2>/dev/null; done
xb_wait_memory $free0 "bystanders destroyed, dom0 clean"
xb_note "scenario took $((($(xb_ms) - t_start) / 1000)) s for $rounds rounds"
[ $XB_FAILED -eq 0 ] || xb_daemon_log 60
xb_phase "leave dom0 clean"
xb_done
