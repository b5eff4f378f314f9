# Benchmark (issue 10, measure 3; issue 18, part 3): batches of guests
# (XB_BENCH_SHAPES, default 2 of 2 GiB, 4 of 512 MiB and 8 of 512 MiB) torn
# down at once by sequential `xl destroy`, by parallel `xl destroy`, and by
# xenreaperd with each of XB_BENCH_JOBS (default jobs = 1, 2 and 4), the
# figures xenreaper.conf(5)'s default for jobs is chosen from: how long the caller is blocked (one process asks for all
# of them: a shell loop for xl, one xenstore-write of every request for
# xenreaperd), until the first domain is gone, and until all their memory
# is back.  Xen serialises destroys on
# domctl_lock and the heap lock: this shows whether parallelism helps or
# hurts here.  XB_BENCH_BATCH_RUNS times (default 3).  Figures go to the
# host in xen-batch.csv; a failed run fails the scenario and sends none.
. $XB_LIB
SHAPES=${XB_BENCH_SHAPES:-2x2048 4x512 8x512}
JOBS=${XB_BENCH_JOBS:-1 2 4}
RUNS=${XB_BENCH_BATCH_RUNS:-3}
CSV=/tmp/xen-batch.csv
echo "measure,shape,tool,run,value_ms" > $CSV
fail() { xb_not_ok "$*"; xb_daemon_log 30; xb_daemon_stop; xb_done; }

# guests RUN TOOL: N guests at once; their domids in $doms.
guests() {
	_pids= doms=
	for i in $(seq 1 $N); do
		(xb_guest q$2-$1-$i $MIB > /tmp/q$2-$1-$i.domid) &
		_pids="$_pids $!"
	done
	for _p in $_pids; do wait $_p; done
	for i in $(seq 1 $N); do
		[ -s /tmp/q$2-$1-$i.domid ] || { cat /tmp/q$2-$1-$i.create.log; fail "create q$2-$1-$i"; }
		doms="$doms $(cat /tmp/q$2-$1-$i.domid)"
	done
}

# batch RUN TOOL: tear the batch down with TOOL; record blocked and back.
batch() {
	guests $1 $2
	pages=0
	for d in $doms; do pages=$((pages + $($XB_TOOL pages $d))); done
	target=$(( $(xb_free_pages) + pages - 256 * N ))
	gone=$(echo $doms | tr ' ' ',')
	case $2 in
	xl-seq) timeout 300 $XB_TOOL back -g $gone /tmp/b.ms $target sh -c 'for d; do xl destroy $d || exit 1; done' sh $doms ;;
	xl-par) timeout 300 $XB_TOOL back -g $gone /tmp/b.ms $target sh -c \
			'p=; for d; do xl destroy $d & p="$p $!"; done; r=0; for x in $p; do wait $x || r=1; done; exit $r' \
			sh $doms ;;
	xenreaper-*)
		args=
		for d in $doms; do args="$args $XB_ROOT/request/$d $($XB_TOOL uuid $d)"; done
		timeout 300 $XB_TOOL back -g $gone /tmp/b.ms $target xenstore-write $args ;;
	esac
	rc=$?
	read blocked back first < /tmp/b.ms || fail "$2 run $1: no figures"
	[ $rc = 0 ] && [ "$blocked" -ge 0 ] && [ "$back" -ge 0 ] && [ "$first" -ge 0 ] ||
		fail "$2 run $1: status $rc, blocked $blocked ms, back $back ms, first gone $first ms"
	for d in $doms; do
		$XB_TOOL wait-gone $d 60000 >/dev/null || fail "$2 run $1: domain $d not gone"
		case $2 in xenreaper-*)
			xb_wait_final $d 120 && [ "$(xb_state $d)" = done ] ||
				fail "$2 run $1: job $d ended $(xb_state $d)" ;;
		esac
	done
	echo "batch-caller,${N}x$MIB,$2,$1,$blocked" >> $CSV
	echo "batch-back,${N}x$MIB,$2,$1,$back" >> $CSV
	echo "batch-first-gone,${N}x$MIB,$2,$1,$first" >> $CSV
	xb_note "$N x $MIB MiB run $1 $2: blocked $blocked ms, first gone $first ms, all memory back $back ms"
}

for shape in $SHAPES; do
	N=${shape%x*} MIB=${shape#*x}
	for run in $(seq 1 $RUNS); do
		batch $run xl-seq
		batch $run xl-par
	done
	for jobs in $JOBS; do
		printf '[daemon]\njobs = %s\n' $jobs > /tmp/jobs$jobs.conf
		xb_daemon_start_fresh -c /tmp/jobs$jobs.conf || fail "xenreaperd starts with jobs = $jobs"
		for run in $(seq 1 $RUNS); do batch $run xenreaper-jobs$jobs; done
		xb_daemon_stop
	done
	xb_phase "shape $shape"
done
xb_ok "$(($(wc -l < $CSV) - 1)) batch figures measured"
xb_emit xen-batch.csv $CSV
xb_done
