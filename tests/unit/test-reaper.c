/*
 * Unit tests for daemon/reaper.c on the in-process store and hypervisor:
 * requests, the UUID guard, queueing, progress, zombies, retention, resume.
 * The worker pool is the daemon's real one (threads calling fake_hv).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bed.h"
#include "clock.h"
#include "fake_hv.h"
#include "fake_store.h"
#include "layout.h"
#include "reaper-private.h"
#include "reaper.h"
#include "scrub.h"
#include "tap.h"

static void test_start(void)
{
	struct bed b;

	bed_init(&b, 0, 1);
	ok(bed_start(&b) == 0, "reaper starts");
	ok(fake_store_is_private(b.s, LAYOUT_ROOT), "root is made dom0-only");
	is_str(fake_store_get(b.s, LAYOUT_DAEMON_DIR "/state"), "running", "daemon/state");
	is_str(fake_store_get(b.s, LAYOUT_DAEMON_DIR "/active-jobs"), "0", "daemon/active-jobs");
	ok(fake_store_get(b.s, LAYOUT_DAEMON_DIR "/version") != NULL, "daemon/version");
	ok(fake_store_get(b.s, LAYOUT_REQUEST_DIR) != NULL, "request directory exists");
	is_int(reaper_next_deadline(b.r), -1, "nothing due when idle: no wake-ups");
	bed_dispose(&b);
}

static void test_teardown(void)
{
	struct bed b;

	bed_init(&b, 0, 1);
	bed_start(&b);
	fake_hv_add(b.hv, 5, 5, 1000, 0);
	store_write(b.s, STORE_TX_NONE, "/local/domain/5/name", "web");
	bed_request(&b, 5, 5);
	bed_settle(&b);
	is_str(bed_node(&b, 5, "state"), "done", "requested domain ends done");
	ok(!fake_hv_exists(b.hv, 5), "domain is gone");
	is_int(fake_hv_destroy_calls(b.hv, 5), 1, "destroyed exactly once");
	is_str(bed_node(&b, 5, "pages-left"), "0", "pages-left 0");
	is_str(bed_node(&b, 5, "pages-total"), "1000", "pages-total from tot_pages at request");
	is_str(bed_node(&b, 5, "progress"), "100", "progress 100");
	is_str(bed_node(&b, 5, "name"), "web", "name captured");
	is_str(bed_node(&b, 5, "pool"), "Pool-0", "pool captured");
	is_str(bed_node(&b, 5, "reason"), "request", "reason");
	ok(bed_node(&b, 5, "finished") && bed_node(&b, 5, "started"), "started and finished stamped");
	ok(fake_store_get(b.s, LAYOUT_REQUEST_DIR "/5") == NULL, "request consumed");
	is_str(fake_store_get(b.s, LAYOUT_DAEMON_DIR "/active-jobs"), "0", "no active jobs after");
	bed_dispose(&b);
}

static void test_progress(void)
{
	struct bed b;

	bed_init(&b, 0, 1);
	bed_start(&b);
	bed_follow(&b, true);	/* the figures at every sample */
	fake_hv_add(b.hv, 6, 6, 1000, 0);
	fake_hv_hold(b.hv);
	bed_request(&b, 6, 6);
	reaper_handle_store_events(b.r);
	reaper_tick(b.r);
	is_str(bed_node(&b, 6, "state"), "destroying", "job destroying while the hypercall runs");
	is_str(fake_store_get(b.s, LAYOUT_DAEMON_DIR "/active-jobs"), "1", "one active job");
	is_int(reaper_next_deadline(b.r), clock_mono_ms() + 250, "next sample due in 250 ms");
	fake_hv_set_pages(b.hv, 6, 600);
	reaper_tick(b.r);
	is_str(bed_node(&b, 6, "pages-left"), "1000", "no sample before the interval");
	clock_advance(250);
	reaper_tick(b.r);
	is_str(bed_node(&b, 6, "pages-left"), "600", "sampled pages-left");
	is_str(bed_node(&b, 6, "progress"), "40", "progress follows");
	fake_hv_set_pages(b.hv, 6, 800);
	clock_advance(250);
	reaper_tick(b.r);
	is_str(bed_node(&b, 6, "pages-left"), "600", "pages-left never rises");
	fake_hv_release(b.hv);
	bed_settle(&b);
	is_str(bed_node(&b, 6, "state"), "done", "then done");
	bed_dispose(&b);
}

/* Nobody follows: what the samples find is published at most
 * REAPER_UNFOLLOWED_MS old, with not one request in between; a client's
 * ping brings it up to date at once and then at every sample, until the
 * client stops pinging. */
static void test_progress_unfollowed(void)
{
	unsigned writes, txs;
	struct bed b;

	bed_init(&b, 0, 1);
	b.cfg->scrub_probe = CONFIG_PROBE_NONE;
	bed_start(&b);
	fake_hv_add(b.hv, 6, 6, 1000, 0);
	fake_hv_hold(b.hv);
	bed_request(&b, 6, 6);
	reaper_handle_store_events(b.r);
	reaper_tick(b.r);
	is_str(fake_store_get(b.s, LAYOUT_MEMORY_DIR "/releasing"), "1000",
	       "unfollowed: memory/releasing published as the first teardown starts");
	fake_hv_set_pages(b.hv, 6, 600);
	writes = fake_store_calls(b.s, FAKE_STORE_WRITE);
	txs = fake_store_calls(b.s, FAKE_STORE_TX_START);
	for (int64_t t = 250; t < REAPER_UNFOLLOWED_MS; t += 250) {
		clock_advance(250);
		reaper_tick(b.r);
	}
	is_str(bed_node(&b, 6, "pages-left"), "1000", "  no sample published within 5 s");
	is_str(fake_store_get(b.s, LAYOUT_MEMORY_DIR "/releasing"), "1000", "  nor memory/releasing");
	is_int(fake_store_calls(b.s, FAKE_STORE_WRITE) - writes, 0, "  not one write in 19 samples");
	is_int(fake_store_calls(b.s, FAKE_STORE_TX_START) - txs, 0, "  nor a transaction");
	clock_advance(250);
	reaper_tick(b.r);
	is_str(bed_node(&b, 6, "pages-left"), "600", "  published once 5 s old");
	is_str(bed_node(&b, 6, "progress"), "40", "  with its progress");
	is_str(fake_store_get(b.s, LAYOUT_MEMORY_DIR "/releasing"), "600", "  and memory/releasing");
	is_int(fake_store_calls(b.s, FAKE_STORE_TX_START) - txs, 1, "  in one transaction");
	fake_hv_set_pages(b.hv, 6, 400);
	clock_advance(250);
	reaper_tick(b.r);
	is_str(bed_node(&b, 6, "pages-left"), "600", "  not again at the next sample");
	bed_follow(&b, true);
	reaper_tick(b.r);
	is_str(bed_node(&b, 6, "pages-left"), "400", "a client's ping brings it up to date at once");
	is_str(fake_store_get(b.s, LAYOUT_MEMORY_DIR "/releasing"), "400", "  memory/releasing too");
	fake_hv_set_pages(b.hv, 6, 300);
	clock_advance(250);
	reaper_tick(b.r);
	is_str(bed_node(&b, 6, "pages-left"), "300", "  then at every sample while it follows");
	bed_follow(&b, false);
	/* Pinged 250 ms ago; samples to 5 s after it, still falling (a
	 * stall would be published at once). */
	for (int64_t t = 250, left = 300; t < REAPER_FOLLOW_MS; t += 250) {
		fake_hv_set_pages(b.hv, 6, (uint64_t)(left -= 2));
		clock_advance(250);
		reaper_tick(b.r);
	}
	is_str(bed_node(&b, 6, "pages-left"), "264", "  up to the last sample within 5 s of its last ping");
	fake_hv_set_pages(b.hv, 6, 200);
	clock_advance(250);
	reaper_tick(b.r);
	is_str(bed_node(&b, 6, "pages-left"), "264", "once it stops pinging, no longer at every sample");
	bed_run_busy(&b, REAPER_UNFOLLOWED_MS);
	is_str(bed_node(&b, 6, "pages-left"), "200", "  but within 5 s");
	fake_hv_release(b.hv);
	bed_settle(&b);
	is_str(bed_node(&b, 6, "state"), "done", "then done");
	is_str(bed_node(&b, 6, "pages-left"), "0", "  with pages-left 0 at once");
	is_str(fake_store_get(b.s, LAYOUT_MEMORY_DIR "/releasing"), "0", "  and memory/releasing 0");
	bed_dispose(&b);
}

static void test_refusals(void)
{
	struct bed b;
	char uuid[HV_UUID_STR_LEN];

	bed_init(&b, 9, 1);
	bed_start(&b);
	fake_hv_add(b.hv, 0, 0, 100, 0);
	fake_hv_add(b.hv, 7, 7, 100, 0);
	fake_hv_add(b.hv, 8, 8, 100, 0);
	fake_hv_add(b.hv, 9, 9, 100, 0);
	bed_request(&b, 0, 0);
	bed_request(&b, 9, 9);
	bed_request(&b, 4000, 40);
	bed_request(&b, 7, 70);			/* domain 7's UUID is seed 7 */
	store_write(b.s, STORE_TX_NONE, LAYOUT_REQUEST_DIR "/8", "not-a-uuid");
	fake_hv_uuid_text(8, uuid);
	store_write(b.s, STORE_TX_NONE, LAYOUT_REQUEST_DIR "/abc", uuid);
	store_write(b.s, STORE_TX_NONE, LAYOUT_REQUEST_DIR "/008", uuid);
	store_write(b.s, STORE_TX_NONE, LAYOUT_REQUEST_DIR "/99999", uuid);
	bed_settle(&b);
	is_str(bed_node(&b, 0, "state"), "failed", "domain 0 refused");
	ok(bed_node(&b, 0, "error") && strstr(bed_node(&b, 0, "error"), "control domain"), "  and says why");
	is_str(bed_node(&b, 9, "state"), "failed", "the daemon's own domain refused");
	ok(bed_node(&b, 9, "error") && strstr(bed_node(&b, 9, "error"), "xenreaperd itself"), "  and says why");
	is_str(bed_node(&b, 4000, "state"), "failed", "unknown domid refused");
	ok(bed_node(&b, 4000, "error") && strstr(bed_node(&b, 4000, "error"), "no domain 4000"), "  and says why");
	is_str(bed_node(&b, 7, "state"), "failed", "UUID mismatch refused");
	ok(bed_node(&b, 7, "error") && strstr(bed_node(&b, 7, "error"), "not the requested"), "  and says why");
	is_str(bed_node(&b, 8, "state"), "failed", "malformed UUID refused");
	ok(bed_node(&b, 8, "error") && strstr(bed_node(&b, 8, "error"), "not a UUID"), "  and says why");
	is_int(fake_hv_destroy_calls(b.hv, 0) + fake_hv_destroy_calls(b.hv, 7) +
	       fake_hv_destroy_calls(b.hv, 8) + fake_hv_destroy_calls(b.hv, 9), 0,
	       "nothing was destroyed");
	ok(fake_hv_exists(b.hv, 7) && fake_hv_exists(b.hv, 8), "refused domains still alive");
	is_int(fake_store_count(b.s, LAYOUT_REQUEST_DIR), 1, "every request consumed, malformed names too");
	ok(fake_store_get(b.s, LAYOUT_JOB_DIR "/abc") == NULL &&
	   fake_store_get(b.s, LAYOUT_JOB_DIR "/008") == NULL, "malformed names make no job");
	bed_dispose(&b);
}

static void test_guard_at_start(void)
{
	struct bed b;

	bed_init(&b, 0, 1);
	bed_start(&b);
	fake_hv_add(b.hv, 10, 10, 100, 0);
	fake_hv_add(b.hv, 11, 11, 100, 0);
	fake_hv_hold(b.hv);
	bed_request(&b, 10, 10);
	bed_request(&b, 11, 11);
	reaper_handle_store_events(b.r);
	reaper_tick(b.r);
	is_str(bed_node(&b, 11, "state"), "queued", "second job waits its turn");
	/* Domain 11 dies and its domid is reused while queued. */
	fake_hv_remove(b.hv, 11);
	fake_hv_add(b.hv, 11, 111, 100, 0);
	fake_hv_release(b.hv);
	bed_settle(&b);
	is_str(bed_node(&b, 11, "state"), "failed", "guard re-checked at start: reused domid refused");
	is_int(fake_hv_destroy_calls(b.hv, 11), 0, "the new domain 11 was not destroyed");
	bed_dispose(&b);
}

static void test_one_at_a_time(void)
{
	struct bed b;
	int destroying = 0, queued = 0;

	bed_init(&b, 0, 1);
	bed_start(&b);
	for (uint32_t d = 20; d < 23; d++)
		fake_hv_add(b.hv, d, d, 100, 0);
	fake_hv_hold(b.hv);
	for (uint32_t d = 20; d < 23; d++)
		bed_request(&b, d, d);
	reaper_handle_store_events(b.r);
	reaper_tick(b.r);
	for (uint32_t d = 20; d < 23; d++) {
		destroying += !strcmp(bed_node(&b, d, "state"), "destroying");
		queued += !strcmp(bed_node(&b, d, "state"), "queued");
	}
	is_int(destroying, 1, "one destroying at a time by default");
	is_int(queued, 2, "the others queued");
	is_str(fake_store_get(b.s, LAYOUT_DAEMON_DIR "/active-jobs"), "3", "three active");
	fake_hv_release(b.hv);
	bed_settle(&b);
	for (uint32_t d = 20; d < 23; d++) {
		is_str(bed_node(&b, d, "state"), "done", "each ends done");
		is_int(fake_hv_destroy_calls(b.hv, d), 1, "each destroyed once");
	}
	bed_dispose(&b);
}

static void test_parallel(void)
{
	struct bed b;
	int destroying = 0;

	bed_init(&b, 0, 2);
	bed_start(&b);
	for (uint32_t d = 20; d < 23; d++)
		fake_hv_add(b.hv, d, d, 100, 0);
	fake_hv_hold(b.hv);
	for (uint32_t d = 20; d < 23; d++)
		bed_request(&b, d, d);
	reaper_handle_store_events(b.r);
	reaper_tick(b.r);
	for (uint32_t d = 20; d < 23; d++)
		destroying += !strcmp(bed_node(&b, d, "state"), "destroying");
	is_int(destroying, 2, "jobs = 2 runs two at once");
	fake_hv_wait_inside(b.hv, 2);
	is_int(fake_runner_started(b.runner), 2, "  two teardowns started, the third waits");
	bed_dispose(&b);
}

static void test_zombie(void)
{
	struct bed b;

	bed_init(&b, 0, 1);
	bed_start(&b);
	/* Followed, memory/ is brought up to date at every turn: no deadline
	 * of its own comes between the retries. */
	bed_follow(&b, true);
	fake_hv_add(b.hv, 30, 30, 1000, 0);
	fake_hv_make_zombie(b.hv, 30, 3, 50);
	bed_request(&b, 30, 30);
	bed_settle(&b);
	is_str(bed_node(&b, 30, "state"), "destroying", "a dead domain still holding pages gets a moment");
	is_str(bed_node(&b, 30, "pages-left"), "50", "  with its pages-left");
	clock_advance(REAPER_ZOMBIE_SETTLE_MS);
	bed_settle(&b);
	is_str(bed_node(&b, 30, "state"), "zombie", "then it is a zombie");
	is_int(fake_hv_destroy_calls(b.hv, 30), 2, "  destroyed again");
	is_int(reaper_next_deadline(b.r), clock_mono_ms() + 2000, "next retry after 2 s");
	clock_advance(2000);
	bed_settle(&b);
	is_str(bed_node(&b, 30, "state"), "zombie", "still a zombie");
	is_int(fake_hv_destroy_calls(b.hv, 30), 3, "  destroyed a third time");
	is_int(reaper_next_deadline(b.r), clock_mono_ms() + 4000, "back-off doubles to 4 s");
	fake_hv_make_zombie(b.hv, 30, 0, 0);
	clock_advance(4000);
	bed_settle(&b);
	is_str(bed_node(&b, 30, "state"), "done", "zombie done when it vanishes");
	is_int(fake_hv_destroy_calls(b.hv, 30), 4, "after the fourth attempt");

	/* The common case: the last page goes within the moment. */
	fake_hv_add(b.hv, 32, 32, 1000, 0);
	fake_hv_make_zombie(b.hv, 32, 1, 1);
	bed_request(&b, 32, 32);
	bed_settle(&b);
	fake_hv_remove(b.hv, 32);
	fake_store_fire(b.s, "@releaseDomain");	/* as xenstored does when it goes */
	clock_advance(250);
	bed_settle(&b);
	is_str(bed_node(&b, 32, "state"), "done", "a domain whose last page goes quickly is done, never a zombie");
	is_int(fake_hv_destroy_calls(b.hv, 32), 1, "  with one destroy");

	fake_hv_add(b.hv, 31, 31, 1000, 0);
	fake_hv_make_zombie(b.hv, 31, 100, 10);
	bed_request(&b, 31, 31);
	bed_settle(&b);
	clock_advance(REAPER_ZOMBIE_SETTLE_MS);
	bed_settle(&b);
	is_str(bed_node(&b, 31, "state"), "zombie", "another zombie");
	fake_hv_remove(b.hv, 31);
	fake_store_fire(b.s, "@releaseDomain");
	bed_settle(&b);
	is_str(bed_node(&b, 31, "state"), "done", "released on @releaseDomain without waiting for the retry");
	bed_dispose(&b);
}

/* A destroy that fails on a live domain (libxl cannot take its lock, say)
 * is retried with back-off, says why meanwhile, and gives up after
 * REAPER_DESTROY_ATTEMPTS. */
static void test_destroy_fails(void)
{
	struct bed b;
	unsigned calls;

	bed_init(&b, 0, 1);
	b.cfg->scrub_probe = CONFIG_PROBE_NONE;
	bed_start(&b);
	fake_hv_add(b.hv, 14, 14, 100, 0);
	fake_hv_make_failing(b.hv, 14);
	bed_request(&b, 14, 14);
	bed_settle(&b);
	is_str(bed_node(&b, 14, "state"), "destroying", "a failed destroy of a live domain is retried");
	ok(bed_node(&b, 14, "error") && strstr(bed_node(&b, 14, "error"), "libxl_domain_destroy") &&
	   strstr(bed_node(&b, 14, "error"), "attempt 1 of"), "  and the job says why, meanwhile");
	is_int(reaper_next_deadline(b.r), clock_mono_ms() + 1000, "  the next attempt in 1 s");
	clock_advance(1000);
	bed_settle(&b);
	is_int(fake_hv_destroy_calls(b.hv, 14), 2, "  then tried again");
	is_int(reaper_next_deadline(b.r), clock_mono_ms() + 2000, "  backing off to 2 s");
	bed_run(&b, 6 * 60 * 1000);	/* 1+2+4+...+60 s: about 4 min */
	is_str(bed_node(&b, 14, "state"), "failed", "after the last attempt the job fails");
	is_int(fake_hv_destroy_calls(b.hv, 14), REAPER_DESTROY_ATTEMPTS, "  after exactly the attempts allowed");
	ok(bed_node(&b, 14, "error") && strstr(bed_node(&b, 14, "error"), "still alive"), "  and says why");
	ok(b.wakeups < 3 * REAPER_DESTROY_ATTEMPTS, "  with few wake-ups (%u)", b.wakeups);
	bed_dispose(&b);

	/* The cause goes away: the next attempt gets through. */
	bed_init(&b, 0, 1);
	b.cfg->scrub_probe = CONFIG_PROBE_NONE;
	bed_start(&b);
	fake_hv_add(b.hv, 15, 15, 100, 0);
	fake_hv_inject(b.hv, FAKE_HV_DESTROY, 1, -EBUSY, true);
	bed_request(&b, 15, 15);
	bed_run(&b, 3500);
	calls = fake_hv_calls(b.hv, FAKE_HV_DESTROY);
	is_int(calls, 3, "a destroy failing with a lock error: 3 attempts in 3.5 s (0, 1, 3 s)");
	ok(bed_node(&b, 15, "error") && strstr(bed_node(&b, 15, "error"), "lock"), "  the job names the lock");
	fake_hv_inject(b.hv, FAKE_HV_DESTROY, 0, 0, false);
	bed_run(&b, 5000);
	is_str(bed_node(&b, 15, "state"), "done", "  once the lock works the job ends done");
	ok(bed_node(&b, 15, "error") == NULL, "  with no error left");
	bed_dispose(&b);
}

/* The jobs by domid and their counts, through more jobs than the index
 * starts with buckets (so it grows), past the retention cap (so finished
 * jobs leave it), with domids that share a bucket. */
static void test_index(void)
{
	const uint32_t n = 160;
	unsigned found = 0, wrong = 0;
	struct job *job;
	struct bed b;

	bed_init(&b, 0, 4);
	b.cfg->scrub_probe = CONFIG_PROBE_NONE;
	bed_start(&b);
	fake_hv_hold(b.hv);
	/* Domids 1, 65, 129, ... share one bucket of the first 64. */
	for (uint32_t i = 0; i < n; i++) {
		fake_hv_add(b.hv, 1 + i * 64, (uint8_t)i, 10, 0);
		bed_request(&b, 1 + i * 64, (uint8_t)i);
	}
	bed_run_busy(&b, 100);
	for (uint32_t i = 0; i < n; i++) {
		job = reaper_find_job(b.r, 1 + i * 64);
		found += job != NULL;
		wrong += job && job->domid != 1 + i * 64;
	}
	is_int(found, n, "every one of 160 jobs is found by its domid");
	is_int(wrong, 0, "  and the job found is that domid's");
	ok(!reaper_find_job(b.r, 1 + n * 64), "a domid with no job finds none (its bucket is not empty)");
	is_int(reaper_active_jobs(b.r), n, "160 jobs under way");
	is_str(fake_store_get(b.s, LAYOUT_DAEMON_DIR "/active-jobs"), "160", "  and published");
	fake_hv_release(b.hv);
	for (int i = 0; i < 2000 && reaper_active_jobs(b.r); i++) {
		nanosleep(&(struct timespec){ 0, 1000 * 1000 }, NULL);
		reaper_handle_runner(b.r);
		bed_run_busy(&b, 100);
	}
	is_int(reaper_active_jobs(b.r), 0, "all done: none under way");
	is_str(fake_store_get(b.s, LAYOUT_DAEMON_DIR "/active-jobs"), "0", "  and published");
	found = 0;
	for (uint32_t i = 0; i < n; i++)
		found += reaper_find_job(b.r, 1 + i * 64) != NULL &&
			 !strcmp(bed_node(&b, 1 + i * 64, "state"), "done");
	is_int(found, n, "finished jobs are still found, done (retained)");
	bed_dispose(&b);
}

/* Start B with JOBS workers, finished jobs kept 60 s, no scrub probe. */
static void retention_bed_start(struct bed *b, unsigned jobs)
{
	bed_init(b, 0, jobs);
	b->cfg->retention_ms = 60000;
	b->cfg->scrub_probe = CONFIG_PROBE_NONE;
	bed_start(b);
}

/* Release DOMID's held destroy and wait (real time, at most 5 s) until
 * its job is done, without moving the clock: when it finished is now. */
static void release_and_wait_done(struct bed *b, uint32_t domid)
{
	const char *state;

	fake_hv_hold_domain(b->hv, domid, false);
	for (int i = 0; i < 2500; i++) {
		reaper_handle_runner(b->r);
		state = bed_node(b, domid, "state");
		if (state && !strcmp(state, "done"))
			break;
		nanosleep(&(struct timespec){ 0, 2 * 1000 * 1000 }, NULL);
	}
}

/* Finished jobs expire by when they finished, not by when they were
 * asked for: C finishes first, then A, then B. */
static void test_expiry_order(void)
{
	struct bed b;

	retention_bed_start(&b, 3);
	for (uint32_t d = 71; d <= 73; d++) {
		fake_hv_add(b.hv, d, (uint8_t)d, 100, 0);
		fake_hv_hold_domain(b.hv, d, true);
		bed_request(&b, d, (uint8_t)d);
	}
	bed_run_busy(&b, 100);
	fake_hv_wait_inside(b.hv, 3);
	release_and_wait_done(&b, 73);
	clock_advance(10000);
	release_and_wait_done(&b, 71);
	clock_advance(10000);
	release_and_wait_done(&b, 72);
	reaper_tick(b.r);
	is_str(bed_node(&b, 73, "state"), "done", "three jobs done, the last asked for first");
	is_str(bed_node(&b, 71, "state"), "done", "  then the first");
	is_str(bed_node(&b, 72, "state"), "done", "  then the second");
	is_int(reaper_next_deadline(b.r) - clock_mono_ms(), 40000,
	       "the next deadline is the first finished one's expiry, 40 s away");
	clock_advance(40000);
	reaper_tick(b.r);
	is_int(fake_store_count(b.s, LAYOUT_JOB_DIR "/73"), 0, "the first finished expires first");
	ok(bed_node(&b, 71, "state") && bed_node(&b, 72, "state"), "  the others are kept");
	clock_advance(10000);
	reaper_tick(b.r);
	is_int(fake_store_count(b.s, LAYOUT_JOB_DIR "/71"), 0, "then the second finished");
	ok(bed_node(&b, 72, "state") != NULL, "  the last finished is kept");
	clock_advance(10000);
	reaper_tick(b.r);
	is_int(fake_store_count(b.s, LAYOUT_JOB_DIR "/72"), 0, "then the last");
	is_int(reaper_next_deadline(b.r), -1, "then nothing is due");
	bed_dispose(&b);
}

static void test_retention(void)
{
	struct bed b;

	retention_bed_start(&b, 1);
	fake_hv_add(b.hv, 40, 40, 100, 0);
	bed_request(&b, 40, 40);
	bed_settle(&b);
	is_str(bed_node(&b, 40, "state"), "done", "done");
	is_int(reaper_next_deadline(b.r), clock_mono_ms() + 60000, "next deadline is the expiry");
	clock_advance(59999);
	reaper_tick(b.r);
	ok(bed_node(&b, 40, "state") != NULL, "still readable just before retention ends");
	clock_advance(1);
	reaper_tick(b.r);
	is_int(fake_store_count(b.s, LAYOUT_JOB_DIR "/40"), 0, "removed when retention ends");
	is_int(reaper_next_deadline(b.r), -1, "then nothing is due");
	bed_dispose(&b);
}

static void test_duplicates_and_conflicts(void)
{
	struct bed b;

	bed_init(&b, 0, 1);
	bed_start(&b);
	fake_hv_add(b.hv, 50, 50, 100, 0);
	fake_hv_hold(b.hv);
	fake_store_fail_commits(b.s, 2);
	bed_request(&b, 50, 50);
	reaper_handle_store_events(b.r);
	reaper_tick(b.r);
	is_str(bed_node(&b, 50, "state"), "destroying", "request taken despite two transaction conflicts");
	ok(fake_store_get(b.s, LAYOUT_REQUEST_DIR "/50") == NULL, "  and removed once");
	bed_request(&b, 50, 50);
	bed_request(&b, 50, 51);
	reaper_handle_store_events(b.r);
	reaper_tick(b.r);
	is_str(bed_node(&b, 50, "state"), "destroying", "duplicate while active leaves the job alone");
	is_int(fake_store_count(b.s, LAYOUT_REQUEST_DIR), 1, "duplicate request consumed");
	fake_hv_release(b.hv);
	bed_settle(&b);
	is_int(fake_hv_destroy_calls(b.hv, 50), 1, "destroyed once");
	bed_dispose(&b);
}

static void test_resume(void)
{
	struct bed b;

	bed_init(&b, 0, 1);
	b.cfg->retention_ms = 60000;
	fake_hv_add(b.hv, 60, 60, 100, 0);
	bed_plant_job(b.s, 60, 60, JOB_DESTROYING, 0);	/* running when the daemon died */
	bed_plant_job(b.s, 61, 61, JOB_DESTROYING, 0);	/* its domain finished dying meanwhile */
	bed_plant_job(b.s, 62, 62, JOB_DONE, 1700000000000 - 30000);	/* finished 30 s ago */
	fake_hv_add(b.hv, 63, 63, 100, 0);
	bed_request(&b, 63, 63);				/* written while the daemon was down */
	ok(bed_start(&b) == 0, "restart with jobs left behind");
	bed_settle(&b);
	is_str(bed_node(&b, 60, "state"), "done", "running job resumed to done");
	is_int(fake_hv_destroy_calls(b.hv, 60), 1, "  by re-issuing destroy");
	is_str(bed_node(&b, 61, "state"), "done", "job of a vanished domain is done");
	is_int(fake_hv_destroy_calls(b.hv, 61), 0, "  without a destroy");
	is_str(bed_node(&b, 63, "state"), "done", "request written while down is served");
	is_str(bed_node(&b, 62, "state"), "done", "finished job still readable");
	clock_advance(30000);
	reaper_tick(b.r);
	is_int(fake_store_count(b.s, LAYOUT_JOB_DIR "/62"), 0,
	       "retention counted across the restart");
	bed_dispose(&b);
}

static void test_resume_guard(void)
{
	struct bed b;

	bed_init(&b, 0, 1);
	fake_hv_add(b.hv, 70, 170, 100, 0);		/* domid reused by someone else */
	bed_plant_job(b.s, 70, 70, JOB_QUEUED, 0);
	bed_start(&b);
	bed_settle(&b);
	is_int(fake_hv_destroy_calls(b.hv, 70), 0, "resumed job never destroys a reused domid");
	ok(fake_hv_exists(b.hv, 70), "  the new domain lives");
	is_str(bed_node(&b, 70, "state"), "failed", "  and the job says so");
	bed_dispose(&b);
}

/* A guest's stub domain goes with it, found as libxl finds it or, for a
 * teardown an earlier run started (the guest's directory may be gone), by
 * the stub domain's own target node; never dom0, never another's. */
static void test_stubdom(void)
{
	struct bed b;

	bed_init(&b, 0, 2);
	fake_hv_add(b.hv, 0, 0, 1000, 0);
	fake_hv_add(b.hv, 5, 5, 1000, 0);
	fake_hv_add(b.hv, 9, 9, 100, 0);
	fake_hv_add(b.hv, 11, 11, 100, 0);
	fake_hv_add(b.hv, 20, 20, 1000, 0);
	fake_hv_add(b.hv, 21, 21, 100, 0);
	fake_hv_add(b.hv, 30, 30, 1000, 0);
	fake_hv_add(b.hv, 31, 31, 100, 0);
	fake_hv_add(b.hv, 40, 40, 1000, 0);
	store_write(b.s, STORE_TX_NONE, "/local/domain/5/image/device-model-domid", "9");
	store_write(b.s, STORE_TX_NONE, "/local/domain/9/target", "5");
	store_write(b.s, STORE_TX_NONE, "/local/domain/11/target", "12");
	store_write(b.s, STORE_TX_NONE, "/local/domain/21/target", "20");
	store_write(b.s, STORE_TX_NONE, "/local/domain/31/target", "30");
	store_write(b.s, STORE_TX_NONE, "/local/domain/40/image/device-model-domid", "0");
	bed_plant_job(b.s, 20, 20, JOB_DESTROYING, 0);	/* its directory gone with a killed destroy */
	bed_start(&b);
	bed_request(&b, 5, 5);
	bed_request(&b, 30, 30);
	bed_request(&b, 40, 40);
	bed_settle(&b);
	is_str(bed_node(&b, 5, "state"), "done", "a guest with a stub domain ends done");
	ok(!fake_hv_exists(b.hv, 9), "  its stub domain, named by its image/device-model-domid, is gone too");
	ok(fake_hv_exists(b.hv, 11), "  another guest's stub domain lives");
	is_str(bed_node(&b, 20, "state"), "done", "a teardown an earlier run started ends done");
	ok(!fake_hv_exists(b.hv, 21), "  its stub domain, whose target node names the guest, is gone too");
	is_str(bed_node(&b, 30, "state"), "done", "a teardown started afresh");
	ok(fake_hv_exists(b.hv, 31), "  follows libxl's own record only (no scan of every domain's target)");
	is_str(bed_node(&b, 40, "state"), "done", "a guest whose record names dom0");
	is_int(fake_hv_destroy_calls(b.hv, 0), 0, "  leaves dom0 alone");
	bed_dispose(&b);

	/* An earlier run cut short between the guest and its stub domain. */
	bed_init(&b, 0, 1);
	fake_hv_add(b.hv, 51, 51, 100, 0);
	store_write(b.s, STORE_TX_NONE, "/local/domain/51/target", "50");
	bed_plant_job(b.s, 50, 50, JOB_DESTROYING, 0);
	bed_start(&b);
	bed_settle(&b);
	is_str(bed_node(&b, 50, "state"), "done", "a guest gone, its stub domain left by an earlier run: done");
	ok(!fake_hv_exists(b.hv, 51), "  once that stub domain is destroyed");
	bed_dispose(&b);

	/* A stub domain that cannot be destroyed keeps the job going. */
	bed_init(&b, 0, 1);
	b.cfg->scrub_probe = CONFIG_PROBE_NONE;
	bed_start(&b);
	fake_hv_add(b.hv, 60, 60, 1000, 0);
	fake_hv_add(b.hv, 61, 61, 100, 0);
	fake_hv_make_failing(b.hv, 61);
	store_write(b.s, STORE_TX_NONE, "/local/domain/60/image/device-model-domid", "61");
	bed_request(&b, 60, 60);
	bed_settle(&b);
	ok(!fake_hv_exists(b.hv, 60) && fake_hv_exists(b.hv, 61), "a guest gone, its stub domain refusing to go");
	is_str(bed_node(&b, 60, "state"), "destroying", "  the job is not done");
	ok(bed_node(&b, 60, "error") && strstr(bed_node(&b, 60, "error"),
	   "libxl_domain_destroy of its stub domain 61 failed (Input/output error); its stub domain 61 is still alive; attempt 1 of"),
	   "  and says why: %s", bed_node(&b, 60, "error") ? bed_node(&b, 60, "error") : "(none)");
	bed_run(&b, 6 * 60 * 1000);
	is_str(bed_node(&b, 60, "state"), "failed", "  after the last attempt it fails");
	is_int(fake_hv_destroy_calls(b.hv, 61), REAPER_DESTROY_ATTEMPTS, "  the stub domain tried each time");
	bed_dispose(&b);
}

static void test_sync_scrub(void)
{
	struct bed b;
	unsigned probes;

	bed_init(&b, 0, 1);
	bed_set_policy(&b, "[default]\nscrub = sync\n[daemon]\nscrub-probe-interval = 1s\n");
	bed_start(&b);
	fake_hv_set_scrub(b.hv, HV_SCRUB_HEAP_DUMP, 500);
	fake_hv_add(b.hv, 80, 80, 1000, 0);
	bed_request(&b, 80, 80);
	bed_settle(&b);
	is_str(bed_node(&b, 80, "policy"), "sync", "job records its sync policy");
	is_str(bed_node(&b, 80, "state"), "scrubbing", "sync job waits in scrubbing");
	is_str(bed_node(&b, 80, "scrub-pages"), "500", "  with its share of the backlog");
	is_str(fake_store_get(b.s, LAYOUT_SCRUB_DIR "/pages"), "500", "scrub/pages published");
	is_str(fake_store_get(b.s, LAYOUT_SCRUB_DIR "/source"), "heap-dump", "scrub/source published");
	is_str(fake_store_get(b.s, LAYOUT_SCRUB_DIR "/node/0"), "500", "scrub/node/0 published");
	ok(fake_store_get(b.s, LAYOUT_SCRUB_DIR "/probed") != NULL, "scrub/probed stamped");
	is_int(reaper_next_deadline(b.r), clock_mono_ms() + 1000, "next probe after the interval");
	probes = fake_hv_scrub_probes(b.hv);
	for (int i = 0; i < 5; i++)
		reaper_tick(b.r);
	is_int(fake_hv_scrub_probes(b.hv), probes, "no probe before the interval, however many ticks");
	fake_hv_set_scrub(b.hv, HV_SCRUB_HEAP_DUMP, 0);
	clock_advance(1000);
	reaper_tick(b.r);
	is_str(bed_node(&b, 80, "state"), "done", "done once the backlog drained");
	is_str(bed_node(&b, 80, "scrub-pages"), "0", "  with scrub-pages 0");
	probes = fake_hv_scrub_probes(b.hv);
	clock_advance(5000);
	reaper_tick(b.r);
	is_int(fake_hv_scrub_probes(b.hv), probes, "no probes once nothing is pending");
	bed_dispose(&b);
}

/* A hypervisor that reports its backlog in physinfo (xen-patches/4.17):
 * read with every sample, never a heap dump, and a sync job done within
 * one progress interval of the backlog reaching 0. */
static void test_exact_scrub(void)
{
	struct bed b;
	unsigned probes;
	int64_t drained;

	bed_init(&b, 0, 1);
	fake_hv_set_scrub_exact(b.hv, true);
	bed_set_policy(&b, "[default]\nscrub = sync\n[daemon]\nprogress-interval = 250ms\n"
		       "scrub-probe-interval = 5s\n");
	bed_start(&b);
	fake_hv_set_scrub(b.hv, HV_SCRUB_PHYSINFO, 500);
	fake_hv_add(b.hv, 84, 84, 1000, 0);
	bed_request(&b, 84, 84);
	bed_settle(&b);
	is_str(bed_node(&b, 84, "state"), "scrubbing", "exact physinfo: the sync job waits in scrubbing");
	is_str(bed_node(&b, 84, "scrub-pages"), "500", "  with physinfo's figure");
	is_str(fake_store_get(b.s, LAYOUT_SCRUB_DIR "/source"), "physinfo", "  scrub/source says physinfo");
	is_int(reaper_next_deadline(b.r), clock_mono_ms() + 62,
	       "  next probe a quarter progress interval on, to learn a rate (not the 5 s scrub-probe-interval)");
	probes = fake_hv_scrub_probes(b.hv);
	fake_hv_set_scrub(b.hv, HV_SCRUB_PHYSINFO, 400);
	clock_advance(62);
	reaper_tick(b.r);
	is_int(fake_hv_scrub_probes(b.hv), probes + 1, "  probed again after 62 ms");
	is_str(bed_node(&b, 84, "scrub-pages"), "400", "  and the share follows it");
	/* 100 pages in 62 ms: 1.61 a ms, so 400 more take 248 ms. */
	is_int(reaper_next_deadline(b.r), clock_mono_ms() + 125,
	       "  next probe at half the time the learnt rate says the drain takes");
	fake_hv_set_scrub(b.hv, HV_SCRUB_PHYSINFO, 50);
	clock_advance(125);
	reaper_tick(b.r);
	is_str(bed_node(&b, 84, "state"), "scrubbing", "  still scrubbing at 50");
	/* 350 in 125 ms folded in: 2.21 a ms, 50 pages in 22 ms: half is 12. */
	is_int(reaper_next_deadline(b.r), clock_mono_ms() + 25,
	       "  asked again soon, but not sooner than a tenth of the interval");
	fake_hv_set_scrub(b.hv, HV_SCRUB_PHYSINFO, 1);
	clock_advance(25);
	reaper_tick(b.r);
	is_int(reaper_next_deadline(b.r), clock_mono_ms() + 25,
	       "  never sooner than a tenth of the interval (1 page left: 1 ms predicted)");
	fake_hv_set_scrub(b.hv, HV_SCRUB_PHYSINFO, 0);
	drained = clock_mono_ms();
	clock_advance(25);
	reaper_tick(b.r);
	is_str(bed_node(&b, 84, "state"), "done", "  done at the first sample after it read 0");
	is_int(clock_mono_ms() - drained, 25, "  a tenth of the progress interval after the backlog drained");
	ok(!(fake_hv_scrub_sources_asked(b.hv) & HV_SCRUB_HEAP_DUMP),
	   "  and no probe ever asked for a heap dump");
	probes = fake_hv_scrub_probes(b.hv);
	bed_run(&b, 60 * 1000);
	is_int(fake_hv_scrub_probes(b.hv), probes, "  nothing probed once nothing is counted");
	bed_dispose(&b);

	/* The same on a released Xen: physinfo's 0 is not clean, a heap dump
	 * is asked for, and probes stay rationed. */
	bed_init(&b, 0, 1);
	bed_set_policy(&b, "[default]\nscrub = sync\n[daemon]\nscrub-probe-interval = 5s\n");
	bed_start(&b);
	fake_hv_set_scrub(b.hv, HV_SCRUB_HEAP_DUMP, 500);
	fake_hv_add(b.hv, 85, 85, 1000, 0);
	bed_request(&b, 85, 85);
	bed_settle(&b);
	ok(fake_hv_scrub_sources_asked(b.hv) & HV_SCRUB_HEAP_DUMP,
	   "a released Xen: a heap dump may be asked for (physinfo's 0 says nothing)");
	is_int(reaper_next_deadline(b.r), clock_mono_ms() + 5000, "  and the next probe waits for the interval");
	bed_dispose(&b);
}

static void test_deferred_scrub(void)
{
	struct bed b;

	bed_init(&b, 0, 1);
	bed_start(&b);
	fake_hv_set_scrub(b.hv, HV_SCRUB_HEAP_DUMP, 700);
	fake_hv_add(b.hv, 81, 81, 1000, 0);
	bed_request(&b, 81, 81);
	bed_settle(&b);
	is_str(bed_node(&b, 81, "policy"), "deferred", "job records its deferred policy");
	is_str(bed_node(&b, 81, "state"), "done", "deferred job done when the pages are back");
	is_int(fake_hv_scrub_probes(b.hv), 0, "  and no probe yet: releases may still come");
	is_int(reaper_next_deadline(b.r), clock_mono_ms() + SCRUB_DEFERRED_SETTLE_MS,
	       "  one is due once releases have settled");
	bed_run(&b, SCRUB_DEFERRED_SETTLE_MS);
	is_str(bed_node(&b, 81, "scrub-pages"), "700", "then its backlog is reported");
	fake_hv_set_scrub(b.hv, HV_SCRUB_HEAP_DUMP, 0);
	bed_run(&b, SCRUB_DEFERRED_MIN_GAP_MS - 1);
	is_int(fake_hv_scrub_probes(b.hv), 1, "  and not probed again within a minute");
	bed_run(&b, 1);
	is_str(bed_node(&b, 81, "scrub-pages"), "0", "  then it drains to 0");
	bed_run(&b, 3600 * 1000);
	is_int(fake_hv_scrub_probes(b.hv), 2, "  and nothing more is probed once it reads 0");
	bed_dispose(&b);
}

static void test_scrub_attribution(void)
{
	struct bed b;

	bed_init(&b, 0, 2);
	bed_set_policy(&b, "[default]\nscrub = sync\n");
	bed_start(&b);
	fake_hv_set_scrub(b.hv, HV_SCRUB_HEAP_DUMP, 2000);
	fake_hv_add(b.hv, 82, 82, 1000, 0);
	fake_hv_add(b.hv, 83, 83, 3000, 0);
	fake_hv_hold(b.hv);
	bed_request(&b, 82, 82);
	bed_request(&b, 83, 83);
	reaper_handle_store_events(b.r);
	reaper_tick(b.r);
	fake_hv_release(b.hv);
	bed_settle(&b);
	bed_run(&b, 1000);
	is_str(bed_node(&b, 82, "scrub-pages"), "500", "backlog shared in proportion (1000 of 4000)");
	is_str(bed_node(&b, 83, "scrub-pages"), "1500", "backlog shared in proportion (3000 of 4000)");
	fake_hv_set_scrub(b.hv, HV_SCRUB_HEAP_DUMP, 9000);
	bed_run(&b, SCRUB_SYNC_MAX_GAP_MS);
	is_str(bed_node(&b, 82, "scrub-pages"), "1000", "a share never exceeds what the job released");
	is_str(bed_node(&b, 83, "scrub-pages"), "3000", "  nor for the other");
	bed_dispose(&b);
}

/* A real clock moves between the reads of one tick: whatever is due "now"
 * must still be done in that tick, or the main loop spins on a timer that
 * is always already expired (seen on real Xen). */
static void test_due_now_with_a_moving_clock(void)
{
	struct bed b;
	unsigned probes;

	bed_init(&b, 0, 1);
	bed_start(&b);
	fake_hv_set_scrub(b.hv, HV_SCRUB_HEAP_DUMP, 100);
	fake_hv_add(b.hv, 86, 86, 1000, 0);
	bed_request(&b, 86, 86);
	bed_settle(&b);
	fake_hv_set_scrub(b.hv, HV_SCRUB_HEAP_DUMP, 0);
	clock_set_fake_drift(1);
	clock_advance(SCRUB_DEFERRED_SETTLE_MS);
	probes = fake_hv_scrub_probes(b.hv);
	reaper_tick(b.r);
	is_int(fake_hv_scrub_probes(b.hv), probes + 1, "an overdue probe runs in the next tick");
	is_int(reaper_next_deadline(b.r) > clock_mono_ms() || reaper_next_deadline(b.r) < 0, 1,
	       "  and nothing is left overdue (no busy loop)");
	clock_set_fake_drift(0);
	bed_dispose(&b);
}

static void test_no_scrub_figure(void)
{
	struct bed b;

	bed_init(&b, 0, 1);
	bed_set_policy(&b, "[default]\nscrub = sync\n[daemon]\nscrub-probe = none\n");
	bed_start(&b);
	is_str(fake_store_get(b.s, LAYOUT_SCRUB_DIR "/source"), "none", "scrub/source says none");
	ok(fake_store_get(b.s, LAYOUT_SCRUB_DIR "/pages") == NULL, "  and no invented figure");
	fake_hv_add(b.hv, 84, 84, 1000, 0);
	bed_request(&b, 84, 84);
	bed_settle(&b);
	is_str(bed_node(&b, 84, "state"), "done", "sync job without a figure ends done at pages returned");
	is_int(fake_hv_scrub_probes(b.hv), 0, "  and no probe was made");
	bed_dispose(&b);
}

static void test_policy_captured(void)
{
	struct bed b;

	bed_init(&b, 0, 1);
	bed_set_policy(&b, "[default]\nscrub = sync\n");
	bed_start(&b);
	fake_hv_set_scrub(b.hv, HV_SCRUB_HEAP_DUMP, 100);
	fake_hv_add(b.hv, 85, 85, 1000, 0);
	fake_hv_hold(b.hv);
	bed_request(&b, 85, 85);
	reaper_handle_store_events(b.r);
	reaper_tick(b.r);
	bed_set_policy(&b, "[default]\nscrub = deferred\n");	/* a reload mid-job */
	fake_hv_release(b.hv);
	bed_settle(&b);
	is_str(bed_node(&b, 85, "state"), "scrubbing", "a running job keeps the policy it started with");
	bed_dispose(&b);
}

static void test_preserved(void)
{
	struct bed b;

	bed_init(&b, 0, 1);
	bed_set_policy(&b, "[default]\nteardown = request\n"
		       "[pool:pool1]\nteardown = shutdown,crash\ngrace = 2s\n");
	bed_start(&b);
	fake_hv_add(b.hv, 90, 90, 100, 1);	/* pool1: torn down after grace */
	fake_hv_add(b.hv, 91, 91, 100, 0);	/* Pool-0: request only */
	fake_hv_add(b.hv, 92, 92, 100, 1);	/* pool1, rebooting: never */
	fake_hv_add(b.hv, 93, 93, 100, 1);	/* pool1, crashed */
	fake_hv_shutdown(b.hv, 90, HV_SHUTDOWN_POWEROFF);
	fake_hv_shutdown(b.hv, 91, HV_SHUTDOWN_POWEROFF);
	fake_hv_shutdown(b.hv, 92, HV_SHUTDOWN_REBOOT);
	fake_hv_shutdown(b.hv, 93, HV_SHUTDOWN_CRASH);
	fake_store_fire(b.s, "@releaseDomain");
	bed_settle(&b);
	ok(bed_node(&b, 90, "state") == NULL, "no teardown during the grace period");
	is_int(reaper_next_deadline(b.r), clock_mono_ms() + 2000, "grace period ends in 2 s");
	clock_advance(2000);
	bed_settle(&b);
	is_str(bed_node(&b, 90, "state"), "done", "powered-off guest in an auto pool torn down");
	is_str(bed_node(&b, 90, "reason"), "poweroff", "  with reason poweroff");
	is_str(bed_node(&b, 93, "state"), "done", "crashed guest in an auto pool torn down");
	is_str(bed_node(&b, 93, "reason"), "crash", "  with reason crash");
	ok(bed_node(&b, 91, "state") == NULL && fake_hv_exists(b.hv, 91),
	   "the same in a request-only pool is left alone");
	ok(bed_node(&b, 92, "state") == NULL && fake_hv_exists(b.hv, 92), "a rebooting guest is left alone");
	bed_dispose(&b);
}

static void test_preserved_revived(void)
{
	struct bed b;

	bed_init(&b, 0, 1);
	bed_set_policy(&b, "[default]\nteardown = shutdown\ngrace = 5s\n");
	bed_start(&b);
	fake_hv_add(b.hv, 94, 94, 100, 0);
	fake_hv_shutdown(b.hv, 94, HV_SHUTDOWN_POWEROFF);
	fake_store_fire(b.s, "@releaseDomain");
	bed_settle(&b);
	/* Someone else destroys it and the domid comes back as a new guest. */
	fake_hv_remove(b.hv, 94);
	fake_hv_add(b.hv, 94, 194, 100, 0);
	fake_store_fire(b.s, "@introduceDomain");
	bed_settle(&b);
	clock_advance(5000);
	bed_settle(&b);
	ok(bed_node(&b, 94, "state") == NULL && fake_hv_exists(b.hv, 94),
	   "a new guest on a dead guest's domid is never torn down");
	bed_dispose(&b);
}

static void test_protect(void)
{
	struct bed b;
	char uuid[HV_UUID_STR_LEN], text[160];

	fake_hv_uuid_text(96, uuid);
	snprintf(text, sizeof(text), "[daemon]\nprotect = db %s\n", uuid);
	bed_init(&b, 0, 1);
	bed_set_policy(&b, text);
	bed_start(&b);
	fake_hv_add(b.hv, 95, 95, 100, 0);
	fake_hv_add(b.hv, 96, 96, 100, 0);
	store_write(b.s, STORE_TX_NONE, "/local/domain/95/name", "db");
	bed_request(&b, 95, 95);
	bed_request(&b, 96, 96);
	bed_settle(&b);
	is_str(bed_node(&b, 95, "state"), "failed", "domain protected by name refused");
	ok(bed_node(&b, 95, "error") && strstr(bed_node(&b, 95, "error"), "protect"), "  and says why");
	is_str(bed_node(&b, 96, "state"), "failed", "domain protected by UUID refused");
	ok(fake_hv_exists(b.hv, 95) && fake_hv_exists(b.hv, 96), "protected domains live");
	bed_dispose(&b);

	/* A protected guest that dies in an auto pool is not even tried. */
	snprintf(text, sizeof(text), "[daemon]\nprotect = db\n[default]\nteardown = shutdown\ngrace = 1s\n");
	bed_init(&b, 0, 1);
	bed_set_policy(&b, text);
	bed_start(&b);
	fake_hv_add(b.hv, 97, 97, 100, 0);
	store_write(b.s, STORE_TX_NONE, "/local/domain/97/name", "db");
	fake_hv_shutdown(b.hv, 97, HV_SHUTDOWN_POWEROFF);
	fake_store_fire(b.s, "@releaseDomain");
	bed_settle(&b);
	is_int(reaper_next_deadline(b.r), -1, "no grace period starts for a protected dead guest");
	clock_advance(1000);
	bed_settle(&b);
	ok(bed_node(&b, 97, "state") == NULL && fake_hv_exists(b.hv, 97), "  and no job is made for it");
	bed_dispose(&b);
}

int main(void)
{
	test_start();
	test_teardown();
	test_progress();
	test_progress_unfollowed();
	test_refusals();
	test_guard_at_start();
	test_one_at_a_time();
	test_parallel();
	test_zombie();
	test_destroy_fails();
	test_index();
	test_retention();
	test_expiry_order();
	test_duplicates_and_conflicts();
	test_resume();
	test_resume_guard();
	test_stubdom();
	test_sync_scrub();
	test_exact_scrub();
	test_deferred_scrub();
	test_scrub_attribution();
	test_no_scrub_figure();
	test_due_now_with_a_moving_clock();
	test_policy_captured();
	test_preserved();
	test_preserved_revived();
	test_protect();
	return tap_done();
}
