/* clock: the daemon's notion of time, in milliseconds, replaceable by tests. */
#pragma once
#include <stdint.h>

/* Monotonic milliseconds; drives intervals, back-off and retention.  Main
 * thread only.  Never decreases; may lag CLOCK_MONOTONIC by a tick. */
int64_t clock_mono_ms(void);
/* CLOCK_MONOTONIC is known to have passed MS (a timer set for it fired):
 * clock_mono_ms() returns no less from now on.  No-op on the fake clock. */
void clock_mono_reached(int64_t ms);
/* Wall-clock milliseconds since the epoch; what timestamps in xenstore show. */
int64_t clock_wall_ms(void);
/* Tests only: freeze both clocks at MONO/WALL (ms); clock_advance moves both. */
void clock_set_fake(int64_t mono, int64_t wall);
void clock_advance(int64_t ms);
/* Tests only: each read of the fake clock moves it on by MS, as a real
 * clock does between two reads (0: frozen). */
void clock_set_fake_drift(int64_t ms);
