/*
 * memory: the host's memory picture under /tool/xenreaper/memory, for a
 * toolstack that wants to start a guest as soon as enough is free.
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "hv.h"
#include "store.h"

struct memory;

int memory_new(struct store *store, struct hv *hv, struct memory **out);
/* Accepts NULL. */
void memory_free(struct memory *m);
/* With IN_FLIGHT teardowns (or their scrub backlog) to account for, or
 * right after the last of them: read Xen's free pages and publish free,
 * RELEASING (pages the torn-down domains still hold) and SCRUB_PENDING
 * (absent when HAVE_SCRUB is false), writing only what changed.  Nothing,
 * not even a hypercall, while idle. */
int memory_update(struct memory *m, bool in_flight, uint64_t releasing, bool have_scrub,
		  uint64_t scrub_pending);
/* Our tree was removed: publish everything again at the next update. */
void memory_forget(struct memory *m);
