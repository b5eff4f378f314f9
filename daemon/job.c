/*
 * job: the per-domain record and the rules for moving it between states.
 * Publishing writes the job's nodes; deciding when to move (the guard,
 * sampling, zombies, retention) belongs to reaper.c, and running the
 * teardown to teardown.c and the runner.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "job.h"
#include "layout.h"
#include "leftovers.h"
#include "sentence.h"

static const char *const job_state_names[] = {
	[JOB_QUEUED] = XENREAPER_JOB_QUEUED, [JOB_DESTROYING] = XENREAPER_JOB_DESTROYING,
	[JOB_ZOMBIE] = XENREAPER_JOB_ZOMBIE, [JOB_SCRUBBING] = XENREAPER_JOB_SCRUBBING,
	[JOB_DONE] = XENREAPER_JOB_DONE, [JOB_FAILED] = XENREAPER_JOB_FAILED,
	[JOB_STUCK] = XENREAPER_JOB_STUCK,
};

static const char *const job_reason_names[] = {
	[JOB_REASON_REQUEST] = XENREAPER_REASON_REQUEST,
	[JOB_REASON_POWEROFF] = XENREAPER_REASON_POWEROFF,
	[JOB_REASON_CRASH] = XENREAPER_REASON_CRASH, [JOB_REASON_ORPHAN] = XENREAPER_REASON_ORPHAN,
};

static const char *const job_policy_names[] = {
	[JOB_POLICY_DEFERRED] = XENREAPER_POLICY_DEFERRED, [JOB_POLICY_SYNC] = XENREAPER_POLICY_SYNC,
};

static const char *const job_priority_names[] = {
	[JOB_PRIORITY_IDLE] = "idle", [JOB_PRIORITY_LOW] = "low",
	[JOB_PRIORITY_NORMAL] = "normal",
};

#define N_ELEMS(a) (sizeof(a) / sizeof(*(a)))

static int name_lookup(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return i;
	return -EINVAL;
}

const char *job_state_name(enum job_state state)
{
	return job_state_names[state];
}

int job_state_parse(const char *name, enum job_state *state)
{
	int i = name_lookup(job_state_names, N_ELEMS(job_state_names), name);

	if (i < 0)
		return i;
	*state = i;
	return 0;
}

const char *job_reason_name(enum job_reason reason)
{
	return job_reason_names[reason];
}

int job_reason_parse(const char *name, enum job_reason *reason)
{
	int i = name_lookup(job_reason_names, N_ELEMS(job_reason_names), name);

	if (i < 0)
		return i;
	*reason = i;
	return 0;
}

const char *job_policy_name(enum job_policy policy)
{
	return job_policy_names[policy];
}

int job_policy_parse(const char *name, enum job_policy *policy)
{
	int i = name_lookup(job_policy_names, N_ELEMS(job_policy_names), name);

	if (i < 0)
		return i;
	*policy = i;
	return 0;
}

const char *job_priority_name(enum job_priority priority)
{
	return job_priority_names[priority];
}

int job_priority_parse(const char *name, enum job_priority *priority)
{
	int i = name_lookup(job_priority_names, N_ELEMS(job_priority_names), name);

	if (i < 0)
		return i;
	*priority = i;
	return 0;
}

bool job_state_is_final(enum job_state state)
{
	return state == JOB_DONE || state == JOB_FAILED;
}

int job_new(uint32_t domid, const uint8_t uuid[HV_UUID_LEN], const char *name,
	    const char *pool, struct job **out)
{
	struct job *job;

	job = calloc(1, sizeof(*job));
	if (!job)
		return -ENOMEM;
	job->domid = domid;
	memcpy(job->uuid, uuid, HV_UUID_LEN);
	hv_uuid_format(uuid, job->uuid_text);
	job->name = strdup(name ? name : "");
	job->pool = strdup(pool ? pool : "");
	if (!job->name || !job->pool) {
		job_free(job);
		return -ENOMEM;
	}
	job->state = JOB_QUEUED;
	job->priority = JOB_PRIORITY_LOW;
	job->requested_wall = clock_wall_ms();
	*out = job;
	return 0;
}

void job_free(struct job *job)
{
	if (!job)
		return;
	free(job->name);
	free(job->pool);
	free(job->error);
	free(job->held_by);
	leftovers_free(job->leftovers);
	free(job->shown);
	free(job);
}

static bool job_transition_allowed(enum job_state from, enum job_state to)
{
	switch (from) {
	case JOB_QUEUED:
		return to == JOB_DESTROYING || to == JOB_DONE || to == JOB_FAILED;
	case JOB_DESTROYING:
		return to == JOB_DONE || to == JOB_ZOMBIE || to == JOB_SCRUBBING ||
		       to == JOB_FAILED || to == JOB_QUEUED || to == JOB_STUCK;
	case JOB_STUCK:
		return to == JOB_DESTROYING || to == JOB_DONE || to == JOB_ZOMBIE ||
		       to == JOB_SCRUBBING || to == JOB_FAILED || to == JOB_QUEUED;
	case JOB_ZOMBIE:
		return to == JOB_DONE || to == JOB_SCRUBBING || to == JOB_FAILED ||
		       to == JOB_QUEUED;
	case JOB_SCRUBBING:
		return to == JOB_DONE || to == JOB_FAILED;
	case JOB_DONE:
	case JOB_FAILED:
		return false;
	}
	return false;
}

int job_set_state(struct job *job, enum job_state to)
{
	if (!job_transition_allowed(job->state, to))
		return -EINVAL;
	if (to == JOB_DESTROYING && !job->started_wall) {
		job->started_wall = clock_wall_ms();
		job->started_mono = clock_mono_ms();
	}
	if (to == JOB_DESTROYING && job->state == JOB_QUEUED) {
		/* A run of the teardown begins (again, after a restart).  The
		 * pages at its start are its first sample: a teardown done
		 * within one progress interval still has a rate at its first. */
		rate_reset(&job->rate);
		job->pages_at_start = job->pages_left;
		if (job->pages_left)
			rate_add(&job->rate, clock_mono_ms(), job->pages_left);
	}
	if (job_state_is_final(to)) {
		job->finished_wall = clock_wall_ms();
		job->finished_mono = clock_mono_ms();
	}
	if (to == JOB_DONE)
		job->pages_left = 0;
	if (to != JOB_DESTROYING && to != JOB_ZOMBIE && to != JOB_STUCK) {
		job->eta_text[0] = '\0';	/* nothing left to count down */
		job_set_held_by(job, NULL);	/* nothing holds it any more */
	}
	if (job->state == JOB_STUCK)
		job_set_held_by(job, NULL);	/* what it waited on let go */
	if (job_state_is_final(to) && to == JOB_FAILED)
		job->rate_text[0] = '\0';
	job->state = to;
	return 0;
}

int job_fail(struct job *job, const char *fmt, ...)
{
	char *sentence;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = sentence_vprintf(&sentence, fmt, ap);
	va_end(ap);
	if (rc)
		return rc;
	rc = job_set_state(job, JOB_FAILED);
	if (rc) {
		free(sentence);
		return rc;
	}
	free(job->error);
	job->error = sentence;
	return 0;
}

bool job_set_held_by(struct job *job, char *held_by)
{
	bool changed = (job->held_by == NULL) != (held_by == NULL) ||
		       (held_by && strcmp(held_by, job->held_by));

	free(job->held_by);
	job->held_by = held_by;
	return changed;
}

int job_set_error(struct job *job, const char *fmt, ...)
{
	char *sentence = NULL;
	va_list ap;
	int rc;

	if (job_state_is_final(job->state))
		return -EINVAL;
	if (fmt) {
		va_start(ap, fmt);
		rc = sentence_vprintf(&sentence, fmt, ap);
		va_end(ap);
		if (rc)
			return rc;
	}
	free(job->error);
	job->error = sentence;
	return 0;
}

bool job_set_pages_left(struct job *job, uint64_t pages)
{
	if (pages >= job->pages_left)
		return false;
	job->pages_left = pages;
	job->fell_mono = clock_mono_ms();
	job->fell_wall = clock_wall_ms();
	return true;
}

bool job_may_keep_pages(const struct job *job)
{
	return job->state == JOB_ZOMBIE || job->state == JOB_STUCK ||
	       job->reason == JOB_REASON_ORPHAN;
}

int64_t job_still_since(const struct job *job)
{
	return job->fell_mono > job->submitted_mono ? job->fell_mono : job->submitted_mono;
}

bool job_pages_coming_back(const struct job *job, int64_t now)
{
	if (!job_may_keep_pages(job))
		return true;
	return job->fell_mono && now - job->fell_mono < XENREAPER_FALLING_MS;
}

/* Rate and time left as published, from the samples at NOW. */
static void job_format_rate(struct job *job, int64_t now)
{
	uint64_t eta;
	double pps;

	if (rate_pages_per_s(&job->rate, now, &pps) == 0)
		snprintf(job->rate_text, sizeof(job->rate_text), "%.1f", pps / 256.0);
	else
		job->rate_text[0] = '\0';
	if (rate_stalled(&job->rate, now))
		snprintf(job->eta_text, sizeof(job->eta_text), XENREAPER_ETA_STALLED);
	else if (rate_eta_s(&job->rate, now, job->pages_left, &eta) == 0)
		snprintf(job->eta_text, sizeof(job->eta_text), "%" PRIu64, eta);
	else
		job->eta_text[0] = '\0';
}

void job_sample(struct job *job, int64_t now, uint64_t pages)
{
	job_set_pages_left(job, pages);
	rate_add(&job->rate, now, job->pages_left);
	job_format_rate(job, now);
}

struct log_fields job_log_fields(const struct job *job, enum log_event event)
{
	static const uint8_t no_uuid[HV_UUID_LEN];

	return (struct log_fields){
		.event = event,
		.has_domid = true,
		.domid = job->domid,
		/* A request whose value was no UUID names none. */
		.uuid = memcmp(job->uuid, no_uuid, HV_UUID_LEN) ? job->uuid_text : NULL,
		.name = job->name && job->name[0] ? job->name : NULL,
		.state = job_state_name(job->state),
		.reason = job_reason_name(job->reason),
		.held_by = job->held_by,
		.error = job->error,
		.rate = job->rate_text[0] ? job->rate_text : NULL,
	};
}

double job_mib_per_s(const struct job *job, int64_t released_mono)
{
	int64_t span = released_mono - job->started_mono;

	if (span <= 0 || !job->pages_at_start)
		return 0;
	return (double)job->pages_at_start * 1000.0 / (double)span / 256.0;
}

unsigned job_progress(const struct job *job)
{
	if (job->state == JOB_DONE)
		return 100;
	if (job->pages_total == 0)
		return 0;	/* refused before it held anything */
	if (job->pages_left >= job->pages_total)
		return 0;
	return (unsigned)((job->pages_total - job->pages_left) * 100 / job->pages_total);
}

/*
 * What a job's nodes hold, as last written (and committed) by this
 * process: a publish writes a node only when its value differs.  Each
 * xenstore request costs dom0 half a dozen system calls and wakes
 * xenstored; most of a state change's nodes (error, held-by, the times,
 * the progress figures) and some of a sample's are as they were.  Only
 * the daemon writes these nodes.  A text too long to keep (an error, a
 * held-by sentence) is never taken as known: it is written each time.
 * Made on the first publish; a failed transaction forgets it all.
 */
#define JOB_SHOWN_LEN 24
struct job_shown {
	uint32_t known;				/* bit per enum job_node */
	char text[JOB_NODE_COUNT][JOB_SHOWN_LEN];	/* "": the node is absent */
};

void job_shown_forget(struct job *job)
{
	if (job->shown)
		job->shown->known = 0;
}

/* Whether NODE is known to hold VALUE (NULL: to be absent). */
static bool job_shown_is(const struct job *job, enum job_node node, const char *value)
{
	const struct job_shown *shown = job->shown;

	return shown && (shown->known & (1u << node)) && !strcmp(shown->text[node], value ? value : "");
}

static bool job_shown_make(struct job *job)
{
	return job->shown || (job->shown = calloc(1, sizeof(*job->shown)));
}

/* JOB's directory was just removed: every node is known absent. */
static void job_shown_absent(struct job *job)
{
	if (!job_shown_make(job))
		return;		/* unknown: removed again, harmlessly */
	memset(job->shown->text, 0, sizeof(job->shown->text));
	job->shown->known = (1u << JOB_NODE_COUNT) - 1;
}

static void job_shown_set(struct job *job, enum job_node node, const char *value)
{
	if (!job_shown_make(job))
		return;		/* unknown: written every time */
	if (value && strlen(value) >= JOB_SHOWN_LEN) {
		job->shown->known &= ~(1u << node);
		return;
	}
	strcpy(job->shown->text[node], value ? value : "");
	job->shown->known |= 1u << node;
}

/* Write NODE (LEAF of JOB's directory) as VALUE, or remove it for NULL,
 * unless it is known to be so already. */
static int job_put(struct job *job, struct store *s, store_tx tx, enum job_node node,
		   const char *leaf, const char *value)
{
	char path[LAYOUT_PATH_LEN];
	int rc;

	if (job_shown_is(job, node, value))
		return 0;
	layout_job_path(path, job->domid, leaf);
	rc = value ? store_write(s, tx, path, value) : store_rm(s, tx, path);
	if (rc)
		job_shown_forget(job);
	else
		job_shown_set(job, node, value);
	return rc;
}

static int job_put_time(struct job *job, struct store *s, store_tx tx, enum job_node node,
			const char *leaf, int64_t wall_ms)
{
	char text[32];

	if (!wall_ms)
		return job_put(job, s, tx, node, leaf, NULL);
	layout_format_time(text, wall_ms);
	return job_put(job, s, tx, node, leaf, text);
}

int job_publish_state(struct job *job, struct store *s, store_tx tx)
{
	int rc;

	rc = job_put(job, s, tx, JOB_NODE_STATE, "state", job_state_name(job->state));
	if (!rc)
		rc = job_put(job, s, tx, JOB_NODE_ERROR, "error", job->error);
	if (!rc)
		rc = job_put(job, s, tx, JOB_NODE_HELD_BY, "held-by", job->held_by);
	if (!rc)
		rc = job_put_time(job, s, tx, JOB_NODE_STARTED, "started", job->started_wall);
	if (!rc)
		rc = job_put_time(job, s, tx, JOB_NODE_FINISHED, "finished", job->finished_wall);
	if (rc)
		return rc;
	return job_publish_progress(job, s, tx);
}

/* The progress nodes as JOB has them now, into V (JOB_PROGRESS_NODES at
 * most); how many.  last-release only where a client needs it: one write
 * more per sample would load xenstore for every teardown. */
#define JOB_PROGRESS_NODES 6
struct job_value {
	enum job_node node;
	const char *leaf;
	const char *value;	/* NULL: absent */
	char text[32];
};

static void job_value_text(struct job_value *v, enum job_node node, const char *leaf)
{
	v->node = node;
	v->leaf = leaf;
	v->value = v->text;
}

static unsigned job_progress_values(const struct job *job, struct job_value *v)
{
	unsigned n = 0;

	job_value_text(&v[n], JOB_NODE_PAGES_LEFT, "pages-left");
	snprintf(v[n++].text, sizeof(v->text), "%" PRIu64, job->pages_left);
	job_value_text(&v[n], JOB_NODE_PROGRESS, "progress");
	snprintf(v[n++].text, sizeof(v->text), "%u", job_progress(job));
	job_value_text(&v[n], JOB_NODE_SCRUB_PAGES, "scrub-pages");
	snprintf(v[n++].text, sizeof(v->text), "%" PRIu64, job->scrub_pages);
	v[n++] = (struct job_value){ JOB_NODE_RATE, "rate", job->rate_text[0] ? job->rate_text : NULL, "" };
	v[n++] = (struct job_value){ JOB_NODE_ETA, "eta", job->eta_text[0] ? job->eta_text : NULL, "" };
	if (job_may_keep_pages(job) && job->fell_wall) {
		job_value_text(&v[n], JOB_NODE_LAST_RELEASE, "last-release");
		layout_format_time(v[n++].text, job->fell_wall);
	}
	return n;
}

unsigned job_progress_unshown(const struct job *job, bool *urgent)
{
	struct job_value v[JOB_PROGRESS_NODES];
	unsigned n = job_progress_values(job, v), unshown = 0;
	bool shown_stalled;

	for (unsigned i = 0; i < n; i++)
		unshown += !job_shown_is(job, v[i].node, v[i].value);
	shown_stalled = job_shown_is(job, JOB_NODE_ETA, XENREAPER_ETA_STALLED);
	*urgent = !job->shown || !(job->shown->known & (1u << JOB_NODE_ETA)) ||
		  shown_stalled != !strcmp(job->eta_text, XENREAPER_ETA_STALLED);
	return unshown;
}

int job_publish_progress(struct job *job, struct store *s, store_tx tx)
{
	struct job_value v[JOB_PROGRESS_NODES];
	unsigned n = job_progress_values(job, v);
	int rc = 0;

	for (unsigned i = 0; !rc && i < n; i++)
		rc = job_put(job, s, tx, v[i].node, v[i].leaf, v[i].value);
	return rc;
}

/* job_publish with NAME and POOL as they fit. */
static int job_publish_all(struct job *job, struct store *s, store_tx tx, const char *name, const char *pool)
{
	const struct { const char *leaf, *value; } fixed[] = {
		{ "uuid", job->uuid_text },
		{ "name", name },
		{ "pool", pool },
		{ "reason", job_reason_name(job->reason) },
		{ "policy", job_policy_name(job->policy) },
		{ "priority", job_priority_name(job->priority) },
	};
	char path[LAYOUT_PATH_LEN], text[32];
	int rc;

	/* One request clears what an earlier job of this domid, or a publish
	 * that failed, left; the state and progress nodes that are to be
	 * absent then need none. */
	layout_job_path(path, job->domid, NULL);
	rc = store_rm(s, tx, path);
	if (rc)
		return rc;
	job_shown_absent(job);
	for (size_t i = 0; i < N_ELEMS(fixed); i++) {
		layout_job_path(path, job->domid, fixed[i].leaf);
		rc = store_write(s, tx, path, fixed[i].value);
		if (rc)
			return rc;
	}
	layout_job_path(path, job->domid, "pages-total");
	rc = store_writef(s, tx, path, "%" PRIu64, job->pages_total);
	if (rc)
		return rc;
	if (job->requested_wall) {
		layout_job_path(path, job->domid, "requested");
		layout_format_time(text, job->requested_wall);
		rc = store_write(s, tx, path, text);
		if (rc)
			return rc;
	}
	return job_publish_state(job, s, tx);
}

int job_publish(struct job *job, struct store *s, store_tx tx)
{
	char *name = NULL, *pool = NULL;
	int rc;

	/* A name xenstore took under /local/domain may be too long for our
	 * path: what fits of it (the job keeps all of it, for protect). */
	rc = sentence_fit(job->name, &name);
	if (!rc)
		rc = sentence_fit(job->pool, &pool);
	if (!rc)
		rc = job_publish_all(job, s, tx, name, pool);
	free(name);
	free(pool);
	return rc;
}

/* Read optional leaf into a malloc'd string; missing gives "". */
static int job_read_text(struct store *s, store_tx tx, uint32_t domid, const char *leaf,
			 char **value)
{
	char path[LAYOUT_PATH_LEN];
	int rc;

	layout_job_path(path, domid, leaf);
	rc = store_read(s, tx, path, value);
	if (rc == -ENOENT) {
		*value = strdup("");
		rc = *value ? 0 : -ENOMEM;
	}
	return rc;
}

static int job_read_time(struct store *s, store_tx tx, uint32_t domid, const char *leaf,
			 int64_t *wall_ms)
{
	char *text;
	int rc;

	rc = job_read_text(s, tx, domid, leaf, &text);
	if (rc)
		return rc;
	*wall_ms = 0;
	if (text[0])
		rc = layout_parse_time(text, wall_ms);
	free(text);
	return rc;
}

static int job_read_pages(struct store *s, store_tx tx, uint32_t domid, const char *leaf,
			  uint64_t *pages)
{
	char path[LAYOUT_PATH_LEN];
	int rc;

	layout_job_path(path, domid, leaf);
	rc = store_read_u64(s, tx, path, pages);
	if (rc == -ENOENT) {
		*pages = 0;
		rc = 0;
	}
	return rc;
}

int job_load(struct store *s, store_tx tx, uint32_t domid, struct job **out)
{
	char *uuid_text = NULL, *name = NULL, *pool = NULL, *state = NULL;
	char *reason = NULL, *policy = NULL, *priority = NULL, *error = NULL;
	uint8_t uuid[HV_UUID_LEN];
	struct job *job = NULL;
	int rc;

	rc = job_read_text(s, tx, domid, "uuid", &uuid_text);
	if (!rc) rc = job_read_text(s, tx, domid, "name", &name);
	if (!rc) rc = job_read_text(s, tx, domid, "pool", &pool);
	if (!rc) rc = job_read_text(s, tx, domid, "state", &state);
	if (!rc) rc = job_read_text(s, tx, domid, "reason", &reason);
	if (!rc) rc = job_read_text(s, tx, domid, "policy", &policy);
	if (!rc) rc = job_read_text(s, tx, domid, "priority", &priority);
	if (!rc) rc = job_read_text(s, tx, domid, "error", &error);
	if (rc)
		goto out;
	rc = hv_uuid_parse(uuid_text, uuid);
	if (rc)
		goto out;
	rc = job_new(domid, uuid, name, pool, &job);
	if (rc)
		goto out;
	rc = job_state_parse(state, &job->state);
	if (!rc && reason[0])
		rc = job_reason_parse(reason, &job->reason);
	if (!rc && policy[0])
		rc = job_policy_parse(policy, &job->policy);
	if (!rc && priority[0])
		rc = job_priority_parse(priority, &job->priority);
	if (!rc) rc = job_read_pages(s, tx, domid, "pages-total", &job->pages_total);
	if (!rc) rc = job_read_pages(s, tx, domid, "pages-left", &job->pages_left);
	if (!rc) rc = job_read_time(s, tx, domid, "requested", &job->requested_wall);
	if (!rc) rc = job_read_time(s, tx, domid, "started", &job->started_wall);
	if (!rc) rc = job_read_time(s, tx, domid, "finished", &job->finished_wall);
	if (rc)
		goto out;
	if (error[0]) {
		job->error = error;
		error = NULL;
	}
	*out = job;
	job = NULL;
out:
	job_free(job);
	free(uuid_text);
	free(name);
	free(pool);
	free(state);
	free(reason);
	free(policy);
	free(priority);
	free(error);
	return rc;
}
