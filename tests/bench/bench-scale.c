/*
 * bench-scale: the daemon's intake and job machinery at scale, without Xen
 * (issue 10, measure 8).  The daemon's real core (reaper, intake, jobs,
 * in-process runner, default policy) runs on the in-process test doubles of
 * tests/unit/ (bed.c), and N requests go through it in waves of at most
 * WAVE domains alive at once (a host's domain table, not the whole run,
 * bounds how many exist together; the fake hypervisor holds 256).
 *
 * Domids wrap at 32751 as Xen's do, so N may pass it.
 *
 * For each N (default 100, 1000, 10000), RUNS times, a child process does
 * the whole run and reports: CPU time per request (all threads), the part
 * of it spent inside the fake xenstore (a flat list whose lookups are
 * linear: its cost is the test double's, not the daemon's, so it is
 * measured apart and subtracted), peak RSS, xenstore and hypervisor calls
 * per job.  Every job must end "done" with its domain destroyed exactly
 * once, or the run fails and prints no figure.
 *
 * With -f, K teardowns in flight at once instead (issue 40, part 4): the
 * policy's jobs is set to K directly (the parser stops at 64; past it the
 * figure is the loop's cost per job, which is what is asked), K domains'
 * teardowns are held inside the fake's destroy, and the main loop is run
 * on the fake clock: first with nothing changing, then with
 * FLIGHT_MOVING jobs' pages falling at every progress interval, then
 * while FLIGHT_REQUESTS more requests are taken (queued behind the K).
 * Reported: the main thread's CPU per tick and per tick and job in flight,
 * xenstore requests per tick (they should follow what changed, not what
 * exists), CPU and xenstore requests per request taken.  The fake
 * xenstore's and the fake hypervisor's own time is measured apart and
 * left out.  Every job must end done with its domain destroyed once.
 *
 * usage: bench-scale [-r RUNS] [-o CSV] [N...]
 *        bench-scale -f [-r RUNS] [-o CSV] [K...]   (default 10 100 1000)
 * The CSV has one line per run; stdout a summary with the growth of the
 * per-request (per-tick) cost from the smallest N (K) to the largest.
 */
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bed.h"
#include "clock.h"
#include "fake_hv.h"
#include "fake_store.h"
#include "layout.h"
#include "log.h"
#include "reaper.h"
#include "fake_runner.h"

#define WAVE 100
#define MAX_SIZES 8
/* In flight: pages falling per progress interval, requests taken while
 * the K run, and the fake time of each measured phase (under the policy's
 * stuck-after of 30 s: held teardowns stand still, here for three). */
#define FLIGHT_MOVING 10
#define FLIGHT_REQUESTS 100
#define FLIGHT_PHASE_MS 8000
/* bench-scale builds fake_hv.c with room for this many domains. */
#define FLIGHT_MAX (FAKE_HV_MAX_DOMAINS - FLIGHT_REQUESTS)
#define MAX_RUNS 15
/* Pages per fake domain: 100 of them fit the fake's 16 GiB host. */
#define DOMAIN_PAGES 1000

/* Xen's domids run from 1 to DOMID_FIRST_RESERVED - 1 and then start
 * again: request K (from 1) goes to the domain this gives, so that runs
 * past 32751 requests reuse domids as a long-lived host does. */
#define BENCH_DOMIDS 32751
static uint32_t bench_domid(uint32_t request)
{
	return 1 + (request - 1) % BENCH_DOMIDS;
}

/* One run's figures, as the child hands them to the parent. */
struct result {
	int ok;
	unsigned n;
	double cpu_ms;		/* process CPU, all threads, during the run */
	double store_ms;	/* of which inside the fake xenstore's calls */
	double harness_ms;	/* of which the bench's own work (adding domains, requests, checks) */
	double wall_ms;
	uint64_t store_ops;	/* xenstore requests the daemon made */
	uint64_t hv_ops;	/* hypervisor calls */
	uint64_t tx;		/* transactions started */
	long peak_rss_kib;
	long start_rss_kib;
	char why[160];
};

static double cpu_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* A store that forwards to the fake one and times each call on the main
 * thread (the only one that touches the store, in the daemon too). */
struct timed_store {
	struct store base;
	struct store *inner;
	double ns;
};

static struct timed_store *ts_of(struct store *s)
{
	return (struct timed_store *)s;
}

#define TIMED(s, call) ({						\
	struct timed_store *t_ = ts_of(s);				\
	double t0_ = cpu_ns(CLOCK_THREAD_CPUTIME_ID);			\
	int rc_ = t_->inner->ops->call;					\
	t_->ns += cpu_ns(CLOCK_THREAD_CPUTIME_ID) - t0_;		\
	rc_; })
#define INNER(s) (ts_of(s)->inner)

static int ts_read(struct store *s, store_tx tx, const char *path, char **value)
{
	return TIMED(s, read(INNER(s), tx, path, value));
}

static int ts_write(struct store *s, store_tx tx, const char *path, const char *value)
{
	return TIMED(s, write(INNER(s), tx, path, value));
}

static int ts_rm(struct store *s, store_tx tx, const char *path)
{
	return TIMED(s, rm(INNER(s), tx, path));
}

static int ts_list(struct store *s, store_tx tx, const char *path, char ***names, unsigned *n)
{
	return TIMED(s, list(INNER(s), tx, path, names, n));
}

static int ts_make_private(struct store *s, store_tx tx, const char *path)
{
	return TIMED(s, make_private(INNER(s), tx, path));
}

static int ts_tx_start(struct store *s, store_tx *tx)
{
	return TIMED(s, tx_start(INNER(s), tx));
}

static int ts_tx_end(struct store *s, store_tx tx, bool abort)
{
	return TIMED(s, tx_end(INNER(s), tx, abort));
}

static int ts_watch(struct store *s, const char *path, const char *token)
{
	return TIMED(s, watch(INNER(s), path, token));
}

static int ts_unwatch(struct store *s, const char *path, const char *token)
{
	return TIMED(s, unwatch(INNER(s), path, token));
}

static int ts_next_event(struct store *s, char **path, char **token)
{
	return TIMED(s, next_event(INNER(s), path, token));
}

static int ts_fd(struct store *s)
{
	return INNER(s)->ops->fd ? INNER(s)->ops->fd(INNER(s)) : -1;
}

static int ts_ping(struct store *s)
{
	return INNER(s)->ops->ping ? TIMED(s, ping(INNER(s))) : 0;
}

static void ts_free(struct store *s)
{
	store_free(INNER(s));
	free(s);
}

static const struct store_ops timed_ops = {
	.read = ts_read, .write = ts_write, .rm = ts_rm, .list = ts_list,
	.make_private = ts_make_private, .tx_start = ts_tx_start, .tx_end = ts_tx_end,
	.watch = ts_watch, .unwatch = ts_unwatch, .next_event = ts_next_event, .fd = ts_fd, .ping = ts_ping,
	.free = ts_free,
};

/* The same for the hypervisor seam: the fake's list and probes walk its
 * own tables, a cost that is the double's, not the daemon's. */
struct timed_hv {
	struct hv base;
	struct hv *inner;
	double ns;
};

static struct timed_hv *th_of(struct hv *hv)
{
	return (struct timed_hv *)hv;
}

#define HV_TIMED(h, call) ({						\
	struct timed_hv *t_ = th_of(h);					\
	double t0_ = cpu_ns(CLOCK_THREAD_CPUTIME_ID);			\
	__typeof__(t_->inner->ops->call) rc_ = t_->inner->ops->call;	\
	t_->ns += cpu_ns(CLOCK_THREAD_CPUTIME_ID) - t0_;		\
	rc_; })
#define HV_INNER(h) (th_of(h)->inner)

static int th_list(struct hv *hv, struct hv_domain **domains, size_t *n)
{
	return HV_TIMED(hv, list(HV_INNER(hv), domains, n));
}

static int th_destroy(struct hv *hv, uint32_t domid, const uint8_t uuid[HV_UUID_LEN], unsigned flags)
{
	return HV_TIMED(hv, destroy(HV_INNER(hv), domid, uuid, flags));
}

static int th_self_domid(struct hv *hv, uint32_t *domid)
{
	return HV_TIMED(hv, self_domid(HV_INNER(hv), domid));
}

static int th_pool_name(struct hv *hv, uint32_t poolid, char **name)
{
	return HV_TIMED(hv, pool_name(HV_INNER(hv), poolid, name));
}

static int th_scrub_probe(struct hv *hv, unsigned sources, struct hv_scrub *out)
{
	return HV_TIMED(hv, scrub_probe(HV_INNER(hv), sources, out));
}

static bool th_scrub_exact(struct hv *hv)
{
	return HV_INNER(hv)->ops->scrub_exact ? HV_TIMED(hv, scrub_exact(HV_INNER(hv))) : false;
}

static int th_free_pages(struct hv *hv, uint64_t *pages, uint64_t *outstanding)
{
	return HV_TIMED(hv, free_pages(HV_INNER(hv), pages, outstanding));
}

static int th_paging_pool(struct hv *hv, uint32_t domid, uint64_t *pages)
{
	return HV_TIMED(hv, paging_pool(HV_INNER(hv), domid, pages));
}

static void th_free(struct hv *hv)
{
	hv_free(HV_INNER(hv));
	free(hv);
}

static const struct hv_ops timed_hv_ops = {
	.list = th_list, .destroy = th_destroy, .self_domid = th_self_domid,
	.pool_name = th_pool_name, .scrub_probe = th_scrub_probe, .scrub_exact = th_scrub_exact,
	.free_pages = th_free_pages, .paging_pool = th_paging_pool, .free = th_free,
};

static long rss_kib(const char *field)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, strlen(field)))
			kib = strtol(line + strlen(field), NULL, 10);
	fclose(f);
	return kib;
}

/* The xenstore requests the fake has served so far. */
static uint64_t store_ops_now(struct store *inner)
{
	uint64_t n = 0;

	for (int op = 0; op < FAKE_STORE_N_OPS; op++)
		n += fake_store_calls(inner, op);
	return n;
}

/* Step the daemon's main loop until everything asked for is finished; the
 * runner runs them on threads, so finished destroys come back on its fd. */
static int drain(struct bed *b)
{
	for (int round = 0; round < 100000; round++) {
		reaper_handle_store_events(b->r);
		reaper_tick(b->r);
		if (fake_runner_idle(b->runner) && !reaper_busy(b->r))
			return 0;
		if (reaper_busy(b->r)) {
			struct pollfd pfd = { .fd = runner_fd(b->runner), .events = POLLIN };

			/* Blocked, as main.c's poll is: waiting costs no CPU. */
			if (poll(&pfd, 1, 2000) > 0)
				reaper_handle_runner(b->r);
		}
	}
	return -ETIMEDOUT;
}

/* The whole run for N requests, in this (child) process. */
static void run(unsigned n, struct result *res)
{
	struct timed_store *ts = calloc(1, sizeof(*ts));
	double t_start, w_start, h0, harness = 0;
	char path[LAYOUT_PATH_LEN], uuid[HV_UUID_STR_LEN];
	struct timespec w;
	struct bed b;
	uint32_t next = 1;
	unsigned wrong;

	memset(res, 0, sizeof(*res));
	res->n = n;
	bed_init(&b, 0, 1);	/* the default policy: one teardown at a time */
	ts->base.ops = &timed_ops;
	ts->inner = b.s;
	b.s = &ts->base;
	if (bed_start(&b)) {
		snprintf(res->why, sizeof(res->why), "the reaper did not start");
		return;
	}
	res->start_rss_kib = rss_kib("VmRSS:");
	res->store_ops -= store_ops_now(ts->inner);
	for (int op = 0; op < FAKE_HV_N_OPS; op++)
		res->hv_ops -= fake_hv_calls(b.hv, op);
	res->tx -= fake_store_calls(ts->inner, FAKE_STORE_TX_START);
	ts->ns = 0;
	clock_gettime(CLOCK_MONOTONIC, &w);
	w_start = (double)w.tv_sec * 1e9 + w.tv_nsec;
	t_start = cpu_ns(CLOCK_PROCESS_CPUTIME_ID);

	while (next <= n) {
		uint32_t first = next;

		/* Harness: the domains appear and their requests are written, as
		 * a toolstack would; not the daemon's cost. */
		h0 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
		for (; next <= n && next - first < WAVE; next++) {
			fake_hv_add(b.hv, bench_domid(next), (uint8_t)next, DOMAIN_PAGES, 0);
			fake_hv_uuid_text((uint8_t)next, uuid);
			layout_request_path(path, bench_domid(next));
			fake_store_set(ts->inner, path, uuid);
		}
		harness += cpu_ns(CLOCK_THREAD_CPUTIME_ID) - h0;
		if (drain(&b)) {
			snprintf(res->why, sizeof(res->why), "requests %u..%u never finished", first, next - 1);
			goto out;
		}
		h0 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
		for (uint32_t k = first; k < next; k++) {
			uint32_t d = bench_domid(k);
			const char *state;

			layout_job_path(path, d, "state");
			state = fake_store_get(ts->inner, path);

			if (!state || strcmp(state, "done") || fake_hv_exists(b.hv, d)) {
				snprintf(res->why, sizeof(res->why), "domain %u: job %s, domain %s",
					 d, state ? state : "missing",
					 fake_hv_exists(b.hv, d) ? "still there" : "gone");
				goto out;
			}
		}
		wrong = fake_hv_forget_gone(b.hv);
		harness += cpu_ns(CLOCK_THREAD_CPUTIME_ID) - h0;
		if (wrong) {
			snprintf(res->why, sizeof(res->why), "%u domains not destroyed exactly once", wrong);
			goto out;
		}
		/* A second of the daemon's time between waves: samples, retention. */
		clock_advance(1000);
	}

	res->cpu_ms = (cpu_ns(CLOCK_PROCESS_CPUTIME_ID) - t_start) / 1e6;
	clock_gettime(CLOCK_MONOTONIC, &w);
	res->wall_ms = ((double)w.tv_sec * 1e9 + w.tv_nsec - w_start) / 1e6;
	res->store_ms = ts->ns / 1e6;
	res->harness_ms = harness / 1e6;
	res->store_ops += store_ops_now(ts->inner);
	for (int op = 0; op < FAKE_HV_N_OPS; op++)
		res->hv_ops += fake_hv_calls(b.hv, op);
	res->tx += fake_store_calls(ts->inner, FAKE_STORE_TX_START);
	res->peak_rss_kib = rss_kib("VmHWM:");
	res->ok = 1;
out:
	bed_dispose(&b);
}

/* One in-flight run's figures. */
struct flight_result {
	int ok;
	unsigned k;
	double still_us_per_tick;	/* main loop CPU, nothing changing */
	double still_ops_per_tick;	/* xenstore requests */
	double moving_us_per_tick;	/* FLIGHT_MOVING jobs' pages falling */
	double moving_ops_per_tick;
	double request_us;		/* per request taken while the K run */
	double request_ops;
	unsigned still_ticks, moving_ticks;
	long peak_rss_kib;
	char why[160];
};

/* The daemon's main-thread CPU since *MARK (ns), less what the doubles
 * spent meanwhile; moves the marks on. */
struct flight_clock {
	double cpu, store, hv;
	uint64_t ops;
};

static void flight_mark(struct flight_clock *c, struct timed_store *ts, struct timed_hv *th)
{
	c->cpu = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
	c->store = ts->ns;
	c->hv = th->ns;
	c->ops = store_ops_now(ts->inner);
}

static double flight_cpu_us(const struct flight_clock *c, struct timed_store *ts, struct timed_hv *th,
			    uint64_t *ops)
{
	*ops = store_ops_now(ts->inner) - c->ops;
	return (cpu_ns(CLOCK_THREAD_CPUTIME_ID) - c->cpu - (ts->ns - c->store) - (th->ns - c->hv)) / 1e3;
}

/* K teardowns in flight; see the opening comment. */
static void run_flight(unsigned k, struct flight_result *res)
{
	struct timed_store *ts = calloc(1, sizeof(*ts));
	struct timed_hv *th = calloc(1, sizeof(*th));
	char path[LAYOUT_PATH_LEN], uuid[HV_UUID_STR_LEN];
	unsigned total = k + FLIGHT_REQUESTS, wakeups, taken;
	double h0, harness_ns = 0;
	struct flight_clock mark;
	struct hv *inner_hv;
	uint64_t ops;
	struct bed b;
	double us;

	memset(res, 0, sizeof(*res));
	res->k = k;
	bed_init(&b, 0, k);
	inner_hv = b.hv;
	fake_hv_set_total(inner_hv, (uint64_t)total * DOMAIN_PAGES * 2);
	ts->base.ops = &timed_ops;
	ts->inner = b.s;
	b.s = &ts->base;
	th->base.ops = &timed_hv_ops;
	th->inner = inner_hv;
	b.hv = &th->base;
	if (bed_start(&b)) {
		snprintf(res->why, sizeof(res->why), "the reaper did not start");
		goto out;
	}
	fake_hv_hold(inner_hv);
	for (uint32_t d = 1; d <= total; d++)
		fake_hv_add(inner_hv, d, (uint8_t)d, DOMAIN_PAGES, 0);
	for (uint32_t d = 1; d <= k; d++) {
		fake_hv_uuid_text((uint8_t)d, uuid);
		layout_request_path(path, d);
		fake_store_set(ts->inner, path, uuid);
	}
	for (int turn = 0; turn < 100000 && fake_runner_running(b.runner) < k; turn++) {
		reaper_handle_store_events(b.r);
		reaper_tick(b.r);
	}
	fake_hv_wait_inside(inner_hv, k);
	if (fake_runner_running(b.runner) != k) {
		snprintf(res->why, sizeof(res->why), "%u of %u teardowns in flight", fake_runner_running(b.runner), k);
		goto out;
	}

	/* Nothing changes: what the loop costs for what merely exists, once
	 * the rates the start set have fallen to nothing and been published. */
	bed_run_busy(&b, FLIGHT_PHASE_MS);
	wakeups = b.wakeups;
	flight_mark(&mark, ts, th);
	bed_run_busy(&b, FLIGHT_PHASE_MS);
	us = flight_cpu_us(&mark, ts, th, &ops);
	res->still_ticks = b.wakeups - wakeups;
	if (!res->still_ticks) {
		snprintf(res->why, sizeof(res->why), "no tick in %d ms of teardowns in flight", FLIGHT_PHASE_MS);
		goto out;
	}
	res->still_us_per_tick = us / res->still_ticks;
	res->still_ops_per_tick = (double)ops / res->still_ticks;

	/* The first FLIGHT_MOVING jobs release a page per interval, the
	 * others stand still: what the loop costs for what changed. */
	us = 0;
	ops = 0;
	wakeups = b.wakeups;
	for (int64_t t = 0, step = 0; t < FLIGHT_PHASE_MS; t += b.cfg->progress_interval_ms, step++) {
		uint64_t step_ops;

		for (uint32_t d = 1; d <= FLIGHT_MOVING && d <= k; d++)
			fake_hv_set_pages(inner_hv, d, DOMAIN_PAGES - 1 - step);
		flight_mark(&mark, ts, th);
		bed_run_busy(&b, b.cfg->progress_interval_ms);
		us += flight_cpu_us(&mark, ts, th, &step_ops);
		ops += step_ops;
	}
	res->moving_ticks = b.wakeups - wakeups;
	res->moving_us_per_tick = us / res->moving_ticks;
	res->moving_ops_per_tick = (double)ops / res->moving_ticks;

	/* Requests taken while the K run: they queue behind them. */
	for (uint32_t d = k + 1; d <= total; d++) {
		fake_hv_uuid_text((uint8_t)d, uuid);
		layout_request_path(path, d);
		fake_store_set(ts->inner, path, uuid);
	}
	flight_mark(&mark, ts, th);
	taken = 0;
	for (int turn = 0; turn < 100000 && taken < FLIGHT_REQUESTS; turn++) {
		reaper_handle_store_events(b.r);
		reaper_tick(b.r);
		/* The bench's own count, left out like the doubles' time. */
		h0 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
		taken = 0;
		for (uint32_t d = k + 1; d <= total; d++)
			taken += reaper_find_job(b.r, d) != NULL;
		harness_ns += cpu_ns(CLOCK_THREAD_CPUTIME_ID) - h0;
	}
	us = flight_cpu_us(&mark, ts, th, &ops) - harness_ns / 1e3;
	if (taken != FLIGHT_REQUESTS) {
		snprintf(res->why, sizeof(res->why), "%u of %d requests taken", taken, FLIGHT_REQUESTS);
		goto out;
	}
	res->request_us = us / FLIGHT_REQUESTS;
	res->request_ops = (double)ops / FLIGHT_REQUESTS;

	fake_hv_release(inner_hv);
	if (drain(&b)) {
		snprintf(res->why, sizeof(res->why), "the teardowns never finished once released");
		goto out;
	}
	/* Past REAPER_RETAIN_MAX finished records the oldest are dropped. */
	for (uint32_t d = 1, dropped = 0; d <= total; d++) {
		const char *state;

		layout_job_path(path, d, "state");
		state = fake_store_get(ts->inner, path);
		dropped += !state;
		if ((state && strcmp(state, "done")) || dropped > (total > REAPER_RETAIN_MAX ? total - REAPER_RETAIN_MAX : 0) ||
		    fake_hv_exists(inner_hv, d)) {
			snprintf(res->why, sizeof(res->why), "domain %u: job %s, domain %s", d,
				 state ? state : "missing", fake_hv_exists(inner_hv, d) ? "still there" : "gone");
			goto out;
		}
	}
	if (fake_hv_forget_gone(inner_hv)) {
		snprintf(res->why, sizeof(res->why), "domains not destroyed exactly once");
		goto out;
	}
	res->peak_rss_kib = rss_kib("VmHWM:");
	res->ok = 1;
out:
	/* bed_dispose talks to the fakes themselves. */
	b.hv = inner_hv;
	th->inner = NULL;
	free(th);
	bed_dispose(&b);
}

/* RUN(N, RES) in a child, so that each run's peak RSS is its own; RES
 * (SIZE bytes, starting with an int ok and, at WHY_OFFSET, the reason)
 * comes back over a pipe. */
static int run_child(void (*run_fn)(unsigned, void *), unsigned n, void *res, size_t size,
		     size_t why_offset)
{
	int fds[2], status;
	ssize_t got;
	pid_t pid;

	if (pipe(fds))
		return -errno;
	fflush(stdout);	/* or the child writes it again */
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		close(fds[0]);
		/* The daemon logs a line or two per job: to /dev/null, as cheap
		 * as a journal that keeps up. */
		if (!freopen("/dev/null", "w", stderr))
			_exit(1);
		run_fn(n, res);
		_exit(write(fds[1], res, size) == (ssize_t)size ? 0 : 1);
	}
	close(fds[1]);
	got = read(fds[0], res, size);
	close(fds[0]);
	if (waitpid(pid, &status, 0) != pid)
		return -errno;
	if (got != (ssize_t)size || !WIFEXITED(status) || WEXITSTATUS(status)) {
		memset(res, 0, size);
		snprintf((char *)res + why_offset, 160, "the child %s",
			 WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "exited without a result");
	}
	return 0;
}

static void run_waves(unsigned n, void *res)
{
	run(n, res);
}

static void run_in_flight(unsigned k, void *res)
{
	run_flight(k, res);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* -f: K in flight, RUNS times each; the medians' growth at the end. */
static int main_flight(const unsigned *sizes, int n_sizes, int runs, FILE *csv)
{
	double tick_job[MAX_SIZES], moving_ops[MAX_SIZES], request[MAX_SIZES], v[3][MAX_RUNS];
	struct flight_result res;

	if (csv)
		fprintf(csv, "in_flight,run,still_ticks,still_us_per_tick,still_us_per_tick_per_job,"
			"still_store_ops_per_tick,moving_ticks,moving_us_per_tick,moving_store_ops_per_tick,"
			"request_us,request_store_ops,peak_rss_kib\n");
	printf("# bench-scale -f: teardowns held in flight on the test doubles; %d ms of fake time"
	       " still, then %d jobs' pages falling per progress interval, then %d requests taken;"
	       " %d run(s) each\n", FLIGHT_PHASE_MS, FLIGHT_MOVING, FLIGHT_REQUESTS, runs);
	for (int i = 0; i < n_sizes; i++) {
		for (int k = 0; k < runs; k++) {
			int rc = run_child(run_in_flight, sizes[i], &res, sizeof(res),
					   offsetof(struct flight_result, why));

			if (rc || !res.ok) {
				fprintf(stderr, "bench-scale: K=%u run %d FAILED: %s\n", sizes[i], k + 1,
					rc ? strerror(-rc) : res.why);
				return 1;
			}
			v[0][k] = res.still_us_per_tick / res.k;
			v[1][k] = res.moving_ops_per_tick;
			v[2][k] = res.request_us;
			printf("K=%-5u run %d: still, %.1f us CPU per tick (%.3f per job in flight), %.2f xenstore"
			       " requests per tick (%u ticks); %d moving, %.1f us and %.2f requests per tick;"
			       " %.1f us and %.2f requests per request taken; peak RSS %ld KiB\n",
			       res.k, k + 1, res.still_us_per_tick, v[0][k], res.still_ops_per_tick, res.still_ticks,
			       FLIGHT_MOVING, res.moving_us_per_tick, res.moving_ops_per_tick, res.request_us,
			       res.request_ops, res.peak_rss_kib);
			if (csv)
				fprintf(csv, "%u,%d,%u,%.3f,%.4f,%.3f,%u,%.3f,%.3f,%.3f,%.3f,%ld\n", res.k, k + 1,
					res.still_ticks, res.still_us_per_tick, v[0][k], res.still_ops_per_tick,
					res.moving_ticks, res.moving_us_per_tick, res.moving_ops_per_tick,
					res.request_us, res.request_ops, res.peak_rss_kib);
		}
		tick_job[i] = median(v[0], runs);
		moving_ops[i] = median(v[1], runs);
		request[i] = median(v[2], runs);
	}
	if (n_sizes > 1)
		printf("K=%u against K=%u (1.0 = flat): CPU per tick and job in flight %.2f, per request"
		       " taken %.2f; xenstore requests per tick with %d jobs moving %.2f\n",
		       sizes[n_sizes - 1], sizes[0], tick_job[n_sizes - 1] / tick_job[0],
		       request[n_sizes - 1] / request[0], FLIGHT_MOVING, moving_ops[n_sizes - 1] / moving_ops[0]);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned sizes[MAX_SIZES] = { 100, 1000, 10000 };
	int n_sizes = 3, runs = 3, opt, failed = 0, flight = 0;
	double med_total[MAX_SIZES], med_daemon[MAX_SIZES];
	const char *csv_path = NULL;
	struct result res;
	FILE *csv = NULL;

	while ((opt = getopt(argc, argv, "fr:o:")) != -1) {
		switch (opt) {
		case 'f':
			flight = 1;
			sizes[0] = 10, sizes[1] = 100, sizes[2] = 1000;
			break;
		case 'r':
			runs = atoi(optarg);
			break;
		case 'o':
			csv_path = optarg;
			break;
		default:
			fprintf(stderr, "usage: bench-scale [-f] [-r RUNS] [-o CSV] [N...]\n");
			return 2;
		}
	}
	if (runs < 1 || runs > MAX_RUNS) {
		fprintf(stderr, "bench-scale: RUNS is 1..%d\n", MAX_RUNS);
		return 2;
	}
	if (optind < argc) {
		n_sizes = 0;
		for (; optind < argc && n_sizes < MAX_SIZES; optind++)
			if ((sizes[n_sizes++] = strtoul(argv[optind], NULL, 10)) == 0) {
				fprintf(stderr, "bench-scale: N is a number of requests\n");
				return 2;
			}
	}
	if (flight)
		for (int i = 0; i < n_sizes; i++)
			if (sizes[i] > FLIGHT_MAX) {
				fprintf(stderr, "bench-scale: -f K is 1..%d (the fake hypervisor's domains, less"
					" the %d requests taken)\n", FLIGHT_MAX, FLIGHT_REQUESTS);
				return 2;
			}
	if (csv_path) {
		csv = fopen(csv_path, "w");
		if (!csv) {
			perror(csv_path);
			return 2;
		}
		if (!flight)
			fprintf(csv, "n,run,cpu_us_per_req,daemon_cpu_us_per_req,fake_store_us_per_req,"
				"harness_us_per_req,wall_ms,store_ops_per_job,tx_per_job,hv_calls_per_job,"
				"start_rss_kib,peak_rss_kib\n");
	}
	if (flight) {
		failed = main_flight(sizes, n_sizes, runs, csv);
		goto done;
	}
	printf("# bench-scale: requests through the daemon's intake and jobs on the test doubles,"
	       " waves of %d, jobs = 1, %d run(s) each\n", WAVE, runs);
	for (int i = 0; i < n_sizes; i++) {
		double total[MAX_RUNS], daemon[MAX_RUNS];

		for (int k = 0; k < runs; k++) {
			int rc = run_child(run_waves, sizes[i], &res, sizeof(res),
					   offsetof(struct result, why));

			if (rc || !res.ok) {
				fprintf(stderr, "bench-scale: N=%u run %d FAILED: %s\n", sizes[i], k + 1,
					rc ? strerror(-rc) : res.why);
				failed = 1;
				goto done;
			}
			total[k] = res.cpu_ms * 1000 / res.n;
			daemon[k] = (res.cpu_ms - res.store_ms - res.harness_ms) * 1000 / res.n;
			printf("N=%-6u run %d: %.1f us CPU per request (daemon %.1f, fake xenstore %.1f,"
			       " harness %.1f), %.1f xenstore ops and %.2f transactions per job,"
			       " %.2f hypervisor calls per job, peak RSS %ld KiB (%ld at start)\n",
			       res.n, k + 1, total[k], daemon[k], res.store_ms * 1000 / res.n,
			       res.harness_ms * 1000 / res.n, (double)res.store_ops / res.n,
			       (double)res.tx / res.n, (double)res.hv_ops / res.n, res.peak_rss_kib,
			       res.start_rss_kib);
			if (csv)
				fprintf(csv, "%u,%d,%.3f,%.3f,%.3f,%.3f,%.1f,%.2f,%.3f,%.3f,%ld,%ld\n",
					res.n, k + 1, total[k], daemon[k], res.store_ms * 1000 / res.n,
					res.harness_ms * 1000 / res.n, res.wall_ms,
					(double)res.store_ops / res.n, (double)res.tx / res.n,
					(double)res.hv_ops / res.n, res.start_rss_kib, res.peak_rss_kib);
		}
		med_total[i] = median(total, runs);
		med_daemon[i] = median(daemon, runs);
	}
	if (n_sizes > 1)
		printf("growth of the per-request cost, N=%u against N=%u (1.0 = linear, below 1 better):"
		       " daemon %.2f, with the fake xenstore %.2f\n", sizes[n_sizes - 1], sizes[0],
		       med_daemon[n_sizes - 1] / med_daemon[0], med_total[n_sizes - 1] / med_total[0]);
done:
	if (csv && fclose(csv))
		failed = 1;
	if (failed && csv_path)
		remove(csv_path);	/* never a figure from a failed run */
	return failed;
}
