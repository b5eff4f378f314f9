/*
 * bed: sets up the daemon's real core (reaper, worker pool, policy) on the
 * in-process store and hypervisor, and steps it the way main.c's loop
 * does.  The clock is fake; worker threads are real, so waiting for a
 * destroy is the one place where real time passes.  Test tooling only.
 */
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bed.h"
#include "clock.h"
#include "fake_hv.h"
#include "fake_store.h"
#include "layout.h"

struct config *bed_policy_from(const char *text)
{
	struct config *cfg = NULL;
	FILE *f = fmemopen((void *)text, strlen(text), "r");

	if (config_parse(f, "test.conf", &cfg, NULL))
		printf("# bad test policy:\n%s", text);
	fclose(f);
	if (cfg && !strstr(text, "metrics")) {
		/* Never the host's node_exporter directory from a unit test. */
		free(cfg->metrics);
		cfg->metrics = NULL;
	}
	return cfg;
}

void bed_init(struct bed *b, uint32_t self, unsigned max_jobs)
{
	memset(b, 0, sizeof(*b));
	clock_set_fake(100000, 1700000000000);
	b->s = fake_store_new();
	b->hv = fake_hv_new(self);
	config_new(&b->cfg);
	free(b->cfg->metrics);
	b->cfg->metrics = NULL;	/* never the host's node_exporter directory */
	b->cfg->jobs = max_jobs;
	fake_runner_new(b->hv, &b->runner);
}

int bed_start(struct bed *b)
{
	int rc = reaper_new(b->s, b->hv, b->runner, b->cfg, &b->r);

	return rc ? rc : reaper_start(b->r);
}

void bed_dispose(struct bed *b)
{
	fake_hv_release(b->hv);
	reaper_free(b->r);
	runner_free(b->runner);
	hv_free(b->hv);
	store_free(b->s);
	config_free(b->cfg);
}

static void bed_ping(struct bed *b)
{
	static unsigned seq;
	char path[LAYOUT_PATH_LEN];

	snprintf(path, sizeof(path), LAYOUT_PING_DIR "/bed-%u", ++seq);
	fake_store_set(b->s, path, "following");
	b->pinged_mono = clock_mono_ms();
}

void bed_follow(struct bed *b, bool follow)
{
	b->following = follow;
	if (follow) {
		bed_ping(b);
		reaper_handle_store_events(b->r);
	}
}

/* A following client pings again BED_PING_MS after its last. */
static void bed_keep_following(struct bed *b)
{
	if (b->following && clock_mono_ms() - b->pinged_mono >= BED_PING_MS)
		bed_ping(b);
}

/* Wait (real time) for a worker to finish, if one runs, and collect. */
static void bed_collect(struct bed *b, int timeout_ms)
{
	struct pollfd pfd = { .fd = runner_fd(b->runner), .events = POLLIN };

	if (reaper_busy(b->r) && poll(&pfd, 1, timeout_ms) > 0)
		reaper_handle_runner(b->r);
}

void bed_settle(struct bed *b)
{
	for (int round = 0; round < 50; round++) {
		bed_keep_following(b);
		reaper_handle_store_events(b->r);
		reaper_tick(b->r);
		if (fake_runner_idle(b->runner) && !reaper_busy(b->r))
			return;
		bed_collect(b, 2000);
	}
}

/* bed_run's loop: with COLLECT, a busy pool is waited for (real time);
 * without, left as it is.  Returns the turns that found a deadline that
 * had not moved (the timer firing at once, again), stopping at 1000. */
static unsigned bed_run_loop(struct bed *b, int64_t ms, bool collect)
{
	int64_t end = clock_mono_ms() + ms, next;
	unsigned spins = 0;

	for (int turns = 0; turns < 100000 && spins < 1000; turns++) {
		bed_keep_following(b);
		reaper_handle_store_events(b->r);
		reaper_tick(b->r);
		if (collect && reaper_busy(b->r)) {
			bed_collect(b, 2000);
			continue;
		}
		next = reaper_next_deadline(b->r);
		if (b->following && (next < 0 || next > b->pinged_mono + BED_PING_MS))
			next = b->pinged_mono + BED_PING_MS;	/* the client's wake-up */
		if (next < 0 || next > end)
			break;
		b->wakeups++;
		if (next > clock_mono_ms())
			clock_advance(next - clock_mono_ms());
		else
			spins++;
	}
	if (clock_mono_ms() < end)
		clock_advance(end - clock_mono_ms());
	reaper_handle_store_events(b->r);
	reaper_tick(b->r);
	return spins;
}

void bed_run(struct bed *b, int64_t ms)
{
	bed_run_loop(b, ms, true);
}

unsigned bed_run_busy(struct bed *b, int64_t ms)
{
	return bed_run_loop(b, ms, false);
}

void bed_wait_gone(struct bed *b, uint32_t domid)
{
	struct timespec pause = { 0, 5 * 1000 * 1000 };

	const struct job *job;

	for (int i = 0; i < 1000 && fake_hv_exists(b->hv, domid); i++)
		nanosleep(&pause, NULL);
	/* Gone is not returned: the worker whose destroy removed it may still
	 * be on its way out of hv_destroy (under valgrind, for long enough to
	 * be seen).  Unless that destroy is still held in the fake, collect
	 * until its job has left the pool. */
	for (int i = 0; i < 1000 && !fake_hv_destroying(b->hv, domid) &&
	     (job = reaper_find_job(b->r, domid)) && job->in_runner; i++) {
		reaper_handle_runner(b->r);
		if ((job = reaper_find_job(b->r, domid)) && job->in_runner)
			nanosleep(&pause, NULL);
	}
	for (int i = 0; i < 1000 && reaper_busy(b->r) &&
	     fake_runner_running(b->runner) < reaper_busy(b->r); i++) {
		reaper_handle_runner(b->r);
		nanosleep(&pause, NULL);
	}
	reaper_handle_runner(b->r);
	bed_run_busy(b, 300);
}

void bed_wait_workers(struct bed *b)
{
	struct timespec pause = { 0, 5 * 1000 * 1000 };

	for (int i = 0; i < 1000 && fake_runner_running(b->runner); i++)
		nanosleep(&pause, NULL);
	reaper_handle_runner(b->r);
	bed_run_busy(b, 300);
}

void bed_add_named(struct bed *b, uint32_t domid, uint64_t pages, uint32_t pool, const char *name)
{
	char path[64];

	fake_hv_add(b->hv, domid, (uint8_t)domid, pages, pool);
	snprintf(path, sizeof(path), "/local/domain/%u/name", domid);
	fake_store_set(b->s, path, name);
}

void bed_other_toolstack_destroys(struct bed *b, uint32_t domid, uint64_t pages_held)
{
	char path[64];

	snprintf(path, sizeof(path), "/local/domain/%u", domid);
	store_rm(b->s, STORE_TX_NONE, path);
	fake_hv_kill(b->hv, domid, pages_held);
	fake_store_fire(b->s, "@releaseDomain");
}

void bed_request(struct bed *b, uint32_t domid, uint8_t seed)
{
	char path[LAYOUT_PATH_LEN], uuid[HV_UUID_STR_LEN];

	fake_hv_uuid_text(seed, uuid);
	layout_request_path(path, domid);
	fake_store_set(b->s, path, uuid);
}

const char *bed_node(struct bed *b, uint32_t domid, const char *leaf)
{
	char path[LAYOUT_PATH_LEN];

	layout_job_path(path, domid, leaf);
	return fake_store_get(b->s, path);
}

void bed_set_policy(struct bed *b, const char *text)
{
	struct config *cfg = bed_policy_from(text);

	cfg->jobs = b->cfg->jobs;
	if (b->r)
		reaper_set_policy(b->r, cfg);
	config_free(b->cfg);
	b->cfg = cfg;
}

void bed_plant_job(struct store *s, uint32_t domid, uint8_t seed, int state, int64_t finished_wall)
{
	uint8_t uuid[HV_UUID_LEN];
	char text[HV_UUID_STR_LEN];
	struct job *job;

	fake_hv_uuid_text(seed, text);
	hv_uuid_parse(text, uuid);
	job_new(domid, uuid, "old", "Pool-0", &job);
	job->pages_total = job->pages_left = 100;
	job->state = state;
	job->started_wall = 1699999990000;
	job->finished_wall = finished_wall;
	job_publish(job, s, STORE_TX_NONE);
	job_free(job);
}
