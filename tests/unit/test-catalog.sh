#!/bin/sh
# The journal message catalog, config/xenreaper.catalog, against the
# MESSAGE_IDs of daemon/log-ids.h: every id has one entry and every entry
# one id, each with a Subject; xenreaperd(8) names every id and field;
# journalctl's own parser takes the file
# (--update-catalog into a root of our own: the host's catalog is not
# touched); and, run as root where systemd-journal-remote is installed,
# `journalctl -x` on a journal made of the entries the daemon sends in
# tests/unit/test-journal shows each event's catalog text, and every field
# an entry's text names is one the daemon sends with that event.  The
# database journalctl -x reads has a fixed path (/var/lib/systemd/catalog),
# so that last part binds ours over it in a mount namespace of its own
# (unshare -m), where nothing else sees it.  TAP on stdout.
srcdir=${srcdir:-.}
builddir=${abs_top_builddir:-.}
catalog=$srcdir/config/xenreaper.catalog
ids=$srcdir/daemon/log-ids.h
tmp=${TMPDIR:-/tmp}/test-catalog.$$
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp" || exit 1

n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $*"; }
skip() { n=$((n + 1)); echo "ok $n # SKIP $*"; }
check() { what=$1; shift; if "$@"; then ok "$what"; else not_ok "$what"; fi; }
diag() { sed 's/^/# /' "$1"; }

sed -n 's/^#define XR_MESSAGE_[A-Z_]*[[:space:]]*"\([^"]*\)".*/\1/p' "$ids" | sort > "$tmp/header"
sed -n 's/^-- \([^ ]*\)$/\1/p' "$catalog" | sort > "$tmp/catalog"

check "log-ids.h defines MESSAGE_IDs ($(wc -l < "$tmp/header"))" test -s "$tmp/header"
if grep -Evx '[0-9a-f]{32}' "$tmp/header" "$tmp/catalog" > "$tmp/bad"; then
	not_ok "every id is 32 lowercase hex digits"; diag "$tmp/bad"
else
	ok "every id, in the header and the catalog, is 32 lowercase hex digits"
fi
uniq -d "$tmp/header" > "$tmp/dup"; uniq -d "$tmp/catalog" >> "$tmp/dup"
if [ -s "$tmp/dup" ]; then not_ok "no id twice"; diag "$tmp/dup"; else ok "no id is defined twice, nor has two entries"; fi
comm -3 "$tmp/header" "$tmp/catalog" > "$tmp/diff"
if [ -s "$tmp/diff" ]; then
	not_ok "every MESSAGE_ID has a catalog entry and every entry a MESSAGE_ID (left: header only, right: catalog only)"
	diag "$tmp/diff"
else
	ok "every MESSAGE_ID has a catalog entry and every entry a MESSAGE_ID"
fi
# Each entry: its Subject, Defined-By and Documentation headers, and text.
awk '/^-- / { if (id) print id, s, d, doc, body; id = $2; s = d = doc = body = 0; head = 1; next }
	!id || /^#/ { next }
	head && /^$/ { head = 0; next }
	head && /^Subject: ./ { s = 1 } head && /^Defined-By: xenreaper$/ { d = 1 }
	head && /^Documentation: man:/ { doc = 1 } !head && /./ { body = 1 }
	END { if (id) print id, s, d, doc, body }' "$catalog" | grep -v ' 1 1 1 1$' > "$tmp/headers"
if [ -s "$tmp/headers" ]; then
	not_ok "every entry has Subject, Defined-By, Documentation and a text (id subject defined-by documentation text)"
	diag "$tmp/headers"
else
	ok "every entry has Subject, Defined-By: xenreaper, Documentation and a text"
fi

# xenreaperd(8), JOURNAL, names every id and every field log.c sends.
man=$srcdir/man/xenreaperd.8
sed -n 's/.*log_entry_add(&e, "\([A-Z_]*\)=.*/\1/p' "$srcdir/daemon/log.c" | sort -u > "$tmp/fields"
: > "$tmp/undocumented"
for word in $(cat "$tmp/header" "$tmp/fields"); do
	grep -Eq "^\.(It|Dl) (Li|Va) $word( |\$)|^\.Va $word( |\$)|^journalctl .*$word" "$man" ||
		echo "$word" >> "$tmp/undocumented"
done
if [ "$(wc -l < "$tmp/fields")" -lt 10 ]; then
	not_ok "the fields log.c sends are found ($(tr '\n' ' ' < "$tmp/fields"))"
elif [ -s "$tmp/undocumented" ]; then
	not_ok "xenreaperd.8 documents every MESSAGE_ID and every field"; diag "$tmp/undocumented"
else
	ok "xenreaperd.8 documents every MESSAGE_ID and every field ($(wc -l < "$tmp/fields") fields)"
fi

if ! command -v journalctl > /dev/null 2>&1; then
	skip "journalctl is not installed (apt-get install systemd): the catalog's syntax is unchecked"
	echo "1..$n"
	exit 0
fi
root=$tmp/root
mkdir -p "$root/usr/lib/systemd/catalog" "$root/var/lib/systemd/catalog" "$root/var/log/journal"
cp "$catalog" "$root/usr/lib/systemd/catalog/"
journalctl --root="$root" --update-catalog > "$tmp/update" 2>&1
rc=$?
if [ $rc = 0 ] && [ ! -s "$tmp/update" ] && [ -s "$root/var/lib/systemd/catalog/database" ]; then
	ok "journalctl --update-catalog takes the file, silently"
else
	not_ok "journalctl --update-catalog takes the file (exit $rc)"; diag "$tmp/update"
fi
journalctl --root="$root" --list-catalog 2> "$tmp/list.err" | sed 's/ .*//' | sort > "$tmp/listed"
if cmp -s "$tmp/listed" "$tmp/header"; then
	ok "journalctl --list-catalog lists exactly the ids of log-ids.h"
else
	not_ok "journalctl --list-catalog lists exactly the ids of log-ids.h"
	diff "$tmp/header" "$tmp/listed" > "$tmp/ldiff"; diag "$tmp/ldiff"; diag "$tmp/list.err"
fi
# The parser is no rubber stamp: an id cut short fails the update.
bad=$tmp/bad-root
mkdir -p "$bad/usr/lib/systemd/catalog"
sed '0,/^-- \([0-9a-f]*\)[0-9a-f]$/s//-- \1/' "$catalog" > "$bad/usr/lib/systemd/catalog/xenreaper.catalog"
if journalctl --root="$bad" --update-catalog > "$tmp/bad.out" 2>&1; then
	not_ok "an entry whose id is cut short fails journalctl --update-catalog"
else
	ok "an entry whose id is cut short fails journalctl --update-catalog: $(head -n 1 "$tmp/bad.out")"
fi

remote=/usr/lib/systemd/systemd-journal-remote
why=
[ "$(id -u)" = 0 ] || why="not root (a mount namespace is needed for journalctl -x to read our catalog)"
[ -n "$why" ] || command -v unshare > /dev/null 2>&1 || why="unshare(1) is not installed"
[ -n "$why" ] || [ -x "$remote" ] || why="systemd-journal-remote is not installed (apt-get install systemd-journal-remote)"
[ -n "$why" ] || [ -d /var/lib/systemd/catalog ] || why="this host has no /var/lib/systemd/catalog to bind ours over"
[ -n "$why" ] || [ -x "$builddir/tests/unit/test-journal" ] || why="tests/unit/test-journal is not built"
[ -n "$why" ] || unshare -m true 2> /dev/null || why="unshare -m is refused here"
if [ -n "$why" ]; then
	skip "journalctl -x on the daemon's entries: $why"
	skip "the fields each entry's text names: $why"
	echo "1..$n"
	exit 0
fi
XR_JOURNAL_EXPORT=$tmp/entries.export "$builddir/tests/unit/test-journal" > "$tmp/test-journal.out" 2>&1 ||
	{ not_ok "tests/unit/test-journal passes, exporting its entries"; diag "$tmp/test-journal.out"; }
"$remote" --output="$root/var/log/journal/entries.journal" - < "$tmp/entries.export" > "$tmp/remote.out" 2>&1 ||
	{ not_ok "systemd-journal-remote writes a journal of them"; diag "$tmp/remote.out"; }
# In a mount namespace of its own: journalctl -x reads our database.
unshare -m sh -c '
	mount --bind "$1/var/lib/systemd/catalog" /var/lib/systemd/catalog || exit 1
	for id in $(cat "$2/header"); do
		journalctl --root="$1" -x --no-pager MESSAGE_ID=$id > "$2/x.$id" 2>&1
	done' sh "$root" "$tmp" > "$tmp/unshare.out" 2>&1
rc=$?
: > "$tmp/missing"
for id in $(cat "$tmp/header"); do
	subject=$(sed -n "/^-- $id\$/,/^\$/s/^Subject: //p" "$catalog" | sed 's/@[A-Z_]*@/.*/g')
	grep -q "^░░ Subject: $subject\$" "$tmp/x.$id" 2> /dev/null || echo "$id: no '$subject'" >> "$tmp/missing"
done
if [ $rc = 0 ] && [ ! -s "$tmp/missing" ]; then
	ok "journalctl -x shows the catalog text of each event the daemon sent ($(wc -l < "$tmp/header") ids)"
else
	not_ok "journalctl -x shows the catalog text of each event the daemon sent"
	diag "$tmp/unshare.out"; diag "$tmp/missing"
fi
check "  with the entry's fields in: 'Teardown of domain 5 done'" \
	grep -q "^░░ Subject: Teardown of domain 5 done$" "$tmp/x.0db490eeee4841daa5b81575e33bf9a3"
# Each field a text names (@FIELD@) is in every entry of its id; a field
# missing would show as its bare name.
: > "$tmp/unsent"
for id in $(cat "$tmp/header"); do
	sed -n "/^-- $id\$/,/^-- /p" "$catalog" | grep -o '@[A-Z_]*@' | tr -d @ | sort -u > "$tmp/named"
	journalctl --root="$root" --no-pager -o verbose MESSAGE_ID=$id > "$tmp/v.$id" 2>&1
	for field in $(cat "$tmp/named"); do
		awk -v f="$field" -v id="$id" '
			/^[^ ]/ { if (entry && !seen) { print id ": an entry without " f; exit } entry = 1; seen = 0; next }
			$0 ~ "^    " f "=" { seen = 1 }
			END { if (entry && !seen) print id ": an entry without " f; if (!entry) print id ": no entry" }' \
			"$tmp/v.$id" >> "$tmp/unsent"
	done
done
if [ -s "$tmp/unsent" ]; then
	not_ok "every field a catalog text names is in each entry the daemon sends with that id"
	sort -u "$tmp/unsent" > "$tmp/unsent.u"; diag "$tmp/unsent.u"
else
	ok "every field a catalog text names is in each entry the daemon sends with that id"
fi
echo "1..$n"
