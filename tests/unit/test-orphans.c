/* Unit tests for adopting dead domains that no job covers (daemon/orphans.c
 * and intake_orphans): the settle time, a page count still moving,
 * protection, the per-pool switch, no double adoption across a restart,
 * live domains never adopted, and the retained-jobs cap. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bed.h"
#include "clock.h"
#include "fake_hv.h"
#include "fake_store.h"
#include "holders.h"
#include "layout.h"
#include "orphans.h"
#include "reaper.h"
#include "tap.h"

static void test_adopt(void)
{
	struct bed b;

	bed_init(&b, 0, 1);
	b.cfg->scrub_probe = CONFIG_PROBE_NONE;
	bed_start(&b);
	bed_add_named(&b, 20, 65536, 0, "left");
	bed_add_named(&b, 21, 65536, 0, "paused");	/* alive: never adopted */
	bed_add_named(&b, 22, 65536, 0, "off");
	fake_hv_shutdown(b.hv, 22, HV_SHUTDOWN_POWEROFF);	/* shut down, not dead */
	fake_store_fire(b.s, "@introduceDomain");
	bed_settle(&b);
	bed_other_toolstack_destroys(&b, 20, 3);
	bed_settle(&b);
	ok(!bed_node(&b, 20, "state"), "a domain just dead is given its settle time");
	is_int(reaper_next_deadline(b.r), clock_mono_ms() + ORPHANS_SETTLE_MS, "  due after 3 s");
	bed_run(&b, ORPHANS_SETTLE_MS);
	bed_settle(&b);
	is_str(bed_node(&b, 20, "reason"), "orphan", "then adopted with reason orphan");
	is_str(bed_node(&b, 20, "state"), "zombie", "  as a zombie");
	is_str(bed_node(&b, 20, "name"), "left", "  with the name it had alive");
	is_str(bed_node(&b, 20, "pool"), "Pool-0", "  its pool");
	is_str(bed_node(&b, 20, "pages-total"), "3", "  and the pages it still holds");
	ok(bed_node(&b, 20, "held-by") != NULL, "  and what holds them");
	ok(fake_hv_destroy_calls(b.hv, 20) >= 1, "  destroyed again (harmless on a dead domain)");
	ok(!bed_node(&b, 21, "state") && !bed_node(&b, 22, "state"),
	   "a paused or shut-down domain is never adopted");
	is_int(fake_hv_destroy_calls(b.hv, 21) + fake_hv_destroy_calls(b.hv, 22), 0, "  nor touched");
	bed_run(&b, 60000);
	is_str(bed_node(&b, 20, "state"), "zombie", "while held it stays a zombie, retried with back-off");
	ok(fake_hv_destroy_calls(b.hv, 20) <= 8, "  %u destroys in a minute", fake_hv_destroy_calls(b.hv, 20));
	fake_hv_remove(b.hv, 20);
	fake_store_fire(b.s, "@releaseDomain");
	bed_settle(&b);
	is_str(bed_node(&b, 20, "state"), "done", "when it goes, the job is done");
	ok(bed_node(&b, 20, "finished") != NULL, "  with its duration");
	bed_dispose(&b);
}

static void test_still_moving(void)
{
	struct bed b;

	bed_init(&b, 0, 1);
	b.cfg->scrub_probe = CONFIG_PROBE_NONE;
	bed_start(&b);
	bed_add_named(&b, 23, 500000, 0, "big");
	fake_store_fire(b.s, "@introduceDomain");
	bed_settle(&b);
	bed_other_toolstack_destroys(&b, 23, 400000);
	bed_settle(&b);
	for (int i = 1; i <= 5; i++) {
		bed_run(&b, 2000);
		fake_hv_kill(b.hv, 23, 400000 - i * 50000);	/* its teardown goes on */
	}
	ok(!bed_node(&b, 23, "state"), "a dead domain whose pages keep falling is not adopted (10 s)");
	/* The last move is seen at the next look, then it must sit still. */
	bed_run(&b, 2 * ORPHANS_SETTLE_MS + 100);
	is_str(bed_node(&b, 23, "reason"), "orphan", "  once they stop, it is");
	bed_dispose(&b);
}

static void test_protected_and_ignored(void)
{
	char text[200], uuid[HV_UUID_STR_LEN];
	struct bed b;

	fake_hv_uuid_text(26, uuid);
	snprintf(text, sizeof(text), "[daemon]\nprotect = db %s\nscrub-probe = none\n"
		 "[pool:pool1]\norphans = ignore\n", uuid);
	bed_init(&b, 0, 1);
	bed_set_policy(&b, text);
	bed_start(&b);
	bed_add_named(&b, 24, 1000, 0, "db");	/* protected by name */
	bed_add_named(&b, 25, 1000, 1, "batch");	/* pool1 ignores orphans */
	bed_add_named(&b, 26, 1000, 0, "x");	/* protected by UUID */
	fake_store_fire(b.s, "@introduceDomain");
	bed_settle(&b);
	bed_other_toolstack_destroys(&b, 24, 1);
	bed_other_toolstack_destroys(&b, 25, 1);
	bed_other_toolstack_destroys(&b, 26, 1);
	bed_run(&b, 30000);
	ok(!bed_node(&b, 24, "state"), "a protected domain (by the name it had alive) is not adopted");
	ok(!bed_node(&b, 26, "state"), "nor one protected by UUID");
	ok(!bed_node(&b, 25, "state"), "nor one in a pool with orphans = ignore");
	is_int(fake_hv_destroy_calls(b.hv, 24) + fake_hv_destroy_calls(b.hv, 25) +
	       fake_hv_destroy_calls(b.hv, 26), 0, "  none is touched");
	bed_dispose(&b);

	/* Dead before the daemon started: its name was never seen. */
	bed_init(&b, 0, 1);
	bed_set_policy(&b, "[daemon]\nprotect = db\nscrub-probe = none\n");
	fake_hv_add(b.hv, 27, 27, 1000, 0);
	fake_hv_kill(b.hv, 27, 1);
	bed_start(&b);
	bed_run(&b, 30000);
	ok(!bed_node(&b, 27, "state"), "a dead domain whose name is unknown, while protect names guests, is left alone");
	bed_dispose(&b);
}

static void test_restart_adopts_once(void)
{
	struct bed b;
	char **names = NULL;
	unsigned n = 0;

	bed_init(&b, 0, 1);
	b.cfg->scrub_probe = CONFIG_PROBE_NONE;
	fake_hv_add(b.hv, 28, 28, 1000, 0);
	fake_hv_kill(b.hv, 28, 2);
	bed_start(&b);
	bed_run(&b, ORPHANS_SETTLE_MS + 100);
	is_str(bed_node(&b, 28, "reason"), "orphan", "a domain dead before the start is adopted");
	/* kill -9 and start again while the orphan is still there. */
	reaper_free(b.r);
	b.r = NULL;
	runner_free(b.runner);
	fake_runner_new(b.hv, &b.runner);
	bed_start(&b);
	bed_run(&b, 30000);
	store_list(b.s, STORE_TX_NONE, LAYOUT_JOB_DIR, &names, &n);
	store_names_free(names, n);
	is_int(n, 1, "after a restart it is one job, not two");
	is_str(bed_node(&b, 28, "reason"), "orphan", "  still the orphan");
	fake_hv_remove(b.hv, 28);
	fake_store_fire(b.s, "@releaseDomain");
	bed_settle(&b);
	is_str(bed_node(&b, 28, "state"), "done", "  ending done when it goes");
	bed_dispose(&b);
}

static void test_cap(void)
{
	struct bed b;
	char **names = NULL;
	unsigned n = 0;

	bed_init(&b, 0, 1);
	b.cfg->scrub_probe = CONFIG_PROBE_NONE;
	b.cfg->retention_ms = 3600 * 1000;
	bed_start(&b);
	/* Many orphans come and go (a stuck backend on a busy host). */
	for (uint32_t round = 0; round < REAPER_RETAIN_MAX / 40 + 2; round++) {
		for (uint32_t d = 100; d < 140; d++) {
			fake_hv_add(b.hv, d, (uint8_t)(d + round), 1000, 0);
			fake_hv_kill(b.hv, d, 1);
		}
		fake_store_fire(b.s, "@releaseDomain");
		bed_run(&b, ORPHANS_SETTLE_MS + 100);
		for (uint32_t d = 100; d < 140; d++)
			fake_hv_remove(b.hv, d);
		fake_store_fire(b.s, "@releaseDomain");
		bed_settle(&b);
	}
	store_list(b.s, STORE_TX_NONE, LAYOUT_JOB_DIR, &names, &n);
	store_names_free(names, n);
	ok(n <= REAPER_RETAIN_MAX, "orphan jobs are capped like any (%u records)", n);
	bed_dispose(&b);
}

int main(void)
{
	char empty[] = "/tmp/test-orphans.XXXXXX";

	if (!mkdtemp(empty))
		return 1;
	holders_set_proc_root(empty);	/* no processes: the fakes' domains only */
	test_adopt();
	test_still_moving();
	test_protected_and_ignored();
	test_restart_adopts_once();
	test_cap();
	rmdir(empty);
	return tap_done();
}
