/*
 * sentence: xenstore refuses a request over STORE_PAYLOAD_MAX bytes
 * (libxenstore says E2BIG before sending it), and a text that grows with
 * what it names (devices, scripts, a policy's errors) would then not be
 * published at all, its job or the daemon's state with it.  So every
 * such text is built here against a limit, and says what it left out
 * rather than ending mid-word.  A cut never splits a UTF-8 sequence.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sentence.h"

_Static_assert(SENTENCE_MAX > 0, "room for a value under the longest path");

void sentence_init(struct sentence *s, size_t limit)
{
	memset(s, 0, sizeof(*s));
	s->limit = limit < SENTENCE_MAX ? limit : SENTENCE_MAX;
	s->text = malloc(s->limit + 1);
	if (!s->text)
		s->nomem = true;
	else
		s->text[0] = '\0';
}

/* Where to cut TEXT to at most MAX bytes: not inside a UTF-8 sequence. */
static size_t sentence_cut_at(const char *text, size_t max)
{
	while (max > 0 && ((unsigned char)text[max] & 0xc0) == 0x80)
		max--;
	return max;
}

/* Append LEN bytes of PART, cut at the limit. */
static void sentence_put(struct sentence *s, const char *part, size_t len)
{
	size_t room;

	if (s->nomem)
		return;
	room = s->limit - s->len;
	if (len > room)
		len = sentence_cut_at(part, room);
	memcpy(s->text + s->len, part, len);
	s->len += len;
	s->text[s->len] = '\0';
}

void sentence_add(struct sentence *s, const char *fmt, ...)
{
	char *part;
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vasprintf(&part, fmt, ap);
	va_end(ap);
	if (len < 0) {
		s->nomem = true;
		return;
	}
	sentence_put(s, part, (size_t)len);
	free(part);
}

static void sentence_count_left(struct sentence *s, const struct sentence_kind *kind)
{
	unsigned i;

	for (i = 0; i < SENTENCE_KINDS && s->left[i].kind && s->left[i].kind != kind; i++)
		;
	if (i == SENTENCE_KINDS)
		i--;	/* more kinds than a text names: counted with the last */
	s->left[i].kind = s->left[i].kind ? s->left[i].kind : kind;
	s->left[i].n++;
}

bool sentence_item(struct sentence *s, const struct sentence_kind *kind, const char *fmt, ...)
{
	char *part;
	va_list ap;
	int len;

	if (s->nomem)
		return false;
	if (!s->cut) {
		va_start(ap, fmt);
		len = vasprintf(&part, fmt, ap);
		va_end(ap);
		if (len < 0) {
			s->nomem = true;
			return false;
		}
		if (s->len + (size_t)len <= s->limit - s->limit / 8) {
			sentence_put(s, part, (size_t)len);
			free(part);
			return true;
		}
		free(part);
		s->cut = true;
	}
	sentence_count_left(s, kind);
	return false;
}

void sentence_left(struct sentence *s, const char *sep)
{
	const char *and = "and ";

	for (unsigned i = 0; i < SENTENCE_KINDS && s->left[i].kind; i++) {
		sentence_add(s, "%s%s%u more %s", i ? ", " : sep, and, s->left[i].n,
			     s->left[i].n == 1 ? s->left[i].kind->one : s->left[i].kind->many);
		and = "";
	}
	memset(s->left, 0, sizeof(s->left));
}

int sentence_finish(struct sentence *s, char **out)
{
	int rc = s->nomem ? -ENOMEM : 0;

	if (rc)
		free(s->text);
	else
		*out = s->text;
	memset(s, 0, sizeof(*s));
	return rc;
}

int sentence_fit(const char *text, char **out)
{
	size_t len = strlen(text);

	if (len > SENTENCE_MAX)
		len = sentence_cut_at(text, SENTENCE_MAX);
	*out = strndup(text, len);
	return *out ? 0 : -ENOMEM;
}

int sentence_vprintf(char **out, const char *fmt, va_list ap)
{
	char *text;
	int rc;

	if (vasprintf(&text, fmt, ap) < 0)
		return -ENOMEM;
	if (strlen(text) <= SENTENCE_MAX) {
		*out = text;
		return 0;
	}
	rc = sentence_fit(text, out);
	free(text);
	return rc;
}
