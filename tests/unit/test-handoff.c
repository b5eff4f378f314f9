/* Unit tests for the memory hand-off nodes (/tool/xenreaper/memory) and a
 * zombie's held-by diagnosis, on the test doubles with a fake /proc. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bed.h"
#include "clock.h"
#include "fake_hv.h"
#include "fake_store.h"
#include "holders.h"
#include "layout.h"
#include "reaper-private.h"
#include "tap.h"

static char proc_root[] = "/tmp/test-handoff.XXXXXX";

static void fake_process(const char *pid, const char *comm, const char *maps)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", proc_root, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/comm", proc_root, pid);
	f = fopen(path, "w");
	fprintf(f, "%s\n", comm);
	fclose(f);
	snprintf(path, sizeof(path), "%s/%s/maps", proc_root, pid);
	f = fopen(path, "w");
	fputs(maps, f);
	fclose(f);
}

static uint64_t node_u64(struct bed *b, const char *path)
{
	const char *v = fake_store_get(b->s, path);

	return v ? strtoull(v, NULL, 10) : UINT64_MAX;
}

static void test_memory_nodes(void)
{
	struct bed b;
	unsigned calls;

	bed_init(&b, 0, 1);
	bed_start(&b);
	bed_follow(&b, true);	/* a client waiting for memory */
	fake_hv_set_scrub(b.hv, HV_SCRUB_HEAP_DUMP, 3000);
	fake_hv_add(b.hv, 5, 5, 100000, 0);
	fake_hv_add(b.hv, 6, 6, 50000, 0);
	ok(!fake_store_get(b.s, LAYOUT_MEMORY_DIR "/free"), "nothing published while idle");
	fake_hv_hold(b.hv);
	bed_request(&b, 5, 5);
	bed_request(&b, 6, 6);
	reaper_handle_store_events(b.r);
	reaper_tick(b.r);
	is_int(node_u64(&b, LAYOUT_MEMORY_DIR "/free"), FAKE_HV_TOTAL_PAGES - 150000,
	       "memory/free: Xen's free pages");
	is_int(node_u64(&b, LAYOUT_MEMORY_DIR "/releasing"), 150000,
	       "memory/releasing: what the two domains being torn down hold");
	ok(!fake_store_get(b.s, LAYOUT_MEMORY_DIR "/scrub-pending"), "no scrub-pending before a probe");
	fake_hv_set_pages(b.hv, 5, 40000);
	clock_advance(250);
	reaper_tick(b.r);
	is_int(node_u64(&b, LAYOUT_MEMORY_DIR "/releasing"), 90000, "  it falls as pages come back");
	is_int(node_u64(&b, LAYOUT_MEMORY_DIR "/free"), FAKE_HV_TOTAL_PAGES - 90000, "  and free rises");
	fake_hv_release(b.hv);
	bed_settle(&b);
	bed_run(&b, 10000);
	is_int(node_u64(&b, LAYOUT_MEMORY_DIR "/releasing"), 0, "after the teardowns nothing is releasing");
	is_int(node_u64(&b, LAYOUT_MEMORY_DIR "/free"), FAKE_HV_TOTAL_PAGES, "  all memory is free");
	is_int(node_u64(&b, LAYOUT_MEMORY_DIR "/scrub-pending"), 3000, "  scrub-pending is the backlog measured");
	fake_hv_set_scrub(b.hv, HV_SCRUB_HEAP_DUMP, 0);
	bed_run(&b, 120000);
	is_int(node_u64(&b, LAYOUT_MEMORY_DIR "/scrub-pending"), 0, "  and drains to 0");
	calls = fake_hv_calls(b.hv, FAKE_HV_FREE_PAGES);
	bed_run(&b, 3600 * 1000);
	is_int(fake_hv_calls(b.hv, FAKE_HV_FREE_PAGES), calls, "idle: not one hypercall for the memory picture");
	bed_dispose(&b);
}

/* Issue 21, defect 4: Xen gives a domain's paging pool back with it, and
 * the new guest's need counts one, so releasing counts it too: here the
 * pool of a PVH guest of 128 MiB as Xen 4.17 kept it (384 pages). */
static void test_memory_pool(void)
{
	struct bed b;
	unsigned calls;

	bed_init(&b, 0, 1);
	b.cfg->scrub_probe = CONFIG_PROBE_NONE;
	bed_start(&b);
	bed_follow(&b, true);	/* a client waiting for memory */
	fake_hv_add(b.hv, 5, 5, 32785, 0);
	fake_hv_set_pool(b.hv, 5, 384);
	fake_hv_add(b.hv, 6, 6, 1000, 0);	/* PV: no pool */
	fake_hv_hold(b.hv);
	bed_request(&b, 5, 5);
	bed_request(&b, 6, 6);
	reaper_handle_store_events(b.r);
	reaper_tick(b.r);
	is_int(node_u64(&b, LAYOUT_MEMORY_DIR "/releasing"), 32785 + 384 + 1000,
	       "pool: releasing counts the HVM/PVH guest's paging pool with its pages");
	is_int(node_u64(&b, LAYOUT_MEMORY_DIR "/free"), FAKE_HV_TOTAL_PAGES - 32785 - 384 - 1000,
	       "  free is what Xen says, the pool not in it");
	/* Xen frees the pool first (paging_teardown), then the pages. */
	fake_hv_set_pool(b.hv, 5, 0);
	fake_hv_set_pages(b.hv, 5, 20000);
	clock_advance(250);
	reaper_tick(b.r);
	is_int(node_u64(&b, LAYOUT_MEMORY_DIR "/releasing"), 20000 + 1000,
	       "  a freed pool stops counting while the destroy runs");
	calls = fake_hv_calls(b.hv, FAKE_HV_PAGING_POOL);
	clock_advance(250);
	reaper_tick(b.r);
	is_int(fake_hv_calls(b.hv, FAKE_HV_PAGING_POOL), calls + 1,
	       "  read again each turn for the running destroy only (not for the queued PV guest)");
	fake_hv_release(b.hv);
	bed_settle(&b);
	bed_run(&b, 10000);
	is_int(node_u64(&b, LAYOUT_MEMORY_DIR "/releasing"), 0, "  nothing releasing once both are done");
	is_int(node_u64(&b, LAYOUT_MEMORY_DIR "/free"), FAKE_HV_TOTAL_PAGES, "  all memory free");
	bed_dispose(&b);
}

/* Issue 21, defect 4: a zombie's pages may never come back; they count
 * only while they still fall (XENREAPER_FALLING_MS after the last fall
 * the daemon saw, published as last-release). */
static void test_zombie_releasing(void)
{
	struct bed b;
	const char *last;
	int64_t fell;

	bed_init(&b, 0, 1);
	b.cfg->scrub_probe = CONFIG_PROBE_NONE;
	bed_start(&b);
	bed_follow(&b, true);	/* a client waiting for memory */
	fake_hv_add(b.hv, 30, 30, 1000, 0);
	fake_hv_make_zombie(b.hv, 30, 1000, 700);
	bed_request(&b, 30, 30);
	bed_settle(&b);
	fell = clock_wall_ms();
	is_str(bed_node(&b, 30, "state"), "destroying", "zombie: the destroy returned with pages held");
	is_int(node_u64(&b, LAYOUT_MEMORY_DIR "/releasing"), 700, "  they count while the job settles");
	clock_advance(REAPER_ZOMBIE_SETTLE_MS);
	bed_settle(&b);
	is_str(bed_node(&b, 30, "state"), "zombie", "  then a zombie");
	last = bed_node(&b, 30, "last-release");
	ok(last && strtoll(last, NULL, 10) == fell / 1000,
	   "  last-release says when its pages last fell (%s)", last ? last : "absent");
	is_int(node_u64(&b, LAYOUT_MEMORY_DIR "/releasing"), 700,
	       "  a zombie whose pages fell a moment ago still counts them");
	bed_run(&b, XENREAPER_FALLING_MS);
	is_str(bed_node(&b, 30, "state"), "zombie", "  still a zombie 5 s later");
	is_int(node_u64(&b, LAYOUT_MEMORY_DIR "/releasing"), 0, "  and its pages, which stopped falling, no longer count");
	/* Its holder lets go of some: they fall again, and count again. */
	fake_hv_set_pages(b.hv, 30, 300);
	fake_store_fire(b.s, "@releaseDomain");
	bed_settle(&b);
	is_int(node_u64(&b, LAYOUT_MEMORY_DIR "/releasing"), 300, "  pages falling again count again");
	bed_run(&b, 2 * XENREAPER_FALLING_MS);
	is_int(node_u64(&b, LAYOUT_MEMORY_DIR "/releasing"), 0, "  until they stop again");
	fake_hv_remove(b.hv, 30);
	fake_store_fire(b.s, "@releaseDomain");
	bed_settle(&b);
	is_str(bed_node(&b, 30, "state"), "done", "  released: done");

	/* An orphan: a dead domain adopted; its pages never seen falling. */
	fake_hv_add(b.hv, 31, 31, 800, 0);
	fake_hv_kill(b.hv, 31, 800);
	fake_store_fire(b.s, "@releaseDomain");
	bed_run(&b, 10000);
	is_str(bed_node(&b, 31, "reason"), "orphan", "orphan: adopted");
	is_int(node_u64(&b, LAYOUT_MEMORY_DIR "/releasing"), 0, "  its held pages, never seen falling, do not count");
	bed_dispose(&b);
}

/* The same zombie with nobody following: its releasing still drops to 0,
 * within 5 s of when it stopped counting (REAPER_UNFOLLOWED_MS), though no
 * sample or retry comes in between. */
static void test_zombie_unfollowed(void)
{
	int64_t start;
	struct bed b;

	bed_init(&b, 0, 1);
	b.cfg->scrub_probe = CONFIG_PROBE_NONE;
	bed_start(&b);
	fake_hv_add(b.hv, 30, 30, 1000, 0);
	fake_hv_make_zombie(b.hv, 30, 1000, 700);
	bed_request(&b, 30, 30);
	bed_settle(&b);
	start = clock_mono_ms();
	is_int(node_u64(&b, LAYOUT_MEMORY_DIR "/releasing"), 1000,
	       "unfollowed zombie: releasing published as its teardown started, the 700 left held back");
	bed_run(&b, XENREAPER_FALLING_MS + REAPER_UNFOLLOWED_MS);
	ok(node_u64(&b, LAYOUT_MEMORY_DIR "/releasing") == 0,
	   "  and no longer %.1f s on, once they stopped falling", (clock_mono_ms() - start) / 1000.0);
	bed_dispose(&b);
}

/* When job DOMID's pages last fell, on the monotonic clock. */
static int64_t job_fell_mono(struct bed *b, uint32_t domid)
{
	const struct job *job = reaper_find_job(b->r, domid);

	return job ? job->fell_mono : 0;
}

/* Releasing between zero and not is published at once, also while the
 * memory picture stays in flight between teardowns (a backlog still
 * counted): a stale 0 after a request, or a stale figure once the last
 * zombie stopped counting, would mislead a one-shot reader. */
static void test_releasing_unfollowed_edges(void)
{
	struct bed b;
	int64_t fell;

	bed_init(&b, 0, 1);
	bed_start(&b);
	fake_hv_set_scrub(b.hv, HV_SCRUB_HEAP_DUMP, 3000);
	fake_hv_add(b.hv, 5, 5, 1000, 0);
	bed_request(&b, 5, 5);
	bed_settle(&b);
	bed_run(&b, 10000);
	is_str(bed_node(&b, 5, "state"), "done", "edges: a first teardown done");
	is_int(node_u64(&b, LAYOUT_MEMORY_DIR "/releasing"), 0, "  nothing releasing after it");
	ok(fake_store_get(b.s, LAYOUT_MEMORY_DIR "/scrub-pending") != NULL,
	   "  its backlog still counted (the memory picture stays in flight)");
	fake_hv_add(b.hv, 30, 30, 1000, 0);
	fake_hv_make_zombie(b.hv, 30, 1000, 700);
	fake_hv_hold(b.hv);
	bed_request(&b, 30, 30);
	reaper_handle_store_events(b.r);
	reaper_tick(b.r);
	is_int(node_u64(&b, LAYOUT_MEMORY_DIR "/releasing"), 1000,
	       "  a second teardown's pages are releasing at once, not at the next publish");
	fake_hv_release(b.hv);
	bed_settle(&b);
	clock_advance(REAPER_ZOMBIE_SETTLE_MS);
	bed_settle(&b);
	is_str(bed_node(&b, 30, "state"), "zombie", "  it ends a zombie");
	fell = job_fell_mono(&b, 30);
	while (node_u64(&b, LAYOUT_MEMORY_DIR "/releasing") != 0 &&
	       clock_mono_ms() - fell < 2 * XENREAPER_FALLING_MS)
		bed_run(&b, 100);
	ok(clock_mono_ms() - fell < XENREAPER_FALLING_MS + 200,
	   "  and releasing says 0 within a tick of its pages' falling window, %.1f s after they fell",
	   (clock_mono_ms() - fell) / 1000.0);
	fake_hv_remove(b.hv, 30);
	fake_store_fire(b.s, "@releaseDomain");
	bed_settle(&b);
	bed_dispose(&b);
}

static void test_held_by(void)
{
	struct bed b;
	const char *held;

	fake_process("1234", "xbtool", "7f00-7f01 rw-s 0 00:05 12 /dev/xen/privcmd\n");
	fake_process("1300", "bash", "7f00-7f01 r-xp 0 08:01 99 /usr/bin/bash\n");
	fake_process("1400", "qemu", "7f00-7f01 rw-s 0 00:05 13 /dev/xen/gntdev\n");
	holders_set_proc_root(proc_root);
	bed_init(&b, 0, 1);
	b.cfg->scrub_probe = CONFIG_PROBE_NONE;
	bed_start(&b);
	fake_hv_add(b.hv, 30, 30, 1000, 0);
	fake_hv_make_zombie(b.hv, 30, 100, 7);
	fake_store_set(b.s, "/local/domain/0/backend/vbd/30/51712/state", "6");
	fake_store_set(b.s, "/local/domain/0/backend/vif/29/0/state", "4");
	bed_request(&b, 30, 30);
	bed_settle(&b);
	clock_advance(REAPER_ZOMBIE_SETTLE_MS);
	bed_settle(&b);
	is_str(bed_node(&b, 30, "state"), "zombie", "a zombie");
	held = bed_node(&b, 30, "held-by");
	ok(held && strstr(held, "7 pages held"), "held-by says how many pages are held (%s)", held ? held : "-");
	ok(held && strstr(held, "vbd backend in domain 0 (/local/domain/0/backend/vbd/30: 51712 Closed)"),
	   "  names the backend left for it, with its device's state");
	ok(held && !strstr(held, "vif"), "  and not another domain's backend");
	ok(held && strstr(held, "1234 xbtool") && strstr(held, "1400 qemu"),
	   "  names the processes with Xen mappings, by pid and name");
	ok(held && !strstr(held, "bash"), "  and no other process");
	fake_store_set(b.s, "/local/domain/0/backend/vbd/30", "");
	store_rm(b.s, STORE_TX_NONE, "/local/domain/0/backend/vbd/30");
	fake_hv_remove(b.hv, 30);
	fake_store_fire(b.s, "@releaseDomain");
	bed_settle(&b);
	is_str(bed_node(&b, 30, "state"), "done", "released: done");
	ok(!bed_node(&b, 30, "held-by"), "  and held-by is gone");
	bed_dispose(&b);

	/* Nothing visible: it says so. */
	holders_set_proc_root("/nonexistent-proc-for-test");
	{
		char *text = NULL;
		struct store *s = fake_store_new();

		ok(holders_describe(s, 40, 1, &text) == -ENOENT, "an unreadable /proc is an error, not 'none'");
		holders_set_proc_root(proc_root);
		fake_process("1234", "xbtool", "");
		fake_process("1400", "qemu", "");
		ok(!holders_describe(s, 40, 1, &text) && strstr(text, "nothing dom0 can see"),
		   "nothing found: it says what dom0 cannot see (%s)", text ? text : "-");
		free(text);
		store_free(s);
	}
	holders_set_proc_root(NULL);
}

int main(void)
{
	char cmd[64];

	if (!mkdtemp(proc_root))
		return 1;
	holders_set_proc_root(proc_root);
	test_memory_nodes();
	test_memory_pool();
	test_zombie_releasing();
	test_zombie_unfollowed();
	test_releasing_unfollowed_edges();
	test_held_by();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", proc_root);
	if (system(cmd))
		return 1;
	return tap_done();
}
