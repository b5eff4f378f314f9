/*
 * Regression tests for the defects a review of xenreaperd found (each
 * failed before its fix; the comment above each says how): stopping during
 * a teardown, failures that spun, a lost xenstored, a grace period that
 * replaced a running job, scrub probes that failed or cost the console too
 * much, a resumed job's priority, reloads, protection that failed open, the
 * UUID guard's time-of-check gap, stray request names, a final state never
 * republished, unbounded retained jobs, permissions, and our tree removed
 * from under us.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bed.h"
#include "clock.h"
#include "fake_hv.h"
#include "fake_store.h"
#include "layout.h"
#include "reaper.h"
#include "scrub.h"
#include "tap.h"

static void policy_none(struct bed *b)
{
	b->cfg->scrub_probe = CONFIG_PROBE_NONE;
}

/* Before: the pool left a worker detached inside hv_destroy and the caller
 * freed the hv under it (ASan: heap-use-after-free in test_parallel).  The
 * fake keeps a freed-while-busy count; the held destroy ends by itself
 * after 300 ms, so a pool that waits for it never sees it. */
static void test_stop_mid_teardown(void)
{
	unsigned before = fake_hv_freed_while_busy();
	struct bed b;

	bed_init(&b, 0, 2);
	policy_none(&b);
	bed_start(&b);
	fake_hv_add(b.hv, 5, 5, 1000, 0);
	fake_hv_add(b.hv, 6, 6, 1000, 0);
	fake_hv_add(b.hv, 7, 7, 1000, 0);
	fake_hv_hold_for(b.hv, 300);
	bed_request(&b, 5, 5);
	bed_request(&b, 6, 6);
	bed_request(&b, 7, 7);
	reaper_handle_store_events(b.r);
	reaper_tick(b.r);
	fake_hv_wait_inside(b.hv, 2);
	is_int(reaper_busy(b.r), 2, "two teardowns running when the stop comes");
	reaper_stop(b.r);
	is_str(fake_store_get(b.s, LAYOUT_DAEMON_DIR "/state"), "stopping", "daemon/state says stopping");
	fake_hv_add(b.hv, 8, 8, 1000, 0);
	bed_request(&b, 8, 8);
	reaper_handle_store_events(b.r);
	reaper_tick(b.r);
	ok(fake_store_get(b.s, LAYOUT_REQUEST_DIR "/8") != NULL && !bed_node(&b, 8, "state"),
	   "a request while stopping waits in xenstore for the next start");
	is_str(bed_node(&b, 7, "state"), "queued", "a queued job stays queued");
	/* The daemon's order: reaper, then the pool, then the hv it used. */
	reaper_free(b.r);
	b.r = NULL;
	runner_free(b.runner);
	b.runner = NULL;
	hv_free(b.hv);
	b.hv = NULL;
	is_int(fake_hv_freed_while_busy(), before, "the hv is never freed while a destroy runs on it");
	store_free(b.s);
	config_free(b.cfg);
}

/* Before: a failing removal of an expired job left its deadline at "now":
 * the timer fired on every arm, one log line per turn. */
static void test_expiry_failure_backs_off(void)
{
	struct bed b;

	bed_init(&b, 0, 1);
	policy_none(&b);
	b.cfg->retention_ms = 1000;
	bed_start(&b);
	fake_hv_add(b.hv, 40, 40, 100, 0);
	bed_request(&b, 40, 40);
	bed_settle(&b);
	fake_store_inject(b.s, FAKE_STORE_RM, 1, -EACCES, true);
	b.wakeups = 0;
	bed_run(&b, 10 * 60 * 1000);
	ok(b.wakeups <= 20, "an expired job that cannot be removed: %u wake-ups in 10 min", b.wakeups);
	ok(bed_node(&b, 40, "state") != NULL, "  and its record is still there");
	fake_store_inject(b.s, FAKE_STORE_RM, 0, 0, false);
	bed_run(&b, 61 * 1000);
	is_int(fake_store_count(b.s, LAYOUT_JOB_DIR "/40"), 0, "  removed once removal works");
	bed_dispose(&b);
}

/* Before: hv_list failing while a job was queued kept the deadline at
 * "now" (a busy loop); the request must not be lost either. */
static void test_list_failure_backs_off(void)
{
	struct bed b;

	bed_init(&b, 0, 1);
	policy_none(&b);
	bed_start(&b);
	fake_hv_add(b.hv, 41, 41, 100, 0);
	fake_hv_inject(b.hv, FAKE_HV_LIST, 1, -EIO, true);
	bed_request(&b, 41, 41);
	b.wakeups = 0;
	bed_run(&b, 10 * 60 * 1000);
	ok(b.wakeups <= 20, "domains cannot be listed: %u wake-ups in 10 min", b.wakeups);
	ok(fake_store_get(b.s, LAYOUT_REQUEST_DIR "/41") != NULL, "  the request waits in xenstore");
	is_int(fake_hv_destroy_calls(b.hv, 41), 0, "  and nothing was destroyed blind");
	fake_hv_inject(b.hv, FAKE_HV_LIST, 0, 0, false);
	bed_run(&b, 61 * 1000);
	is_str(bed_node(&b, 41, "state"), "done", "  served once listing works");
	bed_dispose(&b);

	/* The same with the job already queued (a restart's resume). */
	bed_init(&b, 0, 1);
	policy_none(&b);
	fake_hv_add(b.hv, 42, 42, 100, 0);
	bed_plant_job(b.s, 42, 42, JOB_QUEUED, 0);
	bed_start(&b);
	fake_hv_inject(b.hv, FAKE_HV_LIST, 1, -EIO, true);
	b.wakeups = 0;
	bed_run(&b, 10 * 60 * 1000);
	ok(b.wakeups <= 20, "a queued job while listing fails: %u wake-ups in 10 min", b.wakeups);
	fake_hv_inject(b.hv, FAKE_HV_LIST, 0, 0, false);
	bed_run(&b, 61 * 1000);
	is_str(bed_node(&b, 42, "state"), "done", "  and it runs once listing works");
	bed_dispose(&b);
}

/* Before: the daemon never noticed libxenstore's dead connection. */
static void test_lost_xenstored(void)
{
	struct bed b;

	bed_init(&b, 0, 1);
	policy_none(&b);
	bed_start(&b);
	fake_store_inject(b.s, FAKE_STORE_PING, 1, 0, false);
	fake_hv_add(b.hv, 43, 43, 100, 0);
	fake_store_inject(b.s, FAKE_STORE_WRITE, 1, -EINVAL, false);
	bed_request(&b, 43, 43);	/* fails: an ordinary EINVAL */
	ok(!store_lost(b.s), "an EINVAL that a ping does not confirm is not a lost connection");
	fake_store_inject(b.s, FAKE_STORE_TX_START, 1, -EBADF, true);
	bed_request(&b, 43, 43);
	is_int(reaper_handle_store_events(b.r), -ENOTCONN,
	       "EBADF from libxenstore: the reaper reports the connection lost");
	ok(store_lost(b.s), "  and the store stays lost");
	is_int(reaper_tick(b.r), -ENOTCONN, "  every tick says so (main exits non-zero)");
	bed_dispose(&b);

	bed_init(&b, 0, 1);
	bed_start(&b);
	fake_store_inject(b.s, FAKE_STORE_PING, 1, -EBADF, true);
	fake_store_inject(b.s, FAKE_STORE_READ, 1, -EINVAL, true);
	store_read(b.s, STORE_TX_NONE, LAYOUT_DAEMON_DIR "/pid", &(char *){ NULL });
	ok(store_lost(b.s), "EINVAL confirmed by a failing ping: lost");
	bed_dispose(&b);
}

/* Before: a grace period ending for a guest that a request was already
 * tearing down replaced the running job (reason flipped to poweroff, a
 * second destroy ran, the first completion landed on the wrong job). */
static void test_grace_never_replaces_running_job(void)
{
	struct bed b;

	bed_init(&b, 0, 2);
	bed_set_policy(&b, "[default]\nteardown = shutdown\ngrace = 2s\n[daemon]\nscrub-probe = none\n");
	bed_start(&b);
	fake_hv_add(b.hv, 90, 90, 100, 0);
	fake_hv_shutdown(b.hv, 90, HV_SHUTDOWN_POWEROFF);
	fake_store_fire(b.s, "@releaseDomain");
	bed_settle(&b);
	fake_hv_hold(b.hv);
	bed_request(&b, 90, 90);
	reaper_handle_store_events(b.r);
	reaper_tick(b.r);
	is_str(bed_node(&b, 90, "state"), "destroying", "a request for the dead guest runs");
	clock_advance(2000);
	reaper_tick(b.r);
	is_str(bed_node(&b, 90, "reason"), "request", "the grace period ending does not replace it");
	is_int(reaper_busy(b.r), 1, "  and starts no second destroy");
	fake_hv_release(b.hv);
	bed_settle(&b);
	is_str(bed_node(&b, 90, "state"), "done", "  the request's job ends done");
	is_int(fake_hv_destroy_calls(b.hv, 90), 1, "  destroyed once");
	bed_dispose(&b);
}

/* Before: a probe that kept failing left sync jobs scrubbing for ever,
 * probing every second. */
static void test_failing_probe_gives_up(void)
{
	struct bed b;
	unsigned probes, failures;

	bed_init(&b, 0, 1);
	bed_set_policy(&b, "[default]\nscrub = sync\n");
	bed_start(&b);
	fake_hv_set_scrub(b.hv, HV_SCRUB_HEAP_DUMP, 500);
	fake_hv_inject(b.hv, FAKE_HV_SCRUB_PROBE, 1, -EACCES, true);
	fake_hv_add(b.hv, 80, 80, 1000, 0);
	bed_request(&b, 80, 80);
	bed_settle(&b);
	is_str(bed_node(&b, 80, "state"), "scrubbing", "a sync job waits for its figure");
	/* Seen on real Xen: scrubbing with scrub-pages 0 until the first
	 * probe, against the man page's "stays scrubbing until this is 0". */
	is_str(bed_node(&b, 80, "scrub-pages"), "1000", "  and, before any figure, all it released waits for a scrub");
	b.wakeups = 0;
	bed_run(&b, SCRUB_GIVE_UP_MS + 20000);
	is_str(bed_node(&b, 80, "state"), "done", "probes failing for long: the job ends done");
	is_int(fake_hv_calls(b.hv, FAKE_HV_SCRUB_PROBE) <= 8, 1, "  after a few backed-off probes, not one a second");
	printf("# probes tried while failing: %u, wake-ups %u\n",
	       fake_hv_calls(b.hv, FAKE_HV_SCRUB_PROBE), b.wakeups);
	is_str(fake_store_get(b.s, LAYOUT_SCRUB_DIR "/source"), "none", "  scrub/source says none");
	/* A sync job now ends done at once: the source is known broken. */
	probes = fake_hv_calls(b.hv, FAKE_HV_SCRUB_PROBE);
	fake_hv_add(b.hv, 81, 81, 1000, 0);
	bed_request(&b, 81, 81);
	bed_settle(&b);
	is_str(bed_node(&b, 81, "state"), "done", "  the next sync job does not wait on a broken probe");
	is_int(fake_hv_calls(b.hv, FAKE_HV_SCRUB_PROBE), probes, "  and costs no probe");
	bed_dispose(&b);
	(void)failures;
}

/* Before: every teardown, deferred ones too, pressed debug key H every
 * second until the backlog read 0: 20 deferred teardowns in a row cost a
 * probe per second for as long as they ran, and each probe writes ~43
 * lines into a 16 KiB console ring. */
static void test_deferred_teardowns_probe_little(void)
{
	struct bed b;
	unsigned probes;

	bed_init(&b, 0, 1);
	bed_start(&b);
	fake_hv_set_scrub(b.hv, HV_SCRUB_HEAP_DUMP, 50000);
	for (uint32_t d = 100; d < 120; d++) {
		fake_hv_add(b.hv, d, (uint8_t)d, 65536, 0);
		bed_request(&b, d, (uint8_t)d);
		bed_run(&b, 1500);	/* a teardown every 1.5 s, as on real Xen */
	}
	probes = fake_hv_scrub_probes(b.hv);
	ok(probes <= 1, "20 deferred teardowns in 30 s: %u probe(s) while they ran", probes);
	fake_hv_set_scrub(b.hv, HV_SCRUB_HEAP_DUMP, 0);
	bed_run(&b, 10 * 60 * 1000);
	probes = fake_hv_scrub_probes(b.hv);
	ok(probes <= 3, "  %u probe(s) in all, until the backlog read 0", probes);
	bed_run(&b, 60 * 60 * 1000);
	is_int(fake_hv_scrub_probes(b.hv), probes, "  none once nothing is pending");
	bed_dispose(&b);
}

/* A sync job's probes follow the learnt scrub rate instead of the clock. */
static void test_sync_probes_follow_the_rate(void)
{
	struct bed b;
	uint64_t backlog = 100000;
	unsigned probes;

	bed_init(&b, 0, 1);
	bed_set_policy(&b, "[default]\nscrub = sync\n[daemon]\nscrub-probe-interval = 100ms\n");
	bed_start(&b);
	fake_hv_set_scrub(b.hv, HV_SCRUB_HEAP_DUMP, backlog);
	fake_hv_add(b.hv, 85, 85, 100000, 0);
	bed_request(&b, 85, 85);
	bed_settle(&b);
	/* The host scrubs 10000 pages a second: the backlog drains in 10 s. */
	for (int second = 1; second <= 12; second++) {
		backlog = backlog > 10000 ? backlog - 10000 : 0;
		fake_hv_set_scrub(b.hv, HV_SCRUB_HEAP_DUMP, backlog);
		bed_run(&b, 1000);
		if (!strcmp(bed_node(&b, 85, "state"), "done"))
			break;
	}
	probes = fake_hv_scrub_probes(b.hv);
	is_str(bed_node(&b, 85, "state"), "done", "the sync job ends done when the backlog drains");
	ok(probes <= 8, "  with %u probes over 10 s at a 100 ms interval (not 100)", probes);
	bed_dispose(&b);
}

/* Before: the priority was not stored; a resumed job ran at SCHED_IDLE
 * whatever the pool said. */
static void test_resume_keeps_priority(void)
{
	struct bed b;
	struct job *job;

	bed_init(&b, 0, 1);
	bed_set_policy(&b, "[default]\npriority = normal\n[daemon]\nscrub-probe = none\n");
	bed_start(&b);
	fake_hv_add(b.hv, 50, 50, 100, 0);
	fake_hv_hold(b.hv);
	bed_request(&b, 50, 50);
	reaper_handle_store_events(b.r);
	reaper_tick(b.r);
	is_str(bed_node(&b, 50, "priority"), "normal", "the job records its priority");
	/* kill -9: a new daemon with the default policy finds the job. */
	fake_hv_release(b.hv);
	reaper_free(b.r);
	b.r = NULL;
	runner_free(b.runner);
	fake_runner_new(b.hv, &b.runner);
	bed_set_policy(&b, "[daemon]\nscrub-probe = none\n");
	fake_hv_hold(b.hv);
	bed_start(&b);
	job = reaper_find_job(b.r, 50);
	ok(job && job->priority == JOB_PRIORITY_NORMAL, "the resumed job keeps priority normal");
	fake_hv_release(b.hv);
	bed_settle(&b);
	bed_dispose(&b);
}

/* Before: a reload did not touch grace periods already running. */
static void test_reload_cancels_grace(void)
{
	struct bed b;

	bed_init(&b, 0, 1);
	bed_set_policy(&b, "[default]\nteardown = shutdown\ngrace = 5s\n[daemon]\nscrub-probe = none\n");
	bed_start(&b);
	fake_hv_add(b.hv, 60, 60, 100, 0);
	fake_hv_shutdown(b.hv, 60, HV_SHUTDOWN_POWEROFF);
	fake_hv_add(b.hv, 61, 61, 100, 1);
	fake_hv_shutdown(b.hv, 61, HV_SHUTDOWN_POWEROFF);
	fake_store_fire(b.s, "@releaseDomain");
	bed_settle(&b);
	bed_set_policy(&b, "[default]\nteardown = request\n[pool:pool1]\nteardown = shutdown\ngrace = 1s\n"
		       "[daemon]\nscrub-probe = none\n");
	bed_run(&b, 1000);
	is_str(bed_node(&b, 61, "state"), "done", "a pool whose grace got shorter tears down sooner");
	bed_run(&b, 10000);
	ok(!bed_node(&b, 60, "state") && fake_hv_exists(b.hv, 60),
	   "a reload to teardown = request cancels the grace period already running");
	bed_dispose(&b);
}

/* Before: a failed name read made the name empty and a guest protected by
 * name was destroyed; a failed pool lookup fell back to [default]; and
 * protect split `web 1` in two. */
static void test_protection_fails_closed(void)
{
	struct bed b;

	bed_init(&b, 0, 1);
	bed_set_policy(&b, "[daemon]\nprotect = db \"web 1\"\nscrub-probe = none\n");
	bed_start(&b);
	fake_hv_add(b.hv, 70, 70, 100, 0);
	store_write(b.s, STORE_TX_NONE, "/local/domain/70/name", "db");
	fake_store_fail_reads(b.s, "/local/domain/70/name", -EIO);
	bed_request(&b, 70, 70);
	bed_settle(&b);
	is_str(bed_node(&b, 70, "state"), "failed", "a guest whose name cannot be read is not torn down");
	ok(bed_node(&b, 70, "error") && strstr(bed_node(&b, 70, "error"), "cannot be told"), "  and the job says why");
	fake_store_fail_reads(b.s, NULL, 0);
	fake_hv_add(b.hv, 71, 71, 100, 0);	/* no name node at all */
	bed_request(&b, 71, 71);
	fake_hv_add(b.hv, 72, 72, 100, 0);
	store_write(b.s, STORE_TX_NONE, "/local/domain/72/name", "web 1");
	bed_request(&b, 72, 72);
	bed_settle(&b);
	is_str(bed_node(&b, 71, "state"), "failed", "  nor one with no name, while protect names guests");
	is_str(bed_node(&b, 72, "state"), "failed", "a guest named `web 1` is protected by its quoted name");
	fake_hv_inject(b.hv, FAKE_HV_POOL_NAME, 1, -ENOENT, false);
	fake_hv_add(b.hv, 73, 73, 100, 0);
	store_write(b.s, STORE_TX_NONE, "/local/domain/73/name", "other");
	bed_request(&b, 73, 73);
	bed_settle(&b);
	is_str(bed_node(&b, 73, "state"), "failed", "a guest whose cpupool cannot be named is not torn down");
	ok(bed_node(&b, 73, "error") && strstr(bed_node(&b, 73, "error"), "cpupool"), "  and the job says why");
	is_int(fake_hv_destroy_calls(b.hv, 70) + fake_hv_destroy_calls(b.hv, 71) +
	       fake_hv_destroy_calls(b.hv, 72) + fake_hv_destroy_calls(b.hv, 73), 0, "nothing was destroyed");
	bed_dispose(&b);

	/* The same for automatic teardowns. */
	bed_init(&b, 0, 1);
	bed_set_policy(&b, "[daemon]\nprotect = db\nscrub-probe = none\n[default]\nteardown = shutdown\ngrace = 1s\n");
	bed_start(&b);
	fake_hv_add(b.hv, 74, 74, 100, 0);
	fake_hv_shutdown(b.hv, 74, HV_SHUTDOWN_POWEROFF);
	fake_store_fail_reads(b.s, "/local/domain/74/name", -EACCES);
	fake_store_fire(b.s, "@releaseDomain");
	bed_run(&b, 5000);
	ok(!bed_node(&b, 74, "state") && fake_hv_exists(b.hv, 74),
	   "a dead guest whose name cannot be read is left alone");
	bed_dispose(&b);
}

/* Before: the worker destroyed by domid only; a domid reused between the
 * main thread's check and the destroy was torn down. */
static void test_worker_rechecks_uuid(void)
{
	struct bed b;

	bed_init(&b, 0, 1);
	policy_none(&b);
	bed_start(&b);
	fake_hv_add(b.hv, 12, 12, 100, 0);
	fake_hv_hold(b.hv);
	bed_request(&b, 12, 12);
	reaper_handle_store_events(b.r);
	reaper_tick(b.r);
	fake_hv_wait_inside(b.hv, 1);
	fake_hv_remove(b.hv, 12);
	fake_hv_add(b.hv, 12, 112, 100, 0);	/* another guest, same domid */
	fake_hv_release(b.hv);
	bed_settle(&b);
	is_int(fake_hv_destroy_calls(b.hv, 12), 0, "the new guest on a reused domid is not destroyed");
	ok(fake_hv_exists(b.hv, 12), "  it lives");
	is_str(bed_node(&b, 12, "state"), "done", "  and the job (its domain gone) is done");
	bed_dispose(&b);
}

/* Before: a request name longer than the path buffer was truncated: never
 * removed, never logged, retried on every event. */
static void test_stray_request_names(void)
{
	char path[600], name[400];
	struct bed b;

	bed_init(&b, 0, 1);
	policy_none(&b);
	bed_start(&b);
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	snprintf(path, sizeof(path), LAYOUT_REQUEST_DIR "/%s", name);
	store_write(b.s, STORE_TX_NONE, path, "whatever");
	store_write(b.s, STORE_TX_NONE, LAYOUT_REQUEST_DIR "/12\n<3>forged", "v");
	bed_settle(&b);
	is_int(fake_store_count(b.s, LAYOUT_REQUEST_DIR), 1, "a 400-character request name is removed");
	bed_dispose(&b);
}

/* Before: a failed publish of a final state was never retried. */
static void test_final_state_republished(void)
{
	struct bed b;

	bed_init(&b, 0, 1);
	policy_none(&b);
	bed_start(&b);
	fake_hv_add(b.hv, 44, 44, 100, 0);
	fake_hv_hold(b.hv);
	bed_request(&b, 44, 44);
	reaper_handle_store_events(b.r);
	reaper_tick(b.r);
	fake_store_inject(b.s, FAKE_STORE_TX_START, 1, -EIO, true);
	fake_hv_release(b.hv);
	bed_settle(&b);
	is_str(bed_node(&b, 44, "state"), "destroying", "publishing done failed: xenstore lags");
	fake_store_inject(b.s, FAKE_STORE_TX_START, 0, 0, false);
	bed_run(&b, 2000);
	is_str(bed_node(&b, 44, "state"), "done", "  and catches up once xenstore takes writes");
	bed_dispose(&b);
}

/* Before: finished jobs were bounded only by the domid space. */
static void test_retained_cap(void)
{
	struct bed b;
	unsigned n;

	bed_init(&b, 0, 1);
	policy_none(&b);
	bed_start(&b);
	for (uint32_t d = 1000; d < 1000 + REAPER_RETAIN_MAX + 40; d++) {
		bed_request(&b, d, 1);
		reaper_handle_store_events(b.r);
		clock_advance(10);
	}
	char **names = NULL;
	store_list(b.s, STORE_TX_NONE, LAYOUT_JOB_DIR, &names, &n);
	store_names_free(names, n);
	is_int(n, REAPER_RETAIN_MAX, "refused requests for unknown domids: the records are capped");
	ok(!bed_node(&b, 1000, "state") && !bed_node(&b, 1039, "state") && bed_node(&b, 1040, "state"),
	   "  the oldest finished go first");
	bed_dispose(&b);
}

/* Before: only /tool/xenreaper was set dom0-only; nodes an admin had
 * opened stayed open. */
static void test_every_node_private(void)
{
	struct bed b;

	bed_init(&b, 0, 1);
	policy_none(&b);
	bed_plant_job(b.s, 45, 45, JOB_DONE, 1700000000000 - 1000);
	store_write(b.s, STORE_TX_NONE, LAYOUT_REQUEST_DIR, "");
	fake_store_set_open(b.s, LAYOUT_JOB_DIR "/45/state");
	fake_store_set_open(b.s, LAYOUT_REQUEST_DIR);
	bed_start(&b);
	ok(fake_store_is_private(b.s, LAYOUT_REQUEST_DIR), "the request directory is dom0-only from the start");
	/* A finished job's record is made private when it is read, after
	 * the start (reaper_load_history). */
	bed_settle(&b);
	is_int(fake_store_count_open(b.s, LAYOUT_ROOT), 0, "every node under " LAYOUT_ROOT " is dom0-only");
	bed_dispose(&b);
}

/* Before: after `xenstore-rm /tool/xenreaper` the daemon nodes stayed gone
 * and every client said the daemon was not running. */
static void test_tree_restored(void)
{
	struct bed b;
	char pid[16];

	bed_init(&b, 0, 1);
	policy_none(&b);
	bed_start(&b);
	fake_hv_add(b.hv, 46, 46, 100, 0);
	bed_request(&b, 46, 46);
	bed_settle(&b);
	reaper_handle_store_events(b.r);
	store_rm(b.s, STORE_TX_NONE, LAYOUT_ROOT);
	bed_settle(&b);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	is_str(fake_store_get(b.s, LAYOUT_DAEMON_DIR "/pid"), pid, "daemon/pid restored");
	is_str(fake_store_get(b.s, LAYOUT_DAEMON_DIR "/state"), "running", "daemon/state restored");
	ok(fake_store_get(b.s, LAYOUT_REQUEST_DIR) != NULL, "the request directory is back");
	is_str(bed_node(&b, 46, "state"), "done", "jobs are published again");
	ok(fake_store_is_private(b.s, LAYOUT_ROOT), "  dom0-only");
	fake_hv_add(b.hv, 47, 47, 100, 0);
	bed_request(&b, 47, 47);
	bed_settle(&b);
	is_str(bed_node(&b, 47, "state"), "done", "and requests are served");
	bed_dispose(&b);
}

int main(void)
{
	test_stop_mid_teardown();
	test_expiry_failure_backs_off();
	test_list_failure_backs_off();
	test_lost_xenstored();
	test_grace_never_replaces_running_job();
	test_failing_probe_gives_up();
	test_deferred_teardowns_probe_little();
	test_sync_probes_follow_the_rate();
	test_resume_keeps_priority();
	test_reload_cancels_grace();
	test_protection_fails_closed();
	test_worker_rechecks_uuid();
	test_stray_request_names();
	test_final_state_republished();
	test_retained_cap();
	test_every_node_private();
	test_tree_restored();
	return tap_done();
}
