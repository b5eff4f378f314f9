/*
 * memory: publishes free (Xen's free pages, which on 4.17 already include
 * freed but unscrubbed ones), releasing (what the teardowns under way will
 * add to free) and scrub-pending (the last backlog measured).  A client
 * needing N pages can wait while free < N <= free + releasing, and knows
 * at once when it cannot be covered.  What a teardown releases is what
 * Xen gives back when the domain goes: the pages it holds (tot_pages) and
 * its paging pool (shadow or HAP, the p2m in it), which Xen allocates
 * without an owner and frees first (xen/arch/x86/domain.c,
 * domain_relinquish_resources: paging_teardown before relinquish_memory);
 * the new guest's need counts that pool too.  A zombie's or an orphan's
 * pages may never come back, so they count only while they still fall.
 * IOMMU page tables of a passthrough guest are not counted: Xen reports
 * them nowhere.  The same reading gives Xen's outstanding claims, kept for
 * the metrics (not published in xenstore): a claim made on a domain that
 * then died is never given back before Xen 4.22, and what is left once the
 * teardowns are over shows it.  Read while anything is in flight and
 * published as often as the caller says, at the first start, whenever
 * releasing goes between zero and not, and once more when the last of it
 * ends, then left alone: an idle daemon makes no call at all.
 * It does not decide what is in flight (reaper.c does) nor measure the
 * backlog (scrub.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "log.h"
#include "memory.h"
#include "rate.h"

_Static_assert(XENREAPER_FALLING_MS == RATE_STALL_MS,
	       "a zombie stops counting when eta would say stalled");

struct memory {
	struct store *store;
	struct hv *hv;
	bool pool_failing;	/* the last paging pool read failed (logged once) */
	bool was_in_flight;
	bool published;		/* the values below are in xenstore */
	bool behind;		/* the last reading differs from them, held back */
	uint64_t free, releasing, scrub_pending;
	bool have_scrub;
	struct memory_snapshot last;	/* the last reading, published or not */
};

int memory_new(struct store *store, struct hv *hv, struct memory **out)
{
	struct memory *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->store = store;
	m->hv = hv;
	*out = m;
	return 0;
}

void memory_free(struct memory *m)
{
	free(m);
}

void memory_forget(struct memory *m)
{
	m->published = false;
	m->was_in_flight = true;	/* publish at the next update */
}

/* Read JOB's paging pool into job->pool_pages; a failure keeps the last
 * figure (the wait may then say "cannot" where it could wait). */
static void memory_read_pool(struct memory *m, struct job *job)
{
	uint64_t pages = 0;
	int rc;

	rc = hv_paging_pool(m->hv, job->domid, &pages);
	if (rc == -EOPNOTSUPP) {
		job->pool_none = true;
		pages = 0;
	} else if (rc == -ESRCH) {
		pages = 0;	/* gone, and its pool with it */
	} else if (rc) {
		if (!m->pool_failing)
			log_warning("domain %u: cannot read its paging pool: %s; counting %" PRIu64 " pages of it",
				    job->domid, strerror(-rc), job->pool_pages);
		m->pool_failing = true;
		return;
	}
	if (m->pool_failing)
		log_notice("reading paging pools works again");
	m->pool_failing = false;
	job->pool_pages = pages;
	job->pool_read = true;
}

uint64_t memory_job_releasing(struct memory *m, struct job *job, int64_t now)
{
	if (!job->pool_none && (!job->pool_read || job->in_runner))
		memory_read_pool(m, job);
	if (!job_pages_coming_back(job, now))
		return 0;
	return job->pages_left + job->pool_pages;
}

static int memory_write(struct memory *m, const char *leaf, uint64_t value)
{
	char path[LAYOUT_PATH_LEN];

	snprintf(path, sizeof(path), LAYOUT_MEMORY_DIR "/%s", leaf);
	return store_writef(m->store, STORE_TX_NONE, path, "%" PRIu64, value);
}

int memory_update(struct memory *m, bool in_flight, uint64_t releasing, bool have_scrub,
		  uint64_t scrub_pending, bool publish)
{
	uint64_t free_pages, outstanding;
	bool due;
	int rc;

	if (!in_flight && !m->was_in_flight)
		return 0;
	rc = hv_free_pages(m->hv, &free_pages, &outstanding);
	if (rc)
		return rc;
	m->last = (struct memory_snapshot){ .have_figure = true, .free_pages = free_pages,
					    .releasing_pages = releasing,
					    .outstanding_pages = outstanding };
	/* The backlog changes only with a probe, and a client waiting for
	 * memory needs it as soon as it is measured.  Releasing going from
	 * nothing to something or back is what a one-shot reader must not
	 * miss: in flight may stay true across teardowns (a backlog still
	 * counted), and the cadence would leave it stale for a while. */
	due = publish || !m->published || in_flight != m->was_in_flight ||
	      (releasing == 0) != (m->releasing == 0);
	if (due && (!m->published || free_pages != m->free))
		rc = memory_write(m, "free", free_pages);
	if (!rc && due && (!m->published || releasing != m->releasing))
		rc = memory_write(m, "releasing", releasing);
	if (!rc && have_scrub && (!m->published || !m->have_scrub || scrub_pending != m->scrub_pending))
		rc = memory_write(m, "scrub-pending", scrub_pending);
	if (!rc && !have_scrub && (!m->published || m->have_scrub))
		rc = store_rm(m->store, STORE_TX_NONE, LAYOUT_MEMORY_DIR "/scrub-pending");
	if (rc) {
		m->published = false;	/* all again next time */
		return rc;
	}
	m->scrub_pending = scrub_pending;
	m->have_scrub = have_scrub;
	m->behind = !due && (free_pages != m->free || releasing != m->releasing);
	if (!due)
		return 0;
	m->free = free_pages;
	m->releasing = releasing;
	m->published = true;
	m->was_in_flight = in_flight;
	return 0;
}

bool memory_behind(const struct memory *m)
{
	return m->behind;
}

void memory_snapshot(const struct memory *m, struct memory_snapshot *out)
{
	*out = m->last;
}
