/* Unit tests for the daemon's side of the liveness check (daemon/liveness.c
 * and its hooks in reaper.c): ping/ is made, empty and dom0-only, when the
 * daemon starts; every ping a client writes is answered (removed) when the
 * daemon handles its events, also while a long teardown holds the worker;
 * and a daemon nobody pings does no work for it: no wake-up, no request to
 * xenstore. */
#include <stdio.h>
#include <string.h>

#include "bed.h"
#include "clock.h"
#include "fake_hv.h"
#include "fake_store.h"
#include "layout.h"
#include "liveness.h"
#include "tap.h"

/* Every xenstore call the daemon has made so far. */
static unsigned store_calls(struct bed *b)
{
	unsigned n = 0;

	for (int op = 0; op < FAKE_STORE_N_OPS; op++)
		n += fake_store_calls(b->s, op);
	return n;
}

static void test_publish(void)
{
	struct bed b;

	bed_init(&b, 0, 1);
	b.cfg->scrub_probe = CONFIG_PROBE_NONE;
	/* An earlier run's daemon was killed while a client waited on it. */
	fake_store_set(b.s, LAYOUT_PING_DIR "/4242-1-3", "wait 5");
	is_int(bed_start(&b), 0, "the daemon starts");
	ok(fake_store_get(b.s, LAYOUT_PING_DIR) != NULL, "ping/ exists: this daemon answers pings");
	is_int(fake_store_count(b.s, LAYOUT_PING_DIR), 1, "  and is empty: the earlier run's ping is gone");
	ok(fake_store_is_private(b.s, LAYOUT_PING_DIR), "  and dom0-only like the rest");
	bed_dispose(&b);
}

static void test_answer(void)
{
	struct bed b;

	bed_init(&b, 0, 1);
	b.cfg->scrub_probe = CONFIG_PROBE_NONE;
	bed_start(&b);
	bed_run(&b, 1000);
	fake_store_set(b.s, LAYOUT_PING_DIR "/100-1-1", "wait 5");
	fake_store_set(b.s, LAYOUT_PING_DIR "/101-1-1", "wait-free");
	reaper_handle_store_events(b.r);
	is_int(fake_store_count(b.s, LAYOUT_PING_DIR), 1, "two pings: both answered on the next events");
	fake_store_set(b.s, LAYOUT_PING_DIR "/100-1-2", "wait 5");
	fake_store_set(b.s, LAYOUT_PING_DIR "/101-1-2", "wait-free");
	is_int(liveness_answer(b.s), 2, "liveness_answer counts the pings it answered (their clients follow)");
	is_int(liveness_answer(b.s), 0, "  none when none waits");

	/* A long teardown: the destroy holds the only worker. */
	fake_hv_add(b.hv, 5, 5, 262144, 0);
	fake_hv_hold(b.hv);
	bed_request(&b, 5, 5);
	reaper_handle_store_events(b.r);
	reaper_tick(b.r);
	fake_hv_wait_inside(b.hv, 1);
	is_str(bed_node(&b, 5, "state"), "destroying", "a teardown under way holds the worker");
	fake_store_set(b.s, LAYOUT_PING_DIR "/102-1-1", "wait 5");
	reaper_handle_store_events(b.r);
	is_int(fake_store_count(b.s, LAYOUT_PING_DIR), 1, "  and a ping is still answered meanwhile");
	fake_hv_release(b.hv);
	bed_settle(&b);
	is_str(bed_node(&b, 5, "state"), "done", "  then the teardown ends");
	bed_dispose(&b);
}

static void test_idle(void)
{
	unsigned calls;
	struct bed b;

	bed_init(&b, 0, 1);
	b.cfg->scrub_probe = CONFIG_PROBE_NONE;
	bed_start(&b);
	bed_run(&b, 1000);
	calls = store_calls(&b);
	b.wakeups = 0;
	bed_run(&b, 600000);
	is_int(b.wakeups, 0, "idle, nobody waiting: no wake-up in 10 min");
	is_int(store_calls(&b) - calls, 0, "  and no xenstore request");
	/* A client waits: each of its pings costs the daemon a few requests. */
	for (int i = 0; i < 5; i++) {
		char path[LAYOUT_PATH_LEN];

		snprintf(path, sizeof(path), LAYOUT_PING_DIR "/200-1-%d", i);
		calls = store_calls(&b);
		fake_store_set(b.s, path, "wait 9");
		bed_run(&b, 2000);
		ok(store_calls(&b) - calls <= 6, "ping %d answered with %u xenstore requests", i,
		   store_calls(&b) - calls);
	}
	is_int(fake_store_count(b.s, LAYOUT_PING_DIR), 1, "  every one of them answered");
	is_int(b.wakeups, 0, "  and none woke the timer");
	bed_dispose(&b);
}

int main(void)
{
	test_publish();
	test_answer();
	test_idle();
	return tap_done();
}
