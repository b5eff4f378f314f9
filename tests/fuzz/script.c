/*
 * script: one fake host for the reaper fuzzers, and the bookkeeping that
 * lets them say, at the end, whether the daemon ever destroyed a domain it
 * had no right to.  Every life of a domid (an "incarnation": created, then
 * destroyed or removed) counts the destroys made while it lived; a destroy
 * is allowed only for a domain that is neither dom0, the daemon's own nor
 * protected, and either named with its own UUID by a request (or by a job
 * node a resumed daemon read back), or dead in a pool that tears its kind
 * of death down, or killed by someone else in a pool that adopts orphans.
 * Domids are changed (added, removed) only while no teardown is in flight,
 * so a destroy always lands on the incarnation the daemon checked, as with
 * real Xen, which reuses a domid only after a long cycle.
 *
 * Setting up and stepping the daemon is the unit tests' bed (bed.c); this
 * module reads the script, keeps the books and judges.  It does not judge
 * progress figures or timing.
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
#include "script.h"

#define SELF_DOMID 7
#define AUTO_POOL 1		/* pool1 tears down poweroff and crash */
#define IGNORE_POOL 2		/* pool2 leaves orphans alone */
#define PROTECTED_SEED 11	/* its UUID is on the protect list */
#define PROTECTED_NAME "db"
/* fake_hv holds 64 domains and remembers 64 gone ones: stay below. */
#define MAX_INCARNATIONS 56
#define MAX_GRANTS (2 * SCRIPT_MAX_LINES)
/* Domids named so far: at most two per script line or planted node. */
#define MAX_DOMIDS (4 * SCRIPT_MAX_LINES + 64)

static const char policy_text[] =
	"[daemon]\n"
	"jobs = 2\n"
	"retention = 720h\n"
	"progress-interval = 1m\n"
	"scrub-probe = heap-dump\n"
	"scrub-probe-interval = 30s\n"
	"protect = " PROTECTED_NAME " %s\n"
	"[default]\n"
	"teardown = request\n"
	"[pool:pool1]\n"
	"scrub = sync\n"
	"teardown = shutdown,crash\n"
	"grace = 1s\n"
	"[pool:pool2]\n"
	"orphans = ignore\n";

struct incarnation {
	uint32_t domid;
	uint8_t seed;
	uint32_t pool;
	unsigned calls_before;	/* destroys of its domid before it was created */
	unsigned calls_after;	/* ... by the time it was gone (valid if ended) */
	bool ended;
	bool auto_teardown;	/* died in a way its pool tears down */
	bool killed;		/* killed by another toolstack: an orphan */
};

/* A right to destroy DOMID with UUID, given by a request or a job node. */
struct grant {
	uint32_t domid;
	uint8_t uuid[HV_UUID_LEN];
	char name[32];		/* the guest name the daemon had for it */
};

struct domid_set {
	uint32_t v[MAX_DOMIDS];
	unsigned n;
};

struct script {
	struct bed bed;
	bool held;
	unsigned lines;
	struct incarnation inc[MAX_INCARNATIONS];
	unsigned n_inc;
	struct grant grants[MAX_GRANTS];
	unsigned n_grants;
	/* Domids a job may exist for: requested by a valid name, planted,
	 * torn down automatically or adopted. */
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
	if (!in)
		return;
	if (set->n == MAX_DOMIDS)
		abort();	/* SCRIPT_MAX_LINES keeps it below */
	set->v[set->n++] = domid;
}

static const char *script_guest_name(uint32_t domid)
{
	return domid == 10 || domid == 13 ? PROTECTED_NAME : NULL;
}

static struct incarnation *script_live(struct script *s, uint32_t domid)
{
	for (unsigned i = 0; i < s->n_inc; i++)
		if (s->inc[i].domid == domid && !s->inc[i].ended)
			return &s->inc[i];
	return NULL;
}

static void script_add_domain(struct script *s, uint32_t domid, uint8_t seed, uint64_t pages,
			      uint32_t pool)
{
	struct incarnation *inc = &s->inc[s->n_inc++];
	const char *name = script_guest_name(domid);
	char path[64];

	memset(inc, 0, sizeof(*inc));
	inc->domid = domid;
	inc->seed = seed;
	inc->pool = pool;
	inc->calls_before = fake_hv_destroy_calls(s->bed.hv, domid);
	fake_hv_add(s->bed.hv, domid, seed, pages, pool);
	snprintf(path, sizeof(path), "/local/domain/%u/name", domid);
	fake_store_set(s->bed.s, path, name ? name : "guest");
}

static void script_shutdown(struct script *s, uint32_t domid, unsigned reason)
{
	struct incarnation *inc = script_live(s, domid);

	if (!inc || !fake_hv_exists(s->bed.hv, domid))
		return;
	fake_hv_shutdown(s->bed.hv, domid, reason);
	if (inc->pool == AUTO_POOL && (reason == HV_SHUTDOWN_POWEROFF || reason == HV_SHUTDOWN_CRASH ||
				       reason == HV_SHUTDOWN_WATCHDOG)) {
		inc->auto_teardown = true;
		domid_set_put(&s->may_have_job, domid, true);
	}
	fake_store_fire(s->bed.s, "@releaseDomain");
}

static void script_kill(struct script *s, uint32_t domid, uint64_t pages)
{
	struct incarnation *inc = script_live(s, domid);

	if (!inc || !fake_hv_exists(s->bed.hv, domid))
		return;
	fake_hv_kill(s->bed.hv, domid, pages);
	inc->killed = true;
	domid_set_put(&s->may_have_job, domid, true);
	fake_store_fire(s->bed.s, "@releaseDomain");
}

struct script *script_new(void)
{
	char uuid[HV_UUID_STR_LEN], text[sizeof(policy_text) + HV_UUID_STR_LEN];
	struct script *s = calloc(1, sizeof(*s));

	if (!s)
		abort();
	bed_init(&s->bed, SELF_DOMID, 2);
	fake_hv_uuid_text(PROTECTED_SEED, uuid);
	snprintf(text, sizeof(text), policy_text, uuid);
	bed_set_policy(&s->bed, text);
	fuzz_check(s->bed.cfg && s->bed.runner, "the bed did not set up");

	/* Pools: 0 Pool-0 (requests only), 1 pool1 (automatic teardown),
	 * 2 pool2 (orphans ignored). */
	for (uint32_t d = 0; d <= 15; d++)
		script_add_domain(s, d, d, 1000 * (d + 1), d >= 10 ? AUTO_POOL : d % 3);
	fake_hv_make_zombie(s->bed.hv, 8, 3, 10);
	fake_hv_make_failing(s->bed.hv, 9);
	fake_hv_set_scrub(s->bed.hv, HV_SCRUB_HEAP_DUMP, 100);
	/* Dead before the daemon starts: 12 and 13 in pool1 (13 protected),
	 * 14 rebooting, 15 crashed in a pool that only tears down on request. */
	script_shutdown(s, 12, HV_SHUTDOWN_POWEROFF);
	script_shutdown(s, 13, HV_SHUTDOWN_CRASH);
	script_shutdown(s, 14, HV_SHUTDOWN_REBOOT);
	script_shutdown(s, 15, HV_SHUTDOWN_CRASH);
	return s;
}

/* Whether nothing is in flight: no destroy running or uncollected. */
static bool script_quiet(struct script *s)
{
	return fake_runner_idle(s->bed.runner) && !reaper_busy(s->bed.r);
}

static void script_release(struct script *s)
{
	if (s->held) {
		fake_hv_release(s->bed.hv);
		s->held = false;
	}
}

/* The main loop's steps until nothing is in flight. */
static void script_settle(struct script *s)
{
	script_release(s);
	bed_settle(&s->bed);
	fuzz_check(script_quiet(s), "teardowns still in flight after 50 rounds of the main loop");
}

/* Let the teardowns in flight finish and collect them, starting nothing
 * new: queued jobs stay queued, for the guard to face a changed domain. */
static void script_drain(struct script *s)
{
	script_release(s);
	for (int round = 0; round < 50 && !script_quiet(s); round++) {
		struct pollfd pfd = { .fd = runner_fd(s->bed.runner), .events = POLLIN };

		poll(&pfd, 1, 2000);
		reaper_handle_runner(s->bed.r);
	}
	fuzz_check(script_quiet(s), "teardowns still in flight after 50 rounds of waiting");
}

static void script_tick(struct script *s)
{
	reaper_handle_store_events(s->bed.r);
	reaper_tick(s->bed.r);
	reaper_handle_runner(s->bed.r);
}

/* Record DOMID_TEXT/UUID_TEXT as asked for, if the daemon could read them so. */
static void script_grant(struct script *s, const char *domid_text, const char *uuid_text,
			 const char *name)
{
	struct grant *g;
	uint32_t domid;

	if (layout_parse_domid(domid_text, &domid))
		return;
	domid_set_put(&s->may_have_job, domid, true);
	domid_set_put(&s->as_planted, domid, false);
	if (s->n_grants == MAX_GRANTS)
		abort();	/* SCRIPT_MAX_LINES keeps it below */
	g = &s->grants[s->n_grants];
	if (hv_uuid_parse(uuid_text, g->uuid))
		return;
	g->domid = domid;
	snprintf(g->name, sizeof(g->name), "%s", name ? name : "");
	s->n_grants++;
}

/* xenstore's node names: what store_xs would refuse never reaches the daemon. */
static bool script_valid_node(const char *name)
{
	size_t len = strlen(name);

	return len && len < 64 && name[0] != '/' && name[len - 1] != '/' && !strstr(name, "//") &&
	       strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-/_@") == len;
}

static void script_request(struct script *s, const char *name, const char *value)
{
	char path[LAYOUT_PATH_LEN], uuid[HV_UUID_STR_LEN], *end, *first;
	const char *guest = NULL;
	unsigned long seed;
	uint32_t domid;

	if (!script_valid_node(name) || strlen(name) + sizeof(LAYOUT_REQUEST_DIR "/") > sizeof(path))
		return;
	if (value[0] == '%') {
		seed = strtoul(value + 1, &end, 10);
		if (end == value + 1 || *end || seed > 255)
			return;
		fake_hv_uuid_text(seed, uuid);
		value = uuid;
	}
	if (!layout_parse_domid(name, &domid))
		guest = script_guest_name(domid);
	script_grant(s, name, value, guest ? guest : "guest");
	/* Writing request/D/x creates request/D, empty: a request too. */
	if (strchr(name, '/')) {
		first = strndup(name, strcspn(name, "/"));
		if (!first)
			abort();
		script_grant(s, first, "", NULL);
		free(first);
	}
	snprintf(path, sizeof(path), LAYOUT_REQUEST_DIR "/%s", name);
	fake_store_set(s->bed.s, path, value);
}

void script_plant_job_node(struct script *s, const char *node, const char *value)
{
	char path[LAYOUT_PATH_LEN];

	if (!script_valid_node(node) || strlen(node) + sizeof(LAYOUT_JOB_DIR "/") > sizeof(path))
		return;
	snprintf(path, sizeof(path), LAYOUT_JOB_DIR "/%s", node);
	fake_store_set(s->bed.s, path, value);
}

/* The job nodes read back at start: an active one is a grant. */
static void script_grant_planted(struct script *s)
{
	char **names = NULL, path[LAYOUT_PATH_LEN];
	const char *state, *uuid, *name;
	unsigned n = 0;

	if (store_list(s->bed.s, STORE_TX_NONE, LAYOUT_JOB_DIR, &names, &n))
		return;
	for (unsigned i = 0; i < n; i++) {
		uint32_t domid;

		if (layout_parse_domid(names[i], &domid))
			continue;
		domid_set_put(&s->may_have_job, domid, true);
		layout_job_path(path, domid, "state");
		state = fake_store_get(s->bed.s, path);
		layout_job_path(path, domid, "uuid");
		uuid = fake_store_get(s->bed.s, path);
		layout_job_path(path, domid, "name");
		name = fake_store_get(s->bed.s, path);
		if (state && uuid && (!strcmp(state, "queued") || !strcmp(state, "destroying") ||
				      !strcmp(state, "zombie")))
			script_grant(s, names[i], uuid, name);
		domid_set_put(&s->as_planted, domid,
			      state && (!strcmp(state, "done") || !strcmp(state, "failed")));
	}
	store_names_free(names, n);
}

void script_start(struct script *s)
{
	script_grant_planted(s);
	fuzz_check(bed_start(&s->bed) == 0, "the daemon's core did not start");
}

/* Numbers of a command, each at most MAX; false if any is not. */
static bool script_args(const char *p, unsigned long *v, int n, unsigned long max)
{
	char *end;

	for (int i = 0; i < n; i++) {
		p += strspn(p, " ");
		if (*p < '0' || *p > '9')
			return false;
		v[i] = strtoul(p, &end, 10);
		if (v[i] > max)
			return false;
		p = end;
	}
	return *p == '\0';
}

/* End DOMID's live incarnation, counting its destroys. */
static void script_end(struct script *s, uint32_t domid)
{
	struct incarnation *inc = script_live(s, domid);

	if (inc) {
		inc->calls_after = fake_hv_destroy_calls(s->bed.hv, domid);
		inc->ended = true;
	}
}

static void script_command(struct script *s, const char *word, const char *args)
{
	unsigned long v[3];

	if (!strcmp(word, "settle")) {
		script_settle(s);
	} else if (!strcmp(word, "tick")) {
		script_tick(s);
	} else if (!strcmp(word, "hold")) {
		fake_hv_hold(s->bed.hv);
		s->held = true;
	} else if (!strcmp(word, "release")) {
		script_release(s);
	} else if (!strcmp(word, "fire")) {
		fake_store_fire(s->bed.s, "@releaseDomain");
	} else if (!strcmp(word, "advance") && script_args(args, v, 1, 3600 * 1000)) {
		clock_advance(v[0]);
	} else if (!strcmp(word, "pages") && script_args(args, v, 2, UINT32_MAX)) {
		fake_hv_set_pages(s->bed.hv, v[0], v[1]);
	} else if (!strcmp(word, "scrub") && script_args(args, v, 1, UINT32_MAX)) {
		fake_hv_set_scrub(s->bed.hv, HV_SCRUB_HEAP_DUMP, v[0]);
	} else if (!strcmp(word, "zombie") && script_args(args, v, 2, LAYOUT_DOMID_MAX) && v[1] <= 4) {
		fake_hv_make_zombie(s->bed.hv, v[0], v[1], 10);
	} else if (!strcmp(word, "fail") && script_args(args, v, 1, LAYOUT_DOMID_MAX)) {
		fake_hv_make_failing(s->bed.hv, v[0]);
	} else if (!strcmp(word, "shutdown") && script_args(args, v, 2, LAYOUT_DOMID_MAX) &&
		   v[1] <= HV_SHUTDOWN_SOFT_RESET) {
		script_shutdown(s, v[0], v[1]);
	} else if (!strcmp(word, "kill") && script_args(args, v, 2, LAYOUT_DOMID_MAX)) {
		script_kill(s, v[0], v[1]);
	} else if (!strcmp(word, "remove") && script_args(args, v, 1, LAYOUT_DOMID_MAX)) {
		script_drain(s);
		if (script_live(s, v[0])) {
			script_end(s, v[0]);
			fake_hv_remove(s->bed.hv, v[0]);
			fake_store_fire(s->bed.s, "@releaseDomain");
		}
	} else if (!strcmp(word, "add") && script_args(args, v, 3, LAYOUT_DOMID_MAX) && v[1] <= 255 &&
		   v[2] <= 3) {
		script_drain(s);
		if (fake_hv_exists(s->bed.hv, v[0]) || s->n_inc == MAX_INCARNATIONS)
			return;
		/* A domain the daemon tore down is gone: its life ended then. */
		script_end(s, v[0]);
		script_add_domain(s, v[0], v[1], 1000, v[2]);
		fake_store_fire(s->bed.s, "@introduceDomain");
	}
}

void script_run_line(struct script *s, const char *line, size_t len)
{
	char *text, *eq, *args;

	if (s->lines++ >= SCRIPT_MAX_LINES)
		return;
	text = fuzz_string((const uint8_t *)line, len);
	if (text[0] == '@') {
		args = strchr(text, ' ');
		if (args)
			*args++ = '\0';
		script_command(s, text + 1, args ? args : "");
	} else if ((eq = strchr(text, '='))) {
		*eq = '\0';
		script_request(s, text, eq + 1);
	}
	free(text);
}

static bool script_granted(const struct script *s, const struct incarnation *inc)
{
	uint8_t uuid[HV_UUID_LEN];
	char text[HV_UUID_STR_LEN];

	fake_hv_uuid_text(inc->seed, text);
	hv_uuid_parse(text, uuid);
	for (unsigned i = 0; i < s->n_grants; i++)
		if (s->grants[i].domid == inc->domid && !memcmp(s->grants[i].uuid, uuid, HV_UUID_LEN) &&
		    strcmp(s->grants[i].name, PROTECTED_NAME))
			return true;
	return false;
}

/* No incarnation was destroyed without the right to. */
static void script_check_destroys(struct script *s)
{
	for (unsigned i = 0; i < s->n_inc; i++) {
		struct incarnation *inc = &s->inc[i];
		const char *name = script_guest_name(inc->domid);
		unsigned calls;

		if (!inc->ended)
			script_end(s, inc->domid);
		calls = inc->calls_after - inc->calls_before;
		if (!calls)
			continue;
		fuzz_check(inc->domid != 0, "domain 0 was destroyed");
		fuzz_check(inc->domid != SELF_DOMID, "the daemon's own domain %u was destroyed",
			   inc->domid);
		fuzz_check(inc->seed != PROTECTED_SEED, "domain %u, protected by its UUID, was destroyed",
			   inc->domid);
		/* Automatic teardown and adoption spare a guest protected by name. */
		fuzz_check(script_granted(s, inc) ||
			   (!name && inc->auto_teardown) ||
			   (!name && inc->killed && inc->pool != IGNORE_POOL),
			   "domain %u (UUID seed %u, name %s, pool %u) was destroyed %u times, but no "
			   "request named it with its UUID, and its pool's policy did not tear it "
			   "down or adopt it", inc->domid, inc->seed, name ? name : "guest", inc->pool,
			   calls);
	}
}

/* Every request consumed; every job node readable and consistent. */
static void script_check_nodes(struct script *s)
{
	char **names = NULL, path[LAYOUT_PATH_LEN];
	const char *state, *left, *progress, *error, *active;
	unsigned n = 0, n_active = 0;

	fuzz_check(fake_store_count(s->bed.s, LAYOUT_REQUEST_DIR) == 1,
		   "%u request nodes left after the daemon settled",
		   fake_store_count(s->bed.s, LAYOUT_REQUEST_DIR) - 1);
	if (store_list(s->bed.s, STORE_TX_NONE, LAYOUT_JOB_DIR, &names, &n))
		fuzz_fail(LAYOUT_JOB_DIR " is missing");
	for (unsigned i = 0; i < n; i++) {
		uint32_t domid;

		if (layout_parse_domid(names[i], &domid))
			continue;	/* a stray node planted there, ignored */
		fuzz_check(domid_set_has(&s->may_have_job, domid),
			   "a job for domain %u, which nobody asked for", domid);
		layout_job_path(path, domid, "state");
		state = fake_store_get(s->bed.s, path);
		layout_job_path(path, domid, "pages-left");
		left = fake_store_get(s->bed.s, path);
		layout_job_path(path, domid, "progress");
		progress = fake_store_get(s->bed.s, path);
		layout_job_path(path, domid, "error");
		error = fake_store_get(s->bed.s, path);
		fuzz_check(state, "job %u has no state", domid);
		fuzz_check(!strcmp(state, "queued") || !strcmp(state, "destroying") ||
			   !strcmp(state, "zombie") || !strcmp(state, "scrubbing") ||
			   !strcmp(state, "done") || !strcmp(state, "failed"),
			   "job %u in state '%s'", domid, state);
		/* daemon/active-jobs counts every job, one that replaced a
		 * planted record too. */
		n_active += strcmp(state, "done") && strcmp(state, "failed");
		if (domid_set_has(&s->as_planted, domid))
			continue;
		fuzz_check(strcmp(state, "failed") || (error && *error), "job %u failed without a reason",
			   domid);
		fuzz_check(strcmp(state, "done") || (left && !strcmp(left, "0")),
			   "job %u done with pages-left %s", domid, left ? left : "missing");
		fuzz_check(!progress || strtoul(progress, NULL, 10) <= 100, "job %u at %s%%", domid,
			   progress);
	}
	store_names_free(names, n);
	active = fake_store_get(s->bed.s, LAYOUT_DAEMON_DIR "/active-jobs");
	fuzz_check(active && strtoul(active, NULL, 10) == n_active,
		   "daemon/active-jobs says %s, %u jobs are active", active ? active : "nothing", n_active);
}

void script_finish(struct script *s)
{
	unsigned wakeups;

	script_settle(s);
	/* Three minutes of fake time, the clock jumping from one deadline to
	 * the next: retries back off to a minute, grace periods and orphans'
	 * settling take seconds. */
	wakeups = s->bed.wakeups;
	bed_run(&s->bed, 3 * 60 * 1000);
	script_settle(s);
	fuzz_check(s->bed.wakeups - wakeups < 10000, "%u wake-ups in three minutes: a busy loop",
		   s->bed.wakeups - wakeups);
	script_check_destroys(s);
	script_check_nodes(s);
}

void script_free(struct script *s)
{
	bed_dispose(&s->bed);
	free(s);
}
