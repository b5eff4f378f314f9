/* Unit tests for daemon/job.c: the state machine, progress, publish/load. */
#include <errno.h>
#include <stdbool.h>

#include "clock.h"
#include "fake_hv.h"
#include "fake_store.h"
#include "job.h"
#include "layout.h"
#include "tap.h"

static struct job *new_job(uint32_t domid)
{
	uint8_t uuid[HV_UUID_LEN] = { 1, 2, 3 };
	struct job *job = NULL;

	job_new(domid, uuid, "guest", "Pool-0", &job);
	return job;
}

static void test_transitions(void)
{
	static const struct { enum job_state from, to; int allowed; } cases[] = {
		{ JOB_QUEUED, JOB_DESTROYING, 1 }, { JOB_QUEUED, JOB_FAILED, 1 },
		{ JOB_QUEUED, JOB_DONE, 1 }, { JOB_QUEUED, JOB_ZOMBIE, 0 },
		{ JOB_QUEUED, JOB_SCRUBBING, 0 }, { JOB_DESTROYING, JOB_DONE, 1 },
		{ JOB_DESTROYING, JOB_ZOMBIE, 1 }, { JOB_DESTROYING, JOB_SCRUBBING, 1 },
		{ JOB_DESTROYING, JOB_QUEUED, 1 }, { JOB_ZOMBIE, JOB_DONE, 1 },
		{ JOB_ZOMBIE, JOB_DESTROYING, 0 }, { JOB_SCRUBBING, JOB_DONE, 1 },
		{ JOB_SCRUBBING, JOB_QUEUED, 0 }, { JOB_DONE, JOB_QUEUED, 0 },
		{ JOB_DONE, JOB_FAILED, 0 }, { JOB_FAILED, JOB_DESTROYING, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct job *job = new_job(7);
		int rc;

		job->state = cases[i].from;
		rc = job_set_state(job, cases[i].to);
		ok((rc == 0) == cases[i].allowed && job->state == (rc ? cases[i].from : cases[i].to),
		   "%s -> %s is %s", job_state_name(cases[i].from), job_state_name(cases[i].to),
		   cases[i].allowed ? "allowed" : "refused");
		job_free(job);
	}
}

static void test_times_and_progress(void)
{
	struct job *job;

	clock_set_fake(1000, 1700000000000);
	job = new_job(3);
	is_int(job->requested_wall, 1700000000000, "requested time stamped at creation");
	job->pages_total = job->pages_left = 1000;
	is_int(job_progress(job), 0, "queued job is at 0%");
	clock_advance(500);
	job_set_state(job, JOB_DESTROYING);
	is_int(job->started_wall, 1700000000500, "started time stamped on destroying");
	ok(job_set_pages_left(job, 400), "pages-left falls");
	ok(!job_set_pages_left(job, 600), "pages-left never rises");
	is_int(job->pages_left, 400, "pages-left kept at its minimum");
	is_int(job_progress(job), 60, "progress is the released share");
	clock_advance(2000);
	job_set_state(job, JOB_DONE);
	is_int(job->finished_wall, 1700000002500, "finished time stamped on done");
	is_int(job->pages_left, 0, "done means no pages left");
	is_int(job_progress(job), 100, "done is 100%");
	job_free(job);
}

static void test_fail(void)
{
	struct job *job = new_job(4);

	ok(job_fail(job, "no domain %d", 4) == 0, "job_fail from queued");
	is_str(job->error, "no domain 4", "error sentence kept");
	ok(job_fail(job, "again") < 0, "cannot fail a failed job");
	job_free(job);
}

static void test_publish_load(void)
{
	struct store *s = fake_store_new();
	struct job *job = new_job(12), *back = NULL;
	char path[LAYOUT_PATH_LEN];

	clock_set_fake(5000, 1700000100123);
	job->pages_total = 524288;
	job->pages_left = 1000;
	job->reason = JOB_REASON_CRASH;
	job->policy = JOB_POLICY_SYNC;
	job_set_state(job, JOB_DESTROYING);
	ok(job_publish(job, s, STORE_TX_NONE) == 0, "publish");
	layout_job_path(path, 12, "state");
	is_str(fake_store_get(s, path), "destroying", "state node");
	layout_job_path(path, 12, "progress");
	is_str(fake_store_get(s, path), "99", "progress node");
	layout_job_path(path, 12, "started");
	is_str(fake_store_get(s, path), "1700000100.123", "started node in seconds.millis");
	layout_job_path(path, 12, "finished");
	ok(fake_store_get(s, path) == NULL, "no finished node while running");
	ok(job_load(s, STORE_TX_NONE, 12, &back) == 0, "load back");
	ok(back && back->state == JOB_DESTROYING && back->pages_total == 524288 &&
	   back->pages_left == 1000 && back->reason == JOB_REASON_CRASH &&
	   back->policy == JOB_POLICY_SYNC && back->started_wall == 1700000100123 &&
	   !strcmp(back->uuid_text, job->uuid_text) && !strcmp(back->name, "guest"),
	   "loaded job equals the published one");
	job_free(back);
	layout_job_path(path, 12, "state");
	store_write(s, STORE_TX_NONE, path, "exploded");
	ok(job_load(s, STORE_TX_NONE, 12, &back) == -EINVAL, "unknown state refuses to load");
	job_free(job);
	store_free(s);
}

static unsigned store_changes(struct store *s)
{
	return fake_store_calls(s, FAKE_STORE_WRITE) + fake_store_calls(s, FAKE_STORE_RM);
}

static void test_publish_changed_only(void)
{
	struct store *s = fake_store_new();
	struct job *job = new_job(13);
	char path[LAYOUT_PATH_LEN];
	store_tx tx;
	unsigned before;
	bool urgent;

	clock_set_fake(5000, 1700000100123);
	job->pages_total = job->pages_left = 1000;
	job_set_state(job, JOB_DESTROYING);
	ok(job_publish(job, s, STORE_TX_NONE) == 0, "first publish writes every node");
	before = store_changes(s);
	ok(job_publish_state(job, s, STORE_TX_NONE) == 0, "publish the state again, nothing changed");
	is_int(store_changes(s) - before, 0, "  no request made");
	is_int(job_progress_unshown(job, &urgent), 0, "nothing unshown after a publish");
	ok(!urgent, "  nor urgent");
	job_set_pages_left(job, 400);
	is_int(job_progress_unshown(job, &urgent), 2, "pages-left fell: two nodes unshown (pages-left, progress)");
	ok(!urgent, "  a figure, not urgent");
	before = store_changes(s);
	ok(job_publish_progress(job, s, STORE_TX_NONE) == 0, "a sample: pages-left fell");
	is_int(store_changes(s) - before, 2, "  two requests: pages-left and progress");
	layout_job_path(path, 13, "pages-left");
	is_str(fake_store_get(s, path), "400", "  pages-left written");
	job_set_pages_left(job, 399);
	is_int(job_progress_unshown(job, &urgent), 1, "one page more: pages-left alone unshown (progress still 60)");
	snprintf(job->eta_text, sizeof(job->eta_text), "stalled");
	is_int(job_progress_unshown(job, &urgent), 2, "a stall: eta unshown too");
	ok(urgent, "  and urgent: a one-shot reader must see it");
	ok(job_publish_progress(job, s, STORE_TX_NONE) == 0, "published");
	job->eta_text[0] = '\0';
	job_progress_unshown(job, &urgent);
	ok(urgent, "no longer stalled: urgent too");
	ok(job_publish_progress(job, s, STORE_TX_NONE) == 0, "published");

	/* A transaction that fails: its writes never happened, and the next
	 * publish must not take them as made. */
	job_set_pages_left(job, 100);
	store_tx_start(s, &tx);
	ok(job_publish_progress(job, s, tx) == 0, "a sample in a transaction");
	fake_store_fail_commits(s, 1);
	ok(store_tx_end(s, tx, false) == -EAGAIN, "  whose commit fails");
	is_str(fake_store_get(s, path), "399", "  pages-left still 399 in xenstore");
	job_shown_forget(job);
	ok(job_publish_progress(job, s, STORE_TX_NONE) == 0, "published again after forgetting");
	is_str(fake_store_get(s, path), "100", "  pages-left 100 now");

	/* An error too long to remember is written each time. */
	job_set_error(job, "a sentence longer than any figure, as errors are");
	ok(job_publish_state(job, s, STORE_TX_NONE) == 0, "an error set");
	before = store_changes(s);
	ok(job_publish_state(job, s, STORE_TX_NONE) == 0, "published again");
	is_int(store_changes(s) - before, 1, "  the long error written again, nothing else");
	job_set_error(job, NULL);
	ok(job_publish_state(job, s, STORE_TX_NONE) == 0, "the error cleared");
	layout_job_path(path, 13, "error");
	ok(fake_store_get(s, path) == NULL, "  and its node removed");
	before = store_changes(s);
	ok(job_publish_state(job, s, STORE_TX_NONE) == 0, "published again");
	is_int(store_changes(s) - before, 0, "  nothing removed twice");
	job_free(job);
	store_free(s);
}

/* A new job's publish replaces the record an earlier job of its domid
 * left, in one removal: no node of the old job survives, and no absent
 * node is removed one by one. */
static void test_publish_replaces(void)
{
	struct store *s = fake_store_new();
	char path[LAYOUT_PATH_LEN];
	struct job *job;
	unsigned before;

	clock_set_fake(5000, 1700000100123);
	job = new_job(14);
	layout_job_path(path, 14, "error");
	store_write(s, STORE_TX_NONE, path, "the old job's error");
	layout_job_path(path, 14, "finished");
	store_write(s, STORE_TX_NONE, path, "1600000000.000");
	layout_job_path(path, 14, "last-release");
	store_write(s, STORE_TX_NONE, path, "1600000000.000");
	job->pages_total = job->pages_left = 1000;
	before = fake_store_calls(s, FAKE_STORE_RM);
	ok(job_publish(job, s, STORE_TX_NONE) == 0, "a queued job published over an old record");
	is_int(fake_store_calls(s, FAKE_STORE_RM) - before, 1, "  one removal: the directory");
	layout_job_path(path, 14, "error");
	ok(fake_store_get(s, path) == NULL, "  the old error is gone");
	layout_job_path(path, 14, "finished");
	ok(fake_store_get(s, path) == NULL, "  so is its finished time");
	layout_job_path(path, 14, "last-release");
	ok(fake_store_get(s, path) == NULL, "  and its last release");
	layout_job_path(path, 14, "state");
	is_str(fake_store_get(s, path), "queued", "  the new state is there");
	layout_job_path(path, 14, "requested");
	is_str(fake_store_get(s, path), "1700000100.123", "  and its requested time");
	before = store_changes(s);
	ok(job_publish_state(job, s, STORE_TX_NONE) == 0, "its state published again");
	is_int(store_changes(s) - before, 0, "  nothing written: the absent nodes are known absent");
	job_free(job);
	store_free(s);
}

int main(void)
{
	test_transitions();
	test_times_and_progress();
	test_fail();
	test_publish_replaces();
	test_publish_load();
	test_publish_changed_only();
	return tap_done();
}
