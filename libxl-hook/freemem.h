/*
 * freemem: whether a guest that needs some memory can start now, can once
 * the teardowns under way have released theirs, or cannot be helped by
 * waiting; and what those teardowns will release.  Pure arithmetic on
 * what libxenreaper read, shared by the library, the CLI and the xl front;
 * not exported by the library.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xenreaper.h"

enum freemem_verdict {
	FREEMEM_NOW,		/* enough is free already */
	FREEMEM_WAIT,		/* short now; the teardowns under way will cover it */
	FREEMEM_CANNOT,		/* short even once they have all finished */
	FREEMEM_NO_DAEMON,	/* they would cover it, but xenreaperd is not running */
};

/* One domain as the hypervisor lists it. */
struct freemem_domain {
	uint32_t domid;
	char uuid[XENREAPER_UUID_LEN];	/* lower case */
	uint64_t pages;			/* tot_pages: what it holds */
	uint64_t pool_pages;		/* its paging pool, which Xen holds for it
					 * outside tot_pages; 0 if none (PV) */
};

/* The verdict for a guest needing NEED pages with FREE free and RELEASING
 * on its way back: NOW if NEED <= FREE, else CANNOT if NEED > FREE +
 * RELEASING, else NO_DAEMON without a daemon, else WAIT. */
enum freemem_verdict freemem_decide(uint64_t need, uint64_t free, uint64_t releasing,
				    bool daemon_running);
/* Whether ST is a zombie or an orphan, whose pages may never come back. */
bool freemem_may_keep_pages(const struct xenreaper_status *st);
/* Whether pages that last fell at LAST_RELEASE_MS (job/<domid>/last-release,
 * unix ms; 0: never seen falling) are still falling at NOW_MS: within
 * XENREAPER_FALLING_MS (a clock that went back counts as falling). */
bool freemem_still_falling(int64_t last_release_ms, int64_t now_ms);
/* Whether ST's teardown counts towards what comes back: requested,
 * queued, destroying or zombie, and not a stalled zombie or orphan. */
bool freemem_counts(const struct xenreaper_status *st);
/* Fill MEM's teardown fields (releasing_pages, teardowns, requested,
 * rate_mib_s, stalled, largest) from JOBS (as xenreaper_list gives them)
 * and DOMAINS: a requested, queued, destroying or zombie teardown counts
 * what its domain, matched by domid and UUID, will give back (its pages
 * and its paging pool); one whose domain is gone or is another
 * incarnation counts nothing, and so does a zombie or an orphan that is
 * stalled (its pages stopped falling; see freemem_still_falling). */
void freemem_tally(const struct xenreaper_status *jobs, size_t n_jobs,
		   const struct freemem_domain *domains, size_t n_domains,
		   struct xenreaper_memory *mem);
/* A sentence into BUF saying why a guest needing NEED pages gets VERDICT
 * from MEM ("" for NOW and WAIT). */
void freemem_explain(enum freemem_verdict verdict, uint64_t need,
		     const struct xenreaper_memory *mem, char *buf, size_t len);
/* "domain 5 (web1), destroying, 2048 MiB left, stalled" for ST into BUF. */
void freemem_describe(const struct xenreaper_status *st, char *buf, size_t len);
/* Whole MiB in PAGES, rounded up (a shortfall is never shown as 0). */
uint64_t freemem_mib_up(uint64_t pages);
