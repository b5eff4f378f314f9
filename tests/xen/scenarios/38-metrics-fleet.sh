# The figures of issue 19 on real Xen, through Debian's
# prometheus-node-exporter as in 37-metrics: a zombie's age (the gauge
# reads the job's requested time), Xen's outstanding claims as `xl info`
# shows them, free pages, the per-node scrub time to drain of a sync
# teardown, the file rewritten while a teardown releases pages (what the
# XenreaperMetricsStale rule relies on), and promtool's check of what
# node_exporter serves.  In the features boot (tests/xen/suite-features.sh).
. $XB_LIB
ne=$(command -v prometheus-node-exporter) || { xb_not_ok "prometheus-node-exporter is installed (scripts/install-deps)"; xb_done; }
ip link set lo up 2>/dev/null
mkdir -p /tmp/nef
cat > /tmp/metrics-fleet.conf <<CONF
[daemon]
metrics = /tmp/nef/xenreaper.prom
[pool:Pool-0]
scrub = sync
CONF
$ne --web.listen-address=127.0.0.1:9101 --collector.textfile.directory=/tmp/nef \
	--collector.disable-defaults --collector.textfile > /tmp/nef.log 2>&1 &
ne_pid=$!
get() { curl -s --max-time 10 http://127.0.0.1:9101/metrics; }
value() { get | awk -v m="$1" '$1 == m { print $2 }'; }
# Wait up to 10 s for the sample NAME to be served (the file is written at
# most once a second); prints its value.
wait_value() {
	_i=0
	while [ -z "$(value "$1")" ] && [ $_i -lt 50 ]; do sleep 0.2; _i=$((_i + 1)); done
	value "$1"
}
i=0; while ! get > /dev/null && [ $i -lt 100 ]; do sleep 0.2; i=$((i + 1)); done
xb_daemon_start -c /tmp/metrics-fleet.conf || { xb_not_ok "xenreaperd starts"; kill $ne_pid; xb_done; }

# A teardown the file follows: count its distinct mtimes while it destroys.
d=$(xb_guest fleet1 1024) || { xb_not_ok "create a 1 GiB guest"; kill $ne_pid; xb_done; }
xb_request $d
writes=0 last= start=$(date +%s)
while [ "$(xb_state $d)" != done ] && [ "$(xb_state $d)" != failed ] && [ $(($(date +%s) - start)) -lt 120 ]; do
	m=$(stat -c %.3Y /tmp/nef/xenreaper.prom 2>/dev/null)
	[ -n "$m" ] && [ "$m" != "$last" ] && { writes=$((writes + 1)); last=$m; }
	sleep 0.1
done
took=$(($(date +%s) - start))
xb_is "$(xb_state $d)" done "a 1 GiB sync teardown through the daemon"
xb_note "  the metrics file was written $writes time(s) in its $took s"
if [ $took -ge 3 ]; then
	xb_check "  more than once while it ran ($writes writes in $took s): its pages falling change the file" test $writes -ge 2
fi
free=$(wait_value xen_teardown_free_pages)
xb_check "xen_teardown_free_pages is served (${free:-absent})" test -n "$free"
claims=$(xl info | awk -F: '/^outstanding_claims/ { gsub(/ /, "", $2); print $2 }')
xb_is "$(value xen_teardown_outstanding_claim_pages)" "$((${claims:-0} * 256))" \
	"the outstanding claims read what xl info says (${claims:-?} MiB)"
drain=$(wait_value 'xen_teardown_scrub_drain_seconds{node="0",source="heap-dump"}')
xb_note "  node 0's time to drain: ${drain:-absent} (backlog $(value 'xen_teardown_scrub_backlog_pages{node="0",source="heap-dump"}'))"
xb_is "$(echo "${drain:-x}" | awk '{ print ($1 == 0) ? "0" : $1 }')" 0 \
	"once its sync scrub is done, node 0 has nothing left to drain"

# A zombie: the oldest-zombie gauge is the job's requested time.
z=$(xb_guest fleet2 256) || { xb_not_ok "create a 256 MiB guest"; kill $ne_pid; xb_done; }
xb_hold_page holder $z; xb_is $? 0 "a dom0 helper maps a page of domain $z"
xb_request $z
xb_wait_state $z zombie 60
xb_is "$(xb_state $z)" zombie "the job turns zombie"
since=$(wait_value 'xen_teardown_oldest_timestamp_seconds{state="zombie"}')
requested=$(xb_read $XB_ROOT/job/$z/requested)
xb_check "the oldest zombie's timestamp (${since:-absent}) is its requested time ($requested)" \
	awk -v a="${since:-0}" -v b="${requested:-1}" 'BEGIN { d = a - b; exit !(d < 0.002 && d > -0.002) }'
if command -v promtool > /dev/null; then
	get | grep -e '^xen_teardown' -e '^# [A-Z]* xen_teardown' > /tmp/fleet-served.txt
	xb_check "promtool check metrics accepts the xen_teardown_ metrics node_exporter serves" \
		sh -c "promtool check metrics < /tmp/fleet-served.txt"
fi
kill -TERM $holder; wait $holder 2>/dev/null
xb_wait_state $z done 120
xb_is "$(xb_state $z)" done "once the helper lets go, the zombie is done"
i=0; while [ -n "$(value 'xen_teardown_oldest_timestamp_seconds{state="zombie"}')" ] && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
xb_is "$(value 'xen_teardown_oldest_timestamp_seconds{state="zombie"}')" "" "  and its age is no longer served"
xb_daemon_stop
kill $ne_pid; wait $ne_pid 2>/dev/null
[ $XB_FAILED -eq 0 ] || { xb_daemon_log 20; sed 's/^/  node_exporter: /' /tmp/nef.log | tail -5; }
xb_done
