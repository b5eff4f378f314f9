/*
 * Error injection over the daemon's core: one scenario (requests, a request
 * with a stale UUID, a zombie, a sync pool's scrub wait, an automatic
 * teardown after a grace period, a reload, a restart as after kill -9) is
 * run once clean to count every call the daemon makes to xenstore and to
 * the hypervisor; then once for every call and every error that call can
 * return, with just that call failing.  Each run must:
 *   - not crash (the sanitizer build runs this file too);
 *   - not spin: few wake-ups per simulated second;
 *   - not lose a request: once the fault is gone (and the daemon restarted,
 *     if the fault made it exit, as systemd would), every request ends
 *     done with its domain gone, or failed with a sentence;
 *   - not destroy a domain nobody asked for, nor one twice at a time.
 * The number of injection points covered is printed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bed.h"
#include "clock.h"
#include "fake_hv.h"
#include "fake_store.h"
#include "layout.h"
#include "reaper.h"
#include "tap.h"

#define N_ERRS 4

/* What each operation can answer on a real system (libxenstore's errno
 * values, libxl's and libxenctrl's mapped by hv_xen.c). */
static const int store_errs[FAKE_STORE_N_OPS][N_ERRS] = {
	[FAKE_STORE_READ] = { -EIO, -EACCES, -EBADF },
	[FAKE_STORE_WRITE] = { -EIO, -EACCES, -ENOSPC, -EBADF },
	[FAKE_STORE_RM] = { -EIO, -EACCES, -EBADF },
	[FAKE_STORE_LIST] = { -EIO, -EACCES, -EBADF },
	[FAKE_STORE_MAKE_PRIVATE] = { -EIO, -EACCES },
	[FAKE_STORE_TX_START] = { -EIO, -ENOSPC, -EBADF },
	[FAKE_STORE_TX_END] = { -EAGAIN, -EIO, -EBADF },
	[FAKE_STORE_WATCH] = { -EIO, -ENOSPC },
	[FAKE_STORE_UNWATCH] = { -EIO, -ENOENT },
	[FAKE_STORE_PING] = { -EBADF },
};

static const int hv_errs[FAKE_HV_N_OPS][N_ERRS] = {
	[FAKE_HV_LIST] = { -EIO, -EPERM, -ENOMEM },
	[FAKE_HV_DESTROY] = { -EIO, -EBUSY, -ESRCH, -EINVAL },
	[FAKE_HV_POOL_NAME] = { -ENOENT, -ENOMEM },
	[FAKE_HV_SCRUB_PROBE] = { -EIO, -EACCES, -ENODATA },
	[FAKE_HV_FREE_PAGES] = { -EIO, -EPERM },
	[FAKE_HV_PAGING_POOL] = { -EIO, -EPERM },
};

static const char policy1[] =
	"[daemon]\nscrub-probe-interval = 200ms\n"
	"[pool:pool1]\nscrub = sync\nteardown = shutdown\ngrace = 2s\n";
static const char policy2[] =
	"[daemon]\nscrub-probe-interval = 500ms\n"
	"[pool:pool1]\nscrub = sync\nteardown = shutdown,crash\ngrace = 1s\n";

struct verdict {
	unsigned restarts;
	unsigned spin;		/* steps with too many wake-ups */
	unsigned lost, wrong, twice;
	char why[160];
};

static void verdict_note(struct verdict *v, const char *what)
{
	if (!v->why[0])
		snprintf(v->why, sizeof(v->why), "%s", what);
}

/* The daemon exited (a start that failed, xenstored lost) or was killed:
 * start a new one on the same xenstore and hypervisor, as systemd would. */
static void restart(struct bed *b, struct verdict *v)
{
	for (int attempt = 0; attempt < 4; attempt++) {
		reaper_free(b->r);
		b->r = NULL;
		runner_free(b->runner);
		fake_runner_new(b->hv, &b->runner);
		b->s->lost = false;	/* a new connection */
		v->restarts++;
		if (bed_start(b) == 0 && !store_lost(b->s))
			return;
	}
}

/* Run MS of the main loop, restarting the daemon if it would have exited. */
static void step(struct bed *b, struct verdict *v, int64_t ms)
{
	unsigned before = b->wakeups;

	if (!b->r || store_lost(b->s))
		restart(b, v);
	bed_run(b, ms);
	if (b->wakeups - before > 20 + ms * 4 / 1000) {
		v->spin++;
		verdict_note(v, "spun: too many wake-ups");
	}
	if (store_lost(b->s))
		restart(b, v);
}

static void add_domain(struct bed *b, uint32_t domid, uint64_t pages, uint32_t pool)
{
	char path[64], name[16];

	fake_hv_add(b->hv, domid, (uint8_t)domid, pages, pool);
	snprintf(path, sizeof(path), "/local/domain/%u/name", domid);
	snprintf(name, sizeof(name), "guest%u", domid);
	fake_store_set(b->s, path, name);
}

/* The scenario; ARM is called once the stage is set, to arm the fault. */
static void scenario(struct bed *b, struct verdict *v, void (*arm)(struct bed *, const void *),
		     const void *arg)
{
	char stale[HV_UUID_STR_LEN];

	bed_init(b, 0, 1);
	config_free(b->cfg);
	b->cfg = bed_policy_from(policy1);
	add_domain(b, 10, 1000, 0);
	add_domain(b, 11, 1000, 0);
	fake_hv_make_zombie(b->hv, 11, 2, 5);
	add_domain(b, 12, 1000, 1);
	add_domain(b, 13, 1000, 1);
	add_domain(b, 20, 1000, 0);	/* bystanders, never asked for */
	add_domain(b, 21, 1000, 1);
	fake_hv_set_scrub(b->hv, HV_SCRUB_HEAP_DUMP, 3000);
	if (arm)
		arm(b, arg);
	if (bed_start(b) || store_lost(b->s))
		restart(b, v);
	bed_request(b, 10, 10);
	bed_request(b, 11, 11);
	bed_request(b, 12, 12);
	fake_hv_uuid_text(99, stale);
	fake_store_set(b->s, LAYOUT_REQUEST_DIR "/21", stale);
	step(b, v, 5000);
	fake_hv_shutdown(b->hv, 13, HV_SHUTDOWN_POWEROFF);
	fake_store_fire(b->s, "@releaseDomain");
	step(b, v, 3000);
	fake_hv_set_scrub(b->hv, HV_SCRUB_HEAP_DUMP, 0);
	step(b, v, 35000);
	bed_set_policy(b, policy2);
	step(b, v, 2000);
	restart(b, v);		/* as after kill -9 */
	step(b, v, 5000);
	/* The fault is gone: everything must now come right. */
	for (int op = 0; op < FAKE_STORE_N_OPS; op++)
		fake_store_inject(b->s, op, 0, 0, false);
	for (int op = 0; op < FAKE_HV_N_OPS; op++)
		fake_hv_inject(b->hv, op, 0, 0, false);
	fake_store_fire(b->s, LAYOUT_REQUEST_DIR);
	fake_store_fire(b->s, "@releaseDomain");
	step(b, v, 5 * 60 * 1000);
}

/* Every request ended truthfully; nothing else was touched. */
static void judge(struct bed *b, struct verdict *v)
{
	static const uint32_t asked[] = { 10, 11, 12, 13 };
	const char *state, *error;
	char path[LAYOUT_PATH_LEN];

	for (size_t i = 0; i < sizeof(asked) / sizeof(*asked); i++) {
		uint32_t d = asked[i];

		state = bed_node(b, d, "state");
		error = bed_node(b, d, "error");
		layout_request_path(path, d);
		if (!state && !fake_store_get(b->s, path) && fake_hv_exists(b->hv, d)) {
			v->lost++;
			verdict_note(v, "a request vanished without a job");
		} else if (!state || (strcmp(state, "done") && strcmp(state, "failed"))) {
			v->lost++;
			verdict_note(v, "a job did not end");
		} else if (!strcmp(state, "done") && fake_hv_exists(b->hv, d)) {
			v->lost++;
			verdict_note(v, "a job says done but its domain lives");
		} else if (!strcmp(state, "failed") && (!error || !error[0])) {
			v->lost++;
			verdict_note(v, "a job failed without a sentence");
		}
	}
	if (fake_hv_destroy_calls(b->hv, 20) || fake_hv_destroy_calls(b->hv, 21) ||
	    !fake_hv_exists(b->hv, 20) || !fake_hv_exists(b->hv, 21)) {
		v->wrong++;
		verdict_note(v, "a bystander was destroyed");
	}
	if (fake_hv_concurrent_destroys(b->hv)) {
		v->twice++;
		verdict_note(v, "a domain was destroyed twice at a time");
	}
}

struct point {
	int is_hv, op;
	unsigned nth;
	int err;
};

static void arm_point(struct bed *b, const void *arg)
{
	const struct point *p = arg;

	if (p->is_hv)
		fake_hv_inject(b->hv, p->op, p->nth, p->err, false);
	else
		fake_store_inject(b->s, p->op, p->nth, p->err, false);
}

/* INJECT_ONE="store|hv OP NTH ERRNO" runs that one point and prints the
 * jobs, with the daemon's log on stderr: for debugging a finding. */
static int run_one(const char *spec)
{
	char kind[8], op_name[16];
	struct verdict v = { 0 };
	struct point p;
	struct bed b;

	if (sscanf(spec, "%7s %15s %u %d", kind, op_name, &p.nth, &p.err) != 4)
		return 2;
	p.is_hv = !strcmp(kind, "hv");
	for (p.op = 0; p.op < (p.is_hv ? FAKE_HV_N_OPS : FAKE_STORE_N_OPS); p.op++)
		if (!strcmp(op_name, p.is_hv ? fake_hv_op_name(p.op) : fake_store_op_name(p.op)))
			break;
	p.err = -p.err;
	scenario(&b, &v, arm_point, &p);
	judge(&b, &v);
	for (uint32_t d = 10; d <= 21; d++)
		if (bed_node(&b, d, "state"))
			printf("# job %u: %s %s\n", d, bed_node(&b, d, "state"),
			       bed_node(&b, d, "error") ? bed_node(&b, d, "error") : "");
	printf("# verdict: lost %u wrong %u twice %u spin %u restarts %u: %s\n", v.lost, v.wrong,
	       v.twice, v.spin, v.restarts, v.why);
	bed_dispose(&b);
	return 0;
}

int main(void)
{
	if (getenv("INJECT_ONE"))
		return run_one(getenv("INJECT_ONE"));
{
	unsigned store_calls[FAKE_STORE_N_OPS], hv_calls[FAKE_HV_N_OPS];
	unsigned points = 0, failed = 0, fired = 0, restarts = 0;
	struct verdict v = { 0 };
	struct point p;
	struct bed b;

	scenario(&b, &v, NULL, NULL);
	judge(&b, &v);
	ok(!v.lost && !v.wrong && !v.twice && !v.spin, "the scenario passes with no fault injected%s%s",
	   v.why[0] ? ": " : "", v.why);
	is_str(bed_node(&b, 12, "policy"), "sync", "  it covers a sync job");
	is_str(bed_node(&b, 13, "reason"), "poweroff", "  an automatic teardown");
	is_str(bed_node(&b, 21, "state"), "failed", "  and a request with a stale UUID");
	for (int op = 0; op < FAKE_STORE_N_OPS; op++)
		store_calls[op] = fake_store_calls(b.s, op);
	for (int op = 0; op < FAKE_HV_N_OPS; op++)
		hv_calls[op] = fake_hv_calls(b.hv, op);
	bed_dispose(&b);

	for (p.is_hv = 0; p.is_hv < 2; p.is_hv++) {
		int n_ops = p.is_hv ? FAKE_HV_N_OPS : FAKE_STORE_N_OPS;

		for (p.op = 0; p.op < n_ops; p.op++) {
			unsigned calls = p.is_hv ? hv_calls[p.op] : store_calls[p.op];
			unsigned op_failed = 0, op_points = 0;

			for (int e = 0; e < N_ERRS; e++) {
				p.err = p.is_hv ? hv_errs[p.op][e] : store_errs[p.op][e];
				if (!p.err)
					continue;
				for (p.nth = 1; p.nth <= calls; p.nth++) {
					memset(&v, 0, sizeof(v));
					scenario(&b, &v, arm_point, &p);
					judge(&b, &v);
					fired += p.is_hv ? fake_hv_injected(b.hv) : fake_store_injected(b.s);
					restarts += v.restarts - 1;
					op_points++;
					if (v.lost || v.wrong || v.twice || v.spin) {
						if (op_failed++ < 3)
							printf("# %s %s call %u failing with %s: %s\n",
							       p.is_hv ? "hv" : "store",
							       p.is_hv ? fake_hv_op_name(p.op) : fake_store_op_name(p.op),
							       p.nth, strerror(-p.err), v.why);
					}
					bed_dispose(&b);
				}
			}
			ok(!op_failed, "%s %s: %u injection points (%u calls), %u bad", p.is_hv ? "hv" : "store",
			   p.is_hv ? fake_hv_op_name(p.op) : fake_store_op_name(p.op), op_points, calls,
			   op_failed);
			points += op_points;
			failed += op_failed;
		}
	}
	printf("# error injection: %u points, %u faults fired, %u daemon restarts, %u bad\n",
	       points, fired, restarts, failed);
	ok(fired > points / 2, "most injected faults were actually hit (%u of %u)", fired, points);
	return tap_done();
}
}
