/*
 * reaper: the state machine's driver.  All of it runs on the main thread;
 * workers only call hv_destroy.  Every decision that could destroy a domain
 * goes through intake_guard(), which compares the hypervisor's own UUID for
 * the domid with the one captured in the request (or when a dead guest was
 * noticed): a domain nobody asked for is never torn down.  A job captures
 * its pool's policy when it is created and keeps it across reloads.  It
 * does not turn requests into jobs (intake.c), parse the policy file
 * (config.c), measure the scrub backlog (scrub.c) or time grace periods
 * (preserved.c).
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
#include "reaper-private.h"
#include "scrub.h"

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

void reaper_append_job(struct reaper *r, struct job *job)
{
	struct job **tail = &r->jobs;

	while (*tail)
		tail = &(*tail)->next;
	job->next = NULL;
	*tail = job;
}

void reaper_remove_job(struct reaper *r, struct job *job)
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

unsigned reaper_job_mib(const struct job *job)
{
	return (unsigned)(job->pages_total / 256);
}

/* Publish JOB's state nodes (or all of them) atomically, retrying conflicts. */
int reaper_publish_job(struct reaper *r, const struct job *job, bool all)
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

int reaper_publish_active(struct reaper *r)
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
			 job->name, reaper_job_mib(job), job_state_name(from), job_state_name(job->state),
			 (job->finished_mono - job->started_mono) / 1000.0, sep, why);
	else
		log_info("domain %u (%s, %u MiB): %s -> %s%s%s", job->domid, job->name,
			 reaper_job_mib(job), job_state_name(from), job_state_name(job->state), sep, why);
	rc = reaper_publish_job(r, job, false);
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

static int64_t reaper_zombie_backoff(unsigned retries)
{
	int64_t delay = REAPER_ZOMBIE_RETRY_MIN_MS;

	while (retries-- > 0 && delay < REAPER_ZOMBIE_RETRY_MAX_MS)
		delay *= 2;
	return delay < REAPER_ZOMBIE_RETRY_MAX_MS ? delay : REAPER_ZOMBIE_RETRY_MAX_MS;
}

/* JOB's own domain in DOMAINS, or NULL if it is gone (its domid missing,
 * or now naming another domain). */
static const struct hv_domain *reaper_own_domain(const struct job *job,
						 const struct hv_domain *domains, size_t n)
{
	const struct hv_domain *d = hv_find(domains, n, job->domid);

	return d && !memcmp(d->uuid, job->uuid, HV_UUID_LEN) ? d : NULL;
}

/* JOB's domain is gone and its pages are back in the heap.  Deferred: done.
 * Sync: scrubbing, until its share of the backlog drains (or at once if
 * the backlog cannot be measured). */
static void reaper_released(struct reaper *r, struct job *job)
{
	bool measurable = reaper_scrub_sources(r->policy->scrub_probe) != 0;

	job_set_pages_left(job, 0);
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
	const struct hv_domain *d = reaper_own_domain(job, domains, n);
	char sentence[256];

	if (!d) {
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
		rc = intake_guard(r, job, domains, n, sentence, sizeof(sentence));
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
		d = reaper_own_domain(job, domains, n);
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
				 job->domid, job->name, reaper_job_mib(job),
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
		d = reaper_own_domain(job, domains, n);
		if (!d) {
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

	rc = intake_preserved(r, now);
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
			    intake_leave_alone, r);
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
		rc = intake_requests(r);
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
	rc = intake_requests(r);
	if (!rc)
		rc = reaper_scan_domains(r);
	if (rc)
		return rc;
	reaper_publish_active(r);
	r->started = true;
	return reaper_set_daemon_state(r, "running");
}
