/*
 * holders: what in dom0 may still hold a dead domain's pages, for a
 * zombie's held-by node: its backends in xenstore, and dom0 processes with
 * Xen mappings.
 */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "store.h"

#define HOLDERS_PROC_ROOT "/proc"

/* The name of xenbus state STATE ("Connected", ...). */
const char *holders_xenbus_state(unsigned long state);
/* Called for each of a domain's backend directories PATH
 * (/local/domain/BACKDOM/backend/TYPE/DOMID); non-zero stops the walk. */
typedef int holders_backend_fn(const char *backdom, const char *type, const char *path, void *opaque);
/* FN for DOMID's backend directory of each type in every domain's tree
 * that has one (in dom0 and in driver domains); FN's first non-zero
 * return, -ENOMEM, or 0. */
int holders_foreach_backend(struct store *store, uint32_t domid, holders_backend_fn *fn, void *opaque);
/* Tests only: read processes from ROOT instead of /proc. */
void holders_set_proc_root(const char *root);
/* A sentence naming what may hold DOMID, which still has PAGES: backend
 * directories left for it under /local/domain/ * /backend with their
 * devices' states, and processes (other than us) that map /dev/xen/privcmd
 * or /dev/xen/gntdev, by pid and command name: its device model with its
 * command line, no other guest's, and xenstored or xenconsoled only if
 * stopped.  Malloc'd into *OUT. */
int holders_describe(struct store *store, uint32_t domid, uint64_t pages, char **out);
