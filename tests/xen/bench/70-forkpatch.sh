# Benchmark (issue 21): children forked beside threads inside libxencall,
# stuck for ever on a lock they inherited, with Debian's libraries and with
# the series in xen-patches/fork-4.17 (docs/bench/fork-patch/README.md).
# tests/xen/forkstress, per set of libraries (LD_LIBRARY_PATH): two threads
# loop xencall_alloc_buffer/free on one handle (cache_mutex), one loops
# xencall_open/close (handles_lock, and cache_mutex at close), and the main
# thread forks XB_FORK_N children (default 500) one at a time; each opens a
# handle, allocates a buffer, makes one hypercall and exits.
# XB_FORK_MIXES (default "2:1") lists other mixes of ALLOC:OPEN threads to
# run too ("0:2" leaves the open/close loop alone on handles_lock).  Per
# mix, the sets in this order, XB_FORK_ROUNDS times (default 1):
#   stock      the system's (Debian's 4.17.7+13 here)
#   unpatched  built from Debian's source as it is (tests/xen/build-forklibs)
#   call-only  libxencall with 0001-0002, libxentoolcore without 0003
#   patched    both with the whole series
# Only when tests/xen/build-forklibs has made BUILDDIR/tests/xen/forklibs:
# without it the scenario says so and stops (make bench does not build
# Xen's tools).  Figures: xen-forkpatch.csv.  Checked: no child stuck or
# failed with the patched libraries; that the others hang is a figure.
. $XB_LIB
LIBS=$XB_BUILD/tests/xen/forklibs
FS=$XB_BUILD/tests/xen/forkstress
N=${XB_FORK_N:-500} ROUNDS=${XB_FORK_ROUNDS:-1} MIXES=${XB_FORK_MIXES:-2:1}
if [ ! -d $LIBS/patched ]; then
	xb_note "skipped: no $LIBS (tests/xen/build-forklibs makes it)"
	xb_done
fi
[ -x $FS ] || { xb_not_ok "forkstress is built ($FS)"; xb_done; }
xb_note "$(cat $LIBS/BUILD-INFO | tr '\n' ' ')"
CSV=/tmp/xen-forkpatch.csv
echo "round,libs,alloc_threads,open_threads,forks,ok,stuck,stuck_open,stuck_alloc,stuck_other,lock_xencall,lock_xentoolcore,lock_other,timeout,failed,seconds,alloc_loops,open_loops" > $CSV
# The first exec over 9p reads the files from the host: not in a figure.
for set in stock unpatched call-only patched; do
	lp=; [ $set = stock ] || lp=$LIBS/$set
	LD_LIBRARY_PATH=$lp $FS -n 1 > /dev/null 2>&1
done
patched_bad=0
for round in $(seq 1 $ROUNDS); do
	for mix in $MIXES; do
	for set in stock unpatched call-only patched; do
		lp=; [ $set = stock ] || lp=$LIBS/$set
		out=$(LD_LIBRARY_PATH=$lp $FS -a ${mix%:*} -o ${mix#*:} -n $N -w 2000 2>&1)
		line=$(echo "$out" | tail -n 1)
		echo "$out" | head -n -1 | head -n 5 | sed 's/^/  /'
		xb_note "round $round $set: $line"
		case $line in forkstress:\ libxencall=*) ;; *) xb_not_ok "round $round $set $mix: forkstress ran"; continue ;; esac
		# key=value pairs to the CSV columns.
		echo "$line" | awk -v r=$round -v s=$set '{
			for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			print r "," s "," v["alloc_threads"] "," v["open_threads"] "," v["forks"] "," v["ok"] "," \
				v["stuck"] "," v["stuck_open"] "," v["stuck_alloc"] "," v["stuck_other"] "," \
				v["lock_xencall"] "," v["lock_xentoolcore"] "," v["lock_other"] "," \
				v["timeout"] "," v["failed"] "," v["seconds"] "," v["alloc_loops"] "," v["open_loops"] }' >> $CSV
		case $set in
		stock) want=/lib/x86_64-linux-gnu/libxencall.so.1 ;;
		*) want=$LIBS/$set/libxencall.so.1 ;;
		esac
		xb_check "round $round $set $mix: libxencall loaded from $want" \
			sh -c "echo '$line' | grep -q 'libxencall=$want '"
		[ $set = patched ] && ! echo "$line" | grep -q " ok=$N " && patched_bad=1
	done
	done
done
xb_check "patched: every child of every round exited 0 (none stuck, none failed)" test $patched_bad = 0
sed 's/^/  /' $CSV
xb_emit xen-forkpatch.csv $CSV
xb_done
