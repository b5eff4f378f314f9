/*
 * preserved: the grace-period bookkeeping for automatic teardown.  A guest
 * that powered off or crashed while its toolstack was told to preserve it
 * stays dead, holding its memory, until someone tears it down; a pool whose
 * policy says `teardown = shutdown` (or crash) makes that someone us, after
 * `grace`.  This module only decides who is due and when; the job (with
 * the UUID guard and the reason) is created by reaper.c like any request.
 * Rebooting or suspended guests are never candidates: their toolstack
 * brings them back.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "preserved.h"

struct preserved_guest {
	struct preserved_guest *next;
	struct preserved_due due;
	int64_t noticed_mono;
	int64_t due_mono;
};

struct preserved {
	struct preserved_guest *guests;
};

int preserved_new(struct preserved **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

static void preserved_guest_free(struct preserved_guest *g)
{
	free(g->due.pool);
	free(g);
}

void preserved_free(struct preserved *p)
{
	struct preserved_guest *g, *next;

	if (!p)
		return;
	for (g = p->guests; g; g = next) {
		next = g->next;
		preserved_guest_free(g);
	}
	free(p);
}

/* Why D is dead and waiting, or false if it is not. */
static bool preserved_reason(const struct hv_domain *d, enum job_reason *reason)
{
	if (!d->shutdown || d->dying)
		return false;
	if (d->shutdown_reason == HV_SHUTDOWN_POWEROFF) {
		*reason = JOB_REASON_POWEROFF;
		return true;
	}
	if (d->shutdown_reason == HV_SHUTDOWN_CRASH || d->shutdown_reason == HV_SHUTDOWN_WATCHDOG) {
		*reason = JOB_REASON_CRASH;
		return true;
	}
	return false;
}

static struct preserved_guest *preserved_find(struct preserved *p, uint32_t domid)
{
	for (struct preserved_guest *g = p->guests; g; g = g->next)
		if (g->due.domid == domid)
			return g;
	return NULL;
}

int preserved_scan(struct preserved *p, struct hv *hv, const struct config *policy,
		   const struct hv_domain *domains, size_t n, uint32_t self,
		   preserved_leave_alone leave_alone, void *ctx)
{
	struct preserved_guest **link, *g;
	const struct config_pool *pool;
	enum job_reason reason;
	char *pool_name;

	/* Forget guests that are gone, revived, reused or taken care of. */
	for (link = &p->guests; (g = *link);) {
		const struct hv_domain *d = hv_find(domains, n, g->due.domid);

		if (d && !memcmp(d->uuid, g->due.uuid, HV_UUID_LEN) &&
		    preserved_reason(d, &reason) && !leave_alone(ctx, d->domid, d->uuid)) {
			link = &g->next;
			continue;
		}
		*link = g->next;
		preserved_guest_free(g);
	}
	for (size_t i = 0; i < n; i++) {
		const struct hv_domain *d = &domains[i];

		if (d->domid == 0 || d->domid == self || !preserved_reason(d, &reason) ||
		    preserved_find(p, d->domid) || leave_alone(ctx, d->domid, d->uuid))
			continue;
		if (hv_pool_name(hv, d->cpupool, &pool_name)) {
			/* Fail closed: [default] might tear down what its own
			 * pool's policy would leave alone. */
			log_warning("domain %u is dead (%s) in cpupool %u, whose name cannot be read: "
				    "not tearing it down automatically", d->domid,
				    job_reason_name(reason), d->cpupool);
			continue;
		}
		pool = config_pool_for(policy, pool_name);
		if (!config_pool_tears_down(pool, reason)) {
			free(pool_name);
			continue;
		}
		g = calloc(1, sizeof(*g));
		if (!g) {
			free(pool_name);
			return -ENOMEM;
		}
		g->due.domid = d->domid;
		memcpy(g->due.uuid, d->uuid, HV_UUID_LEN);
		g->due.reason = reason;
		g->due.pool = pool_name;
		g->noticed_mono = clock_mono_ms();
		g->due_mono = g->noticed_mono + pool->grace_ms;
		g->next = p->guests;
		p->guests = g;
		log_info("domain %u is dead (%s) in pool %s: tearing it down in %.1f s",
			 d->domid, job_reason_name(reason), pool_name, pool->grace_ms / 1000.0);
	}
	return 0;
}

void preserved_reconsider(struct preserved *p, const struct config *policy,
			  preserved_leave_alone leave_alone, void *ctx)
{
	struct preserved_guest **link, *g;
	const struct config_pool *pool;

	for (link = &p->guests; (g = *link);) {
		pool = config_pool_for(policy, g->due.pool);
		if (config_pool_tears_down(pool, g->due.reason) &&
		    !leave_alone(ctx, g->due.domid, g->due.uuid)) {
			g->due_mono = g->noticed_mono + pool->grace_ms;
			link = &g->next;
			continue;
		}
		log_info("domain %u (%s in pool %s): the new policy does not tear it down; grace period cancelled",
			 g->due.domid, job_reason_name(g->due.reason), g->due.pool);
		*link = g->next;
		preserved_guest_free(g);
	}
}

int preserved_take_due(struct preserved *p, int64_t now, struct preserved_due *out)
{
	for (struct preserved_guest **link = &p->guests; *link; link = &(*link)->next) {
		struct preserved_guest *g = *link;

		if (g->due_mono > now)
			continue;
		*link = g->next;
		*out = g->due;
		free(g);
		return 0;
	}
	return -EAGAIN;
}

int64_t preserved_next_deadline(const struct preserved *p)
{
	int64_t next = -1;

	for (const struct preserved_guest *g = p->guests; g; g = g->next)
		if (next < 0 || g->due_mono < next)
			next = g->due_mono;
	return next;
}
