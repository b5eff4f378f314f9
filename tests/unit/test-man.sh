#!/bin/sh
# The manual pages: mandoc -Tlint finds nothing in them (warnings, and the
# style messages too, but for cross references to pages of other packages,
# which need not be installed here), they have the sections every page of
# theirs needs, and they cannot drift from the code silently: every key of
# config/xenreaper.conf (and of daemon/config.h's summary) is documented in
# xenreaper.conf.5, every node of libxl-hook/xenreaper-layout.h's summary in
# xenreaper-xenstore.7.  TAP on stdout.
srcdir=${srcdir:-.}
pages="xenreaperd.8 xenreaper.1 xenreaper.conf.5 xenreaper-xenstore.7 xenreaper-metrics.7"
tmp=${TMPDIR:-/tmp}/test-man.$$
trap 'rm -rf "$tmp"' EXIT

if ! command -v mandoc >/dev/null 2>&1; then
	echo "1..0 # SKIP mandoc is not installed (apt-get install mandoc)"
	exit 0
fi
mkdir -p "$tmp" || exit 1

# A manual tree of just these pages, so that cross references between them
# resolve and nothing depends on what this machine has installed.
for page in $pages; do
	section=${page##*.}
	mkdir -p "$tmp/man/man$section" &&
		cp "$srcdir/man/$page" "$tmp/man/man$section/" 2>/dev/null
done
MANPATH=$tmp/man
export MANPATH

n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $*"; }
# Print FILE's lines as TAP comments.
diag() { sed 's/^/# /' "$1"; }

# The page as text, for looking words up (no hyphenation, no formatting).
render() {
	mandoc -Tascii -O width=1000 "$srcdir/man/$1" | sed 's/.\x08//g' > "$tmp/$1.txt"
}

# Whether WORD stands alone in FILE: not a part of a longer node or key name
# (so "pages" is not found in "pages-left").
has_word() {
	grep -Eq "(^|[^A-Za-z0-9_-])$1([^A-Za-z0-9_-]|\$)" "$2"
}

for page in $pages; do
	if [ ! -r "$srcdir/man/$page" ]; then
		not_ok "$page exists"
		continue
	fi

	# Warnings and errors: nothing at all.
	mandoc -Tlint -W warning "$srcdir/man/$page" > "$tmp/lint" 2>&1
	if [ -s "$tmp/lint" ]; then
		not_ok "mandoc -Tlint -W warning $page"
		diag "$tmp/lint"
	else
		ok "mandoc -Tlint -W warning $page"
	fi

	# Style: nothing either, except "referenced manual not found" for the
	# pages of other packages (xl, systemd...) and mandoc's note about an
	# outdated mandoc.db, both about this machine, not the page.  A page of
	# ours must be referred to under its right name and section.
	mandoc -Tlint -W style "$srcdir/man/$page" 2>&1 |
		awk '/referenced manual not found: Xr xenreaper/ { print; next }
		     /referenced manual not found/ || /outdated mandoc.db/ { next }
		     { print }' > "$tmp/style"
	sed -n 's/.*\.Xr \(xenreaper[^ ]*\) \([1-9]\).*/\1.\2/p' "$srcdir/man/$page" |
		sort -u | while read -r ref; do
			[ -r "$srcdir/man/$ref" ] ||
				echo "$page: .Xr to $ref, which is not one of the pages" >> "$tmp/style"
		done
	if [ -s "$tmp/style" ]; then
		not_ok "mandoc -Tlint style $page"
		diag "$tmp/style"
	else
		ok "mandoc -Tlint style $page"
	fi

	# Sections: NAME, DESCRIPTION and SEE ALSO everywhere; SYNOPSIS and
	# EXIT STATUS for the programs (sections 1 and 8).
	want="NAME DESCRIPTION SEE_ALSO"
	case $page in
	*.1 | *.8) want="$want SYNOPSIS EXIT_STATUS FILES" ;;
	*.5) want="$want FILES" ;;
	esac
	missing=
	for sh in $want; do
		grep -q "^\.Sh $(echo "$sh" | tr _ ' ')\$" "$srcdir/man/$page" ||
			missing="$missing $(echo "$sh" | tr _ ' ')"
	done
	if [ -n "$missing" ]; then
		not_ok "$page has its sections (missing:$missing)"
	else
		ok "$page has its sections"
	fi
done

# Every key of the shipped policy file, and of config.h's summary, in
# xenreaper.conf.5.  The file shows each key as "#key = default".
conf=$srcdir/config/xenreaper.conf
confh=$srcdir/daemon/config.h
if [ -r "$conf" ] && [ -r "$confh" ] && render xenreaper.conf.5; then
	{
		sed -n 's/^#\{0,1\}\([a-z][a-z-]*\) *=.*/\1/p' "$conf"
		# " *   [daemon]          jobs, retention, ...": the names after the
		# section up to the end of the summary.
		awk '/^ \*   \[(daemon|default|pool:NAME)\]/ { insum = 1 }
		     insum && /^ \*\/|^ \*$/ { insum = 0 }
		     insum { sub(/^ \*[ \t]*(\[[^]]*\])?[ \t]*/, ""); print }' "$confh" |
			sed 's/:.*//' | tr ',' '\n' | sed 's/^ *//; s/ *$//' |
			grep -E '^[a-z][a-z-]+$'
	} | sort -u > "$tmp/keys"
	sections=$(sed -n 's/^\[\([a-z]*\)\].*/\1/p' "$conf" | sort -u)
	: > "$tmp/missing"
	for key in $(cat "$tmp/keys"); do
		has_word "$key" "$tmp/xenreaper.conf.5.txt" || echo "key $key" >> "$tmp/missing"
	done
	for section in $sections pool:NAME; do
		grep -qF "[$section]" "$tmp/xenreaper.conf.5.txt" ||
			echo "section [$section]" >> "$tmp/missing"
	done
	if [ ! -s "$tmp/keys" ] || [ "$(wc -l < "$tmp/keys")" -lt 8 ]; then
		not_ok "keys of config/xenreaper.conf found (got: $(tr '\n' ' ' < "$tmp/keys"))"
	elif [ -s "$tmp/missing" ]; then
		not_ok "xenreaper.conf.5 documents every key and section"
		diag "$tmp/missing"
	else
		ok "xenreaper.conf.5 documents every key and section ($(wc -l < "$tmp/keys") keys)"
	fi
else
	not_ok "read $conf, $confh and man/xenreaper.conf.5"
fi

# Every node of xenreaper-layout.h's summary in xenreaper-xenstore.7.  The summary
# is a comment of paths with "{leaf,leaf,...}" lists, which may span lines.
layout=$srcdir/libxl-hook/xenreaper-layout.h
if [ -r "$layout" ] && render xenreaper-xenstore.7; then
	awk '/^ \*   \/tool\/xenreaper/ { insum = 1 }
	     insum && /^ \*\// { insum = 0 }
	     insum { sub(/^ \*[ \t]*/, ""); printf "%s ", $0 }' "$layout" > "$tmp/summary"
	{
		# The leaves in braces...
		grep -o '{[^}]*}' "$tmp/summary" | tr -d '{}' | tr ',/' '\n\n'
		# ...and the directories on the way.
		grep -o '/tool/xenreaper/[^ {=]*' "$tmp/summary" | tr '/' '\n'
	} | sed 's/([^)]*)//g; s/^ *//; s/ *$//' | grep -E '^[a-z][a-z-]*$' |
		sort -u > "$tmp/nodes"
	: > "$tmp/missing"
	for node in $(cat "$tmp/nodes"); do
		has_word "$node" "$tmp/xenreaper-xenstore.7.txt" || echo "node $node" >> "$tmp/missing"
	done
	if [ "$(wc -l < "$tmp/nodes")" -lt 20 ]; then
		not_ok "nodes of xenreaper-layout.h found (got: $(tr '\n' ' ' < "$tmp/nodes"))"
	elif [ -s "$tmp/missing" ]; then
		not_ok "xenreaper-xenstore.7 documents every node of xenreaper-layout.h"
		diag "$tmp/missing"
	else
		ok "xenreaper-xenstore.7 documents every node of xenreaper-layout.h ($(wc -l < "$tmp/nodes") names)"
	fi
else
	not_ok "read $layout and man/xenreaper-xenstore.7"
fi

echo "1..$n"
