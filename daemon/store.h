/*
 * store: the narrow xenstore interface the daemon uses.  The real one is on
 * libxenstore (store_xs.c); unit tests supply an in-process one.
 * Every call returns 0 or a negative errno; -ENOENT for a missing node,
 * -EAGAIN from store_tx_end when the transaction must be retried.  A call
 * that finds the connection to xenstored gone marks the store lost (see
 * store_lost); nothing reconnects.
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

/* The most a request to xenstored may carry (XENSTORE_PAYLOAD_MAX of
 * xs_wire.h): a write's path, its NUL and the value.  libxenstore refuses
 * a larger one with E2BIG before sending it. */
#define STORE_PAYLOAD_MAX 4096

typedef uint32_t store_tx;
#define STORE_TX_NONE 0

struct store;

struct store_ops {
	int (*read)(struct store *s, store_tx tx, const char *path, char **value);
	int (*write)(struct store *s, store_tx tx, const char *path, const char *value);
	int (*rm)(struct store *s, store_tx tx, const char *path);
	int (*list)(struct store *s, store_tx tx, const char *path, char ***names, unsigned *n);
	int (*make_private)(struct store *s, store_tx tx, const char *path);
	int (*tx_start)(struct store *s, store_tx *tx);
	int (*tx_end)(struct store *s, store_tx tx, bool abort);
	int (*watch)(struct store *s, const char *path, const char *token);
	int (*unwatch)(struct store *s, const char *path, const char *token);
	int (*next_event)(struct store *s, char **path, char **token);
	int (*fd)(struct store *s);
	/* A cheap request that fails only if the connection is gone. */
	int (*ping)(struct store *s);
	void (*free)(struct store *s);
};

struct store {
	const struct store_ops *ops;
	bool lost;		/* the connection to xenstored is gone */
};

/* Read PATH into a malloc'd string (*VALUE), NUL-terminated. */
int store_read(struct store *s, store_tx tx, const char *path, char **value);
/* Read PATH as an unsigned decimal; -EINVAL if it is not one. */
int store_read_u64(struct store *s, store_tx tx, const char *path, uint64_t *value);
/* Create or overwrite PATH (parents are created); -E2BIG if PATH, a NUL
 * and VALUE exceed STORE_PAYLOAD_MAX. */
int store_write(struct store *s, store_tx tx, const char *path, const char *value);
/* printf-style store_write. */
int store_writef(struct store *s, store_tx tx, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Remove PATH and everything below it; a missing node is not an error. */
int store_rm(struct store *s, store_tx tx, const char *path);
/* Children of PATH: malloc'd array of malloc'd names; free with store_names_free. */
int store_list(struct store *s, store_tx tx, const char *path, char ***names, unsigned *n);
void store_names_free(char **names, unsigned n);
/* Owner dom0, no access for any other domain, on PATH. */
int store_make_private(struct store *s, store_tx tx, const char *path);
int store_tx_start(struct store *s, store_tx *tx);
/* Commit (or abort) TX; -EAGAIN means conflict: start over. */
int store_tx_end(struct store *s, store_tx tx, bool abort);
/* Watch PATH and below; events carry TOKEN. */
int store_watch(struct store *s, const char *path, const char *token);
/* Stop the watch of PATH with TOKEN (events already queued may follow). */
int store_unwatch(struct store *s, const char *path, const char *token);
/* Next pending watch event without blocking; -EAGAIN when there is none. */
int store_next_event(struct store *s, char **path, char **token);
/* A file descriptor that polls readable when events are pending, or -1. */
int store_fd(struct store *s);
/* Whether a call found the connection to xenstored gone (EBADF, ECONNRESET,
 * EPIPE, ENOTCONN, or EINVAL confirmed by a failing ping): libxenstore's
 * reader thread closes a dead socket without waking the watch fd, so only
 * a call can tell.  Once lost, always lost. */
bool store_lost(const struct store *s);
/* One cheap request, to find out whether the connection still works. */
int store_ping(struct store *s);
/* Close; accepts NULL. */
void store_free(struct store *s);

/* The real store on libxenstore (store_xs.c). */
int store_xs_new(struct store **out);
/* Whether xenstored's socket exists; if not, *PATH says where it was
 * looked for (libxenstore then goes through /dev/xen/xenbus, whose first
 * request waits until xenstored runs). */
bool store_xs_socket_ready(const char **path);
