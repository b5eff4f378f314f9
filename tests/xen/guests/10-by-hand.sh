# xenbench: hap
# Real guests (issue 16), each kind torn down by plain `xl destroy`, by the
# daemon started by hand (`xl destroy --async --wait` through the front)
# and by the teardown floor, compared: see guests/common.inc for the kinds
# and what is compared.  XB_GUEST_KINDS chooses kinds, XB_GUEST_WAYS ways;
# scenarios/58-guests runs it in make check with fewer of both.
# The kinds vfb, qdisk, dm and hvm (see common.inc) are not in the default
# list: XB_GUEST_KINDS='vfb qdisk dm hvm' runs them (each passed by hand;
# hvm needs HAP, hence this boot's `hap`).
. $XB_LIB
. $XB_SRC/tests/xen/guests/common.inc
xb_backends
# The scripts log through logger(1): without systemd, to this syslogd.
xb_syslog || xb_not_ok "a syslogd for the hotplug scripts' lines"
LOG_MARK() { wc -l < /tmp/syslog.log 2>/dev/null || echo 0; }
LOG_SINCE() { tail -n +$(($1 + 1)) /tmp/syslog.log 2>/dev/null; }
xb_check "a volume group on a loop-backed physical volume" xb_lvm xbvg $W/pv.img 64
base=$(xb_free_pages)
xb_daemon_start || { xb_not_ok "xenreaperd starts"; xb_done; }
WAYS=${XB_GUEST_WAYS:-xl daemon floor}
for k in ${XB_GUEST_KINDS:-net-phy file file-tmp file-fail vif-probe lvm booted admin}; do run_kind $k; done
xb_daemon_stop
xb_wait_memory $base "every guest's memory is back"
[ $XB_FAILED -eq 0 ] || { tail -n 40 /var/log/xen/xen-hotplug.log | sed 's/^/XQTAP #   hotplug: /'; xb_daemon_log 30; }
xb_done
