/*
 * rate: the release rate of one teardown from a short ring of (time,
 * pages held) samples, taken by the reaper at each progress sample.  The
 * rate is what fell over the samples of the last RATE_WINDOW_MS (the newest
 * against the oldest still in the window), so a burst or a pause moves it
 * within seconds; a teardown that released nothing for RATE_STALL_MS is
 * stalled and has no time left to show, rather than one that counts down
 * for ever.  It does not publish anything (job.c does) and keeps no clock.
 */
#include <errno.h>
#include <string.h>

#include "rate.h"

void rate_reset(struct rate *r)
{
	memset(r, 0, sizeof(*r));
}

void rate_add(struct rate *r, int64_t now, uint64_t pages)
{
	unsigned newest = (r->head + RATE_SAMPLES - 1) % RATE_SAMPLES;

	if (!r->n || pages < r->pages[newest] || !r->last_progress_mono)
		r->last_progress_mono = now;
	r->mono[r->head] = now;
	r->pages[r->head] = pages;
	r->head = (r->head + 1) % RATE_SAMPLES;
	if (r->n < RATE_SAMPLES)
		r->n++;
}

int rate_pages_per_s(const struct rate *r, int64_t now, double *pps)
{
	unsigned newest = (r->head + RATE_SAMPLES - 1) % RATE_SAMPLES, oldest = newest, i;

	if (r->n < 2)
		return -ENODATA;
	/* The oldest sample still in the window (at least the one before
	 * the newest, so there is always a span). */
	for (unsigned k = 1; k < r->n; k++) {
		i = (newest + RATE_SAMPLES - k) % RATE_SAMPLES;
		if (k > 1 && now - r->mono[i] > RATE_WINDOW_MS)
			break;
		oldest = i;
	}
	if (r->mono[newest] <= r->mono[oldest])
		return -ENODATA;
	*pps = r->pages[oldest] > r->pages[newest] ?
	       (double)(r->pages[oldest] - r->pages[newest]) * 1000.0 /
	       (double)(r->mono[newest] - r->mono[oldest]) : 0.0;
	return 0;
}

bool rate_stalled(const struct rate *r, int64_t now)
{
	return r->n && now - r->last_progress_mono >= RATE_STALL_MS;
}

int rate_eta_s(const struct rate *r, int64_t now, uint64_t pages_left, uint64_t *eta)
{
	double pps;

	if (rate_stalled(r, now) || rate_pages_per_s(r, now, &pps) || pps <= 0)
		return -ENODATA;
	*eta = (uint64_t)((double)pages_left / pps + 0.999);
	return 0;
}
