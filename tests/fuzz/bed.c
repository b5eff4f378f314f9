/*
 * bed: one fake host for the reaper fuzzers, and the bookkeeping that lets
 * them say, at the end, whether the daemon ever destroyed a domain it had
 * no right to.  Every life of a domid (an "incarnation": created, then
 * destroyed or removed) counts the destroys made while it lived; a destroy
 * is allowed only for a domain that is neither dom0, the daemon's own nor
 * protected, and either named with its own UUID by a request (or by a job
 * node a resumed daemon read back) or dead in a pool that tears its kind of
 * death down.  Domids are changed (added, removed) only while no teardown
 * is in flight, so a destroy always lands on the incarnation the daemon
 * checked, as with real Xen, which reuses a domid only after a long cycle.
 *
 * It does not judge progress figures or timing; fuzz-*.c decide what the
 * input means and bed_finish() what must hold.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "bed.h"
#include "clock.h"
#include "fake_hv.h"
#include "fake_store.h"
#include "fuzz.h"
#include "layout.h"
#include "reaper.h"

#define SELF_DOMID 7
#define AUTO_POOL 1		/* pool1 tears down poweroff and crash */
#define PROTECTED_SEED 11	/* its UUID is on the protect list */
#define PROTECTED_NAME "db"
/* fake_hv holds 64 domains and remembers 64 gone ones: stay below. */
#define MAX_INCARNATIONS 56
#define MAX_GRANTS (2 * BED_MAX_LINES)

static const char policy_text[] =
	"[daemon]\n"
	"jobs = 2\n"
	"retention = 1000h\n"
	"scrub-probe = heap-dump\n"
	"scrub-probe-interval = 1s\n"
	"protect = " PROTECTED_NAME " %s\n"
	"[default]\n"
	"teardown = request\n"
	"[pool:pool1]\n"
	"scrub = sync\n"
	"teardown = shutdown,crash\n"
	"grace = 1s\n";

struct incarnation {
	uint32_t domid;
	uint8_t seed;
	uint32_t pool;
	unsigned calls_before;	/* destroys of its domid before it was created */
	unsigned calls_after;	/* ... by the time it was gone (valid if ended) */
	bool ended;
	bool auto_teardown;	/* died in a way its pool tears down */
};

/* Domids named so far (a request or planted job per script line at most). */
#define MAX_DOMIDS (2 * BED_MAX_LINES + 64)
struct domid_set {
	uint32_t v[MAX_DOMIDS];
	unsigned n;
};

/* A right to destroy DOMID with UUID, given by a request or a job node. */
struct grant {
	uint32_t domid;
	uint8_t uuid[HV_UUID_LEN];
	char name[32];		/* the guest name the daemon had for it */
};

struct bed {
	struct store *s;
	struct hv *hv;
	struct worker_pool *pool;
	struct reaper *r;
	struct config *cfg;
	bool held;
	unsigned lines;
	struct incarnation inc[MAX_INCARNATIONS];
	unsigned n_inc;
	struct grant grants[MAX_GRANTS];
	unsigned n_grants;
	/* Domids a job may exist for: requested by a valid name, planted, or
	 * auto torn down. */
	struct domid_set may_have_job;
	/* Finished jobs read back at start: their nodes are as planted (the
	 * daemon has no reason to rewrite them) until a request replaces them. */
	struct domid_set as_planted;
};

static bool domid_set_has(const struct domid_set *set, uint32_t domid)
{
	for (unsigned i = 0; i < set->n; i++)
		if (set->v[i] == domid)
			return true;
	return false;
}

static void domid_set_put(struct domid_set *set, uint32_t domid, bool in)
{
	for (unsigned i = 0; i < set->n; i++) {
		if (set->v[i] == domid) {
			if (!in)
				set->v[i] = set->v[--set->n];
			return;
		}
	}
	if (in && set->n < MAX_DOMIDS)
		set->v[set->n++] = domid;
	else if (in)
		abort();	/* BED_MAX_LINES keeps it below */
}

static const char *bed_guest_name(uint32_t domid)
{
	return domid == 10 || domid == 13 ? PROTECTED_NAME : NULL;
}

static struct incarnation *bed_live(struct bed *b, uint32_t domid)
{
	for (unsigned i = 0; i < b->n_inc; i++)
		if (b->inc[i].domid == domid && !b->inc[i].ended)
			return &b->inc[i];
	return NULL;
}

static void bed_add_domain(struct bed *b, uint32_t domid, uint8_t seed, uint64_t pages,
			   uint32_t pool)
{
	struct incarnation *inc = &b->inc[b->n_inc++];
	char path[64];
	const char *name = bed_guest_name(domid);

	memset(inc, 0, sizeof(*inc));
	inc->domid = domid;
	inc->seed = seed;
	inc->pool = pool;
	inc->calls_before = fake_hv_destroy_calls(b->hv, domid);
	fake_hv_add(b->hv, domid, seed, pages, pool);
	snprintf(path, sizeof(path), "/local/domain/%u/name", domid);
	store_write(b->s, STORE_TX_NONE, path, name ? name : "guest");
}

static void bed_shutdown(struct bed *b, uint32_t domid, unsigned reason)
{
	struct incarnation *inc = bed_live(b, domid);

	if (!inc || !fake_hv_exists(b->hv, domid))
		return;
	fake_hv_shutdown(b->hv, domid, reason);
	if (inc->pool == AUTO_POOL && (reason == HV_SHUTDOWN_POWEROFF || reason == HV_SHUTDOWN_CRASH ||
				       reason == HV_SHUTDOWN_WATCHDOG)) {
		inc->auto_teardown = true;
		domid_set_put(&b->may_have_job, domid, true);
	}
	fake_store_fire(b->s, "@releaseDomain");
}

struct bed *bed_new(void)
{
	char uuid[HV_UUID_STR_LEN], text[sizeof(policy_text) + HV_UUID_STR_LEN];
	struct bed *b = calloc(1, sizeof(*b));
	FILE *f;

	if (!b)
		abort();
	clock_set_fake(100000, 1700000000000);
	b->s = fake_store_new();
	b->hv = fake_hv_new(SELF_DOMID);
	fake_hv_uuid_text(PROTECTED_SEED, uuid);
	snprintf(text, sizeof(text), policy_text, uuid);
	f = fmemopen(text, strlen(text), "r");
	fuzz_check(f && config_parse(f, "bed.conf", &b->cfg, NULL) == 0, "the bed's policy is refused");
	fclose(f);

	for (uint32_t d = 0; d <= 15; d++)
		bed_add_domain(b, d, d, 1000 * (d + 1), d >= 10 ? AUTO_POOL : d % 2);
	fake_hv_make_zombie(b->hv, 8, 3, 10);
	fake_hv_make_failing(b->hv, 9);
	fake_hv_set_scrub(b->hv, HV_SCRUB_HEAP_DUMP, 100);
	/* Dead before the daemon starts: 12 and 13 in pool1 (13 protected),
	 * 14 rebooting, 15 crashed in a pool that only tears down on request. */
	bed_shutdown(b, 12, HV_SHUTDOWN_POWEROFF);
	bed_shutdown(b, 13, HV_SHUTDOWN_CRASH);
	bed_shutdown(b, 14, HV_SHUTDOWN_REBOOT);
	bed_shutdown(b, 15, HV_SHUTDOWN_CRASH);

	fuzz_check(worker_pool_new(b->hv, b->cfg->jobs, &b->pool) == 0, "worker_pool_new failed");
	fuzz_check(reaper_new(b->s, b->hv, b->pool, b->cfg, &b->r) == 0, "reaper_new failed");
	return b;
}

/* The main loop's steps until nothing is in flight (test-reaper.c's). */
static void bed_settle(struct bed *b)
{
	if (b->held) {
		fake_hv_release(b->hv);
		b->held = false;
	}
	for (int round = 0; round < 50; round++) {
		struct pollfd pfd = { .fd = worker_pool_fd(b->pool), .events = POLLIN };

		reaper_handle_store_events(b->r);
		reaper_tick(b->r);
		if (worker_pool_idle(b->pool))
			return;
		poll(&pfd, 1, 2000);
		reaper_handle_workers(b->r);
	}
	fuzz_fail("teardowns still in flight after 50 rounds of the main loop");
}

/* Let the teardowns in flight finish and collect them, starting nothing
 * new: queued jobs stay queued, for the guard to face a changed domain. */
static void bed_drain(struct bed *b)
{
	if (b->held) {
		fake_hv_release(b->hv);
		b->held = false;
	}
	for (int round = 0; round < 50; round++) {
		struct pollfd pfd = { .fd = worker_pool_fd(b->pool), .events = POLLIN };

		if (worker_pool_idle(b->pool))
			return;
		poll(&pfd, 1, 2000);
		reaper_handle_workers(b->r);
	}
	fuzz_fail("teardowns still in flight after 50 rounds of waiting");
}

static void bed_tick(struct bed *b)
{
	reaper_handle_store_events(b->r);
	reaper_tick(b->r);
	reaper_handle_workers(b->r);
}

/* Record DOMID/UUID_TEXT as asked for, if the daemon could read them so. */
static void bed_grant(struct bed *b, const char *domid_text, const char *uuid_text,
		      const char *name)
{
	struct grant *g;
	uint32_t domid;

	if (layout_parse_domid(domid_text, &domid))
		return;
	domid_set_put(&b->may_have_job, domid, true);
	domid_set_put(&b->as_planted, domid, false);
	if (b->n_grants == MAX_GRANTS)
		abort();	/* BED_MAX_LINES keeps it below */
	g = &b->grants[b->n_grants];
	if (hv_uuid_parse(uuid_text, g->uuid))
		return;
	g->domid = domid;
	snprintf(g->name, sizeof(g->name), "%s", name ? name : "");
	b->n_grants++;
}

/* xenstore's node names: what store_xs would refuse never reaches the daemon. */
static bool bed_valid_node(const char *name)
{
	size_t len = strlen(name);

	return len && len < 64 && name[0] != '/' && name[len - 1] != '/' && !strstr(name, "//") &&
	       strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-/_@") == len;
}

static void bed_request(struct bed *b, const char *name, const char *value)
{
	char path[LAYOUT_PATH_LEN], uuid[HV_UUID_STR_LEN], *end;
	const char *guest = NULL;
	unsigned long seed;
	uint32_t domid;

	if (!bed_valid_node(name) || strlen(name) + sizeof(LAYOUT_REQUEST_DIR "/") > sizeof(path))
		return;
	if (value[0] == '%') {
		seed = strtoul(value + 1, &end, 10);
		if (end == value + 1 || *end || seed > 255)
			return;
		fake_hv_uuid_text(seed, uuid);
		value = uuid;
	}
	if (!layout_parse_domid(name, &domid))
		guest = bed_guest_name(domid);
	bed_grant(b, name, value, guest ? guest : "guest");
	/* Writing request/D/x creates request/D, empty: a request too. */
	if (strchr(name, '/')) {
		char *first = strndup(name, strcspn(name, "/"));

		if (!first)
			abort();
		bed_grant(b, first, "", NULL);
		free(first);
	}
	snprintf(path, sizeof(path), LAYOUT_REQUEST_DIR "/%s", name);
	store_write(b->s, STORE_TX_NONE, path, value);
}

void bed_plant_job_node(struct bed *b, const char *node, const char *value)
{
	char path[LAYOUT_PATH_LEN];

	if (!bed_valid_node(node) || strlen(node) + sizeof(LAYOUT_JOB_DIR "/") > sizeof(path))
		return;
	snprintf(path, sizeof(path), LAYOUT_JOB_DIR "/%s", node);
	store_write(b->s, STORE_TX_NONE, path, value);
}

/* The job nodes read back by reaper_start(): an active one is a grant. */
static void bed_grant_planted(struct bed *b)
{
	char **names = NULL, path[LAYOUT_PATH_LEN];
	const char *state, *uuid, *name;
	unsigned n = 0;

	if (store_list(b->s, STORE_TX_NONE, LAYOUT_JOB_DIR, &names, &n))
		return;
	for (unsigned i = 0; i < n; i++) {
		uint32_t domid;

		if (layout_parse_domid(names[i], &domid))
			continue;
		domid_set_put(&b->may_have_job, domid, true);
		layout_job_path(path, domid, "state");
		state = fake_store_get(b->s, path);
		layout_job_path(path, domid, "uuid");
		uuid = fake_store_get(b->s, path);
		layout_job_path(path, domid, "name");
		name = fake_store_get(b->s, path);
		if (state && uuid && (!strcmp(state, "queued") || !strcmp(state, "destroying") ||
				      !strcmp(state, "zombie")))
			bed_grant(b, names[i], uuid, name);
		domid_set_put(&b->as_planted, domid,
			      state && (!strcmp(state, "done") || !strcmp(state, "failed")));
	}
	store_names_free(names, n);
}

void bed_start(struct bed *b)
{
	bed_grant_planted(b);
	fuzz_check(reaper_start(b->r) == 0, "reaper_start failed");
}

/* Numbers of a command: each at most MAX, else the command is skipped. */
static bool bed_args(const char *s, unsigned long *v, int n, unsigned long max)
{
	char *end;

	for (int i = 0; i < n; i++) {
		s += strspn(s, " ");
		if (*s < '0' || *s > '9')
			return false;
		v[i] = strtoul(s, &end, 10);
		if (v[i] > max)
			return false;
		s = end;
	}
	return *s == '\0';
}

static void bed_command(struct bed *b, const char *word, const char *args)
{
	struct incarnation *inc;
	unsigned long v[3];

	if (!strcmp(word, "settle")) {
		bed_settle(b);
	} else if (!strcmp(word, "tick")) {
		bed_tick(b);
	} else if (!strcmp(word, "hold")) {
		fake_hv_hold(b->hv);
		b->held = true;
	} else if (!strcmp(word, "release")) {
		fake_hv_release(b->hv);
		b->held = false;
	} else if (!strcmp(word, "fire")) {
		fake_store_fire(b->s, "@releaseDomain");
	} else if (!strcmp(word, "advance") && bed_args(args, v, 1, 3600 * 1000)) {
		clock_advance(v[0]);
	} else if (!strcmp(word, "pages") && bed_args(args, v, 2, UINT32_MAX)) {
		fake_hv_set_pages(b->hv, v[0], v[1]);
	} else if (!strcmp(word, "scrub") && bed_args(args, v, 1, UINT32_MAX)) {
		fake_hv_set_scrub(b->hv, HV_SCRUB_HEAP_DUMP, v[0]);
	} else if (!strcmp(word, "zombie") && bed_args(args, v, 2, LAYOUT_DOMID_MAX) && v[1] <= 4) {
		fake_hv_make_zombie(b->hv, v[0], v[1], 10);
	} else if (!strcmp(word, "fail") && bed_args(args, v, 1, LAYOUT_DOMID_MAX)) {
		fake_hv_make_failing(b->hv, v[0]);
	} else if (!strcmp(word, "shutdown") && bed_args(args, v, 2, LAYOUT_DOMID_MAX) &&
		   v[1] <= HV_SHUTDOWN_SOFT_RESET) {
		bed_shutdown(b, v[0], v[1]);
	} else if (!strcmp(word, "remove") && bed_args(args, v, 1, LAYOUT_DOMID_MAX)) {
		bed_drain(b);
		inc = bed_live(b, v[0]);
		if (inc) {
			inc->calls_after = fake_hv_destroy_calls(b->hv, v[0]);
			inc->ended = true;
			fake_hv_remove(b->hv, v[0]);
			fake_store_fire(b->s, "@releaseDomain");
		}
	} else if (!strcmp(word, "add") && bed_args(args, v, 3, LAYOUT_DOMID_MAX) && v[1] <= 255 &&
		   v[2] <= 3) {
		bed_drain(b);
		if (fake_hv_exists(b->hv, v[0]) || b->n_inc == MAX_INCARNATIONS)
			return;
		/* A domain the daemon tore down is gone: its life ended then. */
		inc = bed_live(b, v[0]);
		if (inc) {
			inc->calls_after = fake_hv_destroy_calls(b->hv, v[0]);
			inc->ended = true;
		}
		bed_add_domain(b, v[0], v[1], 1000, v[2]);
		fake_store_fire(b->s, "@introduceDomain");
	}
}

void bed_run_line(struct bed *b, const char *line, size_t len)
{
	char *text, *eq, *args;

	if (b->lines++ >= BED_MAX_LINES)
		return;
	text = fuzz_string((const uint8_t *)line, len);
	if (text[0] == '@') {
		args = strchr(text, ' ');
		if (args)
			*args++ = '\0';
		bed_command(b, text + 1, args ? args : "");
	} else if ((eq = strchr(text, '='))) {
		*eq = '\0';
		bed_request(b, text, eq + 1);
	}
	free(text);
}

static bool bed_granted(const struct bed *b, const struct incarnation *inc)
{
	uint8_t uuid[HV_UUID_LEN];
	char text[HV_UUID_STR_LEN];

	fake_hv_uuid_text(inc->seed, text);
	hv_uuid_parse(text, uuid);
	for (unsigned i = 0; i < b->n_grants; i++)
		if (b->grants[i].domid == inc->domid && !memcmp(b->grants[i].uuid, uuid, HV_UUID_LEN) &&
		    strcmp(b->grants[i].name, PROTECTED_NAME))
			return true;
	return false;
}

/* No incarnation was destroyed without the right to. */
static void bed_check_destroys(struct bed *b)
{
	for (unsigned i = 0; i < b->n_inc; i++) {
		struct incarnation *inc = &b->inc[i];
		const char *name = bed_guest_name(inc->domid);
		unsigned calls;

		if (!inc->ended) {
			inc->calls_after = fake_hv_destroy_calls(b->hv, inc->domid);
			inc->ended = true;
		}
		calls = inc->calls_after - inc->calls_before;
		if (!calls)
			continue;
		fuzz_check(inc->domid != 0, "domain 0 was destroyed");
		fuzz_check(inc->domid != SELF_DOMID, "the daemon's own domain %u was destroyed",
			   inc->domid);
		fuzz_check(inc->seed != PROTECTED_SEED, "domain %u, protected by its UUID, was destroyed",
			   inc->domid);
		/* Automatic teardown spares a guest protected by its name. */
		fuzz_check(bed_granted(b, inc) || (inc->auto_teardown && !name),
			   "domain %u (UUID seed %u, name %s) was destroyed %u times, but no request "
			   "named it with its UUID and its pool's policy did not tear it down",
			   inc->domid, inc->seed, name ? name : "guest", calls);
	}
}

/* Every request consumed; every job node readable and consistent. */
static void bed_check_nodes(struct bed *b)
{
	char **names = NULL, path[LAYOUT_PATH_LEN];
	const char *state, *left, *progress, *error, *active;
	unsigned n = 0, n_active = 0;

	fuzz_check(fake_store_count(b->s, LAYOUT_REQUEST_DIR) == 1,
		   "%u request nodes left after the daemon settled",
		   fake_store_count(b->s, LAYOUT_REQUEST_DIR) - 1);
	if (store_list(b->s, STORE_TX_NONE, LAYOUT_JOB_DIR, &names, &n))
		fuzz_fail(LAYOUT_JOB_DIR " is missing");
	for (unsigned i = 0; i < n; i++) {
		uint32_t domid;

		if (layout_parse_domid(names[i], &domid))
			continue;	/* a stray node planted there, ignored */
		fuzz_check(domid_set_has(&b->may_have_job, domid), "a job for domain %u, which nobody asked for", domid);
		layout_job_path(path, domid, "state");
		state = fake_store_get(b->s, path);
		layout_job_path(path, domid, "pages-left");
		left = fake_store_get(b->s, path);
		layout_job_path(path, domid, "progress");
		progress = fake_store_get(b->s, path);
		layout_job_path(path, domid, "error");
		error = fake_store_get(b->s, path);
		fuzz_check(state, "job %u has no state", domid);
		fuzz_check(!strcmp(state, "queued") || !strcmp(state, "destroying") ||
			   !strcmp(state, "zombie") || !strcmp(state, "scrubbing") ||
			   !strcmp(state, "done") || !strcmp(state, "failed"),
			   "job %u in state '%s'", domid, state);
		if (domid_set_has(&b->as_planted, domid))
			continue;
		fuzz_check(strcmp(state, "failed") || (error && *error), "job %u failed without a reason",
			   domid);
		fuzz_check(strcmp(state, "done") || (left && !strcmp(left, "0")),
			   "job %u done with pages-left %s", domid, left ? left : "missing");
		fuzz_check(!progress || strtoul(progress, NULL, 10) <= 100, "job %u at %s%%", domid,
			   progress);
		n_active += strcmp(state, "done") && strcmp(state, "failed");
	}
	store_names_free(names, n);
	active = fake_store_get(b->s, LAYOUT_DAEMON_DIR "/active-jobs");
	fuzz_check(active && strtoul(active, NULL, 10) == n_active,
		   "daemon/active-jobs says %s, %u jobs are active", active ? active : "nothing", n_active);
}

void bed_finish(struct bed *b)
{
	bed_settle(b);
	/* Zombie retries back off to a minute; grace periods are a second. */
	for (int i = 0; i < 6; i++) {
		clock_advance(60 * 1000);
		bed_settle(b);
	}
	bed_check_destroys(b);
	bed_check_nodes(b);
}

void bed_free(struct bed *b)
{
	fake_hv_release(b->hv);
	reaper_free(b->r);
	worker_pool_free(b->pool);
	hv_free(b->hv);
	store_free(b->s);
	config_free(b->cfg);
	free(b);
}
