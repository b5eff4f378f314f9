/*
 * store_xs: the store interface on libxenstore.  Two xs_handles, opened
 * once: one for watches, whose events are read with xs_check_watch so the
 * main loop never blocks on xenstore, and one for every request.  The
 * first xs_watch on a handle starts libxenstore's reader thread, and from
 * then on every reply on that handle is read by that thread and handed
 * to the caller through a condition variable: a futex wake and, with the
 * two threads on different vCPUs, a resched IPI per request, on top of
 * the reader's own wake-up.  A handle that never watches reads its
 * replies on the calling thread.  It does not retry transactions
 * (callers decide) and does not interpret paths.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xenstore.h>

#include "store.h"

_Static_assert(STORE_PAYLOAD_MAX == XENSTORE_PAYLOAD_MAX, "store.h's limit is libxenstore's");

struct store_xs {
	struct store base;
	struct xs_handle *xsh;		/* requests; never watches */
	struct xs_handle *watch_xsh;	/* watches and their events */
};

static struct xs_handle *xsh_of(struct store *s)
{
	return ((struct store_xs *)s)->xsh;
}

static struct xs_handle *watch_xsh_of(struct store *s)
{
	return ((struct store_xs *)s)->watch_xsh;
}

static int errno_or(int fallback)
{
	return errno ? -errno : -fallback;
}

static int xs_store_read(struct store *s, store_tx tx, const char *path, char **value)
{
	unsigned len;
	char *raw;

	errno = 0;
	raw = xs_read(xsh_of(s), tx, path, &len);
	if (!raw)
		return errno_or(EIO);
	*value = raw;	/* libxenstore NUL-terminates the value */
	return 0;
}

static int xs_store_write(struct store *s, store_tx tx, const char *path, const char *value)
{
	errno = 0;
	return xs_write(xsh_of(s), tx, path, value, strlen(value)) ? 0 : errno_or(EIO);
}

static int xs_store_rm(struct store *s, store_tx tx, const char *path)
{
	errno = 0;
	return xs_rm(xsh_of(s), tx, path) ? 0 : errno_or(EIO);
}

static int xs_store_list(struct store *s, store_tx tx, const char *path, char ***names, unsigned *n)
{
	char **raw, **copy;
	unsigned count;

	errno = 0;
	raw = xs_directory(xsh_of(s), tx, path, &count);
	if (!raw)
		return errno_or(EIO);
	copy = calloc(count + 1, sizeof(*copy));
	if (!copy) {
		free(raw);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < count; i++) {
		copy[i] = strdup(raw[i]);
		if (!copy[i]) {
			store_names_free(copy, i);
			free(raw);
			return -ENOMEM;
		}
	}
	free(raw);
	*names = copy;
	*n = count;
	return 0;
}

static int xs_store_make_private(struct store *s, store_tx tx, const char *path)
{
	struct xs_permissions perm = { .id = 0, .perms = XS_PERM_NONE };

	errno = 0;
	return xs_set_permissions(xsh_of(s), tx, path, &perm, 1) ? 0 : errno_or(EIO);
}

static int xs_store_tx_start(struct store *s, store_tx *tx)
{
	xs_transaction_t t;

	errno = 0;
	t = xs_transaction_start(xsh_of(s));

	if (t == XBT_NULL)
		return errno_or(EIO);
	*tx = t;
	return 0;
}

static int xs_store_tx_end(struct store *s, store_tx tx, bool abort)
{
	errno = 0;
	return xs_transaction_end(xsh_of(s), tx, abort) ? 0 : errno_or(EIO);
}

static int xs_store_watch(struct store *s, const char *path, const char *token)
{
	errno = 0;
	return xs_watch(watch_xsh_of(s), path, token) ? 0 : errno_or(EIO);
}

static int xs_store_unwatch(struct store *s, const char *path, const char *token)
{
	errno = 0;
	return xs_unwatch(watch_xsh_of(s), path, token) ? 0 : errno_or(EIO);
}

static int xs_store_next_event(struct store *s, char **path, char **token)
{
	char **ev;

	errno = 0;
	ev = xs_check_watch(watch_xsh_of(s));
	if (!ev)
		return errno_or(EAGAIN);
	*path = strdup(ev[XS_WATCH_PATH]);
	*token = strdup(ev[XS_WATCH_TOKEN]);
	free(ev);
	if (!*path || !*token) {
		free(*path);
		free(*token);
		return -ENOMEM;
	}
	return 0;
}

static int xs_store_fd(struct store *s)
{
	return xs_fileno(watch_xsh_of(s));
}

static int xs_store_ping(struct store *s)
{
	unsigned len;
	char *value;

	errno = 0;
	value = xs_read(xsh_of(s), XBT_NULL, "/", &len);
	if (!value)
		return errno_or(EIO);
	free(value);
	return 0;
}

static void xs_store_free(struct store *s)
{
	if (xsh_of(s))
		xs_close(xsh_of(s));
	if (watch_xsh_of(s))
		xs_close(watch_xsh_of(s));
	free(s);
}

static const struct store_ops store_xs_ops = {
	.read = xs_store_read,
	.write = xs_store_write,
	.rm = xs_store_rm,
	.list = xs_store_list,
	.make_private = xs_store_make_private,
	.tx_start = xs_store_tx_start,
	.tx_end = xs_store_tx_end,
	.watch = xs_store_watch,
	.unwatch = xs_store_unwatch,
	.next_event = xs_store_next_event,
	.fd = xs_store_fd,
	.ping = xs_store_ping,
	.free = xs_store_free,
};

bool store_xs_socket_ready(const char **path)
{
	*path = xs_daemon_socket();
	return access(*path, F_OK) == 0;
}

int store_xs_new(struct store **out)
{
	struct store_xs *sx;

	sx = calloc(1, sizeof(*sx));
	if (!sx)
		return -ENOMEM;
	sx->base.ops = &store_xs_ops;
	sx->xsh = xs_open(0);
	if (sx->xsh)
		sx->watch_xsh = xs_open(0);
	if (!sx->xsh || !sx->watch_xsh) {
		int rc = errno_or(ECONNREFUSED);

		xs_store_free(&sx->base);
		return rc;
	}
	*out = &sx->base;
	return 0;
}
