/*
 * clock: one place that reads the monotonic and the wall clock, so unit
 * tests can freeze time and step it deterministically.  It does not sleep
 * or arm timers; main.c owns the timerfd and says when it fired.
 *
 * The monotonic clock is CLOCK_MONOTONIC_COARSE: in a PV dom0 the Xen
 * clocksource has no vDSO mode, so every CLOCK_MONOTONIC read is a system
 * call (76 per teardown, measured), while the coarse clocks are read from
 * the vDSO page whatever the clocksource.  Their tick (1 to 10 ms) is far
 * below anything the daemon times.  It lags CLOCK_MONOTONIC, on which the
 * timerfd runs, by up to a tick: a timer that fired for a deadline is
 * proof that the deadline has passed (clock_mono_reached), so the loop
 * never wakes to find its deadline not yet due.  The wall clock stays
 * precise: it is read only for the times a job shows.
 */
#include <stdbool.h>
#include <time.h>

#include "clock.h"

static bool clock_fake;
static int64_t clock_mono_floor;	/* main thread only */
static int64_t clock_fake_mono, clock_fake_wall, clock_fake_drift;

static int64_t clock_read(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t clock_mono_ms(void)
{
	int64_t now;

	if (!clock_fake) {
		now = clock_read(CLOCK_MONOTONIC_COARSE);
		if (now < clock_mono_floor)
			return clock_mono_floor;
		return clock_mono_floor = now;
	}
	clock_fake_mono += clock_fake_drift;
	return clock_fake_mono;
}

void clock_mono_reached(int64_t ms)
{
	if (!clock_fake && ms > clock_mono_floor)
		clock_mono_floor = ms;
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
