/*
 * orphans: the bookkeeping behind "no dead domain goes unexplained".  Each
 * domain event, the reaper shows this module every domain: live ones get
 * their name remembered (libxl removes /local/domain/<domid> before the
 * destroy hypercall, so a dead domain's name is otherwise gone, and the
 * protect list needs it); dead ones that no job covers get a settle clock,
 * restarted whenever their page count moves (a teardown still under way is
 * not an orphan).  A domain that stays put for ORPHANS_SETTLE_MS is due,
 * once; the reaper decides whether to adopt it (policy, protection) and
 * makes the job.  It destroys nothing and reads only domain names.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "orphans.h"

struct orphan {
	struct orphan *next;
	uint32_t domid;
	uint8_t uuid[HV_UUID_LEN];
	char *name;		/* as seen alive; NULL if never */
	bool dead;		/* dying and not covered: settling */
	bool offered;		/* handed to the reaper already */
	uint32_t cpupool;
	uint64_t pages;
	int64_t still_since_mono;	/* when its page count last moved */
};

struct orphans {
	struct store *store;
	struct orphan *list;	/* every domain seen, alive or dead */
};

int orphans_new(struct store *store, struct orphans **out)
{
	struct orphans *o = calloc(1, sizeof(*o));

	if (!o)
		return -ENOMEM;
	o->store = store;
	*out = o;
	return 0;
}

static void orphan_free(struct orphan *e)
{
	free(e->name);
	free(e);
}

void orphans_free(struct orphans *o)
{
	struct orphan *e, *next;

	if (!o)
		return;
	for (e = o->list; e; e = next) {
		next = e->next;
		orphan_free(e);
	}
	free(o);
}

static struct orphan *orphans_find(struct orphans *o, const struct hv_domain *d)
{
	for (struct orphan *e = o->list; e; e = e->next)
		if (e->domid == d->domid && !memcmp(e->uuid, d->uuid, HV_UUID_LEN))
			return e;
	return NULL;
}

/* Forget what is no longer in DOMAINS (or carries another UUID). */
static void orphans_forget_gone(struct orphans *o, const struct hv_domain *domains, size_t n)
{
	struct orphan **link, *e;
	const struct hv_domain *d;

	for (link = &o->list; (e = *link);) {
		d = hv_find(domains, n, e->domid);
		if (d && !memcmp(d->uuid, e->uuid, HV_UUID_LEN)) {
			link = &e->next;
			continue;
		}
		*link = e->next;
		orphan_free(e);
	}
}

int orphans_scan(struct orphans *o, const struct hv_domain *domains, size_t n, uint32_t self,
		 orphans_covered covered, void *ctx)
{
	int64_t now = clock_mono_ms();
	char path[64];
	struct orphan *e;

	orphans_forget_gone(o, domains, n);
	for (size_t i = 0; i < n; i++) {
		const struct hv_domain *d = &domains[i];

		if (d->domid == 0 || d->domid == self)
			continue;
		e = orphans_find(o, d);
		if (!e) {
			e = calloc(1, sizeof(*e));
			if (!e)
				return -ENOMEM;
			e->domid = d->domid;
			memcpy(e->uuid, d->uuid, HV_UUID_LEN);
			e->next = o->list;
			o->list = e;
		}
		if (!d->dying) {
			/* Alive: remember its name for when it is dead and gone
			 * from xenstore (a guest renamed later keeps the first). */
			if (!e->name) {
				snprintf(path, sizeof(path), "/local/domain/%u/name", d->domid);
				if (store_read(o->store, STORE_TX_NONE, path, &e->name))
					e->name = NULL;
			}
			e->dead = false;
			continue;
		}
		if (covered(ctx, d->domid, d->uuid)) {
			e->dead = false;
			continue;
		}
		if (!e->dead || e->pages != d->tot_pages) {
			e->dead = true;
			e->pages = d->tot_pages;
			e->still_since_mono = now;
		}
		e->cpupool = d->cpupool;
	}
	return 0;
}

int orphans_take_due(struct orphans *o, int64_t now, struct orphan_due *out)
{
	for (struct orphan *e = o->list; e; e = e->next) {
		if (!e->dead || e->offered || e->still_since_mono + ORPHANS_SETTLE_MS > now)
			continue;
		e->offered = true;
		out->domid = e->domid;
		memcpy(out->uuid, e->uuid, HV_UUID_LEN);
		out->cpupool = e->cpupool;
		out->pages = e->pages;
		out->name = e->name ? strdup(e->name) : NULL;
		return 0;
	}
	return -EAGAIN;
}

void orphans_defer(struct orphans *o, uint32_t domid, const uint8_t uuid[HV_UUID_LEN])
{
	for (struct orphan *e = o->list; e; e = e->next) {
		if (e->domid == domid && !memcmp(e->uuid, uuid, HV_UUID_LEN)) {
			e->offered = false;
			e->still_since_mono = clock_mono_ms();
		}
	}
}

int64_t orphans_next_deadline(const struct orphans *o)
{
	int64_t next = -1, due;

	for (const struct orphan *e = o->list; e; e = e->next) {
		if (!e->dead || e->offered)
			continue;
		due = e->still_since_mono + ORPHANS_SETTLE_MS;
		if (next < 0 || due < next)
			next = due;
	}
	return next;
}
