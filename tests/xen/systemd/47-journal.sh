# xenbench: writable-root
# The daemon's journal entries under the real unit (issue 19, part 2): with
# the message catalog installed as the package installs it (into
# /usr/lib/systemd/catalog, then `journalctl --update-catalog`, which
# Debian's systemd runs by trigger), a teardown under xenreaperd.service;
# then `journalctl MESSAGE_ID=<done id> XEN_DOMID=N` finds it, with the
# domain's UUID, name and state, sent over the journal's native protocol;
# `journalctl -x` shows the catalog's text for it; and a reload of a bad
# policy file is an entry with its error in XENREAPER_ERROR.  A guest
# named by a tenant with an escape sequence, a newline and 60 characters
# (issue 41): each entry's MESSAGE is one line, the name escaped, while
# XEN_DOMAIN_NAME keeps it byte for byte.
# The guests are paused PV guests without devices: the point is the
# journal, not what a teardown leaves in dom0 (45-guests-unit is for that).
# Needs xenstored, which 50-service kills at its end: so it runs before it.
# Leaves dom0 as it found it: catalog, policy file and unit state.
. $XB_LIB
DONE=0db490eeee4841daa5b81575e33bf9a3
ACCEPTED=6c6e9e07f708422c82e40d599fda641a
STARTED=aea0afedc522408188d5ca3363bd8986
RELEASED=2ac89d91a9484a44be4a7621a6dd9dde
RELOADED=36e6a31e98cf4184956d6046d74052a4
RELOAD_FAILED=8f5696a2989e483c8e677576cbd7177b
catalog=/usr/lib/systemd/catalog/xenreaper.catalog
# journal_find MATCH... : wait (at most 20 s: journalctl is slow under
# emulation) until an entry matches; its MESSAGEs in /tmp/jf.out.
journal_find() {
	_end=$(($(date +%s) + 20))
	while :; do
		journalctl --no-pager -o cat "$@" > /tmp/jf.out 2> /tmp/jf.err && [ -s /tmp/jf.out ] && return 0
		[ $(date +%s) -ge $_end ] && { sed 's/^/XQTAP #   journalctl: /' /tmp/jf.err; return 1; }
		sleep 0.5
	done
}
# field NAME FILE: the value of NAME in a `journalctl -o verbose` FILE.
field() { sed -n "s/^    $1=//p" "$2" | head -n 1; }
is_rate() { expr "$1" : '[0-9][0-9]*\.[0-9]$' > /dev/null; }
# The journal's end now: what follows it is this scenario's (40 and 45 ran
# the daemon in this boot before).
# Searched from with --cursor, not --after-cursor: journalctl 252 skips
# two entries after the cursor, the cursor's and the next, and with a
# match the next is the first entry that matches (seen: the reload's entry
# was there, _TRANSPORT=journal and MESSAGE_ID right, and not found).
# The cursor's own entry is never one looked for (it comes before).
mark() { journalctl -q -n 0 --show-cursor --no-pager | sed -n 's/^-- cursor: //p'; }

if ! timeout 10 xenstore-read /local/domain/0/domid > /dev/null 2>&1; then
	xb_not_ok "xenstored answers (not after 50-service, which kills it: it must run before it)"
	xb_done
fi

# --- the catalog, as the package installs it
had_catalog=no; [ -e $catalog ] && had_catalog=yes
cp $XB_SRC/config/xenreaper.catalog $catalog
journalctl --update-catalog > /tmp/update-catalog.out 2>&1; rc=$?
xb_is "$rc" 0 "journalctl --update-catalog takes config/xenreaper.catalog"
[ $rc -eq 0 ] || sed 's/^/XQTAP #   /' /tmp/update-catalog.out
journalctl --list-catalog 2>/dev/null | grep "^$DONE " > /tmp/listed.out
xb_check "  --list-catalog has the done entry ($(cut -c1-90 /tmp/listed.out))" \
	grep -q "^$DONE xenreaper: Teardown of domain" /tmp/listed.out

# --- a teardown under the unit
base=$(xb_free_pages)
since=$(mark)
xb_check "systemctl start xenreaperd" systemctl start xenreaperd.service
xb_is "$(systemctl is-active xenreaperd.service)" active "xenreaperd.service is active"
xb_check "its start-up line came over the native protocol (_TRANSPORT=journal): it saw JOURNAL_STREAM" \
	journal_find --cursor "$since" -u xenreaperd.service _TRANSPORT=journal SYSLOG_IDENTIFIER=xenreaperd
xb_check "  with the same text as ever ($(head -c 100 /tmp/jf.out))" grep -q "^xenreaperd .* running: " /tmp/jf.out

d=$(xb_guest jguest 256) || xb_not_ok "create a 256 MiB guest (no devices)"
uuid=$($XB_TOOL uuid $d)
xb_request $d
xb_wait_state $d done 60
xb_is "$(xb_state $d)" done "domain $d torn down through the service"
xb_check "journalctl MESSAGE_ID=<done> XEN_DOMID=$d finds the teardown" journal_find MESSAGE_ID=$DONE XEN_DOMID=$d
xb_is "$(wc -l < /tmp/jf.out)" 1 "  one entry ($(head -c 120 /tmp/jf.out))"
xb_check "  its MESSAGE the line stderr would have had" grep -q "^domain $d (jguest, [0-9]* MiB): destroying -> done after " /tmp/jf.out
journalctl --no-pager -o verbose MESSAGE_ID=$DONE XEN_DOMID=$d > /tmp/done.verbose 2>&1
xb_is "$(field XEN_DOMAIN_UUID /tmp/done.verbose)" "$uuid" "  XEN_DOMAIN_UUID is the domain's"
xb_is "$(field XEN_DOMAIN_NAME /tmp/done.verbose)" jguest "  XEN_DOMAIN_NAME"
xb_is "$(field XENREAPER_JOB_STATE /tmp/done.verbose)" done "  XENREAPER_JOB_STATE"
xb_is "$(field XENREAPER_JOB_REASON /tmp/done.verbose)" request "  XENREAPER_JOB_REASON"
xb_is "$(field PRIORITY /tmp/done.verbose)" 6 "  PRIORITY"
xb_is "$(field _SYSTEMD_UNIT /tmp/done.verbose)" xenreaperd.service "  _SYSTEMD_UNIT: journald files it under the unit"
rate=$(field XENREAPER_RATE_MIB_S /tmp/done.verbose)
xb_check "  XENREAPER_RATE_MIB_S, a rate in MiB/s ($rate)" is_rate "$rate"
for ev in ACCEPTED STARTED RELEASED; do
	eval id=\$$ev
	journal_find MESSAGE_ID=$id XEN_DOMID=$d
	xb_is "$(wc -l < /tmp/jf.out)" 1 "  and one $ev entry for it ($(head -c 100 /tmp/jf.out))"
done
journalctl --no-pager -x MESSAGE_ID=$DONE XEN_DOMID=$d > /tmp/done.x 2>&1
sed 's/^/XQTAP #   /' /tmp/done.x | head -n 8
xb_check "journalctl -x shows the catalog's subject with the domid filled in" \
	grep -q "Subject: Teardown of domain $d done" /tmp/done.x
xb_check "  and its text, with the UUID" grep -q "domain $d (UUID $uuid) is finished" /tmp/done.x
xb_wait_memory $base "the guest's memory is back"

# --- a hostile name: MESSAGE escaped, XEN_DOMAIN_NAME raw
evil=$(printf '\033]0;pwned\007\nforged abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefgh')
shown='\x1b]0;pwned\a\nforged abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefgh'
h=$(xb_guest jevil 128) || xb_not_ok "create a 128 MiB guest (no devices)"
xb_check "guest $h renamed with an escape sequence, a newline and 60 characters (xl rename)" \
	xl rename jevil "$evil"
xb_request $h
xb_wait_state $h done 60
xb_is "$(xb_state $h)" done "domain $h torn down through the service"
xb_check "journalctl MESSAGE_ID=<done> XEN_DOMID=$h finds it" journal_find MESSAGE_ID=$DONE XEN_DOMID=$h
cat -v /tmp/jf.out | head -n 3 | sed 's/^/XQTAP #   -o cat: /'
xb_is "$(wc -l < /tmp/jf.out)" 1 "  journalctl -o cat prints its MESSAGE as one line"
xb_check "  the name in it escaped" grep -qF "domain $h ($shown, " /tmp/jf.out
journalctl --no-pager -o cat XEN_DOMID=$h > /tmp/jevil.all 2>&1
xb_is "$(LC_ALL=C grep -c '[[:cntrl:]]' /tmp/jevil.all)" 0 \
	"  no MESSAGE for domain $h has a raw control character ($(wc -l < /tmp/jevil.all) entries)"
xb_is "$(grep -cv "^domain $h (" /tmp/jevil.all)" 0 "  and each is one line naming the domain"
# XEN_DOMAIN_NAME from the export format: a value with control characters
# is a binary field there (its name, a newline, its length as 64-bit
# little-endian, the bytes).
journalctl --no-pager -o export MESSAGE_ID=$DONE XEN_DOMID=$h | perl -0777 -ne '
	if (/(?:\A|\n)XEN_DOMAIN_NAME\n(.{8})/s) { print substr($_, $+[0], unpack("Q<", $1)); }
	elsif (/(?:\A|\n)XEN_DOMAIN_NAME=([^\n]*)/) { print $1; }' > /tmp/jevil.name
printf '%s' "$evil" > /tmp/jevil.want
xb_check "  XEN_DOMAIN_NAME is the name byte for byte ($(wc -c < /tmp/jevil.name) bytes)" \
	cmp -s /tmp/jevil.name /tmp/jevil.want
xb_wait_memory $base "its memory is back"

# --- a reload of a bad policy file
conf=$($XB_DAEMON --help 2>&1 | sed -n 's/.*policy file (default \(.*\))$/\1/p')
xb_check "the daemon's policy file is $conf" test -n "$conf"
had_conf=no
[ -e "$conf" ] && { had_conf=yes; cp "$conf" /tmp/xb-conf.saved; }
mkdir -p "$(dirname "$conf")"
printf '[daemon]\njobs = 0\n' > "$conf"
since=$(mark)
systemctl reload xenreaperd.service
xb_check "a reload of a bad file: an entry with the reload-error MESSAGE_ID" \
	journal_find --cursor "$since" MESSAGE_ID=$RELOAD_FAILED
journalctl --no-pager -o verbose --cursor "$since" MESSAGE_ID=$RELOAD_FAILED > /tmp/reload.verbose 2>&1
xb_is "$(field XENREAPER_CONFIG_FILE /tmp/reload.verbose)" "$conf" "  XENREAPER_CONFIG_FILE"
xb_check "  XENREAPER_ERROR says what is wrong ($(field XENREAPER_ERROR /tmp/reload.verbose | head -c 120))" \
	grep -q "^    XENREAPER_ERROR=$conf:2: jobs = '0' is out of range" /tmp/reload.verbose
xb_is "$(field PRIORITY /tmp/reload.verbose)" 3 "  PRIORITY err"
journalctl --no-pager -x --cursor "$since" MESSAGE_ID=$RELOAD_FAILED > /tmp/reload.x 2>&1
xb_check "  journalctl -x explains it" grep -q "Subject: xenreaperd could not reload its policy" /tmp/reload.x
xb_is "$(systemctl is-active xenreaperd.service)" active "  the daemon runs on with its old policy"
if [ $had_conf = yes ]; then cp /tmp/xb-conf.saved "$conf"; else rm -f "$conf"; fi
since=$(mark)
systemctl reload xenreaperd.service
xb_check "the file put back, a reload: an entry with the reloaded MESSAGE_ID" \
	journal_find --cursor "$since" MESSAGE_ID=$RELOADED

systemctl stop xenreaperd.service
[ $had_catalog = yes ] || { rm -f $catalog; journalctl --update-catalog > /dev/null 2>&1; }
[ $XB_FAILED -eq 0 ] || journalctl -u xenreaperd.service --no-pager -o cat | tail -n 30 | sed 's/^/XQTAP #   daemon: /'
xb_done
