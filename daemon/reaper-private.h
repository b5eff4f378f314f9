/*
 * reaper-private: what the reaper's own files (reaper.c, intake.c) share and
 * nobody else sees.
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "backoff.h"
#include "hv.h"
#include "job.h"
#include "reaper.h"

#define REAPER_TX_RETRIES 16

/* Progress and memory figures follow their reader: a client that follows
 * them pings (liveness.c) every 2 s or so, and counts as following for
 * REAPER_FOLLOW_MS after its last ping; while one does, they are published
 * at every sample, otherwise at most REAPER_UNFOLLOWED_MS old (what a
 * plain xenstore-read may see; xenreaper-xenstore(7)).  Each request
 * costs dom0 half a dozen system calls and wakes xenstored. */
#define REAPER_FOLLOW_MS 5000
#define REAPER_UNFOLLOWED_MS 5000

/* The domid index's buckets: at first, and at most (Xen's domids stop
 * below 32752; more jobs than that only lengthen the chains). */
#define REAPER_INDEX_MIN 64
#define REAPER_INDEX_MAX 32768

/* The daemon's own nodes: one whose publish failed is behind, and is
 * published again with the jobs (reaper_republish) until it works. */
enum reaper_node {
	REAPER_NODE_TREE,		/* every one of them, and the directories */
	REAPER_NODE_STATE,
	REAPER_NODE_CONFIG,
	REAPER_NODE_CONFIG_ERROR,
	REAPER_NODE_ACTIVE,
};

struct reaper {
	struct store *store;
	struct hv *hv;
	struct runner *runner;
	const struct config *policy;
	struct scrub *scrub;
	struct preserved *preserved;
	struct orphans *orphans;
	struct memory *memory;
	struct metrics *metrics;
	bool memory_failing;	/* its last update failed (logged once): behind */
	unsigned behind;	/* bit per enum reaper_node: its last publish failed */
	const char *state;	/* what daemon/state is to say */
	/* Every job.  From first_final on, only finished ones (done or
	 * failed, retained), oldest finished first, so that expiry and the
	 * cap take them from the front and the walks of a tick over what is
	 * under way stop there (reaper_under_way).  Before it, in request
	 * order, those under way and those finished since the last
	 * reaper_tick, which moves them (a job never moves while a walk may
	 * hold it). */
	struct job *jobs, *jobs_tail;
	struct job *first_final;
	unsigned n_jobs;
	unsigned n_final;	/* of which done or failed */
	unsigned n_dirty;	/* of which their last publish failed */
	/* The jobs by domid, for reaper_find_job: a request, a domain event
	 * and a teardown's end each look one up, and the list holds up to
	 * REAPER_RETAIN_MAX finished jobs besides those under way. */
	struct job **index;
	unsigned index_size;	/* buckets, a power of two */
	uint32_t self_domid;
	unsigned max_jobs;
	unsigned in_runner;
	unsigned n_stuck;	/* of those, stuck (state stuck) */
	int64_t next_sample_mono;
	int64_t followed_until_mono;	/* a client follows until then */
	int64_t memory_mono;	/* memory/ last brought up to date */
	unsigned published_active;
	bool started;		/* the daemon nodes exist */
	bool stopping;		/* take nothing new, start nothing new */
	bool rescan;		/* a domain event could not be handled yet */
	bool requests_waiting;	/* requests could not be taken yet */
	int64_t started_mono;
	/* This tick's domain list, read once and only if needed. */
	struct hv_domain *domains;
	size_t n_domains;
	bool have_domains;
	struct backoff hv_failing;	/* listing domains or queueing a teardown
					 * failing: hold what needs them */
	struct backoff publish_failing;	/* publishing what is behind failing:
					 * dirty jobs, daemon nodes, memory */
	struct backoff request_failing;	/* taking requests failing */
	char *config_error;		/* published in daemon/config-error */
	/* Done jobs an earlier run left, read after the start
	 * (reaper_load_history): their domids, and how many are left. */
	uint32_t *history;
	unsigned n_history;
};


/* Whether a walk from r->jobs over the jobs under way is still before the
 * finished ones: for (job = r->jobs; reaper_under_way(r, job); ...). */
static inline bool reaper_under_way(const struct reaper *r, const struct job *job)
{
	return job && job != r->first_final;
}
/* Mark JOB's nodes as behind xenstore (DIRTY) or in step with it. */
void reaper_set_dirty(struct reaper *r, struct job *job, bool dirty);
/* Whether a client follows the progress and memory figures at NOW. */
static inline bool reaper_followed(const struct reaper *r, int64_t now)
{
	return now < r->followed_until_mono;
}

/* The domain list for this tick (read at most once per tick); -errno, and
 * back-off for everything that needs it, if it cannot be read. */
int reaper_domains(struct reaper *r, const struct hv_domain **domains, size_t *n);
/* Forget this tick's domain list (the next call reads it again). */
void reaper_forget_domains(struct reaper *r);
/* Keep JOB at the end of the job list. */
void reaper_append_job(struct reaper *r, struct job *job);
/* Drop JOB from the list and free it. */
void reaper_remove_job(struct reaper *r, struct job *job);
/* Publish JOB's state nodes (or all of them) in one transaction; on failure
 * JOB is marked dirty and published again later. */
int reaper_publish_job(struct reaper *r, struct job *job, bool all);
/* Publish daemon/active-jobs if it changed; a failure is logged and
 * retried (reaper_republish). */
int reaper_publish_active(struct reaper *r);
/* JOB's size in MiB, for log lines. */
unsigned reaper_job_mib(const struct job *job);
/* A finished job was added: drop the oldest finished ones beyond
 * REAPER_RETAIN_MAX. */
void reaper_cap_retained(struct reaper *r);
/* JOB just became done or failed (or was refused at once): count it in
 * the metrics and keep the retained jobs within their cap. */
void reaper_job_ended(struct reaper *r, struct job *job);
/* Move JOB to TO (refused moves are logged), log and publish it. */
void reaper_transition(struct reaper *r, struct job *job, enum job_state to);
/* End JOB failed with SENTENCE, log and publish it. */
void reaper_fail(struct reaper *r, struct job *job, const char *sentence);
/* Measure the backlog with which a scrub probe is configured: 0 = never. */
unsigned reaper_scrub_sources(const struct reaper *r);

/* Whether one more destroy may start: fewer than `jobs` running, stuck
 * ones not counted up to REAPER_STUCK_SPARE_MAX. */
bool reaper_may_start(const struct reaper *r);

/* teardown.c: running jobs */
/* Start as many queued jobs as may start, each under the guard. */
void teardown_start_queued(struct reaper *r);
/* Settle the jobs whose retry is due at NOW (zombies, failed destroys):
 * a domain found gone is released, one dead past its settle time called a
 * zombie, and each destroyed again while a slot is free (never while
 * stopping). */
void teardown_retry(struct reaper *r, int64_t now);
/* When JOB's next destroy attempt wants the loop awake at NOW, or -1:
 * never while it is due and no slot is free. */
int64_t teardown_retry_deadline(const struct reaper *r, const struct job *job, int64_t now);
/* Whether a teardown is running, so its progress wants sampling. */
bool teardown_needs_sampling(const struct reaper *r);
/* Read tot_pages of every running teardown and publish what fell. */
void teardown_sample(struct reaper *r);
/* A client started to follow: publish what the last samples found, at
 * once (the sampling keeps its pace). */
void teardown_catch_up(struct reaper *r);
/* Measure the scrub backlog, publish each counted job's share, and finish
 * the sync jobs whose share has drained. */
void teardown_probe_scrub(struct reaper *r);
/* End JOB's stuck teardown (HOW says who asked) so that it starts again,
 * which libxl resumes where the last one stopped. */
void teardown_take_back(struct reaper *r, struct job *job, const char *how);
/* Collect ended teardowns from the runner and settle each. */
void teardown_collect(struct reaper *r);
/* Settle every job not running against DOMAINS (a domain event). */
void teardown_rescan(struct reaper *r, const struct hv_domain *domains, size_t n);

/* intake.c */
/* 0 if JOB's domain exists, carries JOB's UUID and may be torn down;
 * -ESRCH if gone; -EPERM with SENTENCE if it must not be. */
int intake_guard(const struct reaper *r, const struct job *job,
		 const struct hv_domain *domains, size_t n, char *sentence, size_t len);
/* Take every pending request in xenstore. */
int intake_requests(struct reaper *r);
/* Turn dead guests whose grace period ended by NOW into jobs. */
int intake_preserved(struct reaper *r, int64_t now);
/* preserved_leave_alone for the reaper CTX: covered by a job, protected,
 * or its protection cannot be told. */
bool intake_leave_alone(void *ctx, uint32_t domid, const uint8_t uuid[HV_UUID_LEN]);
/* orphans_covered for the reaper CTX: a job (of any state) is this
 * domain's. */
bool intake_covered(void *ctx, uint32_t domid, const uint8_t uuid[HV_UUID_LEN]);
/* Adopt the dead domains left behind long enough by NOW, as the policy
 * allows: zombie jobs with reason orphan. */
int intake_orphans(struct reaper *r, int64_t now);
