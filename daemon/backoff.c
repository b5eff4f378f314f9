/*
 * backoff: exponential back-off for the daemon's retries (zombies, failed
 * destroys, xenstore writes, domain lists, scrub probes).  It only does the
 * arithmetic; each caller owns its struct and decides what a failure is.
 */
#include "backoff.h"

int64_t backoff_fail(struct backoff *b, int64_t now)
{
	int64_t delay = BACKOFF_MIN_MS;

	for (unsigned i = 0; i < b->failures && delay < BACKOFF_MAX_MS; i++)
		delay *= 2;
	if (delay > BACKOFF_MAX_MS)
		delay = BACKOFF_MAX_MS;
	if (b->failures < UINT32_MAX)
		b->failures++;
	b->next_mono = now + delay;
	return delay;
}

void backoff_reset(struct backoff *b)
{
	b->failures = 0;
	b->next_mono = 0;
}

bool backoff_due(const struct backoff *b, int64_t now)
{
	return now >= b->next_mono;
}

int64_t backoff_gate(const struct backoff *b, int64_t t)
{
	return t >= 0 && b->next_mono > t ? b->next_mono : t;
}
