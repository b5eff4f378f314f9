/*
 * intake: how work reaches the reaper.  A request in xenstore, or a dead
 * guest whose pool tears it down, becomes a job only through
 * intake_job_for_domain(), which captures the pool's policy and runs the
 * UUID guard: the hypervisor's own UUID for the domid must be the one the
 * request named, and the domain must be neither dom0, the daemon's own,
 * nor protected.  A request is consumed in the same transaction that
 * creates its job, so a crash can neither lose nor duplicate it.  It does
 * not run or schedule jobs (reaper.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "layout.h"
#include "log.h"
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

/* A new job for DOMID/UUID, checked against DOMAINS: queued with its pool's
 * policy, or failed with the reason it may not run. */
static int intake_job_for_domain(struct reaper *r, uint32_t domid, const uint8_t uuid[HV_UUID_LEN],
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
	rc = intake_guard(r, job, domains, n, sentence, sizeof(sentence));
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
static int intake_job_from_request(struct reaper *r, const char *name, const char *value,
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
	return intake_job_for_domain(r, domid, uuid, JOB_REASON_REQUEST, domains, n, out);
}

/* JOB was just created: keep it, replacing a finished job for its domid. */
static void intake_adopt(struct reaper *r, struct job *job)
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
			 job->name, reaper_job_mib(job), job->pool, job_reason_name(job->reason),
			 job_policy_name(job->policy));
	reaper_publish_active(r);
}

/* Take one request: in one transaction, create its job and remove it. */
static int intake_take_request(struct reaper *r, const char *name,
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
		rc = intake_job_from_request(r, name, value, domains, n, &job);
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
		intake_adopt(r, job);
		job = NULL;
	}
out:
	job_free(job);
	free(value);
	return rc;
}

int intake_requests(struct reaper *r)
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
		rc = intake_take_request(r, names[i], domains, n);
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
bool intake_leave_alone(void *ctx, uint32_t domid, const uint8_t uuid[HV_UUID_LEN])
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
int intake_preserved(struct reaper *r, int64_t now)
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
			rc = intake_job_for_domain(r, due.domid, due.uuid, due.reason, domains, n, &job);
		free(due.pool);
		if (rc)
			break;
		if (job->state == JOB_FAILED && !hv_find(domains, n, due.domid)) {
			job_free(job);	/* it went away by itself during the grace period */
			continue;
		}
		rc = reaper_publish_job(r, job, true);
		if (rc) {
			job_free(job);
			break;
		}
		intake_adopt(r, job);
	}
	free(domains);
	return rc;
}
