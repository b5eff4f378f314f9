/* fake_store: an in-process xenstore for unit tests (never a product mode). */
#pragma once
#include "store.h"

struct store *fake_store_new(void);
/* Queue a watch event for PATH (e.g. "@releaseDomain") to matching watches. */
void fake_store_fire(struct store *s, const char *path);
/* Make the next N commits fail with -EAGAIN (and roll back). */
void fake_store_fail_commits(struct store *s, int n);
/* Whether store_make_private was applied to PATH. */
int fake_store_is_private(struct store *s, const char *path);
/* Convenience: the value at PATH or NULL (borrowed until the next change). */
const char *fake_store_get(struct store *s, const char *path);
/* Number of nodes at or below PATH. */
unsigned fake_store_count(struct store *s, const char *path);
