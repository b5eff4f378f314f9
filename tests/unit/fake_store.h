/* fake_store: an in-process xenstore for unit tests (never a product mode). */
#pragma once
#include <stdbool.h>

#include "store.h"

/* The operations error injection can fail (store_ops' names). */
enum fake_store_op {
	FAKE_STORE_READ, FAKE_STORE_WRITE, FAKE_STORE_RM, FAKE_STORE_LIST,
	FAKE_STORE_MAKE_PRIVATE, FAKE_STORE_TX_START, FAKE_STORE_TX_END,
	FAKE_STORE_WATCH, FAKE_STORE_UNWATCH, FAKE_STORE_PING, FAKE_STORE_N_OPS
};

struct store *fake_store_new(void);
/* Watches registered with TOKEN. */
unsigned fake_store_count_watches(struct store *s, const char *token);
/* Queue a watch event for PATH (e.g. "@releaseDomain") to matching watches. */
void fake_store_fire(struct store *s, const char *path);
/* Make the next N commits fail with -EAGAIN (and roll back). */
void fake_store_fail_commits(struct store *s, int n);
/* Whether PATH is dom0 only (store_make_private, or inherited at creation). */
int fake_store_is_private(struct store *s, const char *path);
/* An admin opens PATH to others (only PATH, not its children). */
void fake_store_set_open(struct store *s, const char *path);
/* Nodes at or below PATH that are not dom0 only. */
unsigned fake_store_count_open(struct store *s, const char *path);
/* Write PATH as a client would (watches fire), never failing by injection
 * and not counted as one of the daemon's calls; a write over
 * STORE_PAYLOAD_MAX is refused, as libxenstore refuses it. */
void fake_store_set(struct store *s, const char *path, const char *value);
/* Convenience: the value at PATH or NULL (borrowed until the next change). */
const char *fake_store_get(struct store *s, const char *path);
/* Number of nodes at or below PATH. */
unsigned fake_store_count(struct store *s, const char *path);
/* Fail call NTH (from now) of OP with ERR (negative errno), or every one
 * from then on if STICKY; NTH 0 clears.  A failed write or rm changes
 * nothing; a failed tx_end rolls back. */
void fake_store_inject(struct store *s, enum fake_store_op op, unsigned nth, int err, bool sticky);
/* Every read of exactly PATH fails with ERR (NULL: none does). */
void fake_store_fail_reads(struct store *s, const char *path, int err);
/* Every write of exactly PATH fails with ERR, changing nothing (NULL:
 * none does). */
void fake_store_fail_writes(struct store *s, const char *path, int err);
/* Calls of OP made so far. */
unsigned fake_store_calls(struct store *s, enum fake_store_op op);
/* Injected failures returned so far. */
unsigned fake_store_injected(struct store *s);
/* The name of OP, for test output. */
const char *fake_store_op_name(enum fake_store_op op);
