/*
 * freemem: the arithmetic of handing memory from teardowns to the next
 * guest.  Xen's free memory already includes freed but unscrubbed pages
 * (4.17 scrubs them when it hands them out), so what a new guest waits
 * for is what Xen gives back when the dying domains go: the pages they
 * hold (tot_pages) and their paging pools (shadow or HAP, the p2m in
 * them), which Xen allocates without an owner and frees first; the new
 * guest's need (xl-front-need.c) counts its own pool, so a guest replacing
 * one of the same size balances.  A zombie's or an orphan's pages count
 * only while they still fall: those may never come back.  IOMMU page
 * tables are not counted, as Xen reports them nowhere.  This module adds
 * it up from the teardown jobs and the hypervisor's domain list, and says
 * whether waiting can help.  It reads nothing itself (libxenreaper does,
 * in an order that never loses pages in transit) and prints nothing.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "freemem.h"
#include "xenreaper-layout.h"

enum freemem_verdict freemem_decide(uint64_t need, uint64_t free, uint64_t releasing,
				    bool daemon_running)
{
	if (need <= free)
		return FREEMEM_NOW;
	/* need - free > 0 here, so the comparison cannot overflow. */
	if (need - free > releasing)
		return FREEMEM_CANNOT;
	if (!daemon_running)
		return FREEMEM_NO_DAEMON;
	return FREEMEM_WAIT;
}

/* Whether ST's domain still has pages to give back through xenreaperd. */
static bool freemem_in_flight(const struct xenreaper_status *st)
{
	switch (st->state) {
	case XENREAPER_STATE_REQUESTED:
	case XENREAPER_STATE_QUEUED:
	case XENREAPER_STATE_DESTROYING:
	case XENREAPER_STATE_ZOMBIE:
	case XENREAPER_STATE_STUCK:
		return true;
	default:
		return false;
	}
}

bool freemem_may_keep_pages(const struct xenreaper_status *st)
{
	return st->state == XENREAPER_STATE_ZOMBIE || st->state == XENREAPER_STATE_STUCK ||
	       !strcmp(st->reason, XENREAPER_REASON_ORPHAN);
}

bool freemem_still_falling(int64_t last_release_ms, int64_t now_ms)
{
	return last_release_ms > 0 && now_ms - last_release_ms < XENREAPER_FALLING_MS;
}

bool freemem_counts(const struct xenreaper_status *st)
{
	return freemem_in_flight(st) && !(freemem_may_keep_pages(st) && st->stalled);
}

/* What the domain of ST will give back, per the hypervisor; 0 if it is gone. */
static uint64_t freemem_held(const struct xenreaper_status *st,
			     const struct freemem_domain *domains, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (domains[i].domid != st->domid)
			continue;
		if (strcasecmp(domains[i].uuid, st->uuid))
			return 0;
		return domains[i].pages + domains[i].pool_pages;
	}
	return 0;
}

void freemem_tally(const struct xenreaper_status *jobs, size_t n_jobs,
		   const struct freemem_domain *domains, size_t n_domains,
		   struct xenreaper_memory *mem)
{
	uint64_t most = 0, held;
	unsigned with_eta = 0, stalled = 0;
	bool have_rate = false;
	double rate = 0;

	mem->releasing_pages = 0;
	mem->teardowns = 0;
	mem->requested = 0;
	memset(&mem->largest, 0, sizeof(mem->largest));
	for (size_t i = 0; i < n_jobs; i++) {
		const struct xenreaper_status *st = &jobs[i];

		if (!freemem_counts(st))
			continue;
		held = freemem_held(st, domains, n_domains);
		if (!held)
			continue;
		mem->releasing_pages += held;
		mem->teardowns++;
		if (st->state == XENREAPER_STATE_REQUESTED)
			mem->requested++;
		if (st->rate_mib_s >= 0) {
			rate += st->rate_mib_s;
			have_rate = true;
		}
		if (st->stalled || st->eta_s >= 0) {
			with_eta++;
			stalled += !!st->stalled;
		}
		if (held > most) {
			most = held;
			mem->largest = *st;
			if (st->state == XENREAPER_STATE_REQUESTED) {
				/* A request has no figures of its own yet. */
				mem->largest.pages_total = held;
				mem->largest.pages_left = held;
			}
		}
	}
	mem->rate_mib_s = have_rate ? rate : -1;
	mem->stalled = with_eta && stalled == with_eta;
}

uint64_t freemem_mib_up(uint64_t pages)
{
	return (pages + 255) / 256;
}

void freemem_describe(const struct xenreaper_status *st, char *buf, size_t len)
{
	size_t used;

	if (st->name[0])
		snprintf(buf, len, "domain %u (%s), ", st->domid, st->name);
	else
		snprintf(buf, len, "domain %u, ", st->domid);
	used = strlen(buf);
	if (used >= len)
		return;
	if (st->state == XENREAPER_STATE_REQUESTED)
		snprintf(buf + used, len - used,
			 "requested but not yet taken by xenreaperd, holding %" PRIu64 " MiB",
			 freemem_mib_up(st->pages_left));
	else
		snprintf(buf + used, len - used, "%s, %" PRIu64 " MiB left%s", st->state_name,
			 freemem_mib_up(st->pages_left), st->stalled ? ", stalled" : "");
}

void freemem_explain(enum freemem_verdict verdict, uint64_t need,
		     const struct xenreaper_memory *mem, char *buf, size_t len)
{
	uint64_t need_mib = freemem_mib_up(need), free_mib = mem->free_pages / 256;
	uint64_t short_pages = need > mem->free_pages + mem->releasing_pages ?
		need - mem->free_pages - mem->releasing_pages : 0;

	switch (verdict) {
	case FREEMEM_CANNOT:
		if (!mem->teardowns)
			snprintf(buf, len, "%" PRIu64 " MiB needed, %" PRIu64
				 " MiB free, and no teardown is under way to free more",
				 need_mib, free_mib);
		else
			snprintf(buf, len, "%" PRIu64 " MiB needed, %" PRIu64
				 " MiB free, and the %u teardown%s under way will release only %" PRIu64
				 " MiB more: %" PRIu64 " MiB short even then", need_mib, free_mib,
				 mem->teardowns, mem->teardowns == 1 ? "" : "s",
				 mem->releasing_pages / 256, freemem_mib_up(short_pages));
		break;
	case FREEMEM_NO_DAEMON:
		snprintf(buf, len, "%" PRIu64 " MiB needed, %" PRIu64
			 " MiB free, and xenreaperd, which would release the %" PRIu64
			 " MiB held by %u teardown%s, is not running", need_mib, free_mib,
			 mem->releasing_pages / 256, mem->teardowns, mem->teardowns == 1 ? "" : "s");
		break;
	default:
		if (len)
			buf[0] = '\0';
		break;
	}
}
