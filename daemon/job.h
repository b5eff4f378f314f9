/*
 * job: one domain's teardown, its state machine and its xenstore nodes.
 * A new job is queued at priority low, the default policy's.
 *
 *   queued -> destroying -> done
 *                        -> zombie -> done
 *                        -> scrubbing -> done      (sync scrub policy)
 *                        -> stuck -> destroying, or wherever destroying goes
 *   any active state -> failed;  destroying/zombie/stuck -> queued (resume)
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "backoff.h"
#include "hv.h"
#include "log.h"
#include "rate.h"
#include "store.h"

enum job_state {
	JOB_QUEUED,
	JOB_DESTROYING,
	JOB_ZOMBIE,
	JOB_SCRUBBING,
	JOB_DONE,
	JOB_FAILED,
	JOB_STUCK,	/* last, so the others keep their numbers */
};

enum job_reason {
	JOB_REASON_REQUEST,
	JOB_REASON_POWEROFF,
	JOB_REASON_CRASH,
	JOB_REASON_ORPHAN,	/* a dead domain another toolstack left behind */
};

enum job_policy {
	JOB_POLICY_DEFERRED,
	JOB_POLICY_SYNC,
};

/* dom0 CPU priority of the process that runs the teardown, and its children. */
enum job_priority {
	JOB_PRIORITY_IDLE,	/* SCHED_IDLE: only when dom0 has nothing else */
	JOB_PRIORITY_LOW,	/* nice 10 */
	JOB_PRIORITY_NORMAL,	/* nice 0 */
};

/* The nodes a publish may write again and again, each remembered as last
 * committed so that it is written only when it changes. */
enum job_node {
	JOB_NODE_STATE, JOB_NODE_ERROR, JOB_NODE_HELD_BY, JOB_NODE_STARTED, JOB_NODE_FINISHED,
	JOB_NODE_PAGES_LEFT, JOB_NODE_PROGRESS, JOB_NODE_SCRUB_PAGES, JOB_NODE_RATE, JOB_NODE_ETA,
	JOB_NODE_LAST_RELEASE, JOB_NODE_COUNT
};
struct job_shown;

struct job {
	struct job *next, *prev;	/* the reaper's list, in request order */
	struct job *index_next;		/* the reaper's chain of its domid's bucket */
	uint32_t domid;
	uint8_t uuid[HV_UUID_LEN];
	char uuid_text[HV_UUID_STR_LEN];
	char *name;
	char *pool;
	char *error;
	char *held_by;		/* a zombie: what may still hold its pages;
				 * stuck: what its destroy waits on */
	struct leftovers *leftovers;	/* its devices before the destroy (leftovers.h) */
	uint32_t stubdom;		/* its stub domain, 0: none seen (teardown.c) */
	uint8_t stubdom_uuid[HV_UUID_LEN];
	enum job_state state;
	enum job_reason reason;
	enum job_policy policy;
	enum job_priority priority;
	bool in_runner;		/* a destroy for it runs (on the runner) */
	bool taken_back;	/* that destroy was ended, to start it again */
	bool scrub_tracked;	/* its released pages may still await scrubbing */
	bool scrub_reported;	/* was tracked before the latest probe */
	bool dirty;		/* its nodes in xenstore are behind: publish again */
	bool settling;		/* destroying: the destroy got through, the domain
				 * has until retry.next_mono to go */
	uint64_t pages_total;
	uint64_t pages_left;
	uint64_t scrub_pages;	/* released pages still awaiting scrub */
	struct rate rate;	/* recent samples of pages_left */
	uint64_t pages_at_start;	/* pages_left when this run of the teardown began */
	char rate_text[16];	/* MiB/s as published, "" while unknown */
	char eta_text[24];	/* seconds left, "stalled", or "" */
	int64_t requested_wall, started_wall, finished_wall;	/* ms, 0 = not yet */
	int64_t started_mono, finished_mono;
	struct backoff retry;	/* next destroy attempt (zombie, failed destroy),
				 * or next removal of an expired record */
	int64_t released_mono;	/* when its pages came back (scrub timing) */
	unsigned destroy_failures;	/* destroys that failed on a live domain */
	int64_t fell_mono, fell_wall;	/* when pages_left last went down; 0: not
					 * since the job was made or resumed */
	uint64_t pool_pages;	/* its paging pool, as memory.c last read it */
	bool pool_read;		/* pool_pages has been read */
	bool pool_none;		/* Xen keeps no pool for it (PV): never read again */
	int64_t submitted_mono;	/* when its running destroy was started */
	int64_t described_mono;	/* stuck: when held-by was last worked out */
	int64_t progress_mono;	/* when its progress nodes were last brought up to date */
	struct job_shown *shown;	/* what xenstore holds, as far as known */
};

/* A new queued job for DOMID/UUID; NAME and POOL may be NULL. */
int job_new(uint32_t domid, const uint8_t uuid[HV_UUID_LEN], const char *name,
	    const char *pool, struct job **out);
/* Accepts NULL. */
void job_free(struct job *job);

const char *job_state_name(enum job_state state);
int job_state_parse(const char *name, enum job_state *state);
const char *job_reason_name(enum job_reason reason);
int job_reason_parse(const char *name, enum job_reason *reason);
const char *job_policy_name(enum job_policy policy);
int job_policy_parse(const char *name, enum job_policy *policy);
const char *job_priority_name(enum job_priority priority);
int job_priority_parse(const char *name, enum job_priority *priority);
/* done or failed: nothing more will happen to it. */
bool job_state_is_final(enum job_state state);
/* Move to TO; -EINVAL (and no change) if the machine above forbids it.
 * Stamps started/finished times. */
int job_set_state(struct job *job, enum job_state to);
/* Record a failure: state failed, with a human sentence. */
int job_fail(struct job *job, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Set (or with NULL FMT clear) the sentence saying what is wrong while the
 * job goes on (a destroy to be retried); a final state keeps its own. */
int job_set_error(struct job *job, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Say what holds a zombie, or what a stuck destroy waits on (HELD_BY,
 * malloc'd, taken over; NULL clears); true if it changed. */
bool job_set_held_by(struct job *job, char *held_by);
/* Lower pages-left to PAGES; never raises it (progress is monotonic).
 * Returns true if it changed, and then stamps fell_mono/fell_wall. */
bool job_set_pages_left(struct job *job, uint64_t pages);
/* A progress sample at monotonic ms NOW: the domain holds PAGES.  Lowers
 * pages-left and works out rate and time left (job_progress_unshown says
 * what of it xenstore does not show yet). */
void job_sample(struct job *job, int64_t now, uint64_t pages);
/* Release rate over the whole run, in MiB/s, once the pages are back at
 * RELEASED_MONO; 0 if it cannot be told. */
double job_mib_per_s(const struct job *job, int64_t released_mono);
/* Monotonic ms since which a running destroy of JOB has shown no
 * progress: its start on the runner, or the last fall of its pages. */
int64_t job_still_since(const struct job *job);
/* Percent of pages released, 0..100. */
unsigned job_progress(const struct job *job);
/* A zombie's, a stuck teardown's or an orphan's pages may never come
 * back: they count as coming back only while they still fall
 * (last-release). */
bool job_may_keep_pages(const struct job *job);
/* Whether JOB's pages count as coming back at monotonic ms NOW: always,
 * unless job_may_keep_pages, then only within XENREAPER_FALLING_MS of the
 * last fall the daemon saw. */
bool job_pages_coming_back(const struct job *job, int64_t now);
/* The journal fields of EVENT for JOB: its domain, state, reason,
 * held-by, error and rate as they are now (pointers into JOB). */
struct log_fields job_log_fields(const struct job *job, enum log_event event);

/* Replace JOB's directory: remove it, then write every node JOB has. */
int job_publish(struct job *job, struct store *s, store_tx tx);
/* Write just state, error, held-by and times (cheap, on transitions),
 * those that changed. */
int job_publish_state(struct job *job, struct store *s, store_tx tx);
/* Write just pages-left, progress, scrub-pages, rate, eta and, for a job
 * whose pages may not come back, last-release (cheap, on samples), those
 * that changed. */
int job_publish_progress(struct job *job, struct store *s, store_tx tx);
/* How many of those nodes xenstore does not hold as JOB has them now;
 * *URGENT: whether a one-shot reader must see the change at once (eta
 * became or stopped being stalled, or is not known to be shown). */
unsigned job_progress_unshown(const struct job *job, bool *urgent);
/* Forget what JOB's nodes hold: its next publish writes them all.  For a
 * transaction that failed or was aborted (its writes may not have
 * happened), and before a publish that must rewrite everything. */
void job_shown_forget(struct job *job);
/* Rebuild a job from its nodes after a restart: -EINVAL if they make no
 * sense, another -errno if they cannot be read now.  A record with no
 * priority node (an older xenreaperd's) gets low, the default policy's. */
int job_load(struct store *s, store_tx tx, uint32_t domid, struct job **out);
