/*
 * metrics: what xenreaperd knows, as Prometheus metrics in the text format
 * node_exporter's textfile collector reads (see xenreaper-metrics(7)).
 */
#pragma once
#include <stdint.h>

#include "job.h"
#include "memory.h"
#include "scrub.h"

/* Teardown duration histogram buckets, seconds: a small guest to a 1 TB one. */
#define METRICS_DURATION_BUCKETS 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600
/* Least time between two writes of the file. */
#define METRICS_MIN_GAP_MS 1000

struct metrics;

/* START_WALL (ms) is the daemon's start time. */
int metrics_new(int64_t start_wall, struct metrics **out);
/* Accepts NULL. */
void metrics_free(struct metrics *m);
/* Write to PATH (NULL: nothing); POLICY names the policy file in effect. */
int metrics_configure(struct metrics *m, const char *path, const char *policy);
/* JOB became done or failed: count it, and observe its duration. */
void metrics_job_finished(struct metrics *m, const struct job *job);
/* The metrics for JOBS (a list linked by ->next), the scrub figure SCRUB
 * and the memory reading MEM (NULL: none) into *OUT, malloc'd. */
int metrics_render(const struct metrics *m, const struct job *jobs,
		   const struct scrub_snapshot *scrub, const struct memory_snapshot *mem, char **out);
/* Render and, if the text changed and METRICS_MIN_GAP_MS has passed since
 * the last write at monotonic ms NOW, replace the file atomically.  Errors
 * are logged here, once per failure streak. */
void metrics_update(struct metrics *m, const struct job *jobs, const struct scrub_snapshot *scrub,
		    const struct memory_snapshot *mem, int64_t now);
/* Monotonic ms when a change held back by METRICS_MIN_GAP_MS may be
 * written, or -1. */
int64_t metrics_next_deadline(const struct metrics *m);
