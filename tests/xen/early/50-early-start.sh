# Early hook for 50-early-start: runs before xenstored exists (see xenbench
# --help).  Starts xenreaperd under a minimal supervisor that restarts it
# when it exits non-zero, as systemd's Restart=on-failure (RestartSec=1s)
# would, so the scenario sees the same outcome whichever way the daemon
# copes.  Then reports what the daemon is doing while xenstored is absent.
. $XB_LIB
E=/tmp/early
mkdir -p $E
: > $E/events
(
	n=0
	while [ $n -lt 30 ]; do
		n=$((n + 1))
		$XB_DAEMON >> $E/daemon.log 2>&1 &
		echo $! > $E/pid
		echo "$(cut -d' ' -f1 /proc/uptime) start $n pid $!" >> $E/events
		wait $!; rc=$?
		echo "$(cut -d' ' -f1 /proc/uptime) exit $n status $rc" >> $E/events
		[ $rc -eq 0 ] && break	# a clean stop, as on-failure would see it
		sleep 1	# RestartSec
	done
) &
echo $! > $E/supervisor
# Look at it once it has had its chance: it either exits or waits on
# xenstore (at most 5 s; this runs once, before xenstored starts).
i=0
while [ $i -lt 50 ]; do
	pid=$(cat $E/pid 2>/dev/null)
	[ -n "$pid" ] || { sleep 0.1; i=$((i + 1)); continue; }
	grep -q " exit " $E/events && break
	ls -l /proc/$pid/fd 2>/dev/null | grep -q xenbus && \
		[ "$(awk '/^State:/ { print $2 }' /proc/$pid/status)" = S ] && break
	sleep 0.1; i=$((i + 1))
done
pid=$(cat $E/pid)
echo "uptime $(cut -d' ' -f1 /proc/uptime): xenstored running: $(pidof xenstored || echo no)"
echo "events: $(tr '\n' ';' < $E/events)"
if [ -d /proc/$pid ]; then
	echo "daemon pid $pid alive, state $(awk '/^State:/ { print $2, $3 }' /proc/$pid/status)"
	for t in /proc/$pid/task/*; do
		echo "  thread ${t##*/}: wchan $(cat $t/wchan 2>/dev/null), syscall $(cut -d' ' -f1 $t/syscall 2>/dev/null)"
	done
	echo "  open: $(ls -l /proc/$pid/fd 2>/dev/null | awk '{ print $NF }' | grep -v '^[0-9]*$' | tr '\n' ' ')"
else
	echo "daemon pid $pid has exited"
fi
echo "daemon log so far:"; sed 's/^/  /' $E/daemon.log
