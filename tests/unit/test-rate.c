/* Unit tests for daemon/rate.c and the rate/eta nodes a job publishes:
 * steady, bursty and stalled teardowns, and one resumed after kill -9,
 * on the fake clock. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bed.h"
#include "clock.h"
#include "fake_hv.h"
#include "fake_store.h"
#include "rate.h"
#include "tap.h"

static void test_steady(void)
{
	uint64_t eta = 0;
	double pps = 0;
	struct rate r;
	int rc;

	rate_reset(&r);
	ok(rate_pages_per_s(&r, 0, &pps) == -ENODATA, "no rate before any sample");
	rate_add(&r, 1000, 100000);
	ok(rate_pages_per_s(&r, 1000, &pps) == -ENODATA, "  nor after one");
	ok(rate_eta_s(&r, 1000, 100000, &eta) == -ENODATA, "  and no time left");
	for (int64_t t = 1250, left = 97500; t <= 3000; t += 250, left -= 2500)
		rate_add(&r, t, left);
	/* Each call before its ok(): arguments are evaluated in no set order. */
	rc = rate_pages_per_s(&r, 3000, &pps);
	ok(!rc && pps > 9999 && pps < 10001, "10000 pages/s steady: %.0f", pps);
	rc = rate_eta_s(&r, 3000, 80000, &eta);
	ok(!rc && eta == 8, "  80000 pages left: 8 s to go (%llu)", (unsigned long long)eta);
	ok(!rate_stalled(&r, 3000), "  not stalled");
}

static void test_bursty(void)
{
	double pps = 0;
	struct rate r;
	int rc;

	rate_reset(&r);
	/* 2 s of nothing, then 40000 pages in 0.5 s: the window sees it. */
	rate_add(&r, 0, 100000);
	rate_add(&r, 1000, 100000);
	rate_add(&r, 2000, 100000);
	rate_add(&r, 2250, 80000);
	rate_add(&r, 2500, 60000);
	rc = rate_pages_per_s(&r, 2500, &pps);
	ok(!rc && pps > 15000, "a burst shows within the window (%.0f pages/s)", pps);
	ok(!rate_stalled(&r, 2500), "  and is not a stall");
	/* Then the old samples leave the window. */
	rate_add(&r, 5500, 60000);
	rate_add(&r, 5750, 57500);
	rc = rate_pages_per_s(&r, 5750, &pps);
	ok(!rc && pps > 9999 && pps < 10001,
	   "  older samples leave the window: 10000 pages/s, not 6429 (%.0f)", pps);
}

static void test_stalled(void)
{
	struct rate r;
	uint64_t eta;

	rate_reset(&r);
	rate_add(&r, 0, 50000);
	rate_add(&r, 250, 40000);
	for (int64_t t = 500; t <= 6000; t += 250)
		rate_add(&r, t, 40000);
	ok(rate_stalled(&r, 6000), "nothing released for 5 s: stalled");
	ok(rate_eta_s(&r, 6000, 40000, &eta) == -ENODATA, "  and no time left that counts down for ever");
	rate_add(&r, 6250, 39000);
	ok(!rate_stalled(&r, 6250), "  moving again: not stalled");
}

/* The same through the daemon: nodes rate and eta, and a kill -9. */
static void test_published(void)
{
	struct bed b;
	const char *eta;

	bed_init(&b, 0, 1);
	b.cfg->scrub_probe = CONFIG_PROBE_NONE;
	bed_start(&b);
	bed_follow(&b, true);	/* the figures at every sample */
	fake_hv_add(b.hv, 5, 5, 400000, 0);
	fake_hv_hold(b.hv);
	bed_request(&b, 5, 5);
	reaper_handle_store_events(b.r);
	reaper_tick(b.r);
	fake_hv_wait_inside(b.hv, 1);
	ok(!bed_node(&b, 5, "rate") && !bed_node(&b, 5, "eta"), "no rate or eta before any time has passed");
	for (int i = 1; i <= 8; i++) {
		fake_hv_set_pages(b.hv, 5, 400000 - i * 2560);	/* 10 MiB per 250 ms */
		clock_advance(250);
		reaper_tick(b.r);
		if (i == 1)
			is_str(bed_node(&b, 5, "rate"), "40.0",
			       "the first count carries a rate: the pages at the start are a sample");
	}
	is_str(bed_node(&b, 5, "rate"), "40.0", "rate: 40.0 MiB/s");
	eta = bed_node(&b, 5, "eta");
	is_str(eta, "38", "eta: 379520 pages at 10240 pages/s, 37.06 s rounded up");
	for (int i = 0; i < 24; i++) {
		clock_advance(250);
		reaper_tick(b.r);
	}
	is_str(bed_node(&b, 5, "eta"), "stalled", "a stalled job says so");
	is_str(bed_node(&b, 5, "rate"), "0.0", "  at 0 MiB/s");
	/* kill -9 and a restart: the new daemon starts the rate afresh. */
	fake_hv_release(b.hv);
	reaper_free(b.r);
	b.r = NULL;
	runner_free(b.runner);
	fake_runner_new(b.hv, &b.runner);
	fake_hv_add(b.hv, 6, 6, 100000, 0);
	fake_hv_hold(b.hv);
	bed_request(&b, 6, 6);
	bed_start(&b);
	bed_follow(&b, true);	/* the client pings the new daemon */
	reaper_tick(b.r);
	clock_advance(250);
	reaper_tick(b.r);
	is_str(bed_node(&b, 6, "rate"), "0.0",
	       "a job started after a restart: nothing released in its first 250 ms");
	fake_hv_set_pages(b.hv, 6, 100000 - 25600);
	clock_advance(1000);
	reaper_tick(b.r);
	is_str(bed_node(&b, 6, "rate"), "80.0",
	       "  then 100 MiB in 1.25 s from its own start, not the old daemon's samples");
	fake_hv_release(b.hv);
	bed_settle(&b);
	is_str(bed_node(&b, 6, "state"), "done", "  and when done");
	ok(bed_node(&b, 6, "rate") != NULL && !bed_node(&b, 6, "eta"),
	   "  it keeps its average rate and drops eta");
	bed_dispose(&b);
}

int main(void)
{
	test_steady();
	test_bursty();
	test_stalled();
	test_published();
	return tap_done();
}
