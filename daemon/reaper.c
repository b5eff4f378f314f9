/*
 * reaper: the state machine's driver.  All of it runs on the main thread;
 * workers only call hv_destroy.  Every decision that could destroy a domain
 * goes through reaper_guard(), which compares the hypervisor's own UUID for
 * the domid with the one captured in the request (or when a dead guest was
 * noticed): a domain nobody asked for is never torn down.  A job captures
 * its pool's policy when it is created and keeps it across reloads.  It
 * does not parse the policy file (config.c), measure the scrub backlog
 * (scrub.c) or time grace periods (preserved.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "layout.h"
#include "log.h"
#include "preserved.h"
#include "reaper.h"
#include "scrub.h"

#define REAPER_TX_RETRIES 16

struct reaper {
	struct store *store;
	struct hv *hv;
	struct worker_pool *pool;
	const struct config *policy;
	struct scrub *scrub;
	struct preserved *preserved;
	struct job *jobs;	/* in request order */
	uint32_t self_domid;
	unsigned max_jobs;
	unsigned in_worker;
	int64_t next_sample_mono;
	unsigned published_active;
	bool started;		/* the daemon nodes exist */
};

static unsigned reaper_scrub_sources(enum config_scrub_probe probe)
{
	switch (probe) {
	case CONFIG_PROBE_AUTO:
		return HV_SCRUB_PHYSINFO | HV_SCRUB_HEAP_DUMP;
	case CONFIG_PROBE_PHYSINFO:
		return HV_SCRUB_PHYSINFO;
	case CONFIG_PROBE_HEAP_DUMP:
		return HV_SCRUB_HEAP_DUMP;
	default:
		return 0;
	}
}

int reaper_new(struct store *store, struct hv *hv, struct worker_pool *pool,
	       const struct config *policy, struct reaper **out)
{
	struct reaper *r;
	int rc;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->store = store;
	r->hv = hv;
	r->pool = pool;
	r->max_jobs = policy->jobs;
	r->published_active = UINT32_MAX;
	rc = hv_self_domid(hv, &r->self_domid);
	if (!rc)
		rc = scrub_new(store, hv, &r->scrub);
	if (!rc)
		rc = preserved_new(&r->preserved);
	if (rc) {
		reaper_free(r);
		return rc;
	}
	reaper_set_policy(r, policy);
	*out = r;
	return 0;
}

void reaper_free(struct reaper *r)
{
	struct job *job, *next;

	if (!r)
		return;
	for (job = r->jobs; job; job = next) {
		next = job->next;
		job_free(job);
	}
	scrub_free(r->scrub);
	preserved_free(r->preserved);
	free(r);
}

static int reaper_publish_config(struct reaper *r)
{
	char path[LAYOUT_PATH_LEN];

	layout_daemon_path(path, "config");
	return store_write(r->store, STORE_TX_NONE, path,
			   r->policy->path ? r->policy->path : "(built-in defaults)");
}

void reaper_set_policy(struct reaper *r, const struct config *policy)
{
	if (r->policy && policy->jobs != r->max_jobs)
		log_notice("jobs = %u takes effect when xenreaperd restarts; running %u at once",
			   policy->jobs, r->max_jobs);
	r->policy = policy;
	scrub_configure(r->scrub, reaper_scrub_sources(policy->scrub_probe),
			policy->scrub_probe_interval_ms);
	if (r->started && reaper_publish_config(r))
		log_warning("could not publish daemon/config");
}

struct job *reaper_find_job(const struct reaper *r, uint32_t domid)
{
	for (struct job *job = r->jobs; job; job = job->next)
		if (job->domid == domid)
			return job;
	return NULL;
}

static void reaper_append_job(struct reaper *r, struct job *job)
{
	struct job **tail = &r->jobs;

	while (*tail)
		tail = &(*tail)->next;
	job->next = NULL;
	*tail = job;
}

static void reaper_remove_job(struct reaper *r, struct job *job)
{
	for (struct job **link = &r->jobs; *link; link = &(*link)->next) {
		if (*link == job) {
			*link = job->next;
			scrub_untrack(r->scrub, job);
			job_free(job);
			return;
		}
	}
}

unsigned reaper_active_jobs(const struct reaper *r)
{
	unsigned n = 0;

	for (struct job *job = r->jobs; job; job = job->next)
		n += !job_state_is_final(job->state);
	return n;
}

unsigned reaper_progress(const struct reaper *r)
{
	uint64_t total = 0, left = 0;

	for (struct job *job = r->jobs; job; job = job->next) {
		if (job_state_is_final(job->state))
			continue;
		total += job->pages_total;
		left += job->pages_left;
	}
	return total ? (unsigned)((total - left) * 100 / total) : 100;
}

static unsigned job_mib(const struct job *job)
{
	return (unsigned)(job->pages_total / 256);
}

/* Publish JOB's state nodes (or all of them) atomically, retrying conflicts. */
static int reaper_publish(struct reaper *r, const struct job *job, bool all)
{
	store_tx tx;
	int rc;

	for (int attempt = 0; attempt < REAPER_TX_RETRIES; attempt++) {
		rc = store_tx_start(r->store, &tx);
		if (rc)
			return rc;
		rc = all ? job_publish(job, r->store, tx) : job_publish_state(job, r->store, tx);
		if (rc) {
			store_tx_end(r->store, tx, true);
			return rc;
		}
		rc = store_tx_end(r->store, tx, false);
		if (rc != -EAGAIN)
			return rc;
	}
	return -EAGAIN;
}

static int reaper_publish_active(struct reaper *r)
{
	char path[LAYOUT_PATH_LEN];
	unsigned active = reaper_active_jobs(r);
	int rc;

	if (active == r->published_active)
		return 0;
	layout_daemon_path(path, "active-jobs");
	rc = store_writef(r->store, STORE_TX_NONE, path, "%u", active);
	if (!rc)
		r->published_active = active;
	return rc;
}

/* Log JOB's move from FROM to its current state and publish it.  A failed
 * publish is logged here; the in-memory state stays authoritative and is
 * published again with the next change. */
static void reaper_announce(struct reaper *r, struct job *job, enum job_state from)
{
	const char *sep = job->error ? ": " : "", *why = job->error ? job->error : "";
	int rc;

	if (job_state_is_final(job->state) && job->started_mono)
		log_info("domain %u (%s, %u MiB): %s -> %s after %.1f s%s%s", job->domid,
			 job->name, job_mib(job), job_state_name(from), job_state_name(job->state),
			 (job->finished_mono - job->started_mono) / 1000.0, sep, why);
	else
		log_info("domain %u (%s, %u MiB): %s -> %s%s%s", job->domid, job->name,
			 job_mib(job), job_state_name(from), job_state_name(job->state), sep, why);
	rc = reaper_publish(r, job, false);
	if (rc)
		log_warning("domain %u: could not publish state %s: %s", job->domid,
			    job_state_name(job->state), strerror(-rc));
	reaper_publish_active(r);
}

static void reaper_transition(struct reaper *r, struct job *job, enum job_state to)
{
	enum job_state from = job->state;

	if (job_set_state(job, to)) {
		log_err("domain %u: refusing transition %s -> %s", job->domid,
			job_state_name(from), job_state_name(to));
		return;
	}
	reaper_announce(r, job, from);
}

static void reaper_fail(struct reaper *r, struct job *job, const char *sentence)
{
	enum job_state from = job->state;

	if (job_fail(job, "%s", sentence) == 0)
		reaper_announce(r, job, from);
}

/*
 * The UUID guard: 0 if DOMID exists, still carries JOB's UUID and may be
 * torn down; -ESRCH if it is gone; -EPERM (with SENTENCE) if it must not be.
 */
static int reaper_guard(const struct reaper *r, const struct job *job,
			const struct hv_domain *domains, size_t n, char *sentence, size_t len)
{
	const struct hv_domain *d;
	char actual[HV_UUID_STR_LEN];

	if (job->domid == 0) {
		snprintf(sentence, len, "domain 0 is the control domain and is never torn down");
		return -EPERM;
	}
	if (job->domid == r->self_domid) {
		snprintf(sentence, len, "domain %u is where xenreaperd itself runs and is never torn down",
			 job->domid);
		return -EPERM;
	}
	d = hv_find(domains, n, job->domid);
	if (!d)
		return -ESRCH;
	if (memcmp(d->uuid, job->uuid, HV_UUID_LEN)) {
		hv_uuid_format(d->uuid, actual);
		snprintf(sentence, len,
			 "domain %u has UUID %s, not the requested %s: the request is stale or the domid was reused; nothing was destroyed",
			 job->domid, actual, job->uuid_text);
		return -EPERM;
	}
	if (config_is_protected(r->policy, job->name, job->uuid_text)) {
		snprintf(sentence, len,
			 "domain %u (%s) is protected by the policy file's protect list; nothing was destroyed",
			 job->domid, job->name);
		return -EPERM;
	}
	return 0;
}

/* A new job for DOMID/UUID, checked against DOMAINS: queued with its pool's
 * policy, or failed with the reason it may not run. */
static int reaper_job_for_domain(struct reaper *r, uint32_t domid, const uint8_t uuid[HV_UUID_LEN],
				 enum job_reason reason, const struct hv_domain *domains,
				 size_t n, struct job **out)
{
	char sentence[256], path[LAYOUT_PATH_LEN], *guest_name = NULL, *pool_name = NULL;
	const struct hv_domain *d = hv_find(domains, n, domid);
	const struct config_pool *pool;
	struct job *job;
	int rc;

	if (d) {
		snprintf(path, sizeof(path), "/local/domain/%u/name", domid);
		if (store_read(r->store, STORE_TX_NONE, path, &guest_name))
			guest_name = NULL;
		if (hv_pool_name(r->hv, d->cpupool, &pool_name))
			pool_name = NULL;
	}
	rc = job_new(domid, uuid, guest_name, pool_name, &job);
	free(guest_name);
	free(pool_name);
	if (rc)
		return rc;
	pool = config_pool_for(r->policy, job->pool[0] ? job->pool : NULL);
	job->reason = reason;
	job->policy = pool->scrub;
	job->priority = (enum job_priority)pool->priority;
	rc = reaper_guard(r, job, domains, n, sentence, sizeof(sentence));
	if (rc == -ESRCH)
		job_fail(job, "no domain %u exists (it is already gone or never existed); nothing was destroyed",
			 domid);
	else if (rc)
		job_fail(job, "%s", sentence);
	else
		job->pages_total = job->pages_left = d->tot_pages;
	*out = job;
	return 0;
}

/* A job for request NAME = VALUE; *OUT is NULL when the request is to be
 * dropped without one. */
static int reaper_job_from_request(struct reaper *r, const char *name, const char *value,
				   const struct hv_domain *domains, size_t n, struct job **out)
{
	static const uint8_t no_uuid[HV_UUID_LEN];
	uint8_t uuid[HV_UUID_LEN];
	struct job *existing;
	uint32_t domid;
	int rc;

	*out = NULL;
	if (layout_parse_domid(name, &domid)) {
		log_warning("request '%s' dropped: its name must be a domid (0..%u) and its value the domain's UUID",
			    name, LAYOUT_DOMID_MAX);
		return 0;
	}
	existing = reaper_find_job(r, domid);
	if (existing && !job_state_is_final(existing->state)) {
		if (hv_uuid_parse(value, uuid) || memcmp(uuid, existing->uuid, HV_UUID_LEN))
			log_warning("request for domain %u (UUID '%s') dropped: a job for UUID %s is already %s",
				    domid, value, existing->uuid_text, job_state_name(existing->state));
		else
			log_debug("duplicate request for domain %u dropped", domid);
		return 0;
	}
	if (hv_uuid_parse(value, uuid)) {
		rc = job_new(domid, no_uuid, NULL, NULL, out);
		if (rc)
			return rc;
		job_fail(*out, "request value '%.64s' is not a UUID: write the domain's UUID "
			 "(as `xl list -v` shows it) to " LAYOUT_REQUEST_DIR "/%u", value, domid);
		return 0;
	}
	return reaper_job_for_domain(r, domid, uuid, JOB_REASON_REQUEST, domains, n, out);
}

/* JOB was just created: keep it, replacing a finished job for its domid. */
static void reaper_adopt(struct reaper *r, struct job *job)
{
	struct job *old = reaper_find_job(r, job->domid);

	if (old)
		reaper_remove_job(r, old);
	reaper_append_job(r, job);
	if (job->state == JOB_FAILED)
		log_warning("domain %u: %s refused: %s", job->domid, job_reason_name(job->reason),
			    job->error);
	else
		log_info("domain %u (%s, %u MiB, pool %s, %s, scrub %s): queued", job->domid,
			 job->name, job_mib(job), job->pool, job_reason_name(job->reason),
			 job_policy_name(job->policy));
	reaper_publish_active(r);
}

/* Take one request: in one transaction, create its job and remove it. */
static int reaper_take_request(struct reaper *r, const char *name,
			       const struct hv_domain *domains, size_t n)
{
	char path[LAYOUT_PATH_LEN];
	struct job *job = NULL;
	char *value = NULL;
	store_tx tx;
	int rc;

	snprintf(path, sizeof(path), LAYOUT_REQUEST_DIR "/%s", name);
	for (int attempt = 0; attempt < REAPER_TX_RETRIES; attempt++) {
		rc = store_tx_start(r->store, &tx);
		if (rc)
			return rc;
		rc = store_read(r->store, tx, path, &value);
		if (rc) {
			store_tx_end(r->store, tx, true);
			return rc == -ENOENT ? 0 : rc;
		}
		rc = reaper_job_from_request(r, name, value, domains, n, &job);
		if (!rc && job)
			rc = job_publish(job, r->store, tx);
		if (!rc)
			rc = store_rm(r->store, tx, path);
		if (rc) {
			store_tx_end(r->store, tx, true);
			goto out;
		}
		rc = store_tx_end(r->store, tx, false);
		if (rc != -EAGAIN)
			break;
		job_free(job);
		job = NULL;
		free(value);
		value = NULL;
	}
	if (!rc && job) {
		reaper_adopt(r, job);
		job = NULL;
	}
out:
	job_free(job);
	free(value);
	return rc;
}

static int reaper_scan_requests(struct reaper *r)
{
	struct hv_domain *domains = NULL;
	char **names = NULL;
	unsigned n_names = 0;
	size_t n = 0;
	int rc;

	rc = store_list(r->store, STORE_TX_NONE, LAYOUT_REQUEST_DIR, &names, &n_names);
	if (rc == -ENOENT || (!rc && n_names == 0))
		goto out_ok;
	if (rc)
		goto out;
	rc = hv_list(r->hv, &domains, &n);
	if (rc)
		goto out;
	for (unsigned i = 0; i < n_names; i++) {
		rc = reaper_take_request(r, names[i], domains, n);
		if (rc)
			log_err("request %s: %s (left in place, retried on the next event)",
				names[i], strerror(-rc));
	}
out_ok:
	rc = 0;
out:
	free(domains);
	store_names_free(names, n_names);
	return rc;
}

/* A dead guest already covered by a job, or protected, is not ours to
 * tear down automatically (a failed "protected" job every retention
 * period would only be noise). */
static bool reaper_leave_alone(void *ctx, uint32_t domid, const uint8_t uuid[HV_UUID_LEN])
{
	struct reaper *r = ctx;
	const struct job *job = reaper_find_job(r, domid);
	char path[LAYOUT_PATH_LEN], uuid_text[HV_UUID_STR_LEN], *name = NULL;
	bool protected;

	if (job && !memcmp(job->uuid, uuid, HV_UUID_LEN))
		return true;
	snprintf(path, sizeof(path), "/local/domain/%u/name", domid);
	if (store_read(r->store, STORE_TX_NONE, path, &name))
		name = NULL;
	hv_uuid_format(uuid, uuid_text);
	protected = config_is_protected(r->policy, name, uuid_text);
	free(name);
	return protected;
}

/* Dead guests whose grace period ended become jobs, like requests. */
static int reaper_start_preserved(struct reaper *r, int64_t now)
{
	struct hv_domain *domains = NULL;
	struct preserved_due due;
	struct job *job;
	size_t n = 0;
	int rc = 0;

	while (preserved_take_due(r->preserved, now, &due) == 0) {
		if (!domains)
			rc = hv_list(r->hv, &domains, &n);
		if (!rc)
			rc = reaper_job_for_domain(r, due.domid, due.uuid, due.reason, domains, n, &job);
		free(due.pool);
		if (rc)
			break;
		if (job->state == JOB_FAILED && !hv_find(domains, n, due.domid)) {
			job_free(job);	/* it went away by itself during the grace period */
			continue;
		}
		rc = reaper_publish(r, job, true);
		if (rc) {
			job_free(job);
			break;
		}
		reaper_adopt(r, job);
	}
	free(domains);
	return rc;
}

static int64_t reaper_zombie_backoff(unsigned retries)
{
	int64_t delay = REAPER_ZOMBIE_RETRY_MIN_MS;

	while (retries-- > 0 && delay < REAPER_ZOMBIE_RETRY_MAX_MS)
		delay *= 2;
	return delay < REAPER_ZOMBIE_RETRY_MAX_MS ? delay : REAPER_ZOMBIE_RETRY_MAX_MS;
}

/* JOB's domain is gone and its pages are back in the heap.  Deferred: done.
 * Sync: scrubbing, until its share of the backlog drains (or at once if
 * the backlog cannot be measured). */
static void reaper_released(struct reaper *r, struct job *job)
{
	bool measurable = reaper_scrub_sources(r->policy->scrub_probe) != 0;

	job->released_mono = clock_mono_ms();
	if (job->state != JOB_QUEUED && measurable)
		scrub_track(r->scrub, job);
	if (job->policy == JOB_POLICY_SYNC && job->scrub_tracked)
		reaper_transition(r, job, JOB_SCRUBBING);
	else
		reaper_transition(r, job, JOB_DONE);
}

/* After a teardown attempt, or on a domain event: settle JOB against what
 * the hypervisor now shows.  RESULT is hv_destroy's, or 0 for a rescan. */
static void reaper_settle(struct reaper *r, struct job *job, int result,
			  const struct hv_domain *domains, size_t n)
{
	const struct hv_domain *d = hv_find(domains, n, job->domid);
	char sentence[256];

	if (d && memcmp(d->uuid, job->uuid, HV_UUID_LEN))
		d = NULL;	/* the domid now names someone else: ours is gone */
	if (!d) {
		job_set_pages_left(job, 0);
		reaper_released(r, job);
		return;
	}
	if (job_set_pages_left(job, d->tot_pages))
		job_publish_progress(job, r->store, STORE_TX_NONE);
	if (result < 0 && !d->dying) {
		snprintf(sentence, sizeof(sentence),
			 "libxl_domain_destroy failed (%s); the domain is still alive", strerror(-result));
		reaper_fail(r, job, sentence);
		return;
	}
	/* Dead but still there: give the last mappings a moment to go (the
	 * sampler sees it vanish), then call it a zombie and retry. */
	if (job->state == JOB_DESTROYING)
		job->retry_mono = clock_mono_ms() + REAPER_ZOMBIE_SETTLE_MS;
	else
		job->retry_mono = clock_mono_ms() + reaper_zombie_backoff(job->retries);
}

int reaper_handle_workers(struct reaper *r)
{
	struct hv_domain *domains = NULL;
	struct job *job;
	uint32_t domid;
	size_t n = 0;
	int result, rc;

	while (worker_pool_next_done(r->pool, &domid, &result) == 0) {
		r->in_worker--;
		job = reaper_find_job(r, domid);
		if (!job)
			continue;
		job->in_worker = false;
		free(domains);
		domains = NULL;
		rc = hv_list(r->hv, &domains, &n);
		if (rc) {
			/* Cannot tell what happened: look again as for a zombie. */
			log_err("domain %u: listing domains after teardown: %s", domid, strerror(-rc));
			job->retry_mono = clock_mono_ms() + REAPER_ZOMBIE_RETRY_MIN_MS;
			continue;
		}
		reaper_settle(r, job, result, domains, n);
	}
	free(domains);
	return 0;
}

/* Start as many queued jobs as the pool may take, each under the guard. */
static int reaper_start_queued(struct reaper *r)
{
	struct hv_domain *domains = NULL;
	char sentence[256];
	size_t n = 0;
	int rc = 0;

	for (struct job *job = r->jobs; job && r->in_worker < r->max_jobs; job = job->next) {
		if (job->state != JOB_QUEUED)
			continue;
		if (!domains) {
			rc = hv_list(r->hv, &domains, &n);
			if (rc)
				break;
		}
		rc = reaper_guard(r, job, domains, n, sentence, sizeof(sentence));
		if (rc == -ESRCH) {
			log_info("domain %u (%s) vanished before its teardown started", job->domid,
				 job->name);
			reaper_released(r, job);
			rc = 0;
			continue;
		}
		if (rc) {
			reaper_fail(r, job, sentence);
			rc = 0;
			continue;
		}
		rc = worker_pool_submit(r->pool, job->domid, job->priority);
		if (rc)
			break;
		job->in_worker = true;
		r->in_worker++;
		r->next_sample_mono = clock_mono_ms() + r->policy->progress_interval_ms;
		reaper_transition(r, job, JOB_DESTROYING);
	}
	free(domains);
	return rc;
}

static bool reaper_needs_sampling(const struct reaper *r)
{
	for (struct job *job = r->jobs; job; job = job->next)
		if (job->state == JOB_DESTROYING || job->state == JOB_ZOMBIE)
			return true;
	return false;
}

/* Read tot_pages of every running teardown and publish what fell. */
static int reaper_sample(struct reaper *r)
{
	struct hv_domain *domains;
	size_t n;
	int rc;

	rc = hv_list(r->hv, &domains, &n);
	if (rc)
		return rc;
	for (struct job *job = r->jobs; job; job = job->next) {
		const struct hv_domain *d;

		if (job->state != JOB_DESTROYING && job->state != JOB_ZOMBIE)
			continue;
		d = hv_find(domains, n, job->domid);
		if (d && memcmp(d->uuid, job->uuid, HV_UUID_LEN))
			d = NULL;
		if (job_set_pages_left(job, d ? d->tot_pages : 0))
			job_publish_progress(job, r->store, STORE_TX_NONE);
		if (!d && !job->in_worker)
			reaper_released(r, job);	/* a zombie vanished */
	}
	free(domains);
	return 0;
}

/* Measure the backlog, publish each accounted job's share, and finish the
 * sync jobs whose share has drained. */
static int reaper_probe_scrub(struct reaper *r)
{
	bool figure;
	int rc;

	for (struct job *job = r->jobs; job; job = job->next)
		job->scrub_reported = job->scrub_tracked;
	rc = scrub_probe(r->scrub, r->jobs, &figure);
	if (rc)
		return rc;
	for (struct job *job = r->jobs; job; job = job->next) {
		if (!job->scrub_reported)
			continue;
		job_publish_progress(job, r->store, STORE_TX_NONE);
		if (job->state == JOB_SCRUBBING && (!job->scrub_tracked || job->scrub_pages == 0)) {
			log_info("domain %u (%s): its %u MiB scrubbed %.1f s after release",
				 job->domid, job->name, job_mib(job),
				 (clock_mono_ms() - job->released_mono) / 1000.0);
			reaper_transition(r, job, JOB_DONE);
		}
	}
	return 0;
}

/* Dead domains that did not go away: look again, and destroy again. */
static int reaper_retry_zombies(struct reaper *r, int64_t now)
{
	struct hv_domain *domains = NULL;
	const struct hv_domain *d;
	size_t n = 0;
	int rc = 0;

	for (struct job *job = r->jobs; job; job = job->next) {
		if ((job->state != JOB_ZOMBIE && job->state != JOB_DESTROYING) ||
		    job->in_worker || job->retry_mono > now)
			continue;
		if (r->in_worker >= r->max_jobs)
			break;
		if (!domains) {
			rc = hv_list(r->hv, &domains, &n);
			if (rc)
				break;
		}
		d = hv_find(domains, n, job->domid);
		if (!d || memcmp(d->uuid, job->uuid, HV_UUID_LEN)) {
			job_set_pages_left(job, 0);
			reaper_released(r, job);
			continue;
		}
		if (job->state == JOB_DESTROYING) {
			log_warning("domain %u (%s) is a zombie: dead but %" PRIu64
				    " pages still referenced; destroying it again",
				    job->domid, job->name, d->tot_pages);
			reaper_transition(r, job, JOB_ZOMBIE);
		}
		rc = worker_pool_submit(r->pool, job->domid, job->priority);
		if (rc)
			break;
		job->retries++;
		job->in_worker = true;
		r->in_worker++;
		log_debug("domain %u: zombie retry %u", job->domid, job->retries);
	}
	free(domains);
	return rc;
}

static void reaper_expire(struct reaper *r, int64_t now)
{
	char path[LAYOUT_PATH_LEN];
	struct job *job, *next;

	for (job = r->jobs; job; job = next) {
		next = job->next;
		if (!job_state_is_final(job->state) ||
		    job->finished_mono + r->policy->retention_ms > now)
			continue;
		layout_job_path(path, job->domid, NULL);
		if (store_rm(r->store, STORE_TX_NONE, path)) {
			log_warning("domain %u: could not remove expired job node", job->domid);
			continue;
		}
		log_debug("domain %u: job record expired", job->domid);
		reaper_remove_job(r, job);
	}
}

int reaper_tick(struct reaper *r)
{
	int64_t now = clock_mono_ms(), due;
	int rc;

	rc = reaper_start_preserved(r, now);
	if (!rc)
		rc = reaper_retry_zombies(r, now);
	if (!rc)
		rc = reaper_start_queued(r);
	if (!rc && reaper_needs_sampling(r) && now >= r->next_sample_mono) {
		r->next_sample_mono = now + r->policy->progress_interval_ms;
		rc = reaper_sample(r);
	}
	due = scrub_next_probe(r->scrub);
	if (!rc && due >= 0 && due <= now)
		rc = reaper_probe_scrub(r);
	reaper_expire(r, now);
	reaper_publish_active(r);
	return rc;
}

int64_t reaper_next_deadline(const struct reaper *r)
{
	int64_t next = -1;

#define CONSIDER(t) do { int64_t t_ = (t); if (t_ >= 0 && (next < 0 || t_ < next)) next = t_; } while (0)
	for (struct job *job = r->jobs; job; job = job->next) {
		switch (job->state) {
		case JOB_QUEUED:
			if (r->in_worker < r->max_jobs)
				CONSIDER(clock_mono_ms());
			break;
		case JOB_DESTROYING:
			CONSIDER(r->next_sample_mono);
			if (!job->in_worker)
				CONSIDER(job->retry_mono);
			break;
		case JOB_ZOMBIE:
			CONSIDER(job->in_worker ? r->next_sample_mono : job->retry_mono);
			break;
		case JOB_SCRUBBING:
			break;	/* the scrub probe below decides */
		case JOB_DONE:
		case JOB_FAILED:
			CONSIDER(job->finished_mono + r->policy->retention_ms);
			break;
		}
	}
	CONSIDER(scrub_next_probe(r->scrub));
	CONSIDER(preserved_next_deadline(r->preserved));
#undef CONSIDER
	return next;
}

/* Something happened to some domain (4.17 does not say which): settle
 * zombies, and look for dead guests to tear down automatically. */
static int reaper_scan_domains(struct reaper *r)
{
	struct hv_domain *domains;
	size_t n;
	int rc;

	rc = hv_list(r->hv, &domains, &n);
	if (rc)
		return rc;
	for (struct job *job = r->jobs; job; job = job->next)
		if (job->state == JOB_ZOMBIE && !job->in_worker)
			reaper_settle(r, job, 0, domains, n);
	rc = preserved_scan(r->preserved, r->hv, r->policy, domains, n, r->self_domid,
			    reaper_leave_alone, r);
	free(domains);
	return rc;
}

int reaper_handle_store_events(struct reaper *r)
{
	bool requests = false, domains = false;
	char *path, *token;
	int rc;

	while (store_next_event(r->store, &path, &token) == 0) {
		if (!strcmp(token, LAYOUT_TOKEN_REQUEST))
			requests = true;
		else if (!strcmp(token, LAYOUT_TOKEN_DOMAIN))
			domains = true;
		free(path);
		free(token);
	}
	if (requests) {
		rc = reaper_scan_requests(r);
		if (rc)
			log_err("scanning requests: %s", strerror(-rc));
	}
	if (domains) {
		rc = reaper_scan_domains(r);
		if (rc)
			log_err("scanning domains: %s", strerror(-rc));
	}
	return 0;
}

/* Rebuild one job left by an earlier run; running ones are resumed. */
static void reaper_resume_job(struct reaper *r, uint32_t domid)
{
	int64_t now_wall = clock_wall_ms(), now_mono = clock_mono_ms(), age;
	char path[LAYOUT_PATH_LEN];
	struct job *job;
	int rc;

	rc = job_load(r->store, STORE_TX_NONE, domid, &job);
	if (rc) {
		log_warning("job %u left by an earlier run is unreadable (%s); removing it",
			    domid, strerror(-rc));
		layout_job_path(path, domid, NULL);
		store_rm(r->store, STORE_TX_NONE, path);
		return;
	}
	reaper_append_job(r, job);
	if (job_state_is_final(job->state)) {
		/* Retention counts from when it finished, across the restart. */
		age = now_wall - job->finished_wall;
		job->finished_mono = now_mono - (age > 0 ? age : 0);
		return;
	}
	job->started_mono = now_mono;	/* durations after a restart count from here */
	if (job->state == JOB_SCRUBBING) {
		job->released_mono = now_mono;
		scrub_track(r->scrub, job);
		return;
	}
	if (job->state != JOB_QUEUED) {
		log_info("domain %u (%s): resuming %s teardown", job->domid, job->name,
			 job_state_name(job->state));
		reaper_transition(r, job, JOB_QUEUED);
	}
}

static int reaper_resume(struct reaper *r)
{
	char **names = NULL;
	unsigned n_names = 0;
	uint32_t domid;
	int rc;

	rc = store_list(r->store, STORE_TX_NONE, LAYOUT_JOB_DIR, &names, &n_names);
	if (rc == -ENOENT)
		return 0;
	if (rc)
		return rc;
	for (unsigned i = 0; i < n_names; i++) {
		if (layout_parse_domid(names[i], &domid)) {
			log_warning("ignoring stray node " LAYOUT_JOB_DIR "/%s", names[i]);
			continue;
		}
		reaper_resume_job(r, domid);
	}
	store_names_free(names, n_names);
	return 0;
}

int reaper_set_daemon_state(struct reaper *r, const char *state)
{
	char path[LAYOUT_PATH_LEN];

	layout_daemon_path(path, "state");
	return store_write(r->store, STORE_TX_NONE, path, state);
}

int reaper_set_config_error(struct reaper *r, const char *sentence)
{
	char path[LAYOUT_PATH_LEN];

	layout_daemon_path(path, "config-error");
	if (!sentence)
		return store_rm(r->store, STORE_TX_NONE, path);
	return store_write(r->store, STORE_TX_NONE, path, sentence);
}

static int reaper_publish_daemon(struct reaper *r)
{
	char path[LAYOUT_PATH_LEN], when[32];
	int rc;

	rc = store_write(r->store, STORE_TX_NONE, LAYOUT_ROOT, "");
	if (!rc)
		rc = store_make_private(r->store, STORE_TX_NONE, LAYOUT_ROOT);
	if (!rc)
		rc = reaper_set_daemon_state(r, "starting");
	if (rc)
		return rc;
	layout_daemon_path(path, "pid");
	rc = store_writef(r->store, STORE_TX_NONE, path, "%d", (int)getpid());
	if (rc)
		return rc;
	layout_daemon_path(path, "version");
	rc = store_write(r->store, STORE_TX_NONE, path, PACKAGE_VERSION);
	if (rc)
		return rc;
	layout_daemon_path(path, "started");
	layout_format_time(when, clock_wall_ms());
	rc = store_write(r->store, STORE_TX_NONE, path, when);
	if (rc)
		return rc;
	rc = reaper_publish_config(r);
	if (!rc)
		rc = reaper_set_config_error(r, NULL);
	if (rc)
		return rc;
	/* The directories clients write into and read from. */
	rc = store_write(r->store, STORE_TX_NONE, LAYOUT_REQUEST_DIR, "");
	if (!rc)
		rc = store_write(r->store, STORE_TX_NONE, LAYOUT_JOB_DIR, "");
	if (!rc && reaper_scrub_sources(r->policy->scrub_probe) == 0)
		rc = scrub_publish_none(r->scrub);
	return rc;
}

int reaper_start(struct reaper *r)
{
	int rc;

	rc = reaper_publish_daemon(r);
	if (rc)
		return rc;
	rc = reaper_resume(r);
	if (rc)
		return rc;
	rc = store_watch(r->store, LAYOUT_REQUEST_DIR, LAYOUT_TOKEN_REQUEST);
	if (!rc)
		rc = store_watch(r->store, "@releaseDomain", LAYOUT_TOKEN_DOMAIN);
	if (!rc)
		rc = store_watch(r->store, "@introduceDomain", LAYOUT_TOKEN_DOMAIN);
	if (rc)
		return rc;
	rc = reaper_scan_requests(r);
	if (!rc)
		rc = reaper_scan_domains(r);
	if (rc)
		return rc;
	reaper_publish_active(r);
	r->started = true;
	return reaper_set_daemon_state(r, "running");
}
