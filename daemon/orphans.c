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
 *
 * The name that counts is the one a domain had when it died: libxl creates
 * a migrating guest as NAME--incoming and renames it at the end, and `xl
 * rename` renames at any time, without a domain event.  So each live
 * domain's name node is watched, and read again when it changes.  The
 * node's removal (by the toolstack's destroy) fires the watch too; a read
 * that finds it gone cannot tell by itself whether a rename came just
 * before, so the events are counted: xenstored queues a change's event
 * before its reply to any later request, so once that read has returned,
 * every event up to the removal is queued here.  One event since the last
 * read, and none after it: the removal, and the name is sure.  More: a
 * rename was missed, and the name is marked uncertain, which the reaper
 * treats as unknown when protection goes by name (fail closed).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "layout.h"
#include "orphans.h"

struct orphan {
	struct orphan *next;
	uint32_t domid;
	uint8_t uuid[HV_UUID_LEN];
	char *name;		/* as last read alive; NULL if never */
	bool name_uncertain;	/* it may have been renamed since, unseen */
	bool followed;		/* seen alive: its name is followed */
	bool watching;		/* its name node is watched */
	bool primed;		/* the watch's own first event came */
	unsigned name_events;	/* on its name node since it was last read */
	bool removal_check;	/* the last read found the node gone */
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

static void orphans_name_path(uint32_t domid, char path[64])
{
	snprintf(path, 64, "/local/domain/%u/name", domid);
}

/* Read E's name node: 0 (a new name), or -errno with the old one kept. */
static int orphans_read_name(struct orphans *o, struct orphan *e)
{
	char path[64], *name;
	int rc;

	orphans_name_path(e->domid, path);
	rc = store_read(o->store, STORE_TX_NONE, path, &name);
	if (rc)
		return rc;
	free(e->name);
	e->name = name;
	e->name_uncertain = !e->watching;
	return 0;
}

/* A live domain seen for the first time: follow its name from now on.  A
 * watch that cannot be set leaves its renames unseen. */
static void orphans_follow_name(struct orphans *o, struct orphan *e)
{
	char path[64];

	orphans_name_path(e->domid, path);
	e->watching = store_watch(o->store, path, LAYOUT_TOKEN_NAME) == 0;
	if (orphans_read_name(o, e))
		e->name_uncertain = true;
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
		if (e->watching) {
			char path[64];

			orphans_name_path(e->domid, path);
			store_unwatch(o->store, path, LAYOUT_TOKEN_NAME);	/* a failure costs an event */
		}
		orphan_free(e);
	}
}

int orphans_scan(struct orphans *o, const struct hv_domain *domains, size_t n, uint32_t self,
		 orphans_covered covered, void *ctx)
{
	int64_t now = clock_mono_ms();
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
			/* Alive: follow its name for when it is dead and gone
			 * from xenstore. */
			if (!e->followed) {
				e->followed = true;
				orphans_follow_name(o, e);
			} else if (!e->watching) {
				orphans_read_name(o, e);	/* the best it can do */
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

void orphans_name_event(struct orphans *o, const char *path)
{
	unsigned domid;
	char tail;

	if (sscanf(path, "/local/domain/%u/nam%c", &domid, &tail) != 2 || tail != 'e')
		return;
	for (struct orphan *e = o->list; e; e = e->next) {
		if (e->domid != domid || !e->watching)
			continue;
		if (!e->primed)
			e->primed = true;	/* the watch's own */
		else
			e->name_events++;
	}
}

bool orphans_refresh_names(struct orphans *o)
{
	bool again = false;
	int rc;

	for (struct orphan *e = o->list; e; e = e->next) {
		if (e->removal_check) {
			/* Queued after the read that found the node gone: the
			 * removal's event, so what came before was a rename. */
			if (e->name_events)
				e->name_uncertain = true;
			e->removal_check = false;
			e->name_events = 0;
			continue;
		}
		if (!e->name_events)
			continue;
		rc = orphans_read_name(o, e);
		if (rc == -ENOENT && e->name_events == 1) {
			e->removal_check = true;
			again = true;
		} else if (rc) {
			e->name_uncertain = true;
		}
		e->name_events = 0;
	}
	return again;
}

void orphans_reconsider(struct orphans *o)
{
	for (struct orphan *e = o->list; e; e = e->next)
		e->offered = false;
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
		out->name_uncertain = e->name_uncertain;
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
