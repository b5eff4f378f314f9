# Prometheus metrics on real Xen: Debian's prometheus-node-exporter runs in
# dom0 on the loopback address with its textfile collector pointed at a
# directory; after a teardown through xenreaperd, an HTTP GET of /metrics
# shows the teardown counter incremented and a duration observation, and
# the scrub gauge reads what /tool/xenreaper/scrub/pages reads.
. $XB_LIB
ne=$(command -v prometheus-node-exporter) || { xb_not_ok "prometheus-node-exporter is installed (scripts/install-deps)"; xb_done; }
ip link set lo up 2>/dev/null
mkdir -p /tmp/ne
cat > /tmp/metrics.conf <<CONF
[daemon]
metrics = /tmp/ne/xenreaper.prom
CONF
$ne --web.listen-address=127.0.0.1:9100 --collector.textfile.directory=/tmp/ne \
	--collector.disable-defaults --collector.textfile > /tmp/ne.log 2>&1 &
ne_pid=$!
get() { curl -s --max-time 10 http://127.0.0.1:9100/metrics; }
i=0; while ! get > /dev/null && [ $i -lt 100 ]; do sleep 0.2; i=$((i + 1)); done
xb_check "node_exporter answers on 127.0.0.1:9100" sh -c "curl -s --max-time 10 http://127.0.0.1:9100/metrics | grep -q node_textfile"
xb_daemon_start -c /tmp/metrics.conf || { xb_not_ok "xenreaperd starts"; kill $ne_pid; xb_done; }
value() { get | awk -v m="$1" '$1 == m { print $2 }'; }
done0=$(value 'xen_teardown_total{reason="request",result="done"}')
xb_is "${done0:-absent}" 0 "before any teardown, the done counter reads 0 through node_exporter"

d=$(xb_guest metrics1 512) || { xb_not_ok "create a 512 MiB guest"; xb_done; }
xb_request $d
xb_wait_state $d done 60
xb_is "$(xb_state $d)" done "a teardown through the daemon"
# The file is written at most once a second: wait for the counter.
i=0; while [ "$(value 'xen_teardown_total{reason="request",result="done"}')" != 1 ] && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
xb_is "$(value 'xen_teardown_total{reason="request",result="done"}')" 1 "GET /metrics: the teardown counter went to 1"
xb_is "$(value xen_teardown_duration_seconds_count)" 1 "  with one duration observation"
xb_check "  in a bucket ($(value xen_teardown_duration_seconds_sum) s)" \
	test "$(value 'xen_teardown_duration_seconds_bucket{le="+Inf"}')" = 1
xb_is "$(value xen_teardown_released_pages_total)" 131072 "  and 131072 pages released"
# The scrub gauge reads what xenstore reads (both from the last probe).
# The file follows a probe within a second; no other probe comes for a minute.
gauge() { get | awk '$1 ~ /^xen_teardown_scrub_backlog_pages/ { s += $2; n++ } END { if (n) print s }'; }
i=0; while { xs=$(xb_read $XB_ROOT/scrub/pages); [ -z "$xs" ] || [ "$(gauge)" != "$xs" ]; } && [ $i -lt 150 ]; do
	sleep 0.2; i=$((i + 1))
done
xb_is "$(gauge)" "$(xb_read $XB_ROOT/scrub/pages)" "the scrub gauge reads what scrub/pages reads ($xs)"
get | grep '^xen_teardown' | sed 's/^/XQTAP #   /' | head -n 12
xb_daemon_stop
kill $ne_pid; wait $ne_pid 2>/dev/null
[ $XB_FAILED -eq 0 ] || { xb_daemon_log 20; sed 's/^/  node_exporter: /' /tmp/ne.log | tail -5; }
xb_done
