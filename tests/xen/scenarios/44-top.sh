# `xenreaper top` through a real terminal: tmux runs it in a pane while
# xenreaperd tears a guest down, and what the pane shows (capture-pane)
# must have the job appear, progress, turn zombie with what holds it, and
# end done; the raw stream tmux records (pipe-pane) must show the job
# drawn at more than one percent, and no redraw while nothing changes.
# Then `q`, SIGTERM and Ctrl-C each end it with the shell's screen back
# (the alternate screen left, the terminal's modes as before, exit 0 or
# 130); and with stdout a pipe it prints plain lines, one per change.
# The guests are plain paused PV guests (xb_guest NAME 512, no vif or
# disk): the point is the view, not the devices.  A helper maps a page of
# the first, so that the teardown stops as a zombie long enough to be
# seen whatever the host's speed, and ends when the helper lets go.
# Every wait polls the screen (or a file) for a pattern, with a bound.
# Last, a guest a tenant named with an escape sequence that would retitle
# the terminal, a newline and 60 characters (issue 41): at 40 columns
# every job's line keeps its domid, name, state and bar (the name cut with
# a '+'), nothing of the name reaches the terminal raw, and the daemon,
# started by hand, logs it escaped, one line per message, each with <N>.
. $XB_LIB
xb_clients
base=$(xb_free_pages)
XB_DAEMON_LOG=/tmp/xenreaperd-top.log
: > $XB_DAEMON_LOG
xb_daemon_start || { xb_not_ok "xenreaperd starts"; xb_done; }

T="tmux -L xbtop -f /dev/null"
screen() { $T capture-pane -p -t top; }
# screen_wait ERE SECONDS: until a line of the pane matches ERE.
screen_wait() {
	_end=$(($(date +%s) + $2))
	until screen | grep -qE "$1"; do
		[ $(date +%s) -ge $_end ] && return 1
		sleep 0.1
	done
}
show_screen() { screen | sed 's/^/XQTAP #   | /'; }
# screen_line N ERE: line N of the pane matches ERE (a function, for
# xb_check: sh -c would not see screen()).
screen_line() { screen | sed -n "$1p" | grep -qE "$2"; }
# job_not_held DOMID: the job's line on the pane says nothing is held.
job_not_held() { screen | grep -E "^ +$1  topguest " | grep -qv 'held by'; }
alternate() { $T display-message -p -t top '#{alternate_on}'; }
# The stream tmux recorded, one drawn line per line (each starts at a
# cursor move).
stream_lines() { tr '\033' '\n' < /tmp/top.stream; }
# top's pid: the xenreaper in the pane's session (the pane's process leads it).
top_pid() { pgrep -s "$($T display-message -p -t top '#{pane_pid}')" -x xenreaper; }
# start_top: type the command in the pane and wait for the view.
start_top() {
	$T send-keys -t top "$XR top" Enter
	screen_wait '^DOMID +NAME +STATE +PROGRESS' 30
}
# back_to_shell WHAT: the prompt again, the alternate screen left, the
# modes as before, and top's exit status as WANT.
back_to_shell() {
	_what=$1 _want=$2
	if screen_wait '^xbtop\$ ?$' 30 && [ "$(alternate)" = 0 ]; then
		xb_ok "$_what: the shell's screen is back (alternate screen left)"
	else
		xb_not_ok "$_what: the shell's screen is back (alternate screen left)"; show_screen
	fi
	$T send-keys -t top "echo rc=\$? > /tmp/top.rc; stty -g > /tmp/stty.after" Enter
	xb_wait_log . 10 /tmp/stty.after
	xb_is "$(cat /tmp/top.rc)" "rc=$_want" "  exit status $_want"
	xb_check "  the terminal's modes are as before (stty -g)" cmp -s /tmp/stty.before /tmp/stty.after
	rm -f /tmp/stty.after /tmp/top.rc
}

rm -f /tmp/top.stream /tmp/stty.before /tmp/stty.after /tmp/top.rc
$T kill-server 2>/dev/null
$T new-session -d -s top -x 200 -y 30 "env PS1='xbtop\$ ' LD_LIBRARY_PATH=$LD_LIBRARY_PATH sh" ||
	{ xb_not_ok "tmux starts a pane"; xb_done; }
screen_wait '^xbtop\$' 30 || { xb_not_ok "the pane's shell is up"; show_screen; xb_done; }
$T send-keys -t top "stty -g > /tmp/stty.before" Enter
xb_wait_log . 10 /tmp/stty.before
$T pipe-pane -t top -o 'cat >> /tmp/top.stream'

# --- the view
if start_top; then xb_ok "top draws the view in the pane"; else xb_not_ok "top draws the view"; show_screen; fi
xb_is "$(alternate)" 1 "  on the alternate screen"
xb_check "  its first line: xenreaperd running and the keys" screen_line 1 '^xenreaperd running; [0-9]+ teardowns? under way, .*\(q: quit\)'
xb_check "  then the memory nodes" screen_line 2 '^memory: '
show_screen

# --- quiet while nothing changes: a node nothing shown depends on (a
# ping, which the daemon answers by removing it) redraws nothing
before=$(wc -c < /tmp/top.stream)
xenstore-write $XB_ROOT/ping/top-quiet "44-top"
xb_wait_node $XB_ROOT/ping/top-quiet - 10 >/dev/null
sleep 2	# a window in which nothing may be drawn: there is no state to wait on
after=$(wc -c < /tmp/top.stream)
xb_is "$after" "$before" "nothing is drawn while nothing shown changes (2 s, a ping written and answered)"

# --- a teardown through the daemon: appears, progresses, zombie, done
d=$(xb_guest topguest 512) || { xb_not_ok "create topguest"; xb_done; }
xb_hold_page holder $d; xb_is $? 0 "a dom0 helper (pid $holder) maps a page of domain $d"
$XR destroy topguest > /tmp/top.destroy 2>&1
xb_check "xenreaper destroy topguest asks xenreaperd" grep -q "teardown requested" /tmp/top.destroy
if screen_wait "^ +$d  topguest " 30; then xb_ok "the job appears on the screen"; else xb_not_ok "the job appears on the screen"; fi
if screen_wait "^ +$d  topguest +zombie +\[=+>? *\] +(99|100)% .* request +held by: .*$holder xbtool" 60; then
	xb_ok "  progresses to a zombie at 99-100%, held by the helper (pid $holder)"
else
	xb_not_ok "  progresses to a zombie, held by the helper (pid $holder)"; xb_note "  held-by: $(xb_read $XB_ROOT/job/$d/held-by)"
fi
show_screen
xb_check "  the first line counts it under way" screen_line 1 ' [1-9][0-9]* teardowns? under way'
# What tmux recorded: the job's line drawn at a percent below 99 before.
low=$(stream_lines | grep -E "^\[[0-9]+;1H +$d  topguest " | grep -oE '\] +[0-9]+%' | tr -dc '0-9\n' | sort -n | head -n 1)
percents=$(stream_lines | grep -E "^\[[0-9]+;1H +$d  topguest " | grep -oE '(requested|queued|destroying|zombie) +\[[ =>]*\] +[0-9]+%' | sed 's/ *\[.*\] */ /' | uniq | tr '\n' ',')
xb_note "  drawn: $percents"
xb_check "  it was drawn below 99% before (lowest: ${low:-none}%)" test "${low:-100}" -lt 99
kill -TERM $holder; wait $holder 2>/dev/null
if screen_wait "^ +$d  topguest +done +\[=+\] 100% +0 " 120; then
	xb_ok "  and ends done at 100%, 0 MiB left"
else
	xb_not_ok "  and ends done"; show_screen
fi
xb_check "  no longer held" job_not_held $d
show_screen

# --- q quits
$T send-keys -t top q
back_to_shell "q" 0

# --- SIGTERM and Ctrl-C end it too, with the terminal restored
start_top || { xb_not_ok "top starts again"; show_screen; }
pid=$(top_pid)
xb_check "top runs as pid ${pid:-?} in the pane" test -n "$pid"
[ -n "$pid" ] && kill -TERM $pid
back_to_shell "SIGTERM" 130
start_top || { xb_not_ok "top starts again"; show_screen; }
$T send-keys -t top C-c
back_to_shell "Ctrl-C (SIGINT)" 130
$T kill-server

# --- stdout a pipe: plain lines
rm -f /tmp/top.plain /tmp/top.plain.err /tmp/top.fifo
mkfifo /tmp/top.fifo
cat /tmp/top.fifo > /tmp/top.plain &
reader=$!
$XR top > /tmp/top.fifo 2>/tmp/top.plain.err &
tp=$!
xb_wait_log '^ +DOMID +NAME' 30 /tmp/top.plain
xb_check "into a pipe: the column titles first" sh -c "head -n 1 /tmp/top.plain | grep -qE '^ +DOMID +NAME +STATE'"
xb_check "  then the summary, stamped with the time" grep -qE '^[0-9]{2}:[0-9]{2}:[0-9]{2} xenreaperd running; ' /tmp/top.plain
p=$(xb_guest topplain 512) || xb_not_ok "create topplain"
$XR destroy topplain > /dev/null 2>&1
if xb_wait_log "^[0-9:]{8} +$p  topplain +done " 120 /tmp/top.plain; then
	xb_ok "  the teardown of topplain (domain $p) ends done in a line"
else
	xb_not_ok "  the teardown of topplain ends done in a line"
fi
kill -TERM $tp; wait $tp; rc=$?
wait $reader
sed 's/^/XQTAP #   | /' /tmp/top.plain | tail -n 12
xb_is $rc 130 "  SIGTERM ends it with exit 130"
xb_check "  nothing on stderr" test ! -s /tmp/top.plain.err
xb_check "  no escape sequence in plain output" sh -c "! grep -q \"$(printf '\033')\" /tmp/top.plain"
lines=$(grep -cE "^[0-9:]{8} +$p  topplain " /tmp/top.plain)
distinct=$(grep -E "^[0-9:]{8} +$p  topplain " /tmp/top.plain | cut -c10- | uniq | wc -l)
xb_is "$distinct" "$lines" "  each of topplain's $lines lines differs from the one before (one per change)"
rm -f /tmp/top.fifo

# --- a hostile name at 40 columns.  The guest is paused, without devices:
# the point is its name, not its teardown.
evil=$(printf '\033]0;pwned\007\nforged abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefgh')
shown='\x1b]0;pwned\a\nforged abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefgh'
# bad_job_lines: the job lines of the pane (below the titles) without a
# domid, a name, a state and a whole bar, in that order.
job_lines() { screen | awk '/^DOMID/ { t = 1; next } t && /^ *[0-9]+ / { print }'; }
bad_job_lines() {
	job_lines | grep -vE '^ *[0-9]+ .+ (requested|queued|destroying|zombie|scrubbing|stuck|done|failed) +\[[ =>]+\]'
}
title() { $T display-message -p -t top '#{pane_title}'; }
h=$(xb_guest topevil 128) || xb_not_ok "create topevil (128 MiB)"
xb_check "guest $h renamed with an escape sequence, a newline and 60 characters (xl rename)" \
	xl rename topevil "$evil"
xb_check "  /local/domain/$h/name holds them raw" test "$(xenstore-read -R /local/domain/$h/name)" = "$evil"
rm -f /tmp/top40.stream
$T new-session -d -s top -x 40 -y 20 "env PS1='xbtop\$ ' LD_LIBRARY_PATH=$LD_LIBRARY_PATH sh" ||
	xb_not_ok "tmux starts a 40-column pane"
screen_wait '^xbtop\$' 30 || { xb_not_ok "the 40-column pane's shell is up"; show_screen; }
$T pipe-pane -t top -o 'cat >> /tmp/top40.stream'
title_before=$(title)
if start_top; then xb_ok "top draws the view on 40 columns"; else xb_not_ok "top draws the view on 40 columns"; show_screen; fi
$XR destroy $h > /tmp/top.evil 2>&1
xb_check "xenreaper destroy $h asks xenreaperd" grep -q "teardown requested" /tmp/top.evil
if screen_wait "^ +$h \\\\x1b\\]0;[a-z]*\\+ done +\\[=+\\]" 60; then
	xb_ok "  its job ends done on a 40-column line, the name escaped and cut with a '+'"
else
	xb_not_ok "  its job ends done on a 40-column line, the name escaped and cut with a '+'"
fi
show_screen
n=$(job_lines | wc -l)
xb_check "  all $n job lines show domid, name, state and a whole bar" test "$n" -ge 2 -a -z "$(bad_job_lines)"
bad_job_lines | sed 's/^/XQTAP #   cut: /'
xb_check "  the titles too" sh -c "$T capture-pane -p -t top | grep -qE '^DOMID NAME +STATE +PROGRESS'"
xb_is "$(title)" "$title_before" "  the pane's title is as before (no OSC reached the terminal)"
xb_check "  no ESC ]0;pwned in what top wrote to the terminal" \
	sh -c "! grep -qF \"$(printf '\033]0;pwned')\" /tmp/top40.stream"
$T send-keys -t top q
screen_wait '^xbtop\$ ?$' 30 || xb_not_ok "q quits top on 40 columns"
$T kill-server

xb_wait_memory $base "all the guests' memory is back"
xb_daemon_stop
# The daemon's log off the journal: one line per message, the name in it
# escaped as xenreaperd(8) says.
xb_check "the daemon's log names domain $h escaped" grep -qF "domain $h ($shown" $XB_DAEMON_LOG
xb_is "$(grep -cv '^<[0-7]>' $XB_DAEMON_LOG)" 0 "  every line of it starts with <N> ($(wc -l < $XB_DAEMON_LOG) lines)"
xb_is "$(LC_ALL=C grep -c '[[:cntrl:]]' $XB_DAEMON_LOG)" 0 "  and no line has a raw control character"
grep -v '^<[0-7]>' $XB_DAEMON_LOG | cat -v | head -n 5 | sed 's/^/XQTAP #   not <N>: /'
LC_ALL=C grep '[[:cntrl:]]' $XB_DAEMON_LOG | cat -v | head -n 5 | sed 's/^/XQTAP #   raw: /'
[ $XB_FAILED -eq 0 ] || xb_daemon_log 30
xb_done
