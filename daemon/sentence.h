/*
 * sentence: the texts the daemon publishes in xenstore (held-by, error,
 * config-error, names), built so that each fits the one request xenstore
 * takes.  Items are kept while they fit, and once one does not, it and
 * every later one are only counted, and the text says how many of what
 * it left out ("and 12 more hotplug scripts").
 */
#pragma once
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "layout.h"
#include "store.h"

/* Bytes of a value any node the daemon writes may carry: xenstore's
 * payload less the longest path the daemon builds (LAYOUT_PATH_LEN, its
 * NUL included). */
#define SENTENCE_MAX (STORE_PAYLOAD_MAX - LAYOUT_PATH_LEN)
/* Distinct kinds of item one text counts by name. */
#define SENTENCE_KINDS 4

/* What an item is, as the count of those left out names it. */
struct sentence_kind {
	const char *one, *many;		/* "hotplug script", "hotplug scripts" */
};

struct sentence {
	char *text;		/* malloc'd, limit + 1 bytes */
	size_t len, limit;
	bool cut;		/* an item was left out: every later one is too */
	bool nomem;
	struct {
		const struct sentence_kind *kind;
		unsigned n;
	} left[SENTENCE_KINDS];	/* left out since the last sentence_left */
};

/* Start an empty text of at most LIMIT bytes (no more than SENTENCE_MAX). */
void sentence_init(struct sentence *s, size_t limit);
/* Append text that belongs to every sentence (a heading, a closing
 * remark): cut at the limit if it must be, at a character's start. */
void sentence_add(struct sentence *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append one item of KIND, its separator included in FMT, if it fits in
 * all but an eighth of the limit (kept for what follows the items) and no
 * earlier item was left out; otherwise count it.  True if kept. */
bool sentence_item(struct sentence *s, const struct sentence_kind *kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Append SEP and "and N more KIND, M more KIND" for the items left out
 * since the last call; nothing if none was. */
void sentence_left(struct sentence *s, const char *sep);
/* The text, malloc'd, into *OUT; -ENOMEM if memory ran out on the way.
 * S is empty afterwards either way. */
int sentence_finish(struct sentence *s, char **out);
/* FMT formatted as vprintf does, cut to SENTENCE_MAX bytes (at a
 * character's start), malloc'd into *OUT; -ENOMEM. */
int sentence_vprintf(char **out, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* A copy of TEXT cut to SENTENCE_MAX bytes (at a character's start), for
 * a text that comes from elsewhere (a domain's name, a path); -ENOMEM. */
int sentence_fit(const char *text, char **out);
