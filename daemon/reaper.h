/*
 * reaper: the daemon's core.  Turns requests in xenstore into jobs, starts
 * them on the worker pool under the UUID guard, samples progress, chases
 * zombies, expires finished jobs, and resumes after a restart.  Driven by
 * the main loop: it never blocks and never reads the clock but via clock.h.
 */
#pragma once
#include <stdint.h>

#include "hv.h"
#include "job.h"
#include "store.h"
#include "worker.h"

struct reaper_config {
	unsigned max_jobs;		/* teardowns at once */
	int64_t retention_ms;		/* finished jobs stay readable this long */
	int64_t sample_ms;		/* pages-left sampling interval */
	int64_t zombie_retry_min_ms;	/* first zombie retry; doubles each time */
	int64_t zombie_retry_max_ms;
};

/* The defaults: 1 job, 10 min retention, 250 ms sampling, 1 s..60 s retries. */
void reaper_config_default(struct reaper_config *cfg);

struct reaper;

/* Bind to STORE, HV and POOL (all borrowed). */
int reaper_new(struct store *store, struct hv *hv, struct worker_pool *pool,
	       const struct reaper_config *cfg, struct reaper **out);
/* Accepts NULL.  Leaves xenstore as it is, so a restart can resume. */
void reaper_free(struct reaper *r);
/* Create /tool/xenreaper (dom0 only), publish the daemon nodes, resume the
 * jobs found there, register the watches and take pending requests. */
int reaper_start(struct reaper *r);
/* Drain xenstore watch events: new requests, domain births and deaths. */
int reaper_handle_store_events(struct reaper *r);
/* Collect finished teardowns from the worker pool. */
int reaper_handle_workers(struct reaper *r);
/* Do whatever is due now: start queued jobs, sample, retry, expire. */
int reaper_tick(struct reaper *r);
/* Monotonic ms of the next thing due, or -1 if nothing is (then the main
 * loop sleeps until an event). */
int64_t reaper_next_deadline(const struct reaper *r);
/* Jobs not yet done or failed. */
unsigned reaper_active_jobs(const struct reaper *r);
/* Publish the daemon's state node ("running", "stopping", ...). */
int reaper_set_daemon_state(struct reaper *r, const char *state);
/* The job for DOMID, or NULL. */
struct job *reaper_find_job(const struct reaper *r, uint32_t domid);
