/*
 * memory: the host's memory picture under /tool/xenreaper/memory, for a
 * toolstack that wants to start a guest as soon as enough is free.
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "hv.h"
#include "job.h"
#include "store.h"

struct memory;

int memory_new(struct store *store, struct hv *hv, struct memory **out);
/* Accepts NULL. */
void memory_free(struct memory *m);
/* Pages JOB's teardown will add to Xen's free memory, as far as the daemon
 * can tell at monotonic ms NOW: what its domain holds and its paging pool
 * (read from Xen the first time and again while a destroy runs, which is
 * when Xen frees it), or 0 for a zombie or an orphan whose pages stopped
 * falling (job_pages_coming_back). */
uint64_t memory_job_releasing(struct memory *m, struct job *job, int64_t now);
/* With IN_FLIGHT teardowns (or their scrub backlog) to account for, or
 * right after the last of them: read Xen's free pages and, if PUBLISH or
 * when the first teardown starts or the last ends, publish free,
 * RELEASING (what the teardowns will add to it, memory_job_releasing
 * summed) and SCRUB_PENDING (absent when HAVE_SCRUB is false), writing
 * only what changed.  Nothing, not even a hypercall, while idle. */
int memory_update(struct memory *m, bool in_flight, uint64_t releasing, bool have_scrub,
		  uint64_t scrub_pending, bool publish);
/* Whether the last update held back a reading that differs from what is
 * published (PUBLISH false). */
bool memory_behind(const struct memory *m);
/* Our tree was removed: publish everything again at the next update. */
void memory_forget(struct memory *m);

/* The figures of the last reading memory_update made. */
struct memory_snapshot {
	bool have_figure;		/* false until the first reading */
	uint64_t free_pages;
	uint64_t releasing_pages;	/* what it was given with that reading */
	uint64_t outstanding_pages;	/* claimed for domains, not yet theirs */
};

/* The last reading into *OUT (OUT->have_figure false before the first). */
void memory_snapshot(const struct memory *m, struct memory_snapshot *out);
