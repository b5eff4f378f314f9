/*
 * fake_hv: a domain table behind a mutex (workers call destroy on their own
 * threads) with switches for the cases the daemon must survive: zombies,
 * failing destroys, and a destroy held mid-flight.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake_hv.h"
#include "inject.h"

#define FAKE_GONE_MAX 4096

struct fake_domain {
	struct hv_domain d;
	unsigned zombie_rounds;
	uint64_t zombie_pages;
	bool failing;
	bool dumps_core;	/* its toolstack dumps its core on its shutdown */
	bool held;		/* its destroys wait for fake_hv_release_domain */
	unsigned destroy_calls;
	bool has_pool;		/* an HVM or PVH guest's paging pool */
	uint64_t pool_pages;
};

struct fake_hv {
	struct hv base;
	pthread_mutex_t lock;
	pthread_cond_t released;
	pthread_cond_t entered;
	bool hold;
	int hold_ms;		/* > 0: a hold ends by itself after this (real ms) */
	unsigned in_destroy;	/* worker threads inside fh_destroy now */
	uint32_t inflight[FAKE_HV_MAX_DOMAINS];	/* their domids */
	unsigned concurrent;	/* destroys of a domid while one ran: a double teardown */
	uint32_t self;
	uint64_t total_pages;	/* the host's memory */
	int scrub_source;	/* hv_scrub_source bit this fake answers with, 0 = none */
	bool scrub_exact;	/* physinfo's figure is the real backlog */
	unsigned scrub_sources_asked;	/* every source any probe asked for */
	uint64_t scrub_pages;
	unsigned scrub_nodes;	/* per-node figures the probe reports (0: none) */
	uint64_t scrub_node_pages[HV_SCRUB_MAX_NODES];
	unsigned scrub_probes;
	uint64_t outstanding;	/* claimed pages physinfo reports */
	struct fake_domain doms[FAKE_HV_MAX_DOMAINS];
	unsigned n;
	unsigned destroy_calls_gone[FAKE_GONE_MAX];	/* destroys of each removed domain */
	uint32_t gone_domid[FAKE_GONE_MAX];
	unsigned n_gone;
	unsigned stale;		/* destroys refused for a UUID the domid no longer has */
	struct inject inject;
};

static struct fake_hv *fh_of(struct hv *hv)
{
	return (struct fake_hv *)hv;
}

static struct fake_domain *fh_find(struct fake_hv *fh, uint32_t domid)
{
	for (unsigned i = 0; i < fh->n; i++)
		if (fh->doms[i].d.domid == domid)
			return &fh->doms[i];
	return NULL;
}

static void fh_remove_locked(struct fake_hv *fh, uint32_t domid)
{
	for (unsigned i = 0; i < fh->n; i++) {
		if (fh->doms[i].d.domid != domid)
			continue;
		if (fh->n_gone == FAKE_GONE_MAX) {
			fprintf(stderr, "fake_hv: more than %d domains removed; raise FAKE_GONE_MAX\n",
				FAKE_GONE_MAX);
			abort();	/* a silent undercount would hide a double destroy */
		}
		fh->gone_domid[fh->n_gone] = domid;
		fh->destroy_calls_gone[fh->n_gone++] = fh->doms[i].destroy_calls;
		fh->doms[i] = fh->doms[--fh->n];
		return;
	}
}

static int fh_list(struct hv *hv, struct hv_domain **out, size_t *n)
{
	struct fake_hv *fh = fh_of(hv);
	struct hv_domain *doms;
	int rc;

	pthread_mutex_lock(&fh->lock);
	rc = inject_call(&fh->inject, FAKE_HV_LIST);
	if (rc) {
		pthread_mutex_unlock(&fh->lock);
		return rc;
	}
	doms = calloc(fh->n + 1, sizeof(*doms));
	for (unsigned i = 0; i < fh->n; i++)
		doms[i] = fh->doms[i].d;
	*n = fh->n;
	pthread_mutex_unlock(&fh->lock);
	*out = doms;
	return 0;
}

/* Set when a fake was freed while a worker was inside fh_destroy: the
 * daemon's use-after-free on stop, caught without a sanitizer.  Global,
 * because the fake itself is gone by the time a test asks. */
static unsigned fake_hv_freed_busy;

static int fh_destroy(struct hv *hv, uint32_t domid, const uint8_t uuid[HV_UUID_LEN], unsigned flags)
{
	struct fake_hv *fh = fh_of(hv);
	struct fake_domain *fd;
	int rc = 0;

	pthread_mutex_lock(&fh->lock);
	for (unsigned i = 0; i < fh->in_destroy; i++)
		fh->concurrent += fh->inflight[i] == domid;
	if (fh->in_destroy < FAKE_HV_MAX_DOMAINS)
		fh->inflight[fh->in_destroy] = domid;
	fh->in_destroy++;
	pthread_cond_broadcast(&fh->entered);
	if (fh->hold && fh->hold_ms > 0) {
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += fh->hold_ms / 1000;
		until.tv_nsec += (long)(fh->hold_ms % 1000) * 1000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		while (fh->hold && pthread_cond_timedwait(&fh->released, &fh->lock, &until) == 0)
			continue;
	}
	while (fh->hold && fh->hold_ms <= 0)
		pthread_cond_wait(&fh->released, &fh->lock);
	while ((fd = fh_find(fh, domid)) && fd->held)
		pthread_cond_wait(&fh->released, &fh->lock);
	rc = inject_call(&fh->inject, FAKE_HV_DESTROY);
	if (rc) {
		/* failed before it touched the domain */
	} else if (!fd) {
		rc = -ESRCH;
	} else if (memcmp(fd->d.uuid, uuid, HV_UUID_LEN)) {
		rc = -ESTALE;	/* the real one checks too: never a reused domid */
		fh->stale++;
	} else if (fd->dumps_core && (flags & HV_DESTROY_UNLESS_TOOLSTACK_ACTS) &&
		   fd->d.shutdown && !fd->d.dying) {
		rc = -EINPROGRESS;	/* left alone, as hv_xen checks */
	} else if (fd->failing) {
		fd->destroy_calls++;
		rc = -EIO;
	} else if (fd->zombie_rounds) {
		fd->destroy_calls++;
		fd->zombie_rounds--;
		fd->d.dying = true;
		fd->d.tot_pages = fd->zombie_pages;
		fd->pool_pages = 0;	/* Xen frees it before the domain's pages */
	} else {
		fd->destroy_calls++;
		fh_remove_locked(fh, domid);
	}
	for (unsigned i = 0; i < fh->in_destroy && i < FAKE_HV_MAX_DOMAINS; i++) {
		if (fh->inflight[i] == domid) {
			fh->inflight[i] = fh->inflight[fh->in_destroy - 1];
			break;
		}
	}
	fh->in_destroy--;
	pthread_mutex_unlock(&fh->lock);
	return rc;
}

static int fh_self_domid(struct hv *hv, uint32_t *domid)
{
	*domid = fh_of(hv)->self;
	return 0;
}

static int fh_pool_name(struct hv *hv, uint32_t poolid, char **name)
{
	struct fake_hv *fh = fh_of(hv);
	int rc;

	pthread_mutex_lock(&fh->lock);
	rc = inject_call(&fh->inject, FAKE_HV_POOL_NAME);
	pthread_mutex_unlock(&fh->lock);
	if (rc)
		return rc;
	if (asprintf(name, poolid == 0 ? "Pool-0" : "pool%u", poolid) < 0)
		return -ENOMEM;
	return 0;
}

static bool fh_scrub_exact(struct hv *hv);

static int fh_scrub_probe(struct hv *hv, unsigned sources, struct hv_scrub *out)
{
	struct fake_hv *fh = fh_of(hv);
	int rc;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&fh->lock);
	rc = inject_call(&fh->inject, FAKE_HV_SCRUB_PROBE);
	if (rc) {
		pthread_mutex_unlock(&fh->lock);
		return rc;
	}
	fh->scrub_probes++;
	fh->scrub_sources_asked |= sources;
	out->source = fh->scrub_source;
	out->pages = fh->scrub_pages;
	out->n_nodes = fh->scrub_nodes;
	memcpy(out->node_pages, fh->scrub_node_pages, sizeof(out->node_pages));
	pthread_mutex_unlock(&fh->lock);
	return (sources & out->source) ? 0 : -ENODATA;
}

static int fh_free_pages(struct hv *hv, uint64_t *pages, uint64_t *outstanding)
{
	struct fake_hv *fh = fh_of(hv);
	uint64_t held = 0;
	int rc;

	pthread_mutex_lock(&fh->lock);
	rc = inject_call(&fh->inject, FAKE_HV_FREE_PAGES);
	for (unsigned i = 0; i < fh->n; i++)
		held += fh->doms[i].d.tot_pages + fh->doms[i].pool_pages;
	*outstanding = fh->outstanding;
	pthread_mutex_unlock(&fh->lock);
	if (rc)
		return rc;
	*pages = fh->total_pages - held;
	return 0;
}

static int fh_paging_pool(struct hv *hv, uint32_t domid, uint64_t *pages)
{
	struct fake_hv *fh = fh_of(hv);
	struct fake_domain *fd;
	int rc;

	pthread_mutex_lock(&fh->lock);
	rc = inject_call(&fh->inject, FAKE_HV_PAGING_POOL);
	fd = fh_find(fh, domid);
	if (!rc && !fd)
		rc = -ESRCH;
	else if (!rc && !fd->has_pool)
		rc = -EOPNOTSUPP;
	else if (!rc)
		*pages = fd->pool_pages;
	pthread_mutex_unlock(&fh->lock);
	return rc;
}

static void fh_free(struct hv *hv)
{
	struct fake_hv *fh = fh_of(hv);
	bool busy;

	pthread_mutex_lock(&fh->lock);
	busy = fh->in_destroy > 0;
	pthread_mutex_unlock(&fh->lock);
	if (busy) {
		/* Keep it alive for the worker still inside; the test fails. */
		fake_hv_freed_busy++;
		return;
	}
	pthread_mutex_destroy(&fh->lock);
	pthread_cond_destroy(&fh->released);
	pthread_cond_destroy(&fh->entered);
	free(hv);
}

static const struct hv_ops fake_hv_ops = {
	.list = fh_list, .destroy = fh_destroy,
	.self_domid = fh_self_domid,
	.pool_name = fh_pool_name, .scrub_probe = fh_scrub_probe,
	.scrub_exact = fh_scrub_exact, .free_pages = fh_free_pages,
	.paging_pool = fh_paging_pool, .free = fh_free,
};

struct hv *fake_hv_new(uint32_t self_domid)
{
	struct fake_hv *fh = calloc(1, sizeof(*fh));

	fh->base.ops = &fake_hv_ops;
	fh->self = self_domid;
	fh->total_pages = FAKE_HV_TOTAL_PAGES;
	fh->scrub_nodes = 1;	/* one NUMA node, as a heap dump of a small host */
	pthread_mutex_init(&fh->lock, NULL);
	pthread_cond_init(&fh->released, NULL);
	pthread_cond_init(&fh->entered, NULL);
	return &fh->base;
}

void fake_hv_set_total(struct hv *hv, uint64_t pages)
{
	pthread_mutex_lock(&fh_of(hv)->lock);
	fh_of(hv)->total_pages = pages;
	pthread_mutex_unlock(&fh_of(hv)->lock);
}

static void fake_uuid(uint8_t seed, uint8_t uuid[HV_UUID_LEN])
{
	for (int i = 0; i < HV_UUID_LEN; i++)
		uuid[i] = seed + i;
}

void fake_hv_uuid_text(uint8_t seed, char out[HV_UUID_STR_LEN])
{
	uint8_t uuid[HV_UUID_LEN];

	fake_uuid(seed, uuid);
	hv_uuid_format(uuid, out);
}

void fake_hv_add(struct hv *hv, uint32_t domid, uint8_t seed, uint64_t tot_pages, uint32_t pool)
{
	struct fake_hv *fh = fh_of(hv);
	struct fake_domain *fd;

	pthread_mutex_lock(&fh->lock);
	if (fh->n == FAKE_HV_MAX_DOMAINS) {
		fprintf(stderr, "fake_hv: more than %d domains; raise FAKE_HV_MAX_DOMAINS\n", FAKE_HV_MAX_DOMAINS);
		abort();
	}
	fd = &fh->doms[fh->n++];
	memset(fd, 0, sizeof(*fd));
	fd->d.domid = domid;
	fake_uuid(seed, fd->d.uuid);
	fd->d.tot_pages = tot_pages;
	fd->d.cpupool = pool;
	pthread_mutex_unlock(&fh->lock);
}

#define WITH_DOMAIN(hv, domid, body) do {				\
	struct fake_hv *fh_ = fh_of(hv);				\
	struct fake_domain *fd;						\
	pthread_mutex_lock(&fh_->lock);					\
	fd = fh_find(fh_, domid);					\
	if (fd) { body; }						\
	pthread_mutex_unlock(&fh_->lock);				\
} while (0)

void fake_hv_make_zombie(struct hv *hv, uint32_t domid, unsigned rounds, uint64_t pages)
{
	WITH_DOMAIN(hv, domid, fd->zombie_rounds = rounds; fd->zombie_pages = pages);
}

void fake_hv_kill(struct hv *hv, uint32_t domid, uint64_t pages)
{
	WITH_DOMAIN(hv, domid, fd->d.dying = true; fd->d.tot_pages = pages; fd->pool_pages = 0;
		    fd->zombie_rounds = UINT32_MAX; fd->zombie_pages = pages);
}

void fake_hv_make_failing(struct hv *hv, uint32_t domid)
{
	WITH_DOMAIN(hv, domid, fd->failing = true);
}

void fake_hv_dumps_core(struct hv *hv, uint32_t domid)
{
	WITH_DOMAIN(hv, domid, fd->dumps_core = true);
}

void fake_hv_set_pool(struct hv *hv, uint32_t domid, uint64_t pages)
{
	WITH_DOMAIN(hv, domid, fd->has_pool = true; fd->pool_pages = pages);
}

void fake_hv_set_pages(struct hv *hv, uint32_t domid, uint64_t pages)
{
	WITH_DOMAIN(hv, domid, fd->d.tot_pages = pages);
}

void fake_hv_shutdown(struct hv *hv, uint32_t domid, unsigned reason)
{
	WITH_DOMAIN(hv, domid, fd->d.shutdown = true; fd->d.shutdown_reason = reason);
}

void fake_hv_remove(struct hv *hv, uint32_t domid)
{
	struct fake_hv *fh = fh_of(hv);

	pthread_mutex_lock(&fh->lock);
	fh_remove_locked(fh, domid);
	pthread_mutex_unlock(&fh->lock);
}

void fake_hv_hold(struct hv *hv)
{
	pthread_mutex_lock(&fh_of(hv)->lock);
	fh_of(hv)->hold = true;
	fh_of(hv)->hold_ms = 0;
	pthread_mutex_unlock(&fh_of(hv)->lock);
}

void fake_hv_hold_domain(struct hv *hv, uint32_t domid, bool held)
{
	struct fake_hv *fh = fh_of(hv);
	struct fake_domain *fd;

	pthread_mutex_lock(&fh->lock);
	fd = fh_find(fh, domid);
	if (fd)
		fd->held = held;
	pthread_cond_broadcast(&fh->released);
	pthread_mutex_unlock(&fh->lock);
}

void fake_hv_hold_for(struct hv *hv, int ms)
{
	pthread_mutex_lock(&fh_of(hv)->lock);
	fh_of(hv)->hold = true;
	fh_of(hv)->hold_ms = ms;
	pthread_mutex_unlock(&fh_of(hv)->lock);
}

void fake_hv_release(struct hv *hv)
{
	pthread_mutex_lock(&fh_of(hv)->lock);
	fh_of(hv)->hold = false;
	for (unsigned i = 0; i < fh_of(hv)->n; i++)
		fh_of(hv)->doms[i].held = false;
	pthread_cond_broadcast(&fh_of(hv)->released);
	pthread_mutex_unlock(&fh_of(hv)->lock);
}

unsigned fake_hv_destroy_calls(struct hv *hv, uint32_t domid)
{
	struct fake_hv *fh = fh_of(hv);
	unsigned calls = 0;

	pthread_mutex_lock(&fh->lock);
	for (unsigned i = 0; i < fh->n_gone; i++)
		if (fh->gone_domid[i] == domid)
			calls += fh->destroy_calls_gone[i];
	for (unsigned i = 0; i < fh->n; i++)
		if (fh->doms[i].d.domid == domid)
			calls += fh->doms[i].destroy_calls;
	pthread_mutex_unlock(&fh->lock);
	return calls;
}

unsigned fake_hv_forget_gone(struct hv *hv)
{
	struct fake_hv *fh = fh_of(hv);
	unsigned wrong = 0;

	pthread_mutex_lock(&fh->lock);
	for (unsigned i = 0; i < fh->n_gone; i++)
		wrong += fh->destroy_calls_gone[i] != 1;
	fh->n_gone = 0;
	pthread_mutex_unlock(&fh->lock);
	return wrong;
}

int fake_hv_exists(struct hv *hv, uint32_t domid)
{
	int found = 0;

	WITH_DOMAIN(hv, domid, found = 1);
	return found;
}

void fake_hv_set_scrub(struct hv *hv, int source, uint64_t pages)
{
	fake_hv_set_scrub_nodes(hv, source, 1, &pages);
}

void fake_hv_set_scrub_nodes(struct hv *hv, int source, unsigned n, const uint64_t *pages)
{
	struct fake_hv *fh = fh_of(hv);

	pthread_mutex_lock(&fh->lock);
	fh->scrub_source = source;
	memset(fh->scrub_node_pages, 0, sizeof(fh->scrub_node_pages));
	fh->scrub_pages = 0;
	/* No per-node figure (physinfo's): the one total is PAGES[0]. */
	fh->scrub_nodes = n;
	for (unsigned i = 0; i < (n ? n : 1); i++) {
		if (n)
			fh->scrub_node_pages[i] = pages[i];
		fh->scrub_pages += pages[i];
	}
	pthread_mutex_unlock(&fh->lock);
}

static bool fh_scrub_exact(struct hv *hv)
{
	bool exact;

	pthread_mutex_lock(&fh_of(hv)->lock);
	exact = fh_of(hv)->scrub_exact;
	pthread_mutex_unlock(&fh_of(hv)->lock);
	return exact;
}

void fake_hv_set_scrub_exact(struct hv *hv, bool exact)
{
	pthread_mutex_lock(&fh_of(hv)->lock);
	fh_of(hv)->scrub_exact = exact;
	pthread_mutex_unlock(&fh_of(hv)->lock);
}

bool fake_hv_destroying(struct hv *hv, uint32_t domid)
{
	struct fake_hv *fh = fh_of(hv);
	bool inside = false;

	pthread_mutex_lock(&fh->lock);
	for (unsigned i = 0; i < fh->in_destroy && i < FAKE_HV_MAX_DOMAINS; i++)
		inside |= fh->inflight[i] == domid;
	pthread_mutex_unlock(&fh->lock);
	return inside;
}

unsigned fake_hv_scrub_sources_asked(struct hv *hv)
{
	unsigned asked;

	pthread_mutex_lock(&fh_of(hv)->lock);
	asked = fh_of(hv)->scrub_sources_asked;
	pthread_mutex_unlock(&fh_of(hv)->lock);
	return asked;
}

void fake_hv_set_outstanding(struct hv *hv, uint64_t pages)
{
	pthread_mutex_lock(&fh_of(hv)->lock);
	fh_of(hv)->outstanding = pages;
	pthread_mutex_unlock(&fh_of(hv)->lock);
}

unsigned fake_hv_scrub_probes(struct hv *hv)
{
	unsigned n;

	pthread_mutex_lock(&fh_of(hv)->lock);
	n = fh_of(hv)->scrub_probes;
	pthread_mutex_unlock(&fh_of(hv)->lock);
	return n;
}

void fake_hv_wait_inside(struct hv *hv, unsigned n)
{
	struct fake_hv *fh = fh_of(hv);

	pthread_mutex_lock(&fh->lock);
	while (fh->in_destroy < n)
		pthread_cond_wait(&fh->entered, &fh->lock);
	pthread_mutex_unlock(&fh->lock);
}

unsigned fake_hv_freed_while_busy(void)
{
	return fake_hv_freed_busy;
}

void fake_hv_inject(struct hv *hv, enum fake_hv_op op, unsigned nth, int err, bool sticky)
{
	pthread_mutex_lock(&fh_of(hv)->lock);
	inject_set(&fh_of(hv)->inject, op, nth, err, sticky);
	pthread_mutex_unlock(&fh_of(hv)->lock);
}

unsigned fake_hv_calls(struct hv *hv, enum fake_hv_op op)
{
	unsigned n;

	pthread_mutex_lock(&fh_of(hv)->lock);
	n = fh_of(hv)->inject.calls[op];
	pthread_mutex_unlock(&fh_of(hv)->lock);
	return n;
}

unsigned fake_hv_injected(struct hv *hv)
{
	unsigned n;

	pthread_mutex_lock(&fh_of(hv)->lock);
	n = fh_of(hv)->inject.fired;
	pthread_mutex_unlock(&fh_of(hv)->lock);
	return n;
}

const char *fake_hv_op_name(enum fake_hv_op op)
{
	static const char *const names[FAKE_HV_N_OPS] = {
		"list", "destroy", "pool_name", "scrub_probe", "free_pages", "paging_pool",
	};

	return names[op];
}

unsigned fake_hv_concurrent_destroys(struct hv *hv)
{
	unsigned n;

	pthread_mutex_lock(&fh_of(hv)->lock);
	n = fh_of(hv)->concurrent;
	pthread_mutex_unlock(&fh_of(hv)->lock);
	return n;
}

unsigned fake_hv_stale_destroys(struct hv *hv)
{
	unsigned n;

	pthread_mutex_lock(&fh_of(hv)->lock);
	n = fh_of(hv)->stale;
	pthread_mutex_unlock(&fh_of(hv)->lock);
	return n;
}
