/*
 * reaper: the state machine's driver.  All of it runs in the daemon's one
 * thread; the runner's processes only call hv_destroy.  Every decision that could destroy a domain
 * goes through intake_guard(), which compares the hypervisor's own UUID for
 * the domid with the one captured in the request (or when a dead guest was
 * noticed), and the teardown process compares it once more right before the destroy:
 * a domain nobody asked for is never torn down.  A job captures its pool's
 * policy when it is created and keeps it across reloads.
 *
 * This file keeps the daemon's tree in xenstore (creating it dom0-only,
 * putting it back if removed), the job list, retention, and the order in
 * which a tick does things.  Every action that can fail backs off
 * (backoff.h) instead of being retried on the next loop turn.  It does not
 * run teardowns (teardown.c), turn requests into jobs (intake.c), parse the
 * policy file (config.c), measure the scrub backlog (scrub.c) or time grace
 * periods (preserved.c).
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
#include "liveness.h"
#include "log.h"
#include "memory.h"
#include "metrics.h"
#include "orphans.h"
#include "preserved.h"
#include "reaper-private.h"
#include "scrub.h"
#include "sentence.h"

#define REAPER_TOKEN_SELF "xenreaper-self"

static void reaper_load_history(struct reaper *r);
static int reaper_publish_daemon(struct reaper *r, const char *state);

/* The leaf of NODE under daemon/, for log lines. */
static const char *reaper_node_name(enum reaper_node node)
{
	static const char *const names[] = {
		[REAPER_NODE_TREE] = "nodes", [REAPER_NODE_STATE] = "state",
		[REAPER_NODE_CONFIG] = "config", [REAPER_NODE_CONFIG_ERROR] = "config-error",
		[REAPER_NODE_ACTIVE] = "active-jobs",
	};

	return names[node];
}

/* NODE's publish failed with RC: say so (once while it stays behind) and
 * leave it to reaper_republish. */
static void reaper_node_failed(struct reaper *r, enum reaper_node node, int rc)
{
	if (!(r->behind & (1u << node)))
		log_warning("could not publish " LAYOUT_DAEMON_DIR "/%s: %s; trying again with back-off",
			    reaper_node_name(node), strerror(-rc));
	r->behind |= 1u << node;
}

/* Whether anything the daemon publishes is behind what it holds. */
static bool reaper_behind(const struct reaper *r)
{
	return r->n_dirty || r->behind || r->memory_failing;
}

unsigned reaper_scrub_sources(const struct reaper *r)
{
	switch (r->policy->scrub_probe) {
	case CONFIG_PROBE_AUTO:
		/* A heap dump only where physinfo's 0 says nothing. */
		return hv_scrub_exact(r->hv) ? HV_SCRUB_PHYSINFO : HV_SCRUB_PHYSINFO | HV_SCRUB_HEAP_DUMP;
	case CONFIG_PROBE_PHYSINFO:
		return HV_SCRUB_PHYSINFO;
	case CONFIG_PROBE_HEAP_DUMP:
		return HV_SCRUB_HEAP_DUMP;
	default:
		return 0;
	}
}

int reaper_new(struct store *store, struct hv *hv, struct runner *runner,
	       const struct config *policy, struct reaper **out)
{
	struct reaper *r;
	int rc;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->store = store;
	r->hv = hv;
	r->runner = runner;
	r->max_jobs = policy->jobs;
	r->published_active = UINT32_MAX;
	r->state = "starting";
	r->index_size = REAPER_INDEX_MIN;
	r->index = calloc(r->index_size, sizeof(*r->index));
	if (!r->index) {
		free(r);
		return -ENOMEM;
	}
	rc = hv_self_domid(hv, &r->self_domid);
	if (!rc)
		rc = scrub_new(store, hv, &r->scrub);
	if (!rc)
		rc = preserved_new(&r->preserved);
	if (!rc)
		rc = memory_new(store, hv, &r->memory);
	if (!rc)
		rc = orphans_new(store, &r->orphans);
	if (!rc)
		rc = metrics_new(clock_wall_ms(), &r->metrics);
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
	memory_free(r->memory);
	orphans_free(r->orphans);
	metrics_free(r->metrics);
	reaper_forget_domains(r);
	free(r->config_error);
	free(r->history);
	free(r->index);
	free(r);
}

int reaper_domains(struct reaper *r, const struct hv_domain **domains, size_t *n)
{
	int64_t now = clock_mono_ms(), delay;
	int rc;

	if (!r->have_domains) {
		if (!backoff_due(&r->hv_failing, now))
			return -EAGAIN;
		rc = hv_list(r->hv, &r->domains, &r->n_domains);
		if (rc) {
			delay = backoff_fail(&r->hv_failing, now);
			if (r->hv_failing.failures == 1)
				log_err("cannot list domains: %s; holding teardowns, next try in %.0f s",
					strerror(-rc), delay / 1000.0);
			return rc;
		}
		if (r->hv_failing.failures)
			log_notice("listing domains works again after %u failure(s)",
				   r->hv_failing.failures);
		backoff_reset(&r->hv_failing);
		r->have_domains = true;
	}
	*domains = r->domains;
	*n = r->n_domains;
	return 0;
}

void reaper_forget_domains(struct reaper *r)
{
	free(r->domains);
	r->domains = NULL;
	r->n_domains = 0;
	r->have_domains = false;
}

static int reaper_publish_config(struct reaper *r)
{
	char path[LAYOUT_PATH_LEN], *text;
	int rc;

	/* A path may be as long as xenstore's whole payload. */
	rc = sentence_fit(r->policy->path ? r->policy->path : "(built-in defaults)", &text);
	if (rc)
		return rc;
	layout_daemon_path(path, "config");
	rc = store_write(r->store, STORE_TX_NONE, path, text);
	free(text);
	return rc;
}

static int reaper_publish_config_error(struct reaper *r)
{
	char path[LAYOUT_PATH_LEN];

	layout_daemon_path(path, "config-error");
	if (!r->config_error)
		return store_rm(r->store, STORE_TX_NONE, path);
	return store_write(r->store, STORE_TX_NONE, path, r->config_error);
}

/* Publish NODE as the daemon holds it now. */
static int reaper_publish_node(struct reaper *r, enum reaper_node node)
{
	char path[LAYOUT_PATH_LEN];

	switch (node) {
	case REAPER_NODE_TREE:
		return reaper_publish_daemon(r, r->state);
	case REAPER_NODE_STATE:
		layout_daemon_path(path, "state");
		return store_write(r->store, STORE_TX_NONE, path, r->state);
	case REAPER_NODE_CONFIG:
		return reaper_publish_config(r);
	case REAPER_NODE_CONFIG_ERROR:
		return reaper_publish_config_error(r);
	case REAPER_NODE_ACTIVE:
		return reaper_publish_active(r);
	}
	return -EINVAL;
}

/* Something happened to some domain (4.17 does not say which): settle
 * jobs waiting on their domain, and look for dead guests to tear down
 * automatically. */
static int reaper_scan_domains(struct reaper *r)
{
	const struct hv_domain *domains;
	size_t n;
	int rc;

	rc = reaper_domains(r, &domains, &n);
	r->rescan = rc != 0;	/* then the tick tries again */
	if (rc)
		return rc;
	teardown_rescan(r, domains, n);
	if (r->stopping)
		return 0;
	rc = orphans_scan(r->orphans, domains, n, r->self_domid, intake_covered, r);
	if (rc)
		return rc;
	return preserved_scan(r->preserved, r->hv, r->policy, domains, n, r->self_domid,
			      intake_leave_alone, r);
}

void reaper_set_policy(struct reaper *r, const struct config *policy)
{
	int rc;

	if (r->policy && policy->jobs != r->max_jobs)
		log_notice("jobs = %u takes effect when xenreaperd restarts; running %u at once",
			   policy->jobs, r->max_jobs);
	r->policy = policy;
	/* An exact physinfo is one silent sysctl: read with every sample. */
	scrub_configure(r->scrub, reaper_scrub_sources(r), policy->scrub_probe_interval_ms,
			hv_scrub_exact(r->hv) && policy->scrub_probe != CONFIG_PROBE_HEAP_DUMP &&
			policy->scrub_probe != CONFIG_PROBE_NONE ? policy->progress_interval_ms : 0);
	if (metrics_configure(r->metrics, policy->metrics,
			      policy->path ? policy->path : "(built-in defaults)"))
		log_err("out of memory configuring metrics");
	if (!r->started)
		return;
	rc = reaper_publish_config(r);
	if (rc)
		reaper_node_failed(r, REAPER_NODE_CONFIG, rc);
	else
		r->behind &= ~(1u << REAPER_NODE_CONFIG);
	/* Grace periods already running follow the new policy, and dead
	 * guests it newly covers start theirs. */
	preserved_reconsider(r->preserved, policy, intake_leave_alone, r);
	/* And dead domains it refused may be adopted now (or the other way). */
	orphans_reconsider(r->orphans);
	rc = reaper_scan_domains(r);
	reaper_forget_domains(r);
	if (rc && rc != -EAGAIN)
		log_err("scanning domains after the reload: %s", strerror(-rc));
}

static struct job **reaper_index_bucket(struct job **index, unsigned size, uint32_t domid)
{
	return &index[domid & (size - 1)];
}

struct job *reaper_find_job(const struct reaper *r, uint32_t domid)
{
	struct job *job = *reaper_index_bucket(r->index, r->index_size, domid);

	while (job && job->domid != domid)
		job = job->index_next;
	return job;
}

/* Twice the buckets once there are more jobs than buckets; if that cannot
 * be had, the chains grow longer instead. */
static void reaper_index_grow(struct reaper *r)
{
	unsigned size = r->index_size * 2;
	struct job **index, **bucket;

	if (r->n_jobs <= r->index_size || size > REAPER_INDEX_MAX)
		return;
	index = calloc(size, sizeof(*index));
	if (!index)
		return;
	for (struct job *job = r->jobs; job; job = job->next) {
		bucket = reaper_index_bucket(index, size, job->domid);
		job->index_next = *bucket;
		*bucket = job;
	}
	free(r->index);
	r->index = index;
	r->index_size = size;
}

/* Link JOB into the list before BEFORE (NULL: at the end). */
static void reaper_link(struct reaper *r, struct job *job, struct job *before)
{
	job->next = before;
	job->prev = before ? before->prev : r->jobs_tail;
	if (job->prev)
		job->prev->next = job;
	else
		r->jobs = job;
	if (before)
		before->prev = job;
	else
		r->jobs_tail = job;
}

static void reaper_unlink(struct reaper *r, struct job *job)
{
	if (r->first_final == job)
		r->first_final = job->next;
	if (job->prev)
		job->prev->next = job->next;
	else
		r->jobs = job->next;
	if (job->next)
		job->next->prev = job->prev;
	else
		r->jobs_tail = job->prev;
	job->next = job->prev = NULL;
}

/* Link JOB where its state puts it: under way, last of those; finished,
 * among the finished by when it finished (last, but for a job an earlier
 * run finished, which comes with an older time). */
static void reaper_place(struct reaper *r, struct job *job)
{
	struct job *before = NULL;

	if (!job_state_is_final(job->state)) {
		reaper_link(r, job, r->first_final);
		return;
	}
	/* The finished are the list's tail: walk back over the newer. */
	for (struct job *p = r->first_final ? r->jobs_tail : NULL;
	     p && p->finished_mono > job->finished_mono; p = p->prev) {
		before = p;
		if (p == r->first_final)
			break;
	}
	reaper_link(r, job, before);
	if (!r->first_final || r->first_final == before)
		r->first_final = job;
}

/* Move the jobs finished since the last call to the finished ones. */
static void reaper_file_finished(struct reaper *r)
{
	struct job *job, *next, *moved = NULL, **tail = &moved;

	for (job = r->jobs; reaper_under_way(r, job); job = next) {
		next = job->next;
		if (!job_state_is_final(job->state))
			continue;
		reaper_unlink(r, job);
		*tail = job;
		tail = &job->next;
	}
	for (job = moved; job; job = next) {
		next = job->next;
		reaper_place(r, job);
	}
}

void reaper_append_job(struct reaper *r, struct job *job)
{
	struct job **bucket = reaper_index_bucket(r->index, r->index_size, job->domid);

	reaper_place(r, job);
	job->index_next = *bucket;
	*bucket = job;
	r->n_jobs++;
	r->n_final += job_state_is_final(job->state);
	r->n_dirty += job->dirty;
	reaper_index_grow(r);
}

void reaper_remove_job(struct reaper *r, struct job *job)
{
	struct job **link = reaper_index_bucket(r->index, r->index_size, job->domid);

	while (*link != job)
		link = &(*link)->index_next;
	*link = job->index_next;
	reaper_unlink(r, job);
	r->n_jobs--;
	r->n_final -= job_state_is_final(job->state);
	r->n_dirty -= job->dirty;
	scrub_untrack(r->scrub, job);
	job_free(job);
}

void reaper_set_dirty(struct reaper *r, struct job *job, bool dirty)
{
	/* A job is published before it is kept (and may not be): the count
	 * is of kept ones, reaper_append_job adds it. */
	if (job->dirty != dirty && reaper_find_job(r, job->domid) == job)
		r->n_dirty += dirty ? 1 : -1;
	job->dirty = dirty;
}

unsigned reaper_active_jobs(const struct reaper *r)
{
	return r->n_jobs - r->n_final;
}

unsigned reaper_stuck(const struct reaper *r)
{
	return r->n_stuck;
}

bool reaper_may_start(const struct reaper *r)
{
	unsigned spare = r->n_stuck < REAPER_STUCK_SPARE_MAX ? r->n_stuck : REAPER_STUCK_SPARE_MAX;

	return r->in_runner < r->max_jobs + spare;
}

unsigned reaper_busy(const struct reaper *r)
{
	return r->in_runner;
}

unsigned reaper_running(const struct reaper *r)
{
	int64_t now = clock_mono_ms();
	unsigned n = r->in_runner - r->n_stuck;

	for (struct job *job = r->jobs; reaper_under_way(r, job); job = job->next)
		n += job->state == JOB_DESTROYING && job->settling && !job->in_runner &&
		     !backoff_due(&job->retry, now);
	return n;
}

unsigned reaper_progress(const struct reaper *r)
{
	uint64_t total = 0, left = 0;

	for (struct job *job = r->jobs; reaper_under_way(r, job); job = job->next) {
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

int reaper_publish_job(struct reaper *r, struct job *job, bool all)
{
	store_tx tx;
	int rc = -EAGAIN;

	/* A job whose last publish failed has stale nodes of any kind. */
	all = all || job->dirty;
	if (all)
		job_shown_forget(job);
	for (int attempt = 0; attempt < REAPER_TX_RETRIES; attempt++) {
		rc = store_tx_start(r->store, &tx);
		if (rc)
			break;
		rc = all ? job_publish(job, r->store, tx) : job_publish_state(job, r->store, tx);
		if (rc) {
			store_tx_end(r->store, tx, true);
			break;
		}
		rc = store_tx_end(r->store, tx, false);
		if (rc != -EAGAIN)
			break;
		/* Its writes were not committed: the retry makes them all. */
		job_shown_forget(job);
	}
	if (rc)
		job_shown_forget(job);
	else
		job->progress_mono = clock_mono_ms();	/* it wrote the progress nodes too */
	reaper_set_dirty(r, job, rc != 0);
	return rc;
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
	if (rc) {
		r->published_active = UINT32_MAX;
		reaper_node_failed(r, REAPER_NODE_ACTIVE, rc);
		return rc;
	}
	r->published_active = active;
	r->behind &= ~(1u << REAPER_NODE_ACTIVE);
	return 0;
}

/* The event JOB's move from FROM to its current state is for a log
 * pipeline: started, done and failed have their MESSAGE_ID; zombie and
 * stuck have theirs on the line saying what holds them. */
static enum log_event reaper_transition_event(const struct job *job, enum job_state from)
{
	if (from == JOB_QUEUED && job->state == JOB_DESTROYING)
		return LOG_EVENT_STARTED;
	if (job->state == JOB_DONE)
		return LOG_EVENT_DONE;
	if (job->state == JOB_FAILED)
		return LOG_EVENT_FAILED;
	return LOG_EVENT_NONE;
}

/* Log JOB's move from FROM to its current state and publish it.  A failed
 * publish is logged here and retried by reaper_republish(); the in-memory
 * state stays authoritative. */
static void reaper_announce(struct reaper *r, struct job *job, enum job_state from)
{
	const char *sep = job->error ? ": " : "", *why = job->error ? job->error : "";
	struct log_fields fields = job_log_fields(job, reaper_transition_event(job, from));
	/* A job given up on is what an admin must look at. */
	int prio = job->state == JOB_FAILED ? LOG_WARNING : LOG_INFO, rc;

	/* Publish first: the log never says a state xenstore does not hold
	 * yet (a SIGKILL between the two would have a restarted daemon resume
	 * a job the journal already called done, and finish it again). */
	rc = reaper_publish_job(r, job, false);
	/* It stays where it is until reaper_tick files it with the finished:
	 * a walk over the jobs under way may be at it now. */
	r->n_final += job_state_is_final(job->state) - job_state_is_final(from);
	if (job_state_is_final(job->state) && job->started_mono)
		log_event(prio, &fields, "domain %u (%s, %u MiB): %s -> %s after %.1f s%s%s", job->domid,
			  job->name, reaper_job_mib(job), job_state_name(from), job_state_name(job->state),
			  (job->finished_mono - job->started_mono) / 1000.0, sep, why);
	else
		log_event(prio, &fields, "domain %u (%s, %u MiB): %s -> %s%s%s", job->domid, job->name,
			  reaper_job_mib(job), job_state_name(from), job_state_name(job->state), sep, why);
	if (rc)
		log_warning("domain %u: could not publish state %s: %s; trying again with back-off",
			    job->domid, job_state_name(job->state), strerror(-rc));
	reaper_publish_active(r);
	if (job_state_is_final(job->state))
		reaper_job_ended(r, job);
}

void reaper_job_ended(struct reaper *r, struct job *job)
{
	metrics_job_finished(r->metrics, job);
	reaper_cap_retained(r);
}

void reaper_transition(struct reaper *r, struct job *job, enum job_state to)
{
	enum job_state from = job->state;

	if (job_set_state(job, to)) {
		log_err("domain %u: refusing transition %s -> %s", job->domid,
			job_state_name(from), job_state_name(to));
		return;
	}
	reaper_announce(r, job, from);
}

void reaper_fail(struct reaper *r, struct job *job, const char *sentence)
{
	enum job_state from = job->state;

	if (job_fail(job, "%s", sentence) == 0)
		reaper_announce(r, job, from);
}

void reaper_cap_retained(struct reaper *r)
{
	char path[LAYOUT_PATH_LEN];
	struct job *oldest;
	int rc;

	/* Those finished since the last tick are the newest, and are not
	 * moved now: the cap holds again once reaper_tick has filed them. */
	while (r->n_final > REAPER_RETAIN_MAX && r->first_final) {
		oldest = r->first_final;
		layout_job_path(path, oldest->domid, NULL);
		rc = store_rm(r->store, STORE_TX_NONE, path);
		if (rc)
			log_warning("domain %u: could not remove the record dropped for the %u-job cap: %s",
				    oldest->domid, REAPER_RETAIN_MAX, strerror(-rc));
		log_info("domain %u: %s record dropped early: more than %u finished jobs are kept",
			 oldest->domid, job_state_name(oldest->state), REAPER_RETAIN_MAX);
		reaper_remove_job(r, oldest);
	}
}

/* Forget finished jobs whose retention ended; a removal that fails is
 * retried with back-off. */
static void reaper_expire(struct reaper *r, int64_t now)
{
	char path[LAYOUT_PATH_LEN];
	struct job *job, *next;
	int64_t delay;
	int rc;

	for (job = r->first_final; job; job = next) {
		next = job->next;
		if (job->finished_mono + r->policy->retention_ms > now)
			break;	/* and so is every one after it */
		if (!backoff_due(&job->retry, now))
			continue;
		layout_job_path(path, job->domid, NULL);
		rc = store_rm(r->store, STORE_TX_NONE, path);
		if (rc) {
			delay = backoff_fail(&job->retry, now);
			log_warning("domain %u: could not remove the expired job record: %s; next try in %.0f s",
				    job->domid, strerror(-rc), delay / 1000.0);
			continue;
		}
		log_debug("domain %u: job record expired", job->domid);
		reaper_remove_job(r, job);
	}
}

/* Publish again whatever fell behind: jobs whose nodes are dirty and the
 * daemon's own nodes; the memory figures, which reaper_update_memory
 * tried this tick, only keep the back-off going.  reaper_next_deadline
 * wakes the loop for it while anything is behind, idle or not. */
static void reaper_republish(struct reaper *r, int64_t now)
{
	int64_t delay;
	int rc;

	if (!backoff_due(&r->publish_failing, now))
		return;
	for (struct job *job = r->jobs; job && r->n_dirty; job = job->next) {
		if (!job->dirty)
			continue;
		rc = reaper_publish_job(r, job, true);
		if (rc) {
			delay = backoff_fail(&r->publish_failing, now);
			log_warning("domain %u: publishing its job still fails: %s; next try in %.0f s",
				    job->domid, strerror(-rc), delay / 1000.0);
			return;
		}
	}
	for (enum reaper_node node = REAPER_NODE_TREE; node <= REAPER_NODE_ACTIVE && r->behind; node++) {
		if (!(r->behind & (1u << node)))
			continue;
		rc = reaper_publish_node(r, node);
		if (rc) {
			delay = backoff_fail(&r->publish_failing, now);
			log_warning("publishing " LAYOUT_DAEMON_DIR "/%s still fails: %s; next try in %.0f s",
				    reaper_node_name(node), strerror(-rc), delay / 1000.0);
			return;
		}
		r->behind &= ~(1u << node);
	}
	if (r->memory_failing) {
		backoff_fail(&r->publish_failing, now);
		return;
	}
	if (r->publish_failing.failures)
		log_notice("publishing to xenstore works again");
	backoff_reset(&r->publish_failing);
}

/* The memory picture while anything is in flight, and once after; as
 * often as the progress figures (REAPER_UNFOLLOWED_MS). */
static void reaper_update_memory(struct reaper *r)
{
	uint64_t releasing = 0, scrub_pending = 0;
	bool in_flight = scrub_counted(r->scrub) > 0, publish;
	int64_t now = clock_mono_ms();
	int have_scrub, rc;

	for (struct job *job = r->jobs; reaper_under_way(r, job); job = job->next) {
		if (job_state_is_final(job->state) || job->state == JOB_SCRUBBING)
			continue;
		in_flight = true;
		releasing += memory_job_releasing(r->memory, job, now);
	}
	have_scrub = scrub_backlog(r->scrub, &scrub_pending) == 0;
	publish = reaper_followed(r, now) || now - r->memory_mono >= REAPER_UNFOLLOWED_MS;
	rc = memory_update(r->memory, in_flight, releasing, have_scrub, scrub_pending, publish);
	if (publish)
		r->memory_mono = now;	/* a failure is memory_failing's to retry */
	if (rc && !r->memory_failing)
		log_warning("could not publish " LAYOUT_MEMORY_DIR ": %s", strerror(-rc));
	else if (!rc && r->memory_failing)
		log_notice("publishing " LAYOUT_MEMORY_DIR " works again");
	r->memory_failing = rc != 0;
}

int reaper_tick(struct reaper *r)
{
	int64_t now = clock_mono_ms(), due;
	struct scrub_snapshot scrub;
	struct memory_snapshot mem;
	int rc;

	reaper_forget_domains(r);
	if (r->rescan && backoff_due(&r->hv_failing, now)) {
		rc = reaper_scan_domains(r);
		if (rc && rc != -EAGAIN)
			log_err("scanning domains: %s", strerror(-rc));
	}
	if (r->requests_waiting && !r->stopping && backoff_due(&r->request_failing, now)) {
		rc = intake_requests(r);
		if (rc && rc != -EAGAIN)
			log_err("scanning requests: %s", strerror(-rc));
		if (r->requests_waiting)
			backoff_fail(&r->request_failing, now);
		else
			backoff_reset(&r->request_failing);
	}
	reaper_load_history(r);
	if (!r->stopping) {
		rc = intake_preserved(r, now);
		if (rc && rc != -EAGAIN)
			log_err("automatic teardowns: %s", strerror(-rc));
		rc = intake_orphans(r, now);
		if (rc && rc != -EAGAIN)
			log_err("dead domains left behind: %s", strerror(-rc));
	}
	teardown_retry(r, now);
	if (!r->stopping) {
		teardown_start_queued(r);
		runner_settle_idle(r->runner);
	}
	if (teardown_needs_sampling(r) && now >= r->next_sample_mono) {
		r->next_sample_mono = now + r->policy->progress_interval_ms;
		teardown_sample(r);
	}
	due = scrub_next_probe(r->scrub);
	if (due >= 0 && due <= now)
		teardown_probe_scrub(r);
	reaper_file_finished(r);
	reaper_cap_retained(r);
	reaper_expire(r, now);
	reaper_update_memory(r);
	reaper_republish(r, now);
	scrub_snapshot(r->scrub, &scrub);
	memory_snapshot(r->memory, &mem);
	metrics_update(r->metrics, r->jobs, &scrub, &mem, now);
	reaper_publish_active(r);
	reaper_forget_domains(r);
	return store_lost(r->store) ? -ENOTCONN : 0;
}

static void reaper_consider(int64_t *next, int64_t t)
{
	if (t >= 0 && (*next < 0 || t < *next))
		*next = t;
}

int64_t reaper_next_deadline(const struct reaper *r)
{
	const struct backoff *hv = &r->hv_failing;
	int64_t next = -1, now = clock_mono_ms(), expiry;
	const struct job *job;

	if (reaper_behind(r))
		reaper_consider(&next, r->publish_failing.next_mono);
	for (job = r->jobs; reaper_under_way(r, job); job = job->next) {
		switch (job->state) {
		case JOB_QUEUED:
			if (!r->stopping && reaper_may_start(r))
				reaper_consider(&next, backoff_gate(hv, clock_mono_ms()));
			break;
		case JOB_DESTROYING:
		case JOB_ZOMBIE:
		case JOB_STUCK:
			if (job->in_runner)
				reaper_consider(&next, backoff_gate(hv, r->next_sample_mono));
			else
				reaper_consider(&next, backoff_gate(hv, teardown_retry_deadline(r, job, now)));
			break;
		case JOB_SCRUBBING:
			break;	/* the scrub probe below decides */
		case JOB_DONE:
		case JOB_FAILED:
			reaper_consider(&next, backoff_gate(&job->retry,
							    job->finished_mono + r->policy->retention_ms));
			break;
		}
	}
	/* The finished ones by when they finished: past the first whose
	 * expiry is no earlier than what is due already, none can be. */
	for (; job; job = job->next) {
		expiry = job->finished_mono + r->policy->retention_ms;
		if (next >= 0 && expiry >= next)
			break;
		reaper_consider(&next, backoff_gate(&job->retry, expiry));
	}
	reaper_consider(&next, scrub_next_probe(r->scrub));
	/* A reading held back (a zombie's releasing gone to 0, say) is
	 * published within its bound even if no sample comes. */
	if (memory_behind(r->memory))
		reaper_consider(&next, r->memory_mono + REAPER_UNFOLLOWED_MS);
	reaper_consider(&next, metrics_next_deadline(r->metrics));
	if (r->rescan)
		reaper_consider(&next, r->hv_failing.next_mono);
	if (r->requests_waiting && !r->stopping)
		reaper_consider(&next, backoff_gate(hv, r->request_failing.next_mono));
	if (r->n_history)
		reaper_consider(&next, now);
	if (!r->stopping) {
		reaper_consider(&next, backoff_gate(hv, preserved_next_deadline(r->preserved)));
		reaper_consider(&next, backoff_gate(hv, orphans_next_deadline(r->orphans)));
	}
	return next;
}

int reaper_set_daemon_state(struct reaper *r, const char *state)
{
	int rc;

	r->state = state;
	rc = reaper_publish_node(r, REAPER_NODE_STATE);
	if (rc)
		r->behind |= 1u << REAPER_NODE_STATE;
	else
		r->behind &= ~(1u << REAPER_NODE_STATE);
	return rc;
}

int reaper_set_config_error(struct reaper *r, const char *sentence)
{
	char *copy = NULL;
	int rc;

	if (sentence) {
		rc = sentence_fit(sentence, &copy);
		if (rc)
			return rc;
	}
	free(r->config_error);
	r->config_error = copy;
	rc = reaper_publish_config_error(r);
	if (rc)
		reaper_node_failed(r, REAPER_NODE_CONFIG_ERROR, rc);
	else
		r->behind &= ~(1u << REAPER_NODE_CONFIG_ERROR);
	return 0;
}

/* PATH and the nodes below it, DEPTH levels down (-1: all): dom0 only.
 * New nodes inherit that from their parent; this catches nodes an admin
 * gave other permissions.  The records under job/ are left to whoever
 * loads each (reaper_load_job: the record and its leaves, which is all a
 * record has), so that the start does not walk the whole history. */
static int reaper_make_private(struct reaper *r, const char *path, int depth)
{
	char **names = NULL, *child;
	unsigned n = 0;
	int rc;

	rc = store_make_private(r->store, STORE_TX_NONE, path);
	if (!rc && depth && strcmp(path, LAYOUT_JOB_DIR))
		rc = store_list(r->store, STORE_TX_NONE, path, &names, &n);
	for (unsigned i = 0; !rc && i < n; i++) {
		if (asprintf(&child, "%s/%s", path, names[i]) < 0) {
			rc = -ENOMEM;
			break;
		}
		rc = reaper_make_private(r, child, depth - 1);
		free(child);
	}
	store_names_free(names, n);
	return rc == -ENOENT ? 0 : rc;	/* a node may go while we walk */
}

/* The daemon's own nodes, and the directories clients use. */
static int reaper_publish_daemon(struct reaper *r, const char *state)
{
	char path[LAYOUT_PATH_LEN], when[32];
	int rc;

	rc = store_write(r->store, STORE_TX_NONE, LAYOUT_ROOT, "");
	if (!rc)
		rc = reaper_make_private(r, LAYOUT_ROOT, -1);
	if (!rc)
		rc = reaper_set_daemon_state(r, state);
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
	layout_format_time(when, clock_wall_ms() - clock_mono_ms() + r->started_mono);
	rc = store_write(r->store, STORE_TX_NONE, path, when);
	if (!rc)
		rc = reaper_publish_config(r);
	if (!rc)
		rc = reaper_publish_config_error(r);
	if (!rc)
		rc = store_write(r->store, STORE_TX_NONE, LAYOUT_REQUEST_DIR, "");
	if (!rc)
		rc = store_write(r->store, STORE_TX_NONE, LAYOUT_JOB_DIR, "");
	if (!rc)
		rc = liveness_publish(r->store);
	if (!rc && reaper_scrub_sources(r) == 0)
		rc = scrub_publish_none(r->scrub);
	r->published_active = UINT32_MAX;
	if (!rc)
		rc = reaper_publish_active(r);
	if (!rc)
		r->behind = 0;	/* every daemon node is as the daemon holds it */
	return rc;
}

/* Our daemon/pid changed or went (a careless `xenstore-rm /tool/xenreaper`):
 * put the tree back, every job included, so clients see us running. */
static void reaper_check_tree(struct reaper *r)
{
	char path[LAYOUT_PATH_LEN], *pid = NULL, mine[16];
	unsigned n_jobs = 0;
	int rc;

	layout_daemon_path(path, "pid");
	rc = store_read(r->store, STORE_TX_NONE, path, &pid);
	snprintf(mine, sizeof(mine), "%d", (int)getpid());
	if (!rc && !strcmp(pid, mine)) {
		free(pid);
		return;
	}
	free(pid);
	if (rc && rc != -ENOENT) {
		log_err("cannot read %s: %s", path, strerror(-rc));
		return;
	}
	for (struct job *job = r->jobs; job; job = job->next) {
		reaper_set_dirty(r, job, true);
		n_jobs++;
	}
	if (r->n_history)
		log_warning("%u done job(s) of earlier runs not read yet went with it", r->n_history);
	r->n_history = 0;	/* their records went with the tree */
	backoff_reset(&r->publish_failing);
	memory_forget(r->memory);
	rc = reaper_publish_daemon(r, r->state);
	if (rc) {
		log_err("%s was removed or changed from under xenreaperd, and putting it back failed: %s; "
			"trying again with back-off", LAYOUT_DAEMON_DIR, strerror(-rc));
		r->behind |= 1u << REAPER_NODE_TREE;
	}
	else
		log_warning("%s was removed or changed from under xenreaperd: restored the daemon nodes; "
			    "%u job(s) follow", LAYOUT_DAEMON_DIR, n_jobs);
}

/* Rebuild job DOMID left by an earlier run and make its record dom0
 * only; one that makes no sense is removed.  A record that cannot be read
 * now (as opposed to one that makes no sense): -errno, nothing removed. */
static int reaper_load_job(struct reaper *r, uint32_t domid, struct job **out)
{
	char path[LAYOUT_PATH_LEN];
	int rc;

	*out = NULL;
	rc = job_load(r->store, STORE_TX_NONE, domid, out);
	if (rc && rc != -EINVAL)
		return rc;
	layout_job_path(path, domid, NULL);
	if (rc) {
		log_warning("job %u left by an earlier run makes no sense; removing it", domid);
		rc = store_rm(r->store, STORE_TX_NONE, path);
		if (rc)
			log_warning("job %u: could not remove it: %s", domid, strerror(-rc));
		return 0;
	}
	rc = reaper_make_private(r, path, 1);
	if (rc) {
		job_free(*out);
		*out = NULL;
	}
	return rc;
}

/* JOB, finished in an earlier run: retention counts from when it
 * finished, across the restart. */
static void reaper_keep_finished(struct reaper *r, struct job *job)
{
	int64_t age = clock_wall_ms() - job->finished_wall;

	job->finished_mono = clock_mono_ms() - (age > 0 ? age : 0);
	reaper_append_job(r, job);
}

/* Resume job DOMID, left unfinished by an earlier run. */
static int reaper_resume_job(struct reaper *r, uint32_t domid)
{
	int64_t now_mono = clock_mono_ms();
	struct job *job;
	int rc;

	rc = reaper_load_job(r, domid, &job);
	if (rc || !job)
		return rc;
	if (job_state_is_final(job->state)) {
		reaper_keep_finished(r, job);	/* it finished meanwhile */
		return 0;
	}
	reaper_append_job(r, job);
	job->started_mono = now_mono;	/* durations after a restart count from here */
	if (job->state == JOB_SCRUBBING) {
		job->released_mono = now_mono;
		if (!scrub_track(r->scrub, job))
			reaper_transition(r, job, JOB_DONE);
		return 0;
	}
	if (job->state != JOB_QUEUED) {
		log_info("domain %u (%s): resuming %s teardown", job->domid, job->name,
			 job_state_name(job->state));
		reaper_transition(r, job, JOB_QUEUED);
	}
	return 0;
}

/* Whether job DOMID's record says it is done: one read.  A done job's
 * domain is gone, so nothing the daemon decides needs it (a failed one may
 * cover a dead domain that is still there, and is read at once, like
 * unfinished ones and any whose state cannot be told). */
static bool reaper_record_done(struct reaper *r, uint32_t domid)
{
	char path[LAYOUT_PATH_LEN], *text = NULL;
	bool done;

	layout_job_path(path, domid, "state");
	done = store_read(r->store, STORE_TX_NONE, path, &text) == 0 &&
	       !strcmp(text, job_state_name(JOB_DONE));
	free(text);
	return done;
}

/* Unfinished and failed jobs are read now (and the unfinished resumed);
 * done ones only noted, for reaper_load_history. */
static int reaper_resume(struct reaper *r)
{
	char **names = NULL, quoted[LOG_QUOTE_LEN];
	unsigned n_names = 0;
	uint32_t domid;
	int rc;

	rc = store_list(r->store, STORE_TX_NONE, LAYOUT_JOB_DIR, &names, &n_names);
	if (rc == -ENOENT)
		return 0;
	if (rc)
		return rc;
	free(r->history);
	r->n_history = 0;
	r->history = calloc(n_names ? n_names : 1, sizeof(*r->history));
	if (!r->history)
		rc = -ENOMEM;
	for (unsigned i = 0; !rc && i < n_names; i++) {
		if (layout_parse_domid(names[i], &domid)) {
			log_warning("ignoring stray node " LAYOUT_JOB_DIR "/%s",
				    log_quote(names[i], quoted));
			continue;
		}
		if (reaper_record_done(r, domid)) {
			r->history[r->n_history++] = domid;
			continue;
		}
		rc = reaper_resume_job(r, domid);
		if (rc)
			log_err("job %u left by an earlier run cannot be read now: %s", domid,
				strerror(-rc));
	}
	store_names_free(names, n_names);
	if (r->n_history)
		log_debug("%u done job(s) of earlier runs to read", r->n_history);
	return rc;
}

/* Read up to REAPER_HISTORY_BATCH done jobs of earlier runs.  A domid
 * that has a job again (a request came first) keeps it: the record is the
 * new job's, written into the old one's directory, which is made private
 * like any other.  One that cannot be read now is tried again next turn. */
static void reaper_load_history(struct reaper *r)
{
	char path[LAYOUT_PATH_LEN];
	unsigned batch = 0;
	uint32_t domid;
	int rc;

	while (r->n_history && batch++ < REAPER_HISTORY_BATCH) {
		domid = r->history[r->n_history - 1];
		layout_job_path(path, domid, NULL);
		rc = reaper_find_job(r, domid) ? reaper_make_private(r, path, 1) :
						 reaper_resume_job(r, domid);
		if (rc) {
			log_warning("job %u left by an earlier run cannot be read now: %s; trying again",
				    domid, strerror(-rc));
			return;
		}
		r->n_history--;
	}
	if (!r->n_history)
		reaper_cap_retained(r);
}

int reaper_start(struct reaper *r)
{
	char path[LAYOUT_PATH_LEN];
	int rc;

	r->started_mono = clock_mono_ms();
	rc = reaper_publish_daemon(r, "starting");
	if (rc)
		return rc;
	rc = reaper_resume(r);
	if (rc)
		return rc;
	if (!r->n_history)
		reaper_cap_retained(r);
	layout_daemon_path(path, "pid");
	rc = store_watch(r->store, LAYOUT_REQUEST_DIR, LAYOUT_TOKEN_REQUEST);
	if (!rc)
		rc = store_watch(r->store, "@releaseDomain", LAYOUT_TOKEN_DOMAIN);
	if (!rc)
		rc = store_watch(r->store, "@introduceDomain", LAYOUT_TOKEN_DOMAIN);
	if (!rc)
		rc = store_watch(r->store, path, REAPER_TOKEN_SELF);
	if (!rc)
		rc = store_watch(r->store, LAYOUT_PING_DIR, LAYOUT_TOKEN_PING);
	if (rc)
		return rc;
	r->started = true;
	rc = intake_requests(r);
	if (!rc)
		rc = reaper_scan_domains(r);
	reaper_forget_domains(r);
	if (rc)
		return rc;
	rc = reaper_publish_active(r);
	return rc ? rc : reaper_set_daemon_state(r, "running");
}

void reaper_stop(struct reaper *r)
{
	int rc;

	r->stopping = true;
	rc = reaper_set_daemon_state(r, "stopping");
	if (rc)
		log_warning("could not publish daemon/state = stopping: %s; trying again with back-off",
			    strerror(-rc));
}

/* A client pinged: it follows the figures.  One that starts to follow
 * gets the last sample's at once, not up to REAPER_UNFOLLOWED_MS old
 * (memory/ at this turn's tick). */
static void reaper_follow(struct reaper *r)
{
	int64_t now = clock_mono_ms();
	bool started = !reaper_followed(r, now);

	r->followed_until_mono = now + REAPER_FOLLOW_MS;
	if (started) {
		teardown_catch_up(r);
		r->memory_mono = 0;
	}
}

int reaper_handle_store_events(struct reaper *r)
{
	bool requests = false, domains = false, self = false, pings = false, names;
	char *path, *token;
	int rc;

	do {
		while (store_next_event(r->store, &path, &token) == 0) {
			if (!strcmp(token, LAYOUT_TOKEN_REQUEST))
				requests = true;
			else if (!strcmp(token, LAYOUT_TOKEN_DOMAIN))
				domains = true;
			else if (!strcmp(token, REAPER_TOKEN_SELF))
				self = true;
			else if (!strcmp(token, LAYOUT_TOKEN_PING))
				pings = true;
			else if (!strcmp(token, LAYOUT_TOKEN_NAME))
				orphans_name_event(r->orphans, path);
			free(path);
			free(token);
		}
		/* A name read may need the events queued behind it (orphans.c). */
		names = orphans_refresh_names(r->orphans);
	} while (names);
	if (self)
		reaper_check_tree(r);
	if (pings) {
		rc = liveness_answer(r->store);
		if (rc < 0)
			log_warning("answering the clients waiting under " LAYOUT_PING_DIR ": %s",
				    strerror(-rc));
		else if (rc > 0)
			reaper_follow(r);
	}
	if (requests && !r->stopping) {
		rc = intake_requests(r);
		if (rc && rc != -EAGAIN)
			log_err("scanning requests: %s", strerror(-rc));
	}
	if (domains) {
		rc = reaper_scan_domains(r);
		if (rc && rc != -EAGAIN)
			log_err("scanning domains: %s", strerror(-rc));
	}
	reaper_forget_domains(r);
	return store_lost(r->store) ? -ENOTCONN : 0;
}

int reaper_handle_runner(struct reaper *r)
{
	teardown_collect(r);
	reaper_forget_domains(r);
	return store_lost(r->store) ? -ENOTCONN : 0;
}
