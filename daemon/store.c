/*
 * store: thin dispatch to a store implementation plus the helpers every
 * caller would otherwise repeat (formatted writes, numeric reads), and the
 * one place that tells a lost xenstored connection from an ordinary error.
 * It knows nothing of the node layout (that is layout.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "store.h"

/* Whether RC says the connection is gone.  libxenstore answers EBADF once
 * its reader thread has closed the socket, EINVAL to a call that was
 * waiting for a reply when that happened; EINVAL is also an ordinary
 * answer (a bad path), so it is confirmed with a ping. */
static int store_note(struct store *s, int rc)
{
	switch (rc) {
	case -EBADF:
	case -ECONNRESET:
	case -EPIPE:
	case -ENOTCONN:
		s->lost = true;
		break;
	case -EINVAL:
		if (!s->lost && s->ops->ping) {
			int ping = s->ops->ping(s);

			if (ping == -EBADF || ping == -ECONNRESET || ping == -EPIPE ||
			    ping == -ENOTCONN || ping == -EINVAL)
				s->lost = true;
		}
		break;
	}
	return rc;
}

int store_read(struct store *s, store_tx tx, const char *path, char **value)
{
	return store_note(s, s->ops->read(s, tx, path, value));
}

int store_read_u64(struct store *s, store_tx tx, const char *path, uint64_t *value)
{
	char *text, *end;
	int rc;

	rc = store_read(s, tx, path, &text);
	if (rc)
		return rc;
	errno = 0;
	*value = strtoull(text, &end, 10);
	rc = (errno || end == text || *end || text[0] == '-') ? -EINVAL : 0;
	free(text);
	return rc;
}

int store_write(struct store *s, store_tx tx, const char *path, const char *value)
{
	return store_note(s, s->ops->write(s, tx, path, value));
}

int store_writef(struct store *s, store_tx tx, const char *path, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return store_write(s, tx, path, buf);
}

int store_rm(struct store *s, store_tx tx, const char *path)
{
	int rc = store_note(s, s->ops->rm(s, tx, path));

	return rc == -ENOENT ? 0 : rc;
}

int store_list(struct store *s, store_tx tx, const char *path, char ***names, unsigned *n)
{
	return store_note(s, s->ops->list(s, tx, path, names, n));
}

void store_names_free(char **names, unsigned n)
{
	for (unsigned i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
}

int store_make_private(struct store *s, store_tx tx, const char *path)
{
	return store_note(s, s->ops->make_private(s, tx, path));
}

int store_tx_start(struct store *s, store_tx *tx)
{
	return store_note(s, s->ops->tx_start(s, tx));
}

int store_tx_end(struct store *s, store_tx tx, bool abort)
{
	return store_note(s, s->ops->tx_end(s, tx, abort));
}

int store_watch(struct store *s, const char *path, const char *token)
{
	return store_note(s, s->ops->watch(s, path, token));
}

int store_unwatch(struct store *s, const char *path, const char *token)
{
	return store_note(s, s->ops->unwatch(s, path, token));
}

int store_next_event(struct store *s, char **path, char **token)
{
	int rc = s->ops->next_event(s, path, token);

	return rc == -EAGAIN ? rc : store_note(s, rc);
}

int store_fd(struct store *s)
{
	return s->ops->fd(s);
}

bool store_lost(const struct store *s)
{
	return s->lost;
}

int store_ping(struct store *s)
{
	return store_note(s, s->ops->ping ? s->ops->ping(s) : 0);
}

void store_free(struct store *s)
{
	if (s)
		s->ops->free(s);
}
