/*
 * intake: how work reaches the reaper.  A request in xenstore, or a dead
 * guest whose pool tears it down, becomes a job only through
 * intake_job_for_domain(), which captures the pool's policy and runs the
 * UUID guard: the hypervisor's own UUID for the domid must be the one the
 * request named, and the domain must be neither dom0, the daemon's own,
 * nor protected.  Protection fails closed: a domain whose name or cpupool
 * cannot be read is not torn down, and the job says why.  A request is
 * consumed in the same transaction that creates its job, so a crash can
 * neither lose nor duplicate it; a job that is not final is never
 * replaced.  It does not run or schedule jobs (teardown.c, reaper.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "holders.h"
#include "layout.h"
#include "log.h"
#include "orphans.h"
#include "preserved.h"
#include "reaper-private.h"

/*
 * The UUID guard: 0 if DOMID exists, still carries JOB's UUID and may be
 * torn down; -ESRCH if it is gone; -EPERM (with SENTENCE) if it must not be.
 */
int intake_guard(const struct reaper *r, const struct job *job,
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

/* DOMID's name from xenstore into *NAME (NULL if it has none), or a
 * SENTENCE and -EPERM when it cannot be read and protect names guests:
 * then nobody can tell whether the domain is protected. */
static int intake_domain_name(const struct reaper *r, uint32_t domid, char **name,
			      char *sentence, size_t len)
{
	char path[LAYOUT_PATH_LEN];
	int rc;

	snprintf(path, sizeof(path), "/local/domain/%u/name", domid);
	rc = store_read(r->store, STORE_TX_NONE, path, name);
	if (!rc)
		return 0;
	*name = NULL;
	if (rc == -ENOENT && !config_protects_names(r->policy))
		return 0;
	snprintf(sentence, len,
		 "cannot read %s (%s), so whether the domain is protected by name cannot be told; nothing was destroyed",
		 path, strerror(-rc));
	return -EPERM;
}

/* A new job for DOMID/UUID, checked against DOMAINS: queued with its pool's
 * policy, or failed with the reason it may not run. */
static int intake_job_for_domain(struct reaper *r, uint32_t domid, const uint8_t uuid[HV_UUID_LEN],
				 enum job_reason reason, const struct hv_domain *domains,
				 size_t n, struct job **out)
{
	char sentence[320], *guest_name = NULL, *pool_name = NULL;
	const struct hv_domain *d = hv_find(domains, n, domid);
	const struct config_pool *pool;
	int refused = 0, rc;
	struct job *job;

	if (d) {
		refused = intake_domain_name(r, domid, &guest_name, sentence, sizeof(sentence));
		if (!refused && hv_pool_name(r->hv, d->cpupool, &pool_name)) {
			pool_name = NULL;
			snprintf(sentence, sizeof(sentence),
				 "cannot tell which cpupool domain %u is in (pool id %u has no name), so its policy is unknown; nothing was destroyed",
				 domid, d->cpupool);
			refused = -EPERM;
		}
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
	if (!refused)
		refused = intake_guard(r, job, domains, n, sentence, sizeof(sentence));
	if (refused == -ESRCH)
		job_fail(job, "no domain %u exists (it is already gone or never existed); nothing was destroyed",
			 domid);
	else if (refused)
		job_fail(job, "%s", sentence);
	else
		job->pages_total = job->pages_left = d->tot_pages;
	*out = job;
	return 0;
}

/* A job for request DOMID = VALUE; *OUT is NULL when the request is to be
 * dropped without one. */
static int intake_job_from_request(struct reaper *r, uint32_t domid, const char *value,
				   const struct hv_domain *domains, size_t n, struct job **out)
{
	static const uint8_t no_uuid[HV_UUID_LEN];
	char quoted[LOG_QUOTE_LEN];
	uint8_t uuid[HV_UUID_LEN];
	struct job *existing;
	int rc;

	*out = NULL;
	existing = reaper_find_job(r, domid);
	if (existing && !job_state_is_final(existing->state)) {
		if (existing->state == JOB_STUCK && !hv_uuid_parse(value, uuid) &&
		    !memcmp(uuid, existing->uuid, HV_UUID_LEN))
			teardown_take_back(r, existing, "asked again");
		else if (hv_uuid_parse(value, uuid) || memcmp(uuid, existing->uuid, HV_UUID_LEN))
			log_warning("request for domain %u (UUID '%s') dropped: a job for UUID %s is already %s",
				    domid, log_quote(value, quoted), existing->uuid_text,
				    job_state_name(existing->state));
		else
			log_debug("duplicate request for domain %u dropped", domid);
		return 0;
	}
	if (hv_uuid_parse(value, uuid)) {
		rc = job_new(domid, no_uuid, NULL, NULL, out);
		if (rc)
			return rc;
		job_fail(*out, "request value '%s' is not a UUID: write the domain's UUID "
			 "(as `xl list -v` shows it) to " LAYOUT_REQUEST_DIR "/%u",
			 log_quote(value, quoted), domid);
		return 0;
	}
	return intake_job_for_domain(r, domid, uuid, JOB_REASON_REQUEST, domains, n, out);
}

/* JOB was just created: keep it, replacing a finished job for its domid.
 * A job still under way is never replaced: -EEXIST, JOB not kept. */
static int intake_adopt(struct reaper *r, struct job *job)
{
	struct job *old = reaper_find_job(r, job->domid);
	struct log_fields fields;

	if (old && !job_state_is_final(old->state)) {
		log_err("domain %u: a new %s job would replace one still %s; kept the old one",
			job->domid, job_reason_name(job->reason), job_state_name(old->state));
		return -EEXIST;
	}
	if (old)
		reaper_remove_job(r, old);
	reaper_append_job(r, job);
	if (job->state == JOB_FAILED) {
		fields = job_log_fields(job, LOG_EVENT_FAILED);
		log_event(LOG_WARNING, &fields, "domain %u: %s refused: %s", job->domid,
			  job_reason_name(job->reason), job->error);
		reaper_job_ended(r, job);
	} else if (job->state == JOB_QUEUED) {
		fields = job_log_fields(job, LOG_EVENT_ACCEPTED);
		log_event(LOG_INFO, &fields, "domain %u (%s, %u MiB, pool %s, %s, scrub %s, priority %s): queued",
			  job->domid, job->name, reaper_job_mib(job), job->pool,
			  job_reason_name(job->reason), job_policy_name(job->policy),
			  job_priority_name(job->priority));
	}
	reaper_publish_active(r);
	return 0;
}

/* A request node whose name is no domid: removed, whatever its length,
 * and logged with its name made safe to print. */
static void intake_drop_stray(struct reaper *r, const char *name)
{
	char quoted[LOG_QUOTE_LEN], *path;
	int rc;

	log_warning("request '%s' dropped: its name must be a domid (0..%u) and its value the domain's UUID",
		    log_quote(name, quoted), LAYOUT_DOMID_MAX);
	if (asprintf(&path, LAYOUT_REQUEST_DIR "/%s", name) < 0) {
		log_err("out of memory removing a stray request");
		return;
	}
	rc = store_rm(r->store, STORE_TX_NONE, path);
	if (rc)
		log_warning("request '%s': could not remove it: %s", quoted, strerror(-rc));
	free(path);
}

/* Take one request: in one transaction, create its job and remove it. */
static int intake_take_request(struct reaper *r, uint32_t domid,
			       const struct hv_domain *domains, size_t n)
{
	char path[LAYOUT_PATH_LEN];
	struct job *job = NULL;
	char *value = NULL;
	store_tx tx;
	int rc = -EAGAIN;

	layout_request_path(path, domid);
	for (int attempt = 0; attempt < REAPER_TX_RETRIES; attempt++) {
		rc = store_tx_start(r->store, &tx);
		if (rc)
			goto out;
		rc = store_read(r->store, tx, path, &value);
		if (rc) {
			store_tx_end(r->store, tx, true);
			if (rc == -ENOENT)
				rc = 0;	/* taken meanwhile */
			goto out;
		}
		rc = intake_job_from_request(r, domid, value, domains, n, &job);
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
	if (!rc && job && intake_adopt(r, job) == 0)
		job = NULL;
out:
	job_free(job);
	free(value);
	return rc;
}

int intake_requests(struct reaper *r)
{
	const struct hv_domain *domains = NULL;
	char **names = NULL;
	unsigned n_names = 0;
	uint32_t domid;
	size_t n = 0;
	int rc;

	r->requests_waiting = false;
	rc = store_list(r->store, STORE_TX_NONE, LAYOUT_REQUEST_DIR, &names, &n_names);
	if (rc == -ENOENT || (!rc && n_names == 0))
		goto out_ok;
	if (rc)
		goto out;
	for (unsigned i = 0; i < n_names; i++) {
		if (layout_parse_domid(names[i], &domid)) {
			intake_drop_stray(r, names[i]);
			continue;
		}
		if (!domains) {
			/* Held while listing fails: requests wait in xenstore. */
			rc = reaper_domains(r, &domains, &n);
			if (rc) {
				r->requests_waiting = true;	/* the tick tries again */
				goto out;
			}
		}
		rc = intake_take_request(r, domid, domains, n);
		if (rc) {
			log_err("request %u: %s (left in place, tried again with back-off)",
				domid, strerror(-rc));
			r->requests_waiting = true;
		}
	}
out_ok:
	rc = 0;
out:
	if (rc && rc != -EAGAIN)
		r->requests_waiting = true;
	store_names_free(names, n_names);
	return rc;
}

/* A dead guest already covered by a job, or protected, or whose protection
 * cannot be told, is not ours to tear down automatically (a failed
 * "protected" job every retention period would only be noise). */
bool intake_leave_alone(void *ctx, uint32_t domid, const uint8_t uuid[HV_UUID_LEN])
{
	struct reaper *r = ctx;
	const struct job *job = reaper_find_job(r, domid);
	char uuid_text[HV_UUID_STR_LEN], sentence[320], *name;
	bool protected;

	if (job && !memcmp(job->uuid, uuid, HV_UUID_LEN))
		return true;
	if (intake_domain_name(r, domid, &name, sentence, sizeof(sentence))) {
		log_warning("domain %u is dead but not torn down automatically: %s", domid, sentence);
		return true;
	}
	hv_uuid_format(uuid, uuid_text);
	protected = config_is_protected(r->policy, name, uuid_text);
	free(name);
	return protected;
}

/* Dead guests whose grace period ended become jobs, like requests. */
int intake_preserved(struct reaper *r, int64_t now)
{
	const struct hv_domain *domains;
	struct preserved_due due;
	struct job *job, *existing;
	size_t n;
	int rc;

	if (preserved_next_deadline(r->preserved) < 0 || preserved_next_deadline(r->preserved) > now)
		return 0;
	rc = reaper_domains(r, &domains, &n);	/* before taking any: none is lost */
	if (rc)
		return rc;
	while (preserved_take_due(r->preserved, now, &due) == 0) {
		existing = reaper_find_job(r, due.domid);
		if (existing && !job_state_is_final(existing->state)) {
			log_info("domain %u: its grace period ended, and it is already %s by a %s job",
				 due.domid, job_state_name(existing->state),
				 job_reason_name(existing->reason));
			free(due.pool);
			continue;
		}
		rc = intake_job_for_domain(r, due.domid, due.uuid, due.reason, domains, n, &job);
		free(due.pool);
		if (rc)
			return rc;
		if (job->state == JOB_FAILED && !hv_find(domains, n, due.domid)) {
			job_free(job);	/* it went away by itself during the grace period */
			continue;
		}
		rc = reaper_publish_job(r, job, true);
		if (rc)
			log_warning("domain %u: could not publish its new job: %s; trying again with back-off",
				    job->domid, strerror(-rc));
		if (intake_adopt(r, job))
			job_free(job);
	}
	return 0;
}

bool intake_covered(void *ctx, uint32_t domid, const uint8_t uuid[HV_UUID_LEN])
{
	const struct job *job = reaper_find_job(ctx, domid);

	return job && !memcmp(job->uuid, uuid, HV_UUID_LEN);
}

/* Whether the dead domain DUE may be adopted: its pool's policy says so,
 * and it is certainly not protected.  Each refusal is logged once (the
 * domain is not offered again); -EAGAIN to ask again later. */
static int intake_may_adopt(struct reaper *r, const struct orphan_due *due, const char *pool_name,
			    const char *name, bool uncertain)
{
	char uuid_text[HV_UUID_STR_LEN];

	hv_uuid_format(due->uuid, uuid_text);
	if (!config_pool_tears_down(config_pool_for(r->policy, pool_name), JOB_REASON_ORPHAN)) {
		log_info("domain %u (%s, %s) is dead and left behind in pool %s, whose policy is orphans = ignore",
			 due->domid, name ? name : "name unknown", uuid_text, pool_name);
		return -EPERM;
	}
	if (config_is_protected(r->policy, name, uuid_text)) {
		log_notice("domain %u (%s, %s) is dead and left behind, and protected: not adopting it",
			   due->domid, name ? name : "name unknown", uuid_text);
		return -EPERM;
	}
	if (name && uncertain && config_protects_names(r->policy)) {
		log_notice("domain %u (%s) is dead and left behind, but it was renamed from %s just before it died, to a name never seen, so whether it is protected cannot be told: not adopting it",
			   due->domid, uuid_text, name);
		return -EPERM;
	}
	if (!name && config_protects_names(r->policy)) {
		log_notice("domain %u (%s) is dead and left behind, but its name is unknown, so whether it is protected cannot be told: not adopting it",
			   due->domid, uuid_text);
		return -EPERM;
	}
	return 0;
}

/* Adopt DUE: a zombie job with reason orphan, destroyed again at once. */
static int intake_adopt_orphan(struct reaper *r, const struct orphan_due *due)
{
	char *pool_name = NULL, *name = NULL, *held_by = NULL, path[LAYOUT_PATH_LEN];
	const struct config_pool *pool;
	struct log_fields fields;
	struct job *job = NULL;
	bool uncertain = false;
	int rc;

	if (hv_pool_name(r->hv, due->cpupool, &pool_name)) {
		log_warning("domain %u is dead and left behind in cpupool %u, whose name cannot be read: trying again later",
			    due->domid, due->cpupool);
		orphans_defer(r->orphans, due->domid, due->uuid);
		return 0;
	}
	/* Its node, if the toolstack left it, names it now; else the name it
	 * had when it died, as followed by orphans.c. */
	snprintf(path, sizeof(path), "/local/domain/%u/name", due->domid);
	if (store_read(r->store, STORE_TX_NONE, path, &name)) {
		name = due->name ? strdup(due->name) : NULL;
		uncertain = due->name_uncertain;
	}
	rc = intake_may_adopt(r, due, pool_name, name, uncertain);
	if (rc) {
		rc = 0;
		goto out;
	}
	rc = job_new(due->domid, due->uuid, name, pool_name, &job);
	if (rc)
		goto out;
	pool = config_pool_for(r->policy, pool_name);
	job->reason = JOB_REASON_ORPHAN;
	job->policy = pool->scrub;
	job->priority = (enum job_priority)pool->priority;
	job->pages_total = job->pages_left = job->pages_at_start = due->pages;
	/* Adopted as it is: dead, held.  Its "teardown" is destroying it again
	 * (a no-op or a resumption on a dead domain), due at once. */
	job->state = JOB_ZOMBIE;
	job->started_wall = clock_wall_ms();
	job->started_mono = clock_mono_ms();
	if (!holders_describe(r->store, due->domid, due->pages, &held_by))
		job_set_held_by(job, held_by);
	fields = job_log_fields(job, LOG_EVENT_ORPHAN);
	log_event(LOG_WARNING, &fields, "domain %u (%s, pool %s) is dead and was left behind, %s: adopted as an orphan",
		  due->domid, job->name[0] ? job->name : "name unknown", job->pool,
		  job->held_by ? job->held_by : "pages still held");
	rc = reaper_publish_job(r, job, true);
	if (rc)
		log_warning("domain %u: could not publish its job: %s; trying again with back-off",
			    due->domid, strerror(-rc));
	rc = 0;
	if (intake_adopt(r, job) == 0)
		job = NULL;
out:
	job_free(job);
	free(name);
	free(pool_name);
	return rc;
}

int intake_orphans(struct reaper *r, int64_t now)
{
	const struct hv_domain *domains;
	struct orphan_due due;
	size_t n;
	int rc;

	if (orphans_next_deadline(r->orphans) < 0 || orphans_next_deadline(r->orphans) > now)
		return 0;
	/* Look again: a page count that moved since means someone's teardown
	 * is still going. */
	rc = reaper_domains(r, &domains, &n);
	if (!rc)
		rc = orphans_scan(r->orphans, domains, n, r->self_domid, intake_covered, r);
	while (!rc && orphans_take_due(r->orphans, now, &due) == 0) {
		rc = intake_adopt_orphan(r, &due);
		free(due.name);
	}
	return rc;
}
