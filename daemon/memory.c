/*
 * memory: publishes free (Xen's free pages, which on 4.17 already include
 * freed but unscrubbed ones), releasing (what the domains being torn down
 * still hold, and so will free) and scrub-pending (the last backlog
 * measured).  A client needing N pages can wait while free < N <= free +
 * releasing, and knows at once when it cannot be covered.  Updated while
 * anything is in flight, once more when the last of it ends, then left
 * alone: an idle daemon makes no call at all.  It does not decide what is
 * in flight (reaper.c does) nor measure the backlog (scrub.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "layout.h"
#include "memory.h"

struct memory {
	struct store *store;
	struct hv *hv;
	bool was_in_flight;
	bool published;		/* the values below are in xenstore */
	uint64_t free, releasing, scrub_pending;
	bool have_scrub;
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

static int memory_write(struct memory *m, const char *leaf, uint64_t value)
{
	char path[LAYOUT_PATH_LEN];

	snprintf(path, sizeof(path), LAYOUT_MEMORY_DIR "/%s", leaf);
	return store_writef(m->store, STORE_TX_NONE, path, "%" PRIu64, value);
}

int memory_update(struct memory *m, bool in_flight, uint64_t releasing, bool have_scrub,
		  uint64_t scrub_pending)
{
	uint64_t free_pages;
	int rc;

	if (!in_flight && !m->was_in_flight)
		return 0;
	rc = hv_free_pages(m->hv, &free_pages);
	if (rc)
		return rc;
	if (!m->published || free_pages != m->free)
		rc = memory_write(m, "free", free_pages);
	if (!rc && (!m->published || releasing != m->releasing))
		rc = memory_write(m, "releasing", releasing);
	if (!rc && have_scrub && (!m->published || !m->have_scrub || scrub_pending != m->scrub_pending))
		rc = memory_write(m, "scrub-pending", scrub_pending);
	if (!rc && !have_scrub && (!m->published || m->have_scrub))
		rc = store_rm(m->store, STORE_TX_NONE, LAYOUT_MEMORY_DIR "/scrub-pending");
	if (rc) {
		m->published = false;	/* all again next time */
		return rc;
	}
	m->free = free_pages;
	m->releasing = releasing;
	m->scrub_pending = scrub_pending;
	m->have_scrub = have_scrub;
	m->published = true;
	m->was_in_flight = in_flight;
	return 0;
}
