#!/bin/sh
# xenreaper-teardown's command line, as runner_spawn.c writes it and as
# nothing else should: DOMID UUID FLAGS PRIORITY [STUBDOM STUBUUID].  What
# it refuses it refuses with status 2 and its usage, before it opens
# libxl; without its result descriptor 3 it says so.  No Xen needed: every
# case ends before the teardown.  TAP on stdout.
helper=${abs_top_builddir:-.}/daemon/xenreaper-teardown
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
u=0a1b2c3d-0000-4000-8000-00000000abcd
s=5d7b0000-0000-4000-8000-00000000000d

# refused DESCRIPTION ARG...: status 2 and the usage line, fd 3 open.
refused() {
	desc=$1; shift
	out=$("$helper" "$@" 2>&1 3>/dev/null); rc=$?
	case "$rc:$out" in
	2:*"usage: "*"DOMID UUID FLAGS idle|low|normal [STUBDOM STUBUUID]"*) ok "$desc" ;;
	*) not_ok "$desc"; echo "#   status $rc: $out" ;;
	esac
}
refused "no arguments" 
refused "three arguments" 7 $u 0
refused "a domid that is not a number" 7x $u 0 low
refused "a negative domid" -7 $u 0 low
refused "a UUID that is not one" 7 not-a-uuid 0 low
refused "an unknown priority" 7 $u 0 high
refused "a stub domain without its UUID" 7 $u 0 low 12
refused "a stub domain 0 (dom0 is nobody's stub domain)" 7 $u 0 low 0 $s
refused "a stub domain UUID that is not one" 7 $u 0 low 12 nope
refused "eight arguments" 7 $u 0 low 12 $s extra

out=$("$helper" 7 $u 0 low 12 $s 2>&1 3>&-); rc=$?
case "$rc:$out" in
2:*"descriptor 3 is not open"*) ok "a valid command line with a stub domain, descriptor 3 closed: refused, saying so" ;;
*) not_ok "a valid command line with a stub domain, descriptor 3 closed: refused, saying so"; echo "#   status $rc: $out" ;;
esac
echo "1..$n"
[ $failed -eq 0 ]
