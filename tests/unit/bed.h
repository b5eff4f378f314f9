/* bed: the daemon's core on the test doubles, driven the way main.c drives
 * it, for unit tests, the error-injection walk and the fuzzers. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "hv.h"
#include "reaper.h"
#include "store.h"
#include "fake_runner.h"

struct bed {
	struct store *s;
	struct hv *hv;
	struct runner *runner;
	struct reaper *r;
	struct config *cfg;
	unsigned wakeups;	/* bed_run: timer expiries with nothing but time passing */
	bool following;		/* bed_follow */
	int64_t pinged_mono;
};

#define BED_PING_MS 2000

/* Fake clocks, store and hypervisor (the daemon runs in SELF), default
 * policy with MAX_JOBS teardowns at once and the worker pool for it. */
void bed_init(struct bed *b, uint32_t self, unsigned max_jobs);
/* reaper_new and reaper_start. */
int bed_start(struct bed *b);
/* Free everything in the daemon's own order (held destroys released first). */
void bed_dispose(struct bed *b);
/* Run the main loop's steps until nothing is left in flight (real time
 * only passes while waiting for a worker). */
void bed_settle(struct bed *b);
/* Run the main loop for MS of fake time: events, workers, ticks, and the
 * clock moved to each deadline as the timerfd would fire; counts wake-ups. */
void bed_run(struct bed *b, int64_t ms);
/* Like bed_run, but with the workers left as they are (a held destroy
 * stays held): the main loop's turns while the pool is busy, the clock
 * moved to each deadline; counts wake-ups, and stops early if the loop
 * would spin (a deadline that does not move: returns those turns). */
unsigned bed_run_busy(struct bed *b, int64_t ms);
/* Wait (real time, at most 5 s) for the fake's held destroy of DOMID to
 * have removed it, then let the main loop collect it and settle. */
void bed_wait_gone(struct bed *b, uint32_t domid);
/* Wait (real time, at most 5 s) until no worker is inside a destroy, then
 * let the main loop collect their results and settle: for a destroy that
 * returns after its domain went (bed_wait_gone would not wait for it). */
void bed_wait_workers(struct bed *b);
/* A live domain DOMID (UUID seed DOMID) of PAGES in cpupool POOL, named
 * NAME in xenstore. */
void bed_add_named(struct bed *b, uint32_t domid, uint64_t pages, uint32_t pool, const char *name);
/* Another toolstack's destroy of DOMID: its xenstore entries go, the
 * domain stays dead with PAGES_HELD, and @releaseDomain fires. */
void bed_other_toolstack_destroys(struct bed *b, uint32_t domid, uint64_t pages_held);
/* Ask for the teardown of DOMID with the UUID of fake seed SEED. */
void bed_request(struct bed *b, uint32_t domid, uint8_t seed);
/* With FOLLOW, a client pings now and then every BED_PING_MS of the bed's
 * runs, as `xenreaper --wait` and top do, and the daemon publishes the
 * figures at every sample; without, it stops. */
void bed_follow(struct bed *b, bool follow);
/* Job DOMID's node LEAF, or NULL. */
const char *bed_node(struct bed *b, uint32_t domid, const char *leaf);
/* A policy from INI text, as the daemon would read it from a file. */
struct config *bed_policy_from(const char *text);
/* Replace the bed's policy (and the running reaper's) with TEXT's,
 * keeping the bed's jobs. */
void bed_set_policy(struct bed *b, const char *text);
/* Leave a job in STATE for DOMID as a killed daemon would have. */
void bed_plant_job(struct store *s, uint32_t domid, uint8_t seed, int state, int64_t finished_wall);
