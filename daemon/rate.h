/*
 * rate: how fast a teardown releases pages, from its recent samples, and
 * the time left at that pace, as Xen's migration reports say it.
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#define RATE_SAMPLES 8
/* Samples older than this do not count towards the rate. */
#define RATE_WINDOW_MS 3000
/* No page released for this long: the teardown is stalled. */
#define RATE_STALL_MS 5000

struct rate {
	int64_t mono[RATE_SAMPLES];
	uint64_t pages[RATE_SAMPLES];
	unsigned n, head;		/* samples held; where the next goes */
	int64_t last_progress_mono;	/* when pages last fell; 0: never */
};

/* Forget every sample (a job resumed after a restart starts afresh). */
void rate_reset(struct rate *r);
/* PAGES held at monotonic ms NOW. */
void rate_add(struct rate *r, int64_t now, uint64_t pages);
/* Pages released per second over the recent window at NOW; -ENODATA
 * before two samples. */
int rate_pages_per_s(const struct rate *r, int64_t now, double *pps);
/* Whether nothing was released for RATE_STALL_MS by NOW (false until the
 * first sample). */
bool rate_stalled(const struct rate *r, int64_t now);
/* Seconds until PAGES_LEFT are released at the current rate, rounded up;
 * -ENODATA without a rate, or when stalled. */
int rate_eta_s(const struct rate *r, int64_t now, uint64_t pages_left, uint64_t *eta);
