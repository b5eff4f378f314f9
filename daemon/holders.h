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
/* Tests only: read processes from ROOT instead of /proc. */
void holders_set_proc_root(const char *root);
/* A sentence naming what may hold DOMID, which still has PAGES: backend
 * directories left for it under /local/domain/ * /backend with their
 * devices' states, and processes (other than us) that map /dev/xen/privcmd
 * or /dev/xen/gntdev, by pid and command name: its device model with its
 * command line, no other guest's, and xenstored or xenconsoled only if
 * stopped.  Malloc'd into *OUT. */
int holders_describe(struct store *store, uint32_t domid, uint64_t pages, char **out);
