# xenbench: hap
# Benchmark (issue 40, part 3): a host with two NUMA nodes (xenbench
# --numa 2: QEMU's SRAT).  Xen scrubs a node's free pages on an idle CPU
# of that node, one CPU per node at a time (node_to_scrub in
# page_alloc.c: only a node without CPUs is scrubbed from another), so the
# time to clean is per node.  A 1 GiB HVM guest is placed on each node (one
# vNUMA node bound to the host node, its vCPU pinned to the node's CPUs;
# key u shows where its memory is), and each in turn is torn down by xenreaperd under
# scrub = sync on a busy host (as 30-policy: busy loops on every dom0 vCPU
# until the job has been seen scrubbing for 2 s).  Every 250 ms: the
# per-node backlog the daemon publishes (scrub/node/N), the figure of the
# last heap dump in the console ring (the daemon's own probe: key H), and
# the job's state.  Figures, to the host: xen-numa.dat ("guest_node ms
# published_node0 published_node1 h_node0 h_node1 state") and
# xen-numa.csv (measure,guest_node,value).
. $XB_LIB
CSV=/tmp/xen-numa.csv
DAT=/tmp/xen-numa.dat
echo "measure,guest_node,value" > $CSV
: > $DAT
busy=
fail() { xb_not_ok "$*"; [ -n "$busy" ] && kill $busy 2>/dev/null; xb_daemon_log 30; xb_daemon_stop; xb_done; }
xl info -n > /tmp/info-n.txt
nodes=$(awk '$1 == "nr_nodes" { print $3 }' /tmp/info-n.txt)
sed -n '/^numa_info/,/^[a-z]/p' /tmp/info-n.txt | sed 's/^/XQTAP #   /'
xb_is "$nodes" 2 "xl info -n: two NUMA nodes"
# numa_info lines: "   N:    MEMSIZE   MEMFREE   DISTANCES" (MiB).
for n in 0 1; do
	mem=$(awk -v n=$n '/^numa_info/ { t = 1; next } t && $1 == n ":" { print $2; exit }' /tmp/info-n.txt)
	xb_check "  node $n has memory (${mem:-no} MiB)" test "${mem:-0}" -gt 0
done
# cpu_topology lines: "   CPU:  CORE  SOCKET  NODE".
cpus_of() { awk -v n=$1 '/^cpu_topology/ { t = 1; next } /^numa_info/ { t = 0 }
	t && $1 ~ /^[0-9]+:$/ && $4 == n { sub(/:/, "", $1); printf "%s%s", s, $1; s = "," }' /tmp/info-n.txt; }
for n in 0 1; do xb_note "node $n: CPUs $(cpus_of $n)"; done
[ "$nodes" = 2 ] || xb_done

printf '[default]\nscrub = sync\n[daemon]\nscrub-probe-interval = 200ms\n' > /tmp/numa.conf
xb_daemon_start_fresh -c /tmp/numa.conf || fail "xenreaperd starts"

# node_pages DOMID NODE: the domain's pages on NODE, from key u's dump.
node_pages() {
	xl debug-keys u
	xl dmesg | awk -v d="Domain $1 " -v n="Node $2:" '
		index($0, d) { f = 1; next } f && index($0, n) { v = $NF } f && /Domain [0-9]+ / { f = 0 } END { print v + 0 }'
}
# last_h NODE: NODE's figure in the last heap dump of the console ring.
last_h() { _v=$(xl dmesg | sed -n "s/.*Node $1 has \([0-9]*\) unscrubbed pages.*/\1/p" | tail -n 1); echo "${_v:--}"; }

for n in 0 1; do
	# cpus= alone left both guests' memory split 73/27 across the nodes
	# (the last run's key u): the domain builder takes memory where the
	# heap has it.  A vNUMA node bound to a host node (pnode) is allocated
	# with XENMEMF_exact_node, so the guest's memory is all on node $n.
	# libxl takes vNUMA for HVM guests only: PV is refused ("PV vNUMA is
	# not yet supported"), and a PVH guest fails in libxl's own ACPI
	# builder (init_acpi_config takes XENMEM_get_vnumainfo's -ENOBUFS
	# answer to its size query for an error).  An HVM guest's tables come
	# from hvmloader; paused, it needs only its QEMU.
	printf '%s\n' "name = \"numa$n\"" 'type = "hvm"' 'memory = 1024' 'maxmem = 1024' \
		'vcpus = 1' 'vnc = 0' 'vga = "none"' "cpus = \"$(cpus_of $n)\"" \
		"vnuma = [ [ \"pnode=$n\", \"size=1024\", \"vcpus=0\", \"vdistances=10\" ] ]" > /tmp/numa$n.cfg
	xl create -p /tmp/numa$n.cfg > /tmp/numa$n.log 2>&1 || {
		sed 's/^/XQTAP #   /' /tmp/numa$n.log; fail "create a 1 GiB HVM guest on node $n"; }
	d=$(xl domid numa$n)
	on=$(node_pages $d $n) other=$(node_pages $d $((1 - n)))
	xb_check "the guest pinned to node $n's CPUs has its memory there (key u: $on pages on node $n, $other on the other)" \
		test "$on" -gt $((other * 9))
	busy=
	for i in $(seq 1 $(nproc)); do nice -n 19 sh -c 'while :; do :; done' & busy="$busy $!"; done
	t0=$(xb_ms) since=
	xb_request $d
	while :; do
		s=$(xb_state $d) now=$(($(xb_ms) - t0))
		echo "$n $now $(xb_read $XB_ROOT/scrub/node/0 || echo -) $(xb_read $XB_ROOT/scrub/node/1 || echo -) $(last_h 0) $(last_h 1) $s" >> $DAT
		case $s in done|failed) break ;; esac
		if [ "$s" = scrubbing ] && [ -n "$busy" ]; then
			[ -z "$since" ] && since=$now
			[ $((now - since)) -ge 2000 ] && { kill $busy; wait $busy 2>/dev/null; busy=; }
		fi
		[ $now -gt 300000 ] && break
		sleep 0.25
	done
	[ -n "$busy" ] && { kill $busy; wait $busy 2>/dev/null; busy=; }
	xb_is "$(xb_state $d)" done "the node-$n guest's sync job ends done"
	awk -v n=$n '$1 == n && $7 == "scrubbing"' $DAT > /tmp/numa-scrubbing
	moved=$(awk -v c=$((3 + n)) '$c != "-" && $c > 0' /tmp/numa-scrubbing | wc -l)
	stayed=$(awk -v c=$((4 - n)) '$c != "-" && $c > 0' /tmp/numa-scrubbing | wc -l)
	xb_note "node $n guest: $(wc -l < /tmp/numa-scrubbing) samples scrubbing; published backlog on node $n in $moved, on node $((1 - n)) in $stayed"
	agree=$(awk -v p=$((3 + n)) -v h=$((5 + n)) '$p != "-" && $h != "-" && $p == $h' /tmp/numa-scrubbing | wc -l)
	xb_note "  the published figure of node $n equals the last heap dump's in $agree of them"
	echo "samples-scrubbing,$n,$(wc -l < /tmp/numa-scrubbing)" >> $CSV
	echo "published-own-node-nonzero,$n,$moved" >> $CSV
	echo "published-other-node-nonzero,$n,$stayed" >> $CSV
	echo "published-equals-last-dump,$n,$agree" >> $CSV
	last_dirty=$(awk -v n=$n -v c=$((3 + n)) '$1 == n && $c != "-" && $c > 0 { t = $2 } END { print t + 0 }' $DAT)
	done_ms=$(awk -v n=$n '$1 == n && $7 == "done" { print $2; exit }' $DAT)
	xb_note "  done at ${done_ms:-?} ms, the last sample with its node's backlog non-zero at $last_dirty ms"
	echo "done-ms,$n,${done_ms:-0}" >> $CSV
	echo "last-dirty-ms,$n,$last_dirty" >> $CSV
done
xb_daemon_stop
xb_emit xen-numa.csv $CSV
xb_emit xen-numa.dat $DAT
xb_done
