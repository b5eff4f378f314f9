/*
 * scrub: the scrub backlog, measured on demand and published under
 * /tool/xenreaper/scrub, and each finished job's share of it.
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "hv.h"
#include "job.h"
#include "store.h"

struct scrub;

int scrub_new(struct store *store, struct hv *hv, struct scrub **out);
/* Accepts NULL. */
void scrub_free(struct scrub *sc);
/* Probe with SOURCES (hv_scrub_source bits; 0 = never) at most once per
 * INTERVAL_MS. */
void scrub_configure(struct scrub *sc, unsigned sources, int64_t interval_ms);
/* JOB's teardown released its pages: count them until the backlog drains,
 * and probe soon. */
void scrub_track(struct scrub *sc, struct job *job);
/* JOB is being forgotten: stop counting it. */
void scrub_untrack(struct scrub *sc, struct job *job);
/* Monotonic ms of the next probe (in the past if overdue), or -1 while no
 * probe is wanted. */
int64_t scrub_next_probe(const struct scrub *sc);
/* Probe now and publish; set each tracked job's scrub_pages in JOBS (a
 * list linked by ->next).  *FIGURE says whether a backlog figure exists;
 * without one every job is released from tracking at 0. */
int scrub_probe(struct scrub *sc, struct job *jobs, bool *figure);
/* Publish that no figure is available (scrub-probe = none). */
int scrub_publish_none(struct scrub *sc);
