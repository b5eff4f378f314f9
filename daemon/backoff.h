/*
 * backoff: when to try again after an action failed, so that a failure
 * that repeats costs a wake-up a minute, not one per loop turn.
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#define BACKOFF_MIN_MS 1000
#define BACKOFF_MAX_MS 60000

struct backoff {
	unsigned failures;	/* in a row; 0: the last try worked */
	int64_t next_mono;	/* not before this (ms); 0: at once */
};

/* Record a failure at NOW: the next try waits 1 s, doubling per failure in
 * a row up to a minute.  Returns that delay in ms. */
int64_t backoff_fail(struct backoff *b, int64_t now);
/* Record a success: try at once from now on. */
void backoff_reset(struct backoff *b);
/* Whether a try is allowed at NOW. */
bool backoff_due(const struct backoff *b, int64_t now);
/* T, or the end of the back-off if that is later (for deadlines). */
int64_t backoff_gate(const struct backoff *b, int64_t t);
