/*
 * reaper: the daemon's core.  Turns requests in xenstore (and dead guests a
 * pool's policy tears down) into jobs, starts them on the runner (runner.h) under
 * the UUID guard, samples progress, accounts the scrub backlog, chases
 * zombies, retries what failed with back-off, expires finished jobs, and
 * resumes after a restart.  Driven by the main loop: it never blocks and
 * reads time only through clock.h.
 */
#pragma once
#include <stdint.h>

#include "config.h"
#include "hv.h"
#include "job.h"
#include "store.h"
#include "runner.h"

/* Xen keeps a killed domain, with a page or two, until xenstored and
 * xenconsoled drop their mappings: normally a moment.  Only a dead domain
 * that outlives this is called a zombie.  Zombie retries then back off
 * from 2 s, doubling, to a minute (backoff.h). */
#define REAPER_ZOMBIE_SETTLE_MS 1000
/* A destroy that fails on a live domain is tried this many times, backing
 * off as above, before the job ends failed. */
#define REAPER_DESTROY_ATTEMPTS 10
/* A stuck teardown keeps its process but gives up its slot, so that
 * other teardowns go on, for up to this many stuck at once (each a
 * process waiting inside libxl).  Beyond, stuck ones hold their slots. */
#define REAPER_STUCK_SPARE_MAX 8
/* While stopping, a running destroy standing still this long (or
 * stuck-after, if shorter) is stuck, and the stop no longer waits for it
 * (main.c bounds the whole stop). */
#define REAPER_STOP_STUCK_MS 30000
/* A stuck job's held-by is worked out again this often (the hotplug
 * script's age, a lock that changed hands). */
#define REAPER_STUCK_REFRESH_MS 5000
/* Finished jobs kept in xenstore at most; beyond, the oldest finished go
 * first, whatever their retention. */
#define REAPER_RETAIN_MAX 512
/* Done jobs an earlier run left are read after the start, this many per
 * loop turn, so that neither the start nor a request waits for the history
 * (start-up reads one node of each: its state). */
#define REAPER_HISTORY_BATCH 2

struct reaper;

/* Bind to STORE, HV, POOL and POLICY (all borrowed; POOL runs
 * POLICY->jobs teardowns at once, fixed for the reaper's life). */
int reaper_new(struct store *store, struct hv *hv, struct runner *runner,
	       const struct config *policy, struct reaper **out);
/* Accepts NULL.  Leaves xenstore as it is, so a restart can resume. */
void reaper_free(struct reaper *r);
/* Use POLICY (borrowed) from now on: grace periods already running follow
 * it (or end); jobs keep the policy they started with.  A changed `jobs`
 * waits for a restart. */
void reaper_set_policy(struct reaper *r, const struct config *policy);
/* Publish why the last reload failed (NULL: it did not), as much of it
 * as fits (SENTENCE_MAX); a failed publish is logged and retried with
 * back-off.  -ENOMEM: nothing changed. */
int reaper_set_config_error(struct reaper *r, const char *sentence);
/* Create /tool/xenreaper (dom0 only, every node), publish the daemon
 * nodes, resume the unfinished jobs found there, register the watches and
 * take pending requests; done jobs are read by later ticks. */
int reaper_start(struct reaper *r);
/* Take nothing new from now on (requests wait in xenstore, queued jobs
 * stay queued) and say so in daemon/state; running teardowns go on. */
void reaper_stop(struct reaper *r);
/* Teardowns started on the runner and not yet collected. */
unsigned reaper_busy(const struct reaper *r);
/* What a stop waits for: teardowns running that are not stuck, and
 * those whose destroy returned with the domain not gone yet (for at most
 * REAPER_ZOMBIE_SETTLE_MS, then they are zombies), so that their outcome
 * is published before the daemon exits.  A stuck one is left to resume. */
unsigned reaper_running(const struct reaper *r);
/* Teardowns running that are stuck (a stop does not wait for them). */
unsigned reaper_stuck(const struct reaper *r);
/* Drain xenstore watch events: new requests, domain births and deaths,
 * and our own tree removed from under us (it is put back). */
int reaper_handle_store_events(struct reaper *r);
/* Collect ended teardowns from the runner. */
int reaper_handle_runner(struct reaper *r);
/* Do whatever is due now: start queued jobs, sample, probe the scrub
 * backlog, retry zombies and failed destroys, start automatic teardowns,
 * expire old jobs, publish what could not be published.  Each failure is
 * logged and backed off here; -ENOTCONN if xenstored is gone. */
int reaper_tick(struct reaper *r);
/* Monotonic ms of the next thing due, or -1 if nothing is (then the main
 * loop sleeps until an event). */
int64_t reaper_next_deadline(const struct reaper *r);
/* Jobs not yet done or failed. */
unsigned reaper_active_jobs(const struct reaper *r);
/* Summed progress of running jobs for a status line: percent, 0..100. */
unsigned reaper_progress(const struct reaper *r);
/* Publish the daemon's state node (STATE a literal: "running",
 * "stopped", ...); on failure (returned, for the caller to log) it is
 * retried with back-off. */
int reaper_set_daemon_state(struct reaper *r, const char *state);
/* The job for DOMID, or NULL. */
struct job *reaper_find_job(const struct reaper *r, uint32_t domid);
