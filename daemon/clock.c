/*
 * clock: one place that reads CLOCK_MONOTONIC and CLOCK_REALTIME, so unit
 * tests can freeze time and step it deterministically.  It does not sleep
 * or arm timers; main.c owns the timerfd.
 */
#include <stdbool.h>
#include <time.h>

#include "clock.h"

static bool clock_fake;
static int64_t clock_fake_mono, clock_fake_wall, clock_fake_drift;

static int64_t clock_read(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t clock_mono_ms(void)
{
	if (!clock_fake)
		return clock_read(CLOCK_MONOTONIC);
	clock_fake_mono += clock_fake_drift;
	return clock_fake_mono;
}

int64_t clock_wall_ms(void)
{
	return clock_fake ? clock_fake_wall : clock_read(CLOCK_REALTIME);
}

void clock_set_fake(int64_t mono, int64_t wall)
{
	clock_fake = true;
	clock_fake_mono = mono;
	clock_fake_wall = wall;
	clock_fake_drift = 0;
}

void clock_set_fake_drift(int64_t ms)
{
	clock_fake_drift = ms;
}

void clock_advance(int64_t ms)
{
	clock_fake_mono += ms;
	clock_fake_wall += ms;
}
