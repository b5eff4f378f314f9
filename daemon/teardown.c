/*
 * teardown: running the jobs the reaper holds.  Queued jobs are started
 * on the runner (a process each, runner.h) under the UUID guard, which the
 * process makes again right before the destroy; while a destroy runs its
 * tot_pages is sampled; when it ends, the job is settled against what the
 * hypervisor shows: gone (released: done, or scrubbing for a sync pool),
 * dead but still holding pages (a zombie, destroyed again with back-off),
 * or alive because the destroy failed (retried with back-off, failed
 * after REAPER_DESTROY_ATTEMPTS).  A destroy that stands still (it has
 * not returned and its pages do not fall) for the policy's stuck-after is
 * published stuck, with what it waits on (stuck.c), and gives its slot to
 * others; after the policy's take-back-after, or when an admin asks, its
 * process is ended and the teardown starts again, which libxl resumes
 * where the last one stopped.  It does not create jobs (intake.c), decide
 * when a tick runs what (reaper.c) or when to probe the scrub backlog
 * (scrub.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "holders.h"
#include "leftovers.h"
#include "log.h"
#include "reaper-private.h"
#include "scrub.h"
#include "stuck.h"
#include "runner.h"

/* JOB's own domain in DOMAINS, or NULL if it is gone (its domid missing,
 * or now naming another domain). */
static const struct hv_domain *teardown_own_domain(const struct job *job,
						   const struct hv_domain *domains, size_t n)
{
	const struct hv_domain *d = hv_find(domains, n, job->domid);

	return d && !memcmp(d->uuid, job->uuid, HV_UUID_LEN) ? d : NULL;
}

/* JOB's stub domain, while it is still there. */
static const struct hv_domain *teardown_own_stubdom(const struct job *job,
						    const struct hv_domain *domains, size_t n)
{
	const struct hv_domain *d = job->stubdom ? hv_find(domains, n, job->stubdom) : NULL;

	return d && !memcmp(d->uuid, job->stubdom_uuid, HV_UUID_LEN) ? d : NULL;
}

/* Publish those of JOB's progress nodes that changed, UNSHOWN of them
 * (job_progress_unshown): one alone as a plain write, which xenstore
 * applies atomically, more in one transaction, so that no reader pairs one
 * sample's pages-left with another's rate (a rate seeded at the start is
 * there from the first count on); a failure leaves it for
 * reaper_republish(). */
static void teardown_write_progress(struct reaper *r, struct job *job, unsigned unshown)
{
	store_tx tx = STORE_TX_NONE;
	int rc;

	job->progress_mono = clock_mono_ms();
	if (!unshown)
		return;
	rc = unshown > 1 ? store_tx_start(r->store, &tx) : 0;
	if (!rc)
		rc = job_publish_progress(job, r->store, tx);
	if (tx != STORE_TX_NONE) {
		if (rc)
			store_tx_end(r->store, tx, true);
		else
			rc = store_tx_end(r->store, tx, false);
	}
	if (rc) {
		log_debug("domain %u: its progress was not published: %s; its job is published again whole",
			  job->domid, strerror(-rc));
		job_shown_forget(job);
		reaper_set_dirty(r, job, true);
	}
}

/* teardown_write_progress with what JOB's nodes do not show yet. */
static void teardown_publish_progress(struct reaper *r, struct job *job)
{
	bool urgent;

	teardown_write_progress(r, job, job_progress_unshown(job, &urgent));
}

/* What JOB's destroy left of the devices recorded before it: named in
 * its error node (the job still ends done: the domain and its memory are
 * gone, as under a plain `xl destroy`, which says it only on stderr). */
static void teardown_check_leftovers(struct reaper *r, struct job *job)
{
	char *left;
	int rc;

	if (!job->leftovers)
		return;
	rc = leftovers_check(r->store, job->leftovers, &left);
	if (rc)
		log_warning("domain %u (%s): cannot tell what its teardown left behind: %s", job->domid,
			    job->name, strerror(-rc));
	else if (left) {
		log_warning("domain %u (%s): %s", job->domid, job->name, left);
		job_set_error(job, "%s", left);
		free(left);
	}
	leftovers_free(job->leftovers);
	job->leftovers = NULL;
}

/* JOB's domain is gone and its pages are back in the heap.  Deferred: done.
 * Sync: scrubbing, until its share of the backlog drains (or at once if
 * the backlog cannot be measured). */
static void teardown_released(struct reaper *r, struct job *job)
{
	struct log_fields fields;
	double mib_s;
	bool measured;

	job_set_pages_left(job, 0);
	job_set_error(job, NULL);
	teardown_check_leftovers(r, job);
	job->released_mono = clock_mono_ms();
	if (job->state != JOB_QUEUED && job->pages_at_start) {
		/* In the manner of libxc's show_transfer_rate. */
		mib_s = job_mib_per_s(job, job->released_mono);
		if (mib_s > 0)
			snprintf(job->rate_text, sizeof(job->rate_text), "%.1f", mib_s);
		fields = job_log_fields(job, LOG_EVENT_RELEASED);
		log_event(LOG_INFO, &fields, "domain %u (%s): %" PRIu64 " page%s (%" PRIu64 " MiB) released in %.3f s, %.1f MiB/s",
			  job->domid, job->name, job->pages_at_start, job->pages_at_start == 1 ? "" : "s",
			  job->pages_at_start / 256,
			  (job->released_mono - job->started_mono) / 1000.0, mib_s);
	}
	/* A job that never started released nothing of ours. */
	measured = job->state != JOB_QUEUED && scrub_track(r->scrub, job);
	if (job->policy == JOB_POLICY_SYNC && measured) {
		reaper_transition(r, job, JOB_SCRUBBING);
		return;
	}
	if (job->policy == JOB_POLICY_SYNC && job->state != JOB_QUEUED && reaper_scrub_sources(r))
		log_warning("domain %u (%s): the scrub backlog cannot be measured now; done when its pages returned",
			    job->domid, job->name);
	reaper_transition(r, job, JOB_DONE);
}

/* Start JOB's destroy on the runner; false (and back-off) if it cannot be. */
static bool teardown_submit(struct reaper *r, struct job *job)
{
	struct runner_request request = { .domid = job->domid, .priority = job->priority };
	int64_t now = clock_mono_ms(), delay;
	int rc;

	memcpy(request.uuid, job->uuid, HV_UUID_LEN);
	request.stubdom = job->stubdom;
	memcpy(request.stubdom_uuid, job->stubdom_uuid, HV_UUID_LEN);
	/* A guest's own shutdown, torn down by policy: not while its
	 * toolstack is at work on it. */
	request.flags = job->reason == JOB_REASON_POWEROFF || job->reason == JOB_REASON_CRASH ?
			HV_DESTROY_UNLESS_TOOLSTACK_ACTS : 0;
	rc = runner_start(r->runner, &request);
	if (rc) {
		delay = backoff_fail(&r->hv_failing, now);
		log_err("domain %u: cannot start its teardown: %s; next try in %.0f s", job->domid,
			strerror(-rc), delay / 1000.0);
		return false;
	}
	job->in_runner = true;
	job->submitted_mono = now;
	r->in_runner++;
	return true;
}

/* The destroy failed with RESULT, TEXT saying why if not empty, and LEFT
 * is still alive: try again later, or give up after
 * REAPER_DESTROY_ATTEMPTS. */
static void teardown_destroy_failed(struct reaper *r, struct job *job, int result, const char *text,
				    const char *left)
{
	char why[RUNNER_TEXT_MAX + 64], sentence[RUNNER_TEXT_MAX + 192];
	int64_t delay;

	if (text[0])
		snprintf(why, sizeof(why), "%s", text);
	else if (result == -EBUSY)
		snprintf(why, sizeof(why), "libxl could not take the domain's lock (its lock files are under /var/lib/xen)");
	else if (!result)
		snprintf(why, sizeof(why), "libxl_domain_destroy returned");
	else
		snprintf(why, sizeof(why), "libxl_domain_destroy failed (%s)", strerror(-result));
	job->settling = false;
	job->destroy_failures++;
	if (job->destroy_failures >= REAPER_DESTROY_ATTEMPTS) {
		snprintf(sentence, sizeof(sentence), "%s %u times; %s is still alive", why,
			 job->destroy_failures, left);
		reaper_fail(r, job, sentence);
		return;
	}
	delay = backoff_fail(&job->retry, clock_mono_ms());
	job_set_error(job, "%s; %s is still alive; attempt %u of %u, next in %.0f s", why, left,
		      job->destroy_failures, REAPER_DESTROY_ATTEMPTS, delay / 1000.0);
	log_warning("domain %u (%s): %s", job->domid, job->name, job->error);
	if (reaper_publish_job(r, job, false))
		log_warning("domain %u: could not publish its error: trying again with back-off", job->domid);
}

/* Look again at what holds JOB's dead domain D; publish it if it changed. */
static void teardown_diagnose(struct reaper *r, struct job *job, const struct hv_domain *d)
{
	char *held_by;
	int rc;

	rc = holders_describe(r->store, job->domid, d->tot_pages, &held_by);
	if (rc) {
		log_warning("domain %u: cannot tell what holds it: %s", job->domid, strerror(-rc));
		return;
	}
	if (job_set_held_by(job, held_by) && job->state == JOB_ZOMBIE && reaper_publish_job(r, job, false))
		log_warning("domain %u: could not publish held-by; trying again with back-off", job->domid);
}

/* A destroy of JOB ended with RESULT: settle the job against what the
 * hypervisor now shows. */
static void teardown_settle(struct reaper *r, struct job *job, const struct runner_result *ended,
			    const struct hv_domain *domains, size_t n)
{
	int result = ended->result;
	const struct hv_domain *d = teardown_own_domain(job, domains, n);
	int64_t now = clock_mono_ms();
	char left[64];

	if (!d && teardown_own_stubdom(job, domains, n)) {
		/* Cut short between the guest and its stub domain. */
		snprintf(left, sizeof(left), "its stub domain %u", job->stubdom);
		teardown_destroy_failed(r, job, result, ended->text, left);
		return;
	}
	if (!d) {
		if (result == -ESTALE)
			log_info("domain %u (%s) was gone and its domid reused before its teardown process got to it; nothing was destroyed",
				 job->domid, job->name);
		else if (result < 0 && ended->text[0])
			log_warning("domain %u (%s) is gone, but %s", job->domid, job->name, ended->text);
		teardown_released(r, job);
		return;
	}
	if (job_set_pages_left(job, d->tot_pages))
		teardown_publish_progress(r, job);
	if (result == -EINPROGRESS && !d->dying) {
		reaper_fail(r, job, "not torn down automatically: its libxl configuration dumps its core on this "
			    "shutdown (coredump-destroy or coredump-restart), which xl does and then acts itself, "
			    "or that configuration could not be read to tell; nothing was destroyed "
			    "(`xenreaper destroy` tears it down when asked)");
		return;
	}
	if (result < 0 && !d->dying) {
		teardown_destroy_failed(r, job, result, ended->text, "the domain");
		return;
	}
	/* The destroy got through: dead, but pages are still referenced. */
	if (ended->text[0])
		log_warning("domain %u (%s): %s; the domain is dying, and its teardown starts again",
			    job->domid, job->name, ended->text);
	job_set_error(job, NULL);
	if (job->state == JOB_DESTROYING) {
		/* Give the last mappings a moment to go (a domain event says
		 * when they do), then call it a zombie. */
		job->retry.failures = 1;
		job->retry.next_mono = now + REAPER_ZOMBIE_SETTLE_MS;
		job->settling = true;
	} else {
		backoff_fail(&job->retry, now);
		teardown_diagnose(r, job, d);
	}
}

/* JOB's destroy, stuck, came back (it returned, or its pages fall again):
 * destroying once more, and its slot is its own again. */
static void teardown_unstick(struct reaper *r, struct job *job, const char *how)
{
	struct log_fields fields = job_log_fields(job, LOG_EVENT_UNSTUCK);

	r->n_stuck--;
	fields.state = job_state_name(JOB_DESTROYING);	/* where it goes */
	log_event(LOG_NOTICE, &fields, "domain %u (%s): its stuck teardown %s after %.1f s", job->domid,
		  job->name, how, (clock_mono_ms() - job->submitted_mono) / 1000.0);
	reaper_transition(r, job, JOB_DESTROYING);
}

void teardown_collect(struct reaper *r)
{
	const struct hv_domain *domains;
	struct runner_result ended;
	struct job *job;
	size_t n;
	int rc;

	while (runner_next_done(r->runner, &ended) == 0) {
		r->in_runner--;
		job = reaper_find_job(r, ended.domid);
		if (!job || !job->in_runner)
			continue;
		job->in_runner = false;
		if (job->state == JOB_STUCK)
			teardown_unstick(r, job, job->taken_back ? "was taken back" : "returned");
		job->taken_back = false;
		/* A list read before this teardown ended may still show what
		 * its process destroyed last (a stub domain after its guest). */
		reaper_forget_domains(r);
		rc = reaper_domains(r, &domains, &n);
		if (rc) {
			/* Cannot tell what happened: look again with back-off. */
			backoff_fail(&job->retry, clock_mono_ms());
			continue;
		}
		teardown_settle(r, job, &ended, domains, n);
	}
}

void teardown_rescan(struct reaper *r, const struct hv_domain *domains, size_t n)
{
	const struct hv_domain *d;

	for (struct job *job = r->jobs; reaper_under_way(r, job); job = job->next) {
		if ((job->state != JOB_ZOMBIE && job->state != JOB_DESTROYING) || job->in_runner)
			continue;
		d = teardown_own_domain(job, domains, n);
		if (!d && !teardown_own_stubdom(job, domains, n))
			teardown_released(r, job);	/* the last mapping went */
		else if (d && job_set_pages_left(job, d->tot_pages))
			teardown_publish_progress(r, job);
	}
}

/* Whether domain CANDIDATE's xenstore directory says it serves JOB's
 * domain (libxl writes a stub domain's target node). */
static bool teardown_serves(struct reaper *r, const struct job *job, uint32_t candidate)
{
	char path[64];
	uint64_t target;

	snprintf(path, sizeof(path), "/local/domain/%u/target", candidate);
	return !store_read_u64(r->store, STORE_TX_NONE, path, &target) && target == job->domid;
}

/* Record JOB's stub domain, if it has one, for its teardown processes to
 * destroy: libxl finds it through the guest's image/device-model-domid,
 * gone once a destroy cut short removed the guest's directory.  A job an
 * earlier run started may be past that point: then the stub domain is the
 * one whose own target node names the guest. */
static void teardown_find_stubdom(struct reaper *r, struct job *job, const struct hv_domain *domains,
				  size_t n)
{
	const struct hv_domain *d = NULL;
	char path[64];
	uint64_t stubdom;

	if (job->stubdom)
		return;
	snprintf(path, sizeof(path), "/local/domain/%u/image/device-model-domid", job->domid);
	if (!store_read_u64(r->store, STORE_TX_NONE, path, &stubdom) && stubdom <= UINT32_MAX)
		d = hv_find(domains, n, stubdom);
	for (size_t i = 0; !d && job->started_wall && i < n; i++)
		if (domains[i].domid != job->domid && domains[i].domid != r->self_domid &&
		    teardown_serves(r, job, domains[i].domid))
			d = &domains[i];
	if (!d || d->domid == job->domid || d->domid == r->self_domid)
		return;
	job->stubdom = d->domid;
	memcpy(job->stubdom_uuid, d->uuid, HV_UUID_LEN);
	log_info("domain %u (%s): its stub domain is %u", job->domid, job->name, job->stubdom);
}

void teardown_start_queued(struct reaper *r)
{
	const struct hv_domain *domains = NULL;
	char sentence[320];
	size_t n = 0;
	int rc;

	for (struct job *job = r->jobs; reaper_under_way(r, job) && reaper_may_start(r); job = job->next) {
		if (job->state != JOB_QUEUED)
			continue;
		if (!domains && reaper_domains(r, &domains, &n))
			return;
		rc = intake_guard(r, job, domains, n, sentence, sizeof(sentence));
		/* A guest gone may have left its stub domain, if an earlier
		 * run was cut short between the two. */
		if (!rc || rc == -ESRCH)
			teardown_find_stubdom(r, job, domains, n);
		if (rc == -ESRCH && !teardown_own_stubdom(job, domains, n)) {
			/* A job resumed from an earlier run started then. */
			if (job->started_wall)
				log_info("domain %u (%s) is gone: its teardown, started by an earlier run, ended while xenreaperd was not running",
					 job->domid, job->name);
			else
				log_info("domain %u (%s) vanished before its teardown started", job->domid,
					 job->name);
			teardown_released(r, job);
			continue;
		}
		if (rc && rc != -ESRCH) {
			reaper_fail(r, job, sentence);
			continue;
		}
		/* Before libxl removes them: what the destroy should take away. */
		if (!job->leftovers && (rc = leftovers_snapshot(r->store, job->domid, &job->leftovers)))
			log_warning("domain %u (%s): cannot record all its devices (%s): what its teardown leaves may go unnoticed",
				    job->domid, job->name, strerror(-rc));
		if (!teardown_submit(r, job))
			return;
		r->next_sample_mono = clock_mono_ms() + r->policy->progress_interval_ms;
		reaper_transition(r, job, JOB_DESTROYING);
	}
}

/* Whether JOB waits for another destroy attempt (a zombie, a failed
 * destroy) rather than for its running one. */
static bool teardown_retries(const struct job *job)
{
	return (job->state == JOB_ZOMBIE || job->state == JOB_DESTROYING) && !job->in_runner;
}

void teardown_retry(struct reaper *r, int64_t now)
{
	const struct hv_domain *domains = NULL, *d;
	struct log_fields fields;
	size_t n = 0;

	for (struct job *job = r->jobs; reaper_under_way(r, job); job = job->next) {
		if (!teardown_retries(job) || !backoff_due(&job->retry, now))
			continue;
		if (!domains && reaper_domains(r, &domains, &n))
			return;
		d = teardown_own_domain(job, domains, n);
		if (!d && !teardown_own_stubdom(job, domains, n)) {
			teardown_released(r, job);
			continue;
		}
		if (d && d->dying && job->state == JOB_DESTROYING) {
			teardown_diagnose(r, job, d);
			fields = job_log_fields(job, LOG_EVENT_ZOMBIE);
			fields.state = job_state_name(JOB_ZOMBIE);	/* what it is now */
			log_event(LOG_WARNING, &fields, "domain %u (%s) is a zombie: dead, %s; destroying it again",
				  job->domid, job->name, job->held_by ? job->held_by : "pages still held");
			reaper_transition(r, job, JOB_ZOMBIE);
		}
		/* Settled in its state, the destroy waits for a free slot
		 * (reaper_next_deadline does not wake for it meanwhile: the
		 * end of a running teardown does), and none starts while
		 * stopping. */
		if (r->stopping || !reaper_may_start(r))
			continue;
		if (!d || !d->dying)
			log_info("domain %u (%s): teardown attempt %u of %u", job->domid, job->name,
				 job->destroy_failures + 1, REAPER_DESTROY_ATTEMPTS);
		if (!teardown_submit(r, job))
			return;
		log_debug("domain %u: retry %u", job->domid, job->retry.failures);
	}
}

int64_t teardown_retry_deadline(const struct reaper *r, const struct job *job, int64_t now)
{
	if (!teardown_retries(job))
		return -1;
	/* Due already: only a free slot can take it further, and the end of
	 * a running teardown wakes the loop by itself. */
	if (backoff_due(&job->retry, now) && (r->stopping || !reaper_may_start(r)))
		return -1;
	return job->retry.next_mono;
}

bool teardown_needs_sampling(const struct reaper *r)
{
	return r->in_runner > 0;
}

/* Work out what JOB's destroy, standing still since STILL_SINCE, waits on;
 * true if held-by changed. */
static bool teardown_describe_stuck(struct reaper *r, struct job *job, int64_t now, int64_t still_since)
{
	char *waits_on;
	int rc;

	job->described_mono = now;
	rc = stuck_describe(r->store, job->domid, job->uuid_text, runner_pid(r->runner, job->domid),
			    now - still_since, job->pages_left == 0, &waits_on);
	if (rc) {
		log_warning("domain %u: cannot tell what its teardown waits on: %s", job->domid,
			    strerror(-rc));
		return false;
	}
	return job_set_held_by(job, waits_on);
}

/* JOB's destroy runs: call it stuck once it has stood still for the
 * policy's stuck-after (less while stopping), and say again now and then
 * what it waits on; PAGES_FELL says the latest sample saw pages fall. */
static void teardown_check_stuck(struct reaper *r, struct job *job, int64_t now, bool pages_fell)
{
	int64_t bound = r->policy->stuck_after_ms, still_since = job_still_since(job);
	struct log_fields fields;

	if (job->state == JOB_STUCK) {
		if (pages_fell)
			teardown_unstick(r, job, "releases pages again");
		else if (r->policy->take_back_after_ms && now - still_since >= r->policy->take_back_after_ms)
			teardown_take_back(r, job, "take-back-after");
		else if (now - job->described_mono >= REAPER_STUCK_REFRESH_MS &&
			 teardown_describe_stuck(r, job, now, still_since) &&
			 reaper_publish_job(r, job, false))
			log_warning("domain %u: could not publish held-by; trying again with back-off", job->domid);
		return;
	}
	if (r->stopping && bound > REAPER_STOP_STUCK_MS)
		bound = REAPER_STOP_STUCK_MS;
	if (job->state != JOB_DESTROYING || now - still_since < bound)
		return;
	teardown_describe_stuck(r, job, now, still_since);
	r->n_stuck++;
	fields = job_log_fields(job, LOG_EVENT_STUCK);
	fields.state = job_state_name(JOB_STUCK);	/* what it is now */
	log_event(LOG_WARNING, &fields, "domain %u (%s) is stuck: %s", job->domid, job->name,
		  job->held_by ? job->held_by : "its destroy has not returned");
	reaper_transition(r, job, JOB_STUCK);
	if (r->n_stuck > REAPER_STUCK_SPARE_MAX)
		log_warning("%u teardowns are stuck: this one holds its slot (at most %d give theirs to others)",
			    r->n_stuck, REAPER_STUCK_SPARE_MAX);
}

void teardown_take_back(struct reaper *r, struct job *job, const char *how)
{
	struct log_fields fields;
	int rc;

	if (!job->in_runner || job->taken_back)
		return;
	rc = runner_kill(r->runner, job->domid);
	if (rc) {
		log_warning("domain %u (%s): cannot end its stuck teardown: %s", job->domid, job->name,
			    strerror(-rc));
		return;
	}
	job->taken_back = true;
	fields = job_log_fields(job, LOG_EVENT_NONE);
	log_event(LOG_NOTICE, &fields, "domain %u (%s): its stuck teardown is taken back (%s) after %.1f s: "
		  "its process was ended, and it starts again", job->domid, job->name, how,
		  (clock_mono_ms() - job->submitted_mono) / 1000.0);
}

void teardown_sample(struct reaper *r)
{
	const struct hv_domain *domains, *d;
	int64_t now = clock_mono_ms();
	uint64_t before;
	unsigned unshown;
	bool urgent;
	size_t n;

	if (reaper_domains(r, &domains, &n))
		return;
	for (struct job *job = r->jobs; reaper_under_way(r, job); job = job->next) {
		if (!job->in_runner)
			continue;
		d = teardown_own_domain(job, domains, n);
		before = job->pages_left;
		job_sample(job, now, d ? d->tot_pages : 0);
		/* Published at every sample while a client follows, otherwise
		 * once REAPER_UNFOLLOWED_MS old, and at once what a one-shot
		 * reader must not miss (stalled). */
		unshown = job_progress_unshown(job, &urgent);
		if (unshown && (urgent || reaper_followed(r, now) ||
				now - job->progress_mono >= REAPER_UNFOLLOWED_MS))
			teardown_write_progress(r, job, unshown);
		teardown_check_stuck(r, job, now, job->pages_left < before);
	}
}

void teardown_catch_up(struct reaper *r)
{
	for (struct job *job = r->jobs; reaper_under_way(r, job); job = job->next)
		if (job->in_runner)
			teardown_publish_progress(r, job);
}

void teardown_probe_scrub(struct reaper *r)
{
	int rc;

	for (struct job *job = r->jobs; job; job = job->next)
		job->scrub_reported = job->scrub_tracked;
	rc = scrub_probe(r->scrub, r->jobs);
	if (rc && rc != -ENODATA)
		return;	/* failed: scrub.c logged it and backs off */
	for (struct job *job = r->jobs; job; job = job->next) {
		if (!job->scrub_reported)
			continue;
		teardown_publish_progress(r, job);
		if (job->state != JOB_SCRUBBING || (job->scrub_tracked && job->scrub_pages))
			continue;
		if (rc == -ENODATA)
			log_warning("domain %u (%s): its %u MiB cannot be seen scrubbed (no backlog figure); done",
				    job->domid, job->name, reaper_job_mib(job));
		else
			log_info("domain %u (%s): its %u MiB scrubbed %.1f s after release",
				 job->domid, job->name, reaper_job_mib(job),
				 (clock_mono_ms() - job->released_mono) / 1000.0);
		reaper_transition(r, job, JOB_DONE);
	}
}
