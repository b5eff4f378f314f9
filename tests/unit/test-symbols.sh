#!/bin/sh
# The symbols libxenreaper.so exports must be exactly the functions
# xenreaper.h declares (the ld version script hides everything else), and
# its soname must be libxenreaper.so.1.  TAP on stdout.
srcdir=${srcdir:-.}
lib=libxl-hook/.libs/libxenreaper.so
header=$srcdir/libxl-hook/xenreaper.h
tmp=${TMPDIR:-/tmp}/test-symbols.$$
trap 'rm -f "$tmp".*' EXIT

echo "1..7"
if [ ! -e "$lib" ] || [ ! -r "$header" ]; then
	echo "Bail out! $lib or $header is missing (run make first)"
	exit 1
fi

# Declared functions: names followed by "(" once comments are stripped.
awk '
	{
		line = $0; out = ""
		while (line != "") {
			if (incomment) {
				i = index(line, "*/")
				if (!i) { line = ""; break }
				line = substr(line, i + 2); incomment = 0
			} else {
				i = index(line, "/*")
				if (!i) { out = out line; line = ""; break }
				out = out substr(line, 1, i - 1); line = substr(line, i + 2); incomment = 1
			}
		}
		print out
	}' "$header" |
	grep -o 'xenreaper_[A-Za-z0-9_]*[[:space:]]*(' | sed 's/[[:space:]]*($//' |
	sort -u > "$tmp.declared"

# Exported: defined dynamic symbols, without version suffixes and without
# the version node itself (an absolute symbol).
nm -D --defined-only "$lib" | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' |
	sort -u > "$tmp.exported"

if [ -s "$tmp.declared" ]; then
	echo "ok 1 - xenreaper.h declares $(wc -l < "$tmp.declared") functions"
else
	echo "not ok 1 - no functions found in $header"
fi

if cmp -s "$tmp.declared" "$tmp.exported"; then
	echo "ok 2 - exported symbols are exactly the declared functions"
else
	echo "not ok 2 - exported symbols differ from the declared functions"
	diff "$tmp.declared" "$tmp.exported" | sed -n 's/^[<>]/#&/p' |
		sed 's/^#</# declared, not exported:/; s/^#>/# exported, not declared:/'
fi

if nm -D --defined-only "$lib" | grep -q ' A XENREAPER_1$'; then
	echo "ok 3 - symbols carry the version node XENREAPER_1"
else
	echo "not ok 3 - no version node XENREAPER_1 (is the version script applied?)"
fi

soname=$(objdump -p "$lib" | awk '$1 == "SONAME" { print $2 }')
if [ "$soname" = libxenreaper.so.1 ]; then
	echo "ok 4 - soname is libxenreaper.so.1"
else
	echo "not ok 4 - soname is '$soname', want libxenreaper.so.1"
fi

n=4
# The front and the library stay light: libxl's start-up (~1 s under
# emulation) is what `xl destroy --async` exists to avoid.
for bin in "$lib" libxl-hook/.libs/xl; do
	n=$((n + 1))
	needed=$(objdump -p "$bin" | awk '$1 == "NEEDED" { print $2 }' | tr '\n' ' ')
	case $needed in
	*libxenlight*) echo "not ok $n - $bin does not need libxenlight (needs: $needed)" ;;
	*) echo "ok $n - $bin does not need libxenlight (needs: $needed)" ;;
	esac
done

# Functions added after the first release carry the node that added them
# (libxenreaper.sym), so a program needing one cannot load an older library.
newer=$(nm -D --defined-only "$lib" | awk '$3 ~ /@@?XENREAPER_1\.1$/ { sub(/@.*/, "", $3); print $3 }' | sort | tr '\n' ' ')
n=$((n + 1))
if [ "$newer" = "xenreaper_set_answer_timeout " ] &&
   nm -D --defined-only "$lib" | grep -q ' A XENREAPER_1.1$'; then
	echo "ok $n - xenreaper_set_answer_timeout, and it alone, is in node XENREAPER_1.1"
else
	echo "not ok $n - node XENREAPER_1.1 holds: '$newer' (want xenreaper_set_answer_timeout)"
fi

