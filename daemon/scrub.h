/*
 * scrub: the scrub backlog, measured on demand and published under
 * /tool/xenreaper/scrub, and each finished job's share of it.
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "backoff.h"
#include "hv.h"
#include "job.h"
#include "store.h"

/* With a sync job waiting, the longest gap between two probes. */
#define SCRUB_SYNC_MAX_GAP_MS (30 * 1000)
/* With only deferred jobs counted: probe once releases have stopped for
 * this long, */
#define SCRUB_DEFERRED_SETTLE_MS (5 * 1000)
/* but no later than this after the first release not yet measured, */
#define SCRUB_DEFERRED_MAX_DELAY_MS (60 * 1000)
/* and never twice within this. */
#define SCRUB_DEFERRED_MIN_GAP_MS (60 * 1000)
/* Cheap probes with a sync job waiting: at half the predicted time left,
 * yet no more often than every EVERY_MS / this, */
#define SCRUB_EXACT_MIN_GAP_DIV 10
/* and, before any rate is learnt, the second reading at EVERY_MS / this. */
#define SCRUB_EXACT_LEARN_DIV 4
/* Probes failing for this long: give up, as with scrub-probe = none, */
#define SCRUB_GIVE_UP_MS (30 * 1000)
/* and do not try again for this long. */
#define SCRUB_BROKEN_MS (10 * 60 * 1000)

struct scrub;

int scrub_new(struct store *store, struct hv *hv, struct scrub **out);
/* Accepts NULL. */
void scrub_free(struct scrub *sc);
/* Probe with SOURCES (hv_scrub_source bits; 0 = never), with sync jobs
 * waiting at most once per INTERVAL_MS; with EVERY_MS (> 0: probes cost
 * next to nothing), every EVERY_MS while any job is counted instead, and
 * sooner at the predicted drain while a sync job waits. */
void scrub_configure(struct scrub *sc, unsigned sources, int64_t interval_ms, int64_t every_ms);
/* JOB's teardown released its pages: count them until the backlog drains.
 * False if they cannot be measured (no source, or probes keep failing):
 * then the job is not counted. */
bool scrub_track(struct scrub *sc, struct job *job);
/* JOB is being forgotten: stop counting it. */
void scrub_untrack(struct scrub *sc, struct job *job);
/* Monotonic ms of the next probe (in the past if overdue), or -1 while no
 * probe is wanted. */
int64_t scrub_next_probe(const struct scrub *sc);
/* Probe now and publish; set each counted job's scrub_pages in JOBS (a
 * list linked by ->next) and stop counting them all once the backlog is 0.
 * -ENODATA when there is no figure to be had (none configured, or probes
 * failed for SCRUB_GIVE_UP_MS): every job is released from counting at 0.
 * Another error is a failed probe, tried again later; jobs stay counted. */
int scrub_probe(struct scrub *sc, struct job *jobs);
/* The last figure, as published under /tool/xenreaper/scrub. */
struct scrub_snapshot {
	bool have_figure;
	const char *source;		/* "heap-dump", "physinfo" or "none" */
	uint64_t pages;
	unsigned n_nodes;
	uint64_t node_pages[HV_SCRUB_MAX_NODES];
	/* Seconds until the backlog is scrubbed, as of the probe, at the rate
	 * learnt for the host (drain_s) and for each node; -1 while no rate
	 * is known, 0 for an empty backlog. */
	double drain_s;
	double node_drain_s[HV_SCRUB_MAX_NODES];
	int64_t probed_wall;		/* ms; 0: never */
};

/* The last figure measured (OUT->have_figure false when there is none). */
void scrub_snapshot(const struct scrub *sc, struct scrub_snapshot *out);
/* The last backlog measured, in pages; -ENODATA when there is none. */
int scrub_backlog(const struct scrub *sc, uint64_t *pages);
/* Jobs whose released pages are counted (may still await scrubbing). */
unsigned scrub_counted(const struct scrub *sc);
/* Probes that produced a figure, and that failed, since the start. */
void scrub_counts(const struct scrub *sc, unsigned *probes, unsigned *failures);
/* Publish that no figure is available (scrub-probe = none). */
int scrub_publish_none(struct scrub *sc);
