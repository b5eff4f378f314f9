/*
 * textesc: text from xenstore made safe to show a person, the one rule
 * the clients and the daemon's log share.  A guest's name is its tenant's
 * choice, and xl takes any bytes for one: printed raw, an escape sequence
 * in it would act on the reader's terminal and a newline would forge a
 * line.  Printable text (UTF-8 included) is kept; control characters,
 * bytes that are not UTF-8 and the invisible characters that reorder or
 * hide text become backslash escapes, so the result is one line, shown
 * as it is.  No I/O, no allocation: linked by the daemon and the clients.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "textesc.h"

size_t textesc_utf8_len(const unsigned char *s)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (s[0] == 0xe0)
		lo = 0xa0;		/* overlong */
	else if (s[0] == 0xed)
		hi = 0x9f;		/* surrogates */
	else if (s[0] == 0xf0)
		lo = 0x90;		/* overlong */
	else if (s[0] == 0xf4)
		hi = 0x8f;		/* beyond U+10FFFF */
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

/* Whether the UTF-8 sequence S of N bytes is a code point a terminal
 * would act on or hide rather than show: C1 controls, and the invisible
 * format characters that reorder or hide text (Trojan Source): ALM, the
 * zero-width ones, LRM/RLM, bidi embeddings, overrides and isolates, the
 * line and paragraph separators, word joiners and the BOM. */
static bool text_hidden(const unsigned char *s, size_t n)
{
	uint32_t cp;

	if (n == 2)
		cp = (s[0] & 0x1f) << 6 | (s[1] & 0x3f);
	else if (n == 3)
		cp = (s[0] & 0x0f) << 12 | (s[1] & 0x3f) << 6 | (s[2] & 0x3f);
	else
		return false;
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0x61c || (cp >= 0x200b && cp <= 0x200f) ||
	       (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x2069) || cp == 0xfeff;
}

/* Put the N bytes of UNIT at *POS if all of them fit before the NUL;
 * once one does not, nothing more is put (*FULL), so the text is cut
 * between units. */
static void text_put(char *out, size_t len, size_t *pos, bool *full, const char *unit,
		     size_t n)
{
	if (!*full && *pos + n < len)
		memcpy(out + *pos, unit, n);
	else
		*full = true;
	*pos += n;
}

size_t textesc_escape(char *out, size_t len, const char *in, bool keep_backslash)
{
	static const char c_escapes[] = "abtnvfr";	/* \a is 7 ... \r is 13 */
	const unsigned char *s = (const unsigned char *)in;
	size_t pos = 0, kept = 0, n;
	bool full = false;
	char esc[20];

	while (*s) {
		n = *s < 0x80 ? 1 : textesc_utf8_len(s);
		if (*s == '\\' && !keep_backslash) {
			text_put(out, len, &pos, &full, "\\\\", 2);
		} else if (*s >= 7 && *s <= 13) {
			esc[0] = '\\';
			esc[1] = c_escapes[*s - 7];
			text_put(out, len, &pos, &full, esc, 2);
		} else if (*s < 0x20 || *s == 0x7f || n == 0 || text_hidden(s, n)) {
			size_t bytes = n ? n : 1;

			for (size_t i = 0; i < bytes; i++)
				snprintf(esc + 4 * i, 5, "\\x%02x", s[i]);
			text_put(out, len, &pos, &full, esc, 4 * bytes);
			n = bytes;
		} else {
			text_put(out, len, &pos, &full, (const char *)s, n);
		}
		if (!full)
			kept = pos;
		s += n;
	}
	if (len)
		out[kept < len ? kept : len - 1] = '\0';
	return pos;
}
