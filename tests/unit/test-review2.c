/*
 * Regression tests for the defects the second review found in the daemon's
 * core (issue 21), each of which failed before its fix (the comment above
 * each says how): the main loop spinning while the pool is full, a stop
 * that exited before the teardown it waited for was settled, orphan
 * protection decided by a stale name, and a reload that never adopted the
 * orphan it had ignored.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bed.h"
#include "clock.h"
#include "fake_hv.h"
#include "fake_store.h"
#include "layout.h"
#include "orphans.h"
#include "reaper.h"
#include "tap.h"

/* The default progress interval samples 4 times a second; allow one more
 * wake-up a second for everything else that may be due. */
#define WAKEUPS_PER_S_MAX 5

enum due_kind { DUE_ORPHAN, DUE_ZOMBIE, DUE_FAILED_DESTROY };

static const char *due_kind_name(enum due_kind kind)
{
	return kind == DUE_ORPHAN ? "an adopted orphan" :
	       kind == DUE_ZOMBIE ? "an own zombie past its settle time" : "a backed-off failed destroy";
}

/* Before: reaper_next_deadline() woke at a due retry that teardown_retry()
 * could not submit while every worker was busy, so the timer was armed in
 * the past on every turn until the running teardown ended: 1000 spinning
 * turns of 1000 here (bed_run_busy stops there), and an xc_physinfo call
 * and a metrics render on each. */
static void test_full_pool_does_not_spin(enum due_kind kind)
{
	unsigned spins, lists, physinfo;
	struct bed b;

	bed_init(&b, 0, 1);
	b.cfg->scrub_probe = CONFIG_PROBE_NONE;
	bed_start(&b);
	bed_add_named(&b, 5, 100000, 0, "busy");
	bed_add_named(&b, 7, 1000, 0, "other");
	fake_store_fire(b.s, "@introduceDomain");
	bed_settle(&b);
	if (kind == DUE_ZOMBIE)
		fake_hv_make_zombie(b.hv, 7, UINT32_MAX, 3);
	if (kind == DUE_FAILED_DESTROY)
		fake_hv_make_failing(b.hv, 7);
	if (kind == DUE_ORPHAN) {
		bed_other_toolstack_destroys(&b, 7, 3);
	} else {
		bed_request(&b, 7, 7);
		bed_settle(&b);
	}
	/* Now the one worker goes to a long teardown. */
	fake_hv_hold(b.hv);
	bed_request(&b, 5, 5);
	reaper_handle_store_events(b.r);
	reaper_tick(b.r);
	fake_hv_wait_inside(b.hv, 1);
	lists = fake_hv_calls(b.hv, FAKE_HV_LIST);
	physinfo = fake_hv_calls(b.hv, FAKE_HV_FREE_PAGES);
	b.wakeups = 0;
	spins = bed_run_busy(&b, 20000);
	printf("# %s while the pool is full\n", due_kind_name(kind));
	is_int(spins, 0, "the timer is never armed in the past");
	ok(b.wakeups <= 20 * WAKEUPS_PER_S_MAX, "  %u wake-ups in 20 s of its time (at most %u)",
	   b.wakeups, 20 * WAKEUPS_PER_S_MAX);
	lists = fake_hv_calls(b.hv, FAKE_HV_LIST) - lists;
	physinfo = fake_hv_calls(b.hv, FAKE_HV_FREE_PAGES) - physinfo;
	ok(lists <= 20 * WAKEUPS_PER_S_MAX && physinfo <= 20 * WAKEUPS_PER_S_MAX,
	   "  %u domain lists and %u physinfo calls in 20 s", lists, physinfo);
	is_str(bed_node(&b, 7, "state"), kind == DUE_FAILED_DESTROY ? "destroying" : "zombie",
	       "  it waits for the worker in its state");
	/* The worker frees up: the due job gets it. */
	fake_hv_remove(b.hv, 7);
	fake_hv_release(b.hv);
	bed_settle(&b);
	bed_run(&b, 2000);
	is_str(bed_node(&b, 5, "state"), "done", "  the long teardown ends");
	is_int(fake_hv_destroy_calls(b.hv, 5), 1, "  destroyed once");
	is_str(bed_node(&b, 7, "state"), "done", "  then the waiting one is settled");
	bed_dispose(&b);
}

/* Before: main.c stopped once reaper_busy() was 0, which it is as soon as
 * the worker's destroy returns; the domain was still dying for a moment
 * (xenstored and xenconsoled drop their mappings when they see it), so the
 * job was left `destroying` in xenstore, and the next start "resumed" it and
 * said it "vanished before its teardown started" (seen in 50-service).
 * Now the stop waits for that settle (reaper_running), and the job is
 * published done, or a zombie once the settle time is over. */
static void test_stop_waits_for_the_settle(bool domain_goes)
{
	struct bed b;

	bed_init(&b, 0, 1);
	b.cfg->scrub_probe = CONFIG_PROBE_NONE;
	bed_start(&b);
	bed_add_named(&b, 5, 1000, 0, "stopped");
	fake_hv_make_zombie(b.hv, 5, UINT32_MAX, 2);
	fake_hv_hold(b.hv);
	bed_request(&b, 5, 5);
	reaper_handle_store_events(b.r);
	reaper_tick(b.r);
	fake_hv_wait_inside(b.hv, 1);
	reaper_stop(b.r);
	is_int(reaper_running(b.r), 1, "a stop during a teardown waits for it");
	fake_hv_release(b.hv);
	bed_settle(&b);
	is_int(reaper_busy(b.r), 0, "  its destroy returned");
	is_str(bed_node(&b, 5, "state"), "destroying", "  with the domain still dying");
	is_int(reaper_running(b.r), 1, "  and the stop still waits for the domain to go");
	ok(reaper_next_deadline(b.r) >= 0 &&
	   reaper_next_deadline(b.r) <= clock_mono_ms() + REAPER_ZOMBIE_SETTLE_MS,
	   "  for at most the settle time");
	if (domain_goes) {
		fake_hv_remove(b.hv, 5);
		fake_store_fire(b.s, "@releaseDomain");
		reaper_handle_store_events(b.r);
		reaper_tick(b.r);
		is_str(bed_node(&b, 5, "state"), "done", "  it goes: the job is published done before the exit");
	} else {
		bed_run(&b, REAPER_ZOMBIE_SETTLE_MS);
		is_str(bed_node(&b, 5, "state"), "zombie", "  it stays: published a zombie before the exit");
		is_int(fake_hv_destroy_calls(b.hv, 5), 1, "  and not destroyed again while stopping");
	}
	is_int(reaper_running(b.r), 0, "  then the stop goes on");
	bed_dispose(&b);
}

static void set_name(struct bed *b, uint32_t domid, const char *name)
{
	char path[64];

	snprintf(path, sizeof(path), "/local/domain/%u/name", domid);
	fake_store_set(b->s, path, name);
}

/* An orphan's fate after the settle time: its job state, or NULL. */
static const char *orphan_outcome(struct bed *b, uint32_t domid)
{
	bed_settle(b);
	bed_run(b, ORPHANS_SETTLE_MS);
	bed_settle(b);
	return bed_node(b, domid, "state");
}

/* Before: orphans_scan() kept the first name it read.  A guest created
 * as web--incoming (libxl's name for a guest migrating in) and renamed to
 * web when the migration ended was adopted under the name web--incoming
 * though `protect = web`; and one renamed away from a protected name
 * stayed protected.  Both outcomes were wrong before the fix (the first
 * adopted, the second left alone); and a rename and destroy too close to
 * see which name it died with were decided by the stale name. */
static void test_orphan_protection_follows_renames(void)
{
	const char *state;
	struct bed b;

	bed_init(&b, 0, 1);
	bed_set_policy(&b, "[daemon]\nprotect = web\nscrub-probe = none\n");
	bed_start(&b);
	bed_add_named(&b, 20, 1000, 0, "web--incoming");
	bed_add_named(&b, 21, 1000, 0, "web");
	bed_add_named(&b, 22, 1000, 0, "db");
	bed_add_named(&b, 23, 1000, 0, "cache");
	fake_store_fire(b.s, "@introduceDomain");
	bed_settle(&b);
	ok(fake_store_count_watches(b.s, LAYOUT_TOKEN_NAME) == 4, "each live guest's name is watched");
	set_name(&b, 20, "web");	/* the migration ended */
	set_name(&b, 21, "old-web");	/* xl rename */
	bed_settle(&b);
	bed_other_toolstack_destroys(&b, 20, 3);
	bed_other_toolstack_destroys(&b, 21, 3);
	state = orphan_outcome(&b, 20);
	ok(!state, "a guest migrated in as web--incoming and renamed web dies: protected, not adopted (%s)",
	   state ? state : "no job");
	is_str(orphan_outcome(&b, 21), "zombie", "one renamed from web to old-web dies: adopted");
	is_str(bed_node(&b, 21, "name"), "old-web", "  under the name it died with");
	/* Renamed and destroyed before the daemon saw the rename. */
	set_name(&b, 22, "web");
	bed_other_toolstack_destroys(&b, 22, 3);
	state = orphan_outcome(&b, 22);
	ok(!state, "renamed and destroyed at once: the name it died with is not sure, not adopted (%s)",
	   state ? state : "no job");
	/* Destroyed, no rename: the one event is the removal. */
	bed_other_toolstack_destroys(&b, 23, 3);
	is_str(orphan_outcome(&b, 23), "zombie", "destroyed without a rename: adopted");
	is_str(bed_node(&b, 23, "name"), "cache", "  under its name");
	bed_run(&b, 1000);
	is_int(fake_store_count_watches(b.s, LAYOUT_TOKEN_NAME), 4 - 0,
	       "  the watches of dead guests stay while they are there");
	fake_hv_remove(b.hv, 20);
	fake_hv_remove(b.hv, 21);
	fake_store_fire(b.s, "@releaseDomain");
	bed_settle(&b);
	is_int(fake_store_count_watches(b.s, LAYOUT_TOKEN_NAME), 2, "  and go with them");
	bed_dispose(&b);
}

/* Before: an orphan refused under `orphans = ignore` was never offered
 * again, so a reload to `adopt` left it alone (no job 10 s later on real
 * Xen; no job here). */
static void test_reload_adopts_what_was_ignored(void)
{
	struct bed b;

	bed_init(&b, 0, 1);
	bed_set_policy(&b, "[daemon]\nscrub-probe = none\n[default]\norphans = ignore\n");
	bed_start(&b);
	bed_add_named(&b, 30, 1000, 0, "left");
	fake_store_fire(b.s, "@introduceDomain");
	bed_settle(&b);
	bed_other_toolstack_destroys(&b, 30, 3);
	ok(!orphan_outcome(&b, 30), "orphans = ignore: a dead domain left behind gets no job");
	bed_run(&b, 10000);
	ok(!bed_node(&b, 30, "state"), "  nor later");
	bed_set_policy(&b, "[daemon]\nscrub-probe = none\n[default]\norphans = adopt\n");
	ok(reaper_next_deadline(b.r) >= 0 && reaper_next_deadline(b.r) <= clock_mono_ms(),
	   "a reload to adopt makes it due at once");
	bed_settle(&b);
	is_str(bed_node(&b, 30, "reason"), "orphan", "  and it is adopted");
	bed_set_policy(&b, "[daemon]\nscrub-probe = none\n[default]\norphans = ignore\n");
	bed_settle(&b);
	is_str(bed_node(&b, 30, "state"), "zombie", "a reload back to ignore leaves its job as it is");
	bed_dispose(&b);
}

/* Before: the start read every node of every retained job (13 reads each)
 * and walked every node to make it private (a list and a set-permissions
 * each), so it grew with the history: 10.4 s with 209 finished jobs on
 * emulated Xen, and here 22,097 xenstore calls for 513 jobs.  Now it reads
 * one node (the state) of each finished job and the rest after the start,
 * REAPER_HISTORY_BATCH a turn, while requests are served. */
static void test_start_does_not_read_the_history(void)
{
	unsigned calls, n_jobs, turns = 0;
	char **names = NULL;
	struct bed b;

	bed_init(&b, 0, 1);
	b.cfg->scrub_probe = CONFIG_PROBE_NONE;
	b.cfg->retention_ms = 24 * 3600 * 1000;
	for (uint32_t d = 1000; d < 1000 + REAPER_RETAIN_MAX; d++)
		bed_plant_job(b.s, d, 1, JOB_DONE, 1700000000000 - 60000 + d);
	bed_add_named(&b, 7, 1000, 0, "resumed");
	bed_plant_job(b.s, 7, 7, JOB_DESTROYING, 0);
	bed_add_named(&b, 1500, 1000, 0, "again");
	bed_plant_job(b.s, 8, 8, JOB_FAILED, 1700000000000 - 1000);
	calls = 0;
	for (int op = 0; op < FAKE_STORE_N_OPS; op++)
		calls += fake_store_calls(b.s, op);
	bed_start(&b);
	for (int op = 0; op < FAKE_STORE_N_OPS; op++)
		calls -= fake_store_calls(b.s, op);
	calls = -calls;
	ok(calls <= REAPER_RETAIN_MAX + 200, "starting with %u finished jobs kept: %u xenstore calls (at most %u)",
	   REAPER_RETAIN_MAX, calls, REAPER_RETAIN_MAX + 200);
	is_str(bed_node(&b, 7, "state"), "queued", "  the unfinished job is resumed at the start");
	ok(reaper_find_job(b.r, 8) != NULL, "  a failed one is read at the start (it may cover a dead domain)");
	/* A request for a domid whose old record is not read yet. */
	bed_request(&b, 1500, (uint8_t)1500);
	reaper_handle_store_events(b.r);
	is_str(bed_node(&b, 1500, "state"), "queued", "  a request is taken before the history is read");
	calls = 0;
	for (int op = 0; op < FAKE_STORE_N_OPS; op++)
		calls += fake_store_calls(b.s, op);
	reaper_tick(b.r);
	for (int op = 0; op < FAKE_STORE_N_OPS; op++)
		calls -= fake_store_calls(b.s, op);
	calls = -calls;
	ok(calls <= REAPER_HISTORY_BATCH * 60, "  a turn reads %u jobs of it: %u xenstore calls",
	   REAPER_HISTORY_BATCH, calls);
	while (reaper_next_deadline(b.r) >= 0 && reaper_next_deadline(b.r) <= clock_mono_ms() &&
	       turns < 1000) {
		reaper_tick(b.r);
		if (reaper_busy(b.r))
			bed_settle(&b);
		turns++;
	}
	ok(turns < 1000, "  the history is read, then nothing is due (%u turns)", turns);
	store_list(b.s, STORE_TX_NONE, LAYOUT_JOB_DIR, &names, &n_jobs);
	store_names_free(names, n_jobs);
	is_int(n_jobs, REAPER_RETAIN_MAX, "  then the cap holds");
	is_str(bed_node(&b, 1500, "name"), "again", "  and the new job for a domid of the history is its own");
	is_str(bed_node(&b, 7, "state"), "done", "  the resumed job ended");
	ok(!bed_node(&b, 1000, "state") && bed_node(&b, 1002, "state"),
	   "  the oldest finished went first");
	is_int(fake_store_count_open(b.s, LAYOUT_ROOT), 0, "  every record read is dom0-only");
	bed_dispose(&b);
}

/* Before: with `teardown = crash`, a guest whose on_crash is
 * coredump-destroy (xl dumps it while it stays crashed, then destroys it)
 * was destroyed after the grace period, mid-dump; here it was destroyed
 * once, its job done.  Now the worker's check leaves it to xl. */
static void test_crash_with_core_dump_left_to_xl(void)
{
	struct bed b;

	bed_init(&b, 0, 1);
	bed_set_policy(&b, "[daemon]\nscrub-probe = none\n[default]\nteardown = crash\ngrace = 0s\n");
	bed_start(&b);
	bed_add_named(&b, 40, 1000, 0, "dumping");
	bed_add_named(&b, 41, 1000, 0, "preserved");
	fake_store_fire(b.s, "@introduceDomain");
	bed_settle(&b);
	fake_hv_dumps_core(b.hv, 40);
	fake_hv_shutdown(b.hv, 40, HV_SHUTDOWN_CRASH);
	fake_hv_shutdown(b.hv, 41, HV_SHUTDOWN_CRASH);
	fake_store_fire(b.s, "@releaseDomain");
	bed_settle(&b);
	bed_run(&b, 1000);
	is_int(fake_hv_destroy_calls(b.hv, 40), 0, "a crashed guest whose toolstack dumps its core is not destroyed");
	is_str(bed_node(&b, 40, "state"), "failed", "  its automatic job ends failed");
	ok(bed_node(&b, 40, "error") && strstr(bed_node(&b, 40, "error"), "dumps its core"),
	   "  saying why: %s", bed_node(&b, 40, "error") ? bed_node(&b, 40, "error") : "(none)");
	ok(fake_hv_exists(b.hv, 40), "  the guest is left to xl");
	is_str(bed_node(&b, 41, "state"), "done", "a crashed guest its toolstack preserved is torn down");
	bed_run(&b, 120000);
	is_int(fake_hv_destroy_calls(b.hv, 40), 0, "  and the dumping one is not tried again");
	/* Asked for, it goes. */
	bed_request(&b, 40, 40);
	bed_settle(&b);
	is_str(bed_node(&b, 40, "state"), "done", "a request tears it down");
	bed_dispose(&b);
}

int main(void)
{
	test_full_pool_does_not_spin(DUE_ORPHAN);
	test_full_pool_does_not_spin(DUE_ZOMBIE);
	test_full_pool_does_not_spin(DUE_FAILED_DESTROY);
	test_stop_waits_for_the_settle(true);
	test_stop_waits_for_the_settle(false);
	test_orphan_protection_follows_renames();
	test_reload_adopts_what_was_ignored();
	test_start_does_not_read_the_history();
	test_crash_with_core_dump_left_to_xl();
	return tap_done();
}
