/* Unit tests for daemon/metrics.c through the daemon's core: a scripted
 * sequence of jobs (done, refused, a zombie orphan, a sync scrub), the
 * textfile it writes (atomically, only on change, at most once a second,
 * never when idle), checked by promtool when it is installed; the ages of
 * zombies and orphans and Xen's claimed pages; each NUMA node's scrub
 * rate and time to drain. */
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
#include "metrics.h"
#include "scrub.h"
#include "tap.h"

static char dir[] = "/tmp/test-metrics.XXXXXX";
static char path[128];

static char *slurp(const char *file)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = fopen(file, "r");

	if (!f)
		return NULL;
	if (getdelim(&text, &len, '\0', f) < 0) {
		free(text);
		text = NULL;
	}
	fclose(f);
	return text;
}

/* Figures printed to the millisecond compare to within half of it. */
#define is_double(got, want, what) do {						\
	double got_ = (got), want_ = (want);					\
	if (!tap_ok(got_ - want_ < 0.0005 && want_ - got_ < 0.0005, "%s", what))	\
		printf("#   got %.4f, want %.4f (%s:%d)\n", got_, want_, __FILE__, __LINE__); \
} while (0)

static int has(const char *text, const char *line)
{
	return text && strstr(text, line) != NULL;
}

static void test_sequence(void)
{
	char policy[256], *text, cmd[256];
	struct stat st;
	struct bed b;
	time_t mtime;
	int rc;

	snprintf(policy, sizeof(policy),
		 "[daemon]\nmetrics = %s\n[pool:pool1]\nscrub = sync\n", path);
	bed_init(&b, 0, 1);
	bed_set_policy(&b, policy);
	bed_start(&b);
	fake_hv_set_scrub(b.hv, HV_SCRUB_HEAP_DUMP, 300);
	fake_hv_add(b.hv, 5, 5, 262144, 0);
	fake_hv_add(b.hv, 6, 6, 1000, 1);
	bed_request(&b, 5, 5);
	bed_request(&b, 6, 6);
	bed_request(&b, 4000, 1);	/* refused: no such domain */
	bed_settle(&b);
	fake_hv_set_scrub(b.hv, HV_SCRUB_HEAP_DUMP, 0);
	bed_run(&b, 30000);
	/* An orphan, adopted and gone. */
	fake_hv_add(b.hv, 7, 7, 1000, 0);
	fake_hv_kill(b.hv, 7, 1);
	fake_store_fire(b.s, "@releaseDomain");
	bed_run(&b, 5000);
	fake_hv_remove(b.hv, 7);
	fake_store_fire(b.s, "@releaseDomain");
	bed_run(&b, 70000);
	text = slurp(path);
	ok(text != NULL, "the metrics file is written");
	ok(has(text, "xen_teardown_total{reason=\"request\",result=\"done\"} 2\n"), "  two requests done");
	ok(has(text, "xen_teardown_total{reason=\"request\",result=\"failed\"} 1\n"), "  one refused");
	ok(has(text, "xen_teardown_total{reason=\"orphan\",result=\"done\"} 1\n"), "  one orphan done");
	ok(has(text, "xen_teardown_released_pages_total 263145\n"), "  pages released counted");
	ok(has(text, "xen_teardown_duration_seconds_count 3\n") &&
	   has(text, "xen_teardown_duration_seconds_bucket{le=\"+Inf\"} 3\n"),
	   "  three durations observed (the refused one is not a teardown)");
	ok(has(text, "xen_teardown_jobs{state=\"done\"} 3\n") && has(text, "xen_teardown_jobs{state=\"zombie\"} 0\n"),
	   "  jobs by state");
	ok(has(text, "xen_teardown_scrub_backlog_pages{node=\"0\",source=\"heap-dump\"} 0\n"),
	   "  the scrub backlog by node and source");
	ok(has(text, "# TYPE xen_teardown_duration_seconds histogram\n") &&
	   has(text, "# HELP xen_teardown_total "), "  with HELP and TYPE lines");
	ok(has(text, "xen_teardown_daemon_info{version=\"" PACKAGE_VERSION "\",policy=\"test.conf\"} 1\n"),
	   "  and the daemon's identity");
	if (system("command -v promtool >/dev/null 2>&1") == 0) {
		snprintf(cmd, sizeof(cmd), "promtool check metrics < %s > %s/promtool.out 2>&1", path, dir);
		rc = system(cmd);
		ok(rc == 0, "promtool check metrics accepts it");
		if (rc) {
			snprintf(cmd, sizeof(cmd), "sed 's/^/#   /' %s/promtool.out", dir);
			if (system(cmd))
				printf("# (could not show promtool's output)\n");
		}
	} else {
		printf("ok %d # SKIP promtool is not installed (apt-get install prometheus)\n", ++tap_count);
	}
	free(text);

	/* Idle (once the finished jobs' retention ended, itself a change):
	 * nothing is written, however long. */
	bed_run(&b, 11 * 60 * 1000);
	stat(path, &st);
	mtime = st.st_mtime;
	sleep(1);
	bed_run(&b, 3600 * 1000);
	stat(path, &st);
	is_int(st.st_mtime, mtime, "idle: the file is not rewritten");
	bed_dispose(&b);
}

/* Rendering alone: label escaping and the write gap. */
static void test_escaping_and_gap(void)
{
	struct scrub_snapshot scrub = { .have_figure = true, .source = "heap-dump", .pages = 5 };
	struct metrics *m = NULL;
	char *text = NULL;
	struct stat st;

	metrics_new(1700000000000, &m);
	metrics_configure(m, path, "/etc/xen/a \"quoted\\\" name\n.conf");
	ok(!metrics_render(m, NULL, &scrub, NULL, &text) &&
	   has(text, "policy=\"/etc/xen/a \\\"quoted\\\\\\\" name\\n.conf\"} 1"),
	   "label values escape quote, backslash and newline");
	ok(has(text, "xen_teardown_scrub_backlog_pages{node=\"all\",source=\"heap-dump\"} 5\n"),
	   "a figure without nodes is node=\"all\"");
	free(text);
	unlink(path);
	metrics_update(m, NULL, &scrub, NULL, 100000);
	ok(stat(path, &st) == 0, "written at once the first time");
	unlink(path);
	scrub.pages = 6;
	metrics_update(m, NULL, &scrub, NULL, 100500);
	ok(stat(path, &st) < 0 && metrics_next_deadline(m) == 101000,
	   "a change within a second waits for the gap");
	metrics_update(m, NULL, &scrub, NULL, 101000);
	ok(stat(path, &st) == 0 && metrics_next_deadline(m) < 0, "  and is written then");
	metrics_free(m);
}


/* The value of the sample NAME (the whole name with its labels) in TEXT,
 * or -1 if absent. */
static double sample(const char *text, const char *name)
{
	char needle[256];
	const char *at;

	snprintf(needle, sizeof(needle), "\n%s ", name);
	at = text ? strstr(text, needle) : NULL;
	return at ? strtod(at + strlen(needle), NULL) : -1;
}

/* A zombie, then an orphan: when each was requested (adopted) is in the
 * file, as is what Xen says is claimed; all of it goes with them, but the
 * claims left once the teardowns are over stay. */
static void test_ages_and_claims(void)
{
	char policy[256], *text;
	int64_t zombie_wall, orphan_wall;
	double orphan_seconds;
	struct bed b;

	snprintf(policy, sizeof(policy), "[daemon]\nmetrics = %s\n", path);
	bed_init(&b, 0, 2);
	bed_set_policy(&b, policy);
	bed_start(&b);
	fake_hv_set_outstanding(b.hv, 512);
	fake_hv_add(b.hv, 5, 5, 1000, 0);
	fake_hv_make_zombie(b.hv, 5, 100000, 100);
	clock_advance(1234);	/* a wall time with milliseconds */
	zombie_wall = clock_wall_ms();
	bed_request(&b, 5, 5);
	bed_run(&b, 20000);
	is_str(bed_node(&b, 5, "state"), "zombie", "a zombie");
	fake_hv_add(b.hv, 7, 7, 1000, 0);
	fake_hv_kill(b.hv, 7, 50);
	fake_store_fire(b.s, "@releaseDomain");
	orphan_wall = clock_wall_ms();
	bed_run(&b, 10000);
	is_str(bed_node(&b, 7, "reason"), "orphan", "and an orphan adopted");
	bed_run(&b, 2000);	/* past the write gap */
	text = slurp(path);
	is_double(sample(text, "xen_teardown_oldest_timestamp_seconds{state=\"zombie\"}"),
		  zombie_wall / 1000.0, "the oldest zombie: when it was requested, to the ms");
	orphan_seconds = sample(text, "xen_teardown_oldest_orphan_timestamp_seconds");
	ok(orphan_seconds >= orphan_wall / 1000.0 && orphan_seconds <= clock_wall_ms() / 1000.0,
	   "the oldest orphan: when it was adopted (%.3f)", orphan_seconds);
	ok(!has(text, "xen_teardown_oldest_timestamp_seconds{state=\"done\"}") &&
	   !has(text, "xen_teardown_oldest_timestamp_seconds{state=\"destroying\"}"),
	   "  no age for finished states, nor for states without a job");
	is_double(sample(text, "xen_teardown_outstanding_claim_pages"), 512, "Xen's outstanding claims");
	is_double(sample(text, "xen_teardown_free_pages"), FAKE_HV_TOTAL_PAGES - 150,
		  "  its free pages (all but what the two dead domains hold)");
	is_double(sample(text, "xen_teardown_releasing_pages"), 0,
		  "  and nothing coming back: their pages stopped falling");
	ok(has(text, "# TYPE xen_teardown_oldest_timestamp_seconds gauge\n") &&
	   has(text, "# HELP xen_teardown_outstanding_claim_pages "), "  with HELP and TYPE lines");
	free(text);
	fake_hv_set_outstanding(b.hv, 256);	/* a claim leaked on a dying domain */
	fake_hv_remove(b.hv, 5);
	fake_hv_remove(b.hv, 7);
	fake_store_fire(b.s, "@releaseDomain");
	bed_run(&b, 70000);
	is_str(bed_node(&b, 5, "state"), "done", "both go");
	text = slurp(path);
	ok(text && !has(text, "xen_teardown_oldest_timestamp_seconds") &&
	   !has(text, "xen_teardown_oldest_orphan_timestamp_seconds"), "  and their ages with them");
	is_double(sample(text, "xen_teardown_outstanding_claim_pages"), 256,
		  "the claims left once the teardowns are over");
	free(text);
	bed_dispose(&b);
}

/* Each node's rate from its own successive figures, and the time to drain
 * it gives; physinfo's figure, without nodes, at the host's rate. */
static void test_scrub_per_node(void)
{
	struct store *s = fake_store_new();
	struct hv *hv = fake_hv_new(0);
	struct scrub_snapshot snap;
	uint8_t uuid[HV_UUID_LEN] = { 9 };
	struct scrub *sc = NULL;
	struct metrics *m = NULL;
	struct job *job = NULL;
	char *text = NULL;

	clock_set_fake(100000, 1700000000000);
	scrub_new(s, hv, &sc);
	job_new(9, uuid, "big", "Pool-0", &job);
	job->pages_total = 5000;
	ok(scrub_track(sc, job), "a teardown's pages counted");
	fake_hv_set_scrub_nodes(hv, HV_SCRUB_HEAP_DUMP, 2, (const uint64_t[]){ 1000, 4000 });
	scrub_probe(sc, job);
	scrub_snapshot(sc, &snap);
	ok(snap.n_nodes == 2 && snap.node_drain_s[0] < 0 && snap.node_drain_s[1] < 0,
	   "one figure: no rate, no time to drain");
	clock_advance(2000);
	fake_hv_set_scrub_nodes(hv, HV_SCRUB_HEAP_DUMP, 2, (const uint64_t[]){ 600, 4000 });
	scrub_probe(sc, job);
	scrub_snapshot(sc, &snap);
	is_double(snap.node_drain_s[0], 3.0, "node 0 fell 400 pages in 2 s: 600 left take 3 s");
	ok(snap.node_drain_s[1] < 0, "node 1 stood still: no rate for it yet");
	metrics_new(1700000000000, &m);
	metrics_configure(m, NULL, "test.conf");
	metrics_render(m, job, &snap, NULL, &text);
	ok(has(text, "xen_teardown_scrub_drain_seconds{node=\"0\",source=\"heap-dump\"} 3.000\n") &&
	   !has(text, "xen_teardown_scrub_drain_seconds{node=\"1\""),
	   "  in the file: node 0's time to drain, none for node 1");
	free(text);
	text = NULL;
	clock_advance(1000);
	fake_hv_set_scrub_nodes(hv, HV_SCRUB_HEAP_DUMP, 2, (const uint64_t[]){ 300, 3000 });
	scrub_probe(sc, job);
	scrub_snapshot(sc, &snap);
	is_double(snap.node_drain_s[0], 1.2, "node 0 at 0.3 pages/ms now, 0.25 learnt: 300 left take 1.2 s");
	is_double(snap.node_drain_s[1], 3.0, "node 1 at 1 page/ms: 3000 take 3 s, its own rate");
	clock_advance(1000);
	fake_hv_set_scrub_nodes(hv, HV_SCRUB_HEAP_DUMP, 2, (const uint64_t[]){ 0, 3500 });
	scrub_probe(sc, job);
	scrub_snapshot(sc, &snap);
	is_double(snap.node_drain_s[0], 0, "a node scrubbed clean takes 0 s");
	is_double(snap.node_drain_s[1], 3.5, "a figure that rose teaches nothing: 3500 at 1 page/ms");
	scrub_untrack(sc, job);
	scrub_free(sc);

	/* physinfo: one total, at the host's rate, as node "all". */
	scrub_new(s, hv, &sc);
	scrub_configure(sc, HV_SCRUB_PHYSINFO, 1000, 0);
	scrub_track(sc, job);
	fake_hv_set_scrub_nodes(hv, HV_SCRUB_PHYSINFO, 0, (const uint64_t[]){ 8000 });
	scrub_probe(sc, job);
	clock_advance(4000);
	fake_hv_set_scrub_nodes(hv, HV_SCRUB_PHYSINFO, 0, (const uint64_t[]){ 6000 });
	scrub_probe(sc, job);
	scrub_snapshot(sc, &snap);
	metrics_render(m, job, &snap, NULL, &text);
	ok(has(text, "xen_teardown_scrub_backlog_pages{node=\"all\",source=\"physinfo\"} 6000\n") &&
	   has(text, "xen_teardown_scrub_drain_seconds{node=\"all\",source=\"physinfo\"} 12.000\n"),
	   "physinfo: 2000 pages in 4 s, 6000 left take 12 s (node \"all\")");
	free(text);
	scrub_untrack(sc, job);
	scrub_free(sc);
	metrics_free(m);
	job_free(job);
	hv_free(hv);
	store_free(s);
}

/* A big host (issue 18): a 16 TiB guest (2^32 pages) torn down at
 * 2 GiB/s, of the order of one CPU's rate that Xen's authors published
 * (1.7 to 2.7 GB/s): pages left, rate, time left, the memory nodes and
 * the metrics stay exact, nothing wraps (the pages overflow 32 bits, and
 * pages x 4096 would be 2^44 bytes). */
static void test_big_host(void)
{
	const uint64_t total = 1ULL << 32, host = 1ULL << 33, per_s = 524288;
	char policy[256], *text, want[128];
	uint64_t left = total;
	struct bed b;

	snprintf(policy, sizeof(policy), "[daemon]\nmetrics = %s\n", path);
	bed_init(&b, 0, 1);
	bed_set_policy(&b, policy);
	bed_start(&b);
	bed_follow(&b, true);	/* the figures at every sample */
	fake_hv_set_total(b.hv, host);
	fake_hv_add(b.hv, 9, 9, total, 0);
	fake_hv_hold_domain(b.hv, 9, true);
	bed_request(&b, 9, 9);
	bed_run_busy(&b, 100);
	fake_hv_wait_inside(b.hv, 1);
	for (int step = 0; step < 80; step++) {	/* 20 s, a sample every 250 ms */
		left -= per_s / 4;
		fake_hv_set_pages(b.hv, 9, left);
		bed_run_busy(&b, 250);
	}
	is_str(bed_node(&b, 9, "pages-left"), "4284481536", "16 TiB guest after 20 s at 2 GiB/s: pages left exact");
	is_str(bed_node(&b, 9, "rate"), "2048.0", "  the rate in MiB/s");
	is_str(bed_node(&b, 9, "eta"), "8172", "  the time left in s");
	is_str(bed_node(&b, 9, "progress"), "0", "  progress 0 % (0.24 % done)");
	bed_run_busy(&b, 1500);	/* the metrics file's least gap */
	is_str(fake_store_get(b.s, LAYOUT_MEMORY_DIR "/releasing"), "4284481536", "  memory/releasing");
	is_str(fake_store_get(b.s, LAYOUT_MEMORY_DIR "/free"), "4305453056", "  memory/free (a 32 TiB host)");
	text = slurp(path);
	snprintf(want, sizeof(want), "\nxen_teardown_releasing_pages %" PRIu64 "\n", left);
	ok(has(text, want), "  the metrics' releasing pages");
	snprintf(want, sizeof(want), "\nxen_teardown_free_pages %" PRIu64 "\n", host - left);
	ok(has(text, want), "  and free pages");
	free(text);
	/* Half of it, then the rest in one go. */
	left = total / 2;
	fake_hv_set_pages(b.hv, 9, left);
	bed_run_busy(&b, 250);
	is_str(bed_node(&b, 9, "progress"), "50", "half of it released: 50 %");
	fake_hv_remove(b.hv, 9);
	fake_hv_hold_domain(b.hv, 9, false);
	bed_wait_workers(&b);
	bed_run_busy(&b, 1200);	/* the metrics file's least gap */
	is_str(bed_node(&b, 9, "state"), "done", "the 16 TiB teardown ends done");
	text = slurp(path);
	ok(has(text, "\nxen_teardown_released_pages_total 4294967296\n"), "  and the metrics count its 2^32 pages released");
	free(text);
	bed_dispose(&b);
}

int main(void)
{
	char cmd[160];

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/xenreaper.prom", dir);
	holders_set_proc_root(dir);
	test_sequence();
	test_escaping_and_gap();
	test_ages_and_claims();
	test_scrub_per_node();
	test_big_host();
	snprintf(cmd, sizeof(cmd), "ls %s | grep -v -e '\\.prom$' -e promtool.out", dir);
	ok(system(cmd) != 0, "no temporary file is left beside it");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		return 1;
	return tap_done();
}
