/*
 * reaper-private: what the reaper's own files (reaper.c, intake.c) share and
 * nobody else sees.
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "hv.h"
#include "job.h"
#include "reaper.h"

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


/* Keep JOB at the end of the job list. */
void reaper_append_job(struct reaper *r, struct job *job);
/* Drop JOB from the list and free it. */
void reaper_remove_job(struct reaper *r, struct job *job);
/* Publish JOB's state nodes (or all of them) in one transaction. */
int reaper_publish_job(struct reaper *r, const struct job *job, bool all);
/* Publish daemon/active-jobs if it changed. */
int reaper_publish_active(struct reaper *r);
/* JOB's size in MiB, for log lines. */
unsigned reaper_job_mib(const struct job *job);

/* intake.c */
/* 0 if JOB's domain exists, carries JOB's UUID and may be torn down;
 * -ESRCH if gone; -EPERM with SENTENCE if it must not be. */
int intake_guard(const struct reaper *r, const struct job *job,
		 const struct hv_domain *domains, size_t n, char *sentence, size_t len);
/* Take every pending request in xenstore. */
int intake_requests(struct reaper *r);
/* Turn dead guests whose grace period ended by NOW into jobs. */
int intake_preserved(struct reaper *r, int64_t now);
/* preserved_leave_alone for the reaper CTX: covered by a job, or protected. */
bool intake_leave_alone(void *ctx, uint32_t domid, const uint8_t uuid[HV_UUID_LEN]);
