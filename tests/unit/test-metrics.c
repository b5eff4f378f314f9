/* Unit tests for daemon/metrics.c through the daemon's core: a scripted
 * sequence of jobs (done, refused, a zombie orphan, a sync scrub), the
 * textfile it writes (atomically, only on change, at most once a second,
 * never when idle), checked by promtool when it is installed. */
#include <errno.h>
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
#include "metrics.h"
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

int main(void)
{
	char cmd[160];

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/xenreaper.prom", dir);
	holders_set_proc_root(dir);
	test_sequence();
	test_escaping_and_gap();
	snprintf(cmd, sizeof(cmd), "ls %s | grep -v -e '\\.prom$' -e promtool.out", dir);
	ok(system(cmd) != 0, "no temporary file is left beside it");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		return 1;
	return tap_done();
}
