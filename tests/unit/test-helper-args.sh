#!/bin/sh
# xenreaper-teardown's command line and requests, as runner_spawn.c
# writes them and as nothing else should: PRIORITY [TITLE-SPACE], then
# "DOMID UUID FLAGS [STUBDOM STUBUUID]" lines on standard input.  What it
# refuses it refuses with status 2, saying what it expected; without its
# result descriptor 3 it says so.  No Xen needed: here libxl cannot be
# opened, which the result line of a good request says.  TAP on stdout.
helper=${abs_top_builddir:-.}/daemon/xenreaper-teardown
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
u=0a1b2c3d-0000-4000-8000-00000000abcd
s=5d7b0000-0000-4000-8000-00000000000d

# refused DESCRIPTION ARG...: status 2 and the usage line, fd 3 open.
refused() {
	desc=$1; shift
	out=$("$helper" "$@" 2>&1 3>/dev/null </dev/null); rc=$?
	case "$rc:$out" in
	2:*"usage: "*"idle|low|normal, requests \"DOMID UUID FLAGS [STUBDOM STUBUUID]\" on standard input"*) ok "$desc" ;;
	*) not_ok "$desc"; echo "#   status $rc: $out" ;;
	esac
}
refused "no arguments"
refused "an unknown priority" high
refused "three arguments" low x y
refused "the old command line" 7 $u 0 low

# bad_request DESCRIPTION LINE: status 2, naming the line, nothing written to 3.
bad_request() {
	out=$(printf '%s\n' "$2" | "$helper" low 2>&1 3>/tmp/helper-args.$$); rc=$?
	case "$rc:$out" in
	2:*"bad request '$2': expected \"DOMID UUID FLAGS [STUBDOM STUBUUID]\""*)
		if [ -s /tmp/helper-args.$$ ]; then not_ok "$1"; echo "#   wrote $(cat /tmp/helper-args.$$)"
		else ok "$1"; fi ;;
	*) not_ok "$1"; echo "#   status $rc: $out" ;;
	esac
}
bad_request "a request with a domid that is not a number" "7x $u 0"
bad_request "a negative domid" "-7 $u 0"
bad_request "a UUID that is not one" "7 not-a-uuid 0"
bad_request "a request without its flags" "7 $u"
bad_request "a stub domain without its UUID" "7 $u 0 12"
bad_request "a stub domain 0 (dom0 is nobody's stub domain)" "7 $u 0 0 $s"
bad_request "a stub domain UUID that is not one" "7 $u 0 12 nope"
bad_request "six words" "7 $u 0 12 $s extra"

out=$(echo "7 $u 0 12 $s" | "$helper" low 2>&1 3>&-); rc=$?
case "$rc:$out" in
2:*"descriptor 3 is not open"*) ok "a good request, descriptor 3 closed: refused, saying so" ;;
*) not_ok "a good request, descriptor 3 closed: refused, saying so"; echo "#   status $rc: $out" ;;
esac

printf '7 %s 0\n9 %s 1 12 %s\n' $u $u $s | "$helper" idle >/dev/null 2>&1 3>/tmp/helper-args.$$; rc=$?
res=$(tr '\n' '|' < /tmp/helper-args.$$)
case "$rc:$res" in
"0:7 -"[0-9]*" libxl could not be opened ("*")|9 -"[0-9]*" libxl could not be opened ("*")|") ok "two requests, two result lines for their domids, then status 0 at the end of input ($res)" ;;
*) not_ok "two requests, two result lines for their domids, then status 0 at the end of input"; echo "#   status $rc: $res" ;;
esac

# What ps shows while it waits: the room after its priority says so.
fifo=/tmp/helper-args.$$.in
mkfifo $fifo
"$helper" normal "$(printf '%112s' '')" < $fifo 2>/dev/null 3>/dev/null &
pid=$!
exec 4> $fifo
shown=
for i in $(seq 1 50); do
	shown=$(tr '\0' ' ' < /proc/$pid/cmdline 2>/dev/null | sed 's/ *$//')
	case "$shown" in *" normal idle") break ;; esac
	sleep 0.1
done
case "$shown" in
*/xenreaper-teardown" normal idle") ok "ps shows an idle helper as idle" ;;
*) not_ok "ps shows an idle helper as idle"; echo "#   shown: '$shown'" ;;
esac
exec 4>&-
wait $pid; rc=$?
[ $rc = 0 ] && ok "the end of its input ends it, status 0" || not_ok "the end of its input ends it, status 0 (got $rc)"
rm -f $fifo
rm -f /tmp/helper-args.$$
echo "1..$n"
[ $failed -eq 0 ]
