/*
 * metrics: renders the daemon's figures as Prometheus text (exposition
 * format 0.0.4) and keeps node_exporter's textfile up to date.  Counters
 * (teardowns by reason and result, pages released, a duration histogram)
 * accumulate from the daemon's start; gauges (jobs by state, when the
 * oldest job of each state and the oldest orphan were requested, the scrub
 * backlog per NUMA node with its time to drain, when it was probed, Xen's
 * free, releasing and claimed pages, the daemon's identity) are read from
 * the job list, the scrub figure and the memory reading at each render.
 * Ages are given as timestamps, not as seconds since: the file is not
 * rewritten while nothing changes, and a timestamp stays true in it.
 * Guest names and domids are never labels: cardinality stays bounded.
 * The file is written beside itself and renamed over, only when the text
 * changed and at most once per METRICS_MIN_GAP_MS, and not at all while
 * the daemon is idle (nothing renders then).  While a teardown releases
 * pages the releasing figure changes, so a file left unchanged with
 * teardowns under way means a daemon that stopped (the alerting rules
 * rely on it).  It does not serve HTTP; node_exporter does.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "metrics.h"

#define N_REASONS (JOB_REASON_ORPHAN + 1)
#define N_STATES (JOB_STUCK + 1)

static const double metrics_buckets[] = { METRICS_DURATION_BUCKETS };
#define N_BUCKETS (sizeof(metrics_buckets) / sizeof(*metrics_buckets))

struct metrics {
	char *path;			/* NULL: off */
	char *policy;
	int64_t start_wall;
	uint64_t finished[N_REASONS][2];	/* [reason][failed] */
	uint64_t pages_released;
	uint64_t bucket[N_BUCKETS];	/* observations <= each bound */
	uint64_t count;
	double sum;
	char *written;			/* the text in the file now */
	int64_t written_mono;
	bool pending;			/* a changed text waits for the gap */
	bool failing;			/* the last write failed (logged) */
};

int metrics_new(int64_t start_wall, struct metrics **out)
{
	struct metrics *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->start_wall = start_wall;
	*out = m;
	return 0;
}

void metrics_free(struct metrics *m)
{
	if (!m)
		return;
	free(m->path);
	free(m->policy);
	free(m->written);
	free(m);
}

int metrics_configure(struct metrics *m, const char *path, const char *policy)
{
	char *p = path ? strdup(path) : NULL, *q = strdup(policy);

	if ((path && !p) || !q) {
		free(p);
		free(q);
		return -ENOMEM;
	}
	if ((m->path == NULL) != (p == NULL) || (p && strcmp(p, m->path))) {
		free(m->written);	/* a new file: write it in full */
		m->written = NULL;
	}
	free(m->path);
	free(m->policy);
	m->path = p;
	m->policy = q;
	return 0;
}

void metrics_job_finished(struct metrics *m, const struct job *job)
{
	double seconds;

	m->finished[job->reason][job->state == JOB_FAILED]++;
	if (job->state != JOB_DONE || !job->started_wall)
		return;		/* refused, or gone before it started: no teardown */
	m->pages_released += job->pages_total;
	seconds = (job->finished_wall - job->requested_wall) / 1000.0;
	if (seconds < 0)
		seconds = 0;
	for (size_t i = 0; i < N_BUCKETS; i++)
		m->bucket[i] += seconds <= metrics_buckets[i];
	m->count++;
	m->sum += seconds;
}

/* VALUE as a label value: backslash, quote and newline escaped. */
static void metrics_label(FILE *f, const char *value)
{
	fputc('"', f);
	for (const char *c = value; *c; c++) {
		if (*c == '\\')
			fputs("\\\\", f);
		else if (*c == '"')
			fputs("\\\"", f);
		else if (*c == '\n')
			fputs("\\n", f);
		else
			fputc(*c, f);
	}
	fputc('"', f);
}

static void metrics_head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Wall-clock ms as Prometheus seconds, to the millisecond. */
static void metrics_seconds(FILE *f, int64_t wall_ms)
{
	fprintf(f, "%" PRId64 ".%03" PRId64 "\n", wall_ms / 1000, wall_ms % 1000);
}

/* When the oldest unfinished job in each state, and the oldest unfinished
 * orphan, was requested (adopted): how long teardowns have been at it, on
 * the clock of the duration histogram. */
static void metrics_render_oldest(FILE *f, const struct job *jobs)
{
	int64_t oldest[N_STATES] = { 0 }, orphan = 0;
	bool any = false;

	for (const struct job *job = jobs; job; job = job->next) {
		if (job_state_is_final(job->state) || !job->requested_wall)
			continue;
		if (!oldest[job->state] || job->requested_wall < oldest[job->state])
			oldest[job->state] = job->requested_wall;
		if (job->reason == JOB_REASON_ORPHAN && (!orphan || job->requested_wall < orphan))
			orphan = job->requested_wall;
		any = true;
	}
	if (any)
		metrics_head(f, "xen_teardown_oldest_timestamp_seconds", "gauge",
			     "When the oldest unfinished job in each state was requested (or adopted), in seconds since the epoch.");
	for (int state = 0; state < N_STATES; state++) {
		if (!oldest[state])
			continue;
		fprintf(f, "xen_teardown_oldest_timestamp_seconds{state=\"%s\"} ", job_state_name(state));
		metrics_seconds(f, oldest[state]);
	}
	if (!orphan)
		return;
	metrics_head(f, "xen_teardown_oldest_orphan_timestamp_seconds", "gauge",
		     "When the oldest unfinished orphan (a dead domain left behind) was adopted, in seconds since the epoch.");
	fputs("xen_teardown_oldest_orphan_timestamp_seconds ", f);
	metrics_seconds(f, orphan);
}

static void metrics_render_scrub(FILE *f, const struct scrub_snapshot *scrub)
{
	bool any_drain = !scrub->n_nodes && scrub->drain_s >= 0;

	metrics_head(f, "xen_teardown_scrub_backlog_pages", "gauge",
		     "Freed pages Xen has not scrubbed yet, by NUMA node, when last probed.");
	if (!scrub->n_nodes) {
		fputs("xen_teardown_scrub_backlog_pages{node=\"all\",source=", f);
		metrics_label(f, scrub->source);
		fprintf(f, "} %" PRIu64 "\n", scrub->pages);
	}
	for (unsigned n = 0; n < scrub->n_nodes; n++) {
		fprintf(f, "xen_teardown_scrub_backlog_pages{node=\"%u\",source=", n);
		metrics_label(f, scrub->source);
		fprintf(f, "} %" PRIu64 "\n", scrub->node_pages[n]);
		any_drain |= scrub->node_drain_s[n] >= 0;
	}
	if (!any_drain)
		return;
	metrics_head(f, "xen_teardown_scrub_drain_seconds", "gauge",
		     "Time the scrub backlog of each NUMA node needs at the rate learnt for that node, as of the last probe.");
	if (!scrub->n_nodes) {
		fputs("xen_teardown_scrub_drain_seconds{node=\"all\",source=", f);
		metrics_label(f, scrub->source);
		fprintf(f, "} %.3f\n", scrub->drain_s);
	}
	for (unsigned n = 0; n < scrub->n_nodes; n++) {
		if (scrub->node_drain_s[n] < 0)
			continue;
		fprintf(f, "xen_teardown_scrub_drain_seconds{node=\"%u\",source=", n);
		metrics_label(f, scrub->source);
		fprintf(f, "} %.3f\n", scrub->node_drain_s[n]);
	}
}

static void metrics_render_memory(FILE *f, const struct memory_snapshot *mem)
{
	metrics_head(f, "xen_teardown_free_pages", "gauge",
		     "Xen's free 4 KiB pages, as last read (while teardowns were in flight and once after).");
	fprintf(f, "xen_teardown_free_pages %" PRIu64 "\n", mem->free_pages);
	metrics_head(f, "xen_teardown_releasing_pages", "gauge",
		     "4 KiB pages the teardowns under way were still to give back to Xen, at that reading.");
	fprintf(f, "xen_teardown_releasing_pages %" PRIu64 "\n", mem->releasing_pages);
	metrics_head(f, "xen_teardown_outstanding_claim_pages", "gauge",
		     "4 KiB pages claimed for domains and not yet allocated to them (physinfo outstanding_pages), at that reading.");
	fprintf(f, "xen_teardown_outstanding_claim_pages %" PRIu64 "\n", mem->outstanding_pages);
}

int metrics_render(const struct metrics *m, const struct job *jobs,
		   const struct scrub_snapshot *scrub, const struct memory_snapshot *mem, char **out)
{
	unsigned states[N_STATES] = { 0 };
	char *text = NULL;
	size_t size;
	FILE *f;

	f = open_memstream(&text, &size);
	if (!f)
		return -ENOMEM;
	metrics_head(f, "xen_teardown_total", "counter",
		     "Teardowns that ended since xenreaperd started, by reason and result.");
	for (int reason = 0; reason < N_REASONS; reason++)
		for (int failed = 0; failed < 2; failed++)
			fprintf(f, "xen_teardown_total{reason=\"%s\",result=\"%s\"} %" PRIu64 "\n",
				job_reason_name(reason), failed ? "failed" : "done",
				m->finished[reason][failed]);
	metrics_head(f, "xen_teardown_duration_seconds", "histogram",
		     "Time from request (or adoption) to done, for teardowns that ran.");
	for (size_t i = 0; i < N_BUCKETS; i++)
		fprintf(f, "xen_teardown_duration_seconds_bucket{le=\"%g\"} %" PRIu64 "\n",
			metrics_buckets[i], m->bucket[i]);
	fprintf(f, "xen_teardown_duration_seconds_bucket{le=\"+Inf\"} %" PRIu64 "\n", m->count);
	fprintf(f, "xen_teardown_duration_seconds_sum %.3f\n", m->sum);
	fprintf(f, "xen_teardown_duration_seconds_count %" PRIu64 "\n", m->count);
	metrics_head(f, "xen_teardown_released_pages_total", "counter",
		     "4 KiB pages given back to Xen by teardowns that ended done.");
	fprintf(f, "xen_teardown_released_pages_total %" PRIu64 "\n", m->pages_released);
	for (const struct job *job = jobs; job; job = job->next)
		states[job->state]++;
	metrics_head(f, "xen_teardown_jobs", "gauge",
		     "Jobs xenreaperd holds, by state (done and failed ones are kept for the retention period).");
	for (int state = 0; state < N_STATES; state++)
		fprintf(f, "xen_teardown_jobs{state=\"%s\"} %u\n", job_state_name(state), states[state]);
	metrics_render_oldest(f, jobs);
	if (scrub->have_figure)
		metrics_render_scrub(f, scrub);
	if (scrub->probed_wall) {
		metrics_head(f, "xen_teardown_scrub_probe_timestamp_seconds", "gauge",
			     "When the scrub backlog was last probed (a figure or not).");
		fputs("xen_teardown_scrub_probe_timestamp_seconds ", f);
		metrics_seconds(f, scrub->probed_wall);
	}
	if (mem && mem->have_figure)
		metrics_render_memory(f, mem);
	metrics_head(f, "xen_teardown_daemon_info", "gauge", "xenreaperd's version and policy file.");
	fputs("xen_teardown_daemon_info{version=", f);
	metrics_label(f, PACKAGE_VERSION);
	fputs(",policy=", f);
	metrics_label(f, m->policy ? m->policy : "");
	fputs("} 1\n", f);
	metrics_head(f, "xen_teardown_daemon_start_time_seconds", "gauge",
		     "When xenreaperd started, in seconds since the epoch.");
	fputs("xen_teardown_daemon_start_time_seconds ", f);
	metrics_seconds(f, m->start_wall);
	if (fclose(f)) {
		free(text);
		return -ENOMEM;
	}
	*out = text;
	return 0;
}

/* TEXT into m->path: a temporary file beside it, renamed over it, so that
 * node_exporter never reads half a file.  -ENOENT if the directory does
 * not exist. */
static int metrics_write(const struct metrics *m, const char *text)
{
	char *tmp = NULL;
	size_t len = strlen(text);
	int fd = -1, rc;

	/* No .prom suffix: node_exporter ignores it until the rename. */
	if (asprintf(&tmp, "%s.XXXXXX", m->path) < 0)
		return -ENOMEM;
	/* Close-on-exec: a teardown process may be spawned while it is open. */
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		free(tmp);
		return rc;
	}
	if (fchmod(fd, 0644) < 0 || write(fd, text, len) != (ssize_t)len || close(fd) < 0) {
		rc = errno ? -errno : -EIO;
		unlink(tmp);
		free(tmp);
		return rc;
	}
	rc = rename(tmp, m->path) < 0 ? -errno : 0;
	if (rc)
		unlink(tmp);
	free(tmp);
	return rc;
}

void metrics_update(struct metrics *m, const struct job *jobs, const struct scrub_snapshot *scrub,
		    const struct memory_snapshot *mem, int64_t now)
{
	char *text = NULL;
	int rc;

	if (!m->path)
		return;
	rc = metrics_render(m, jobs, scrub, mem, &text);
	if (rc) {
		log_warning("cannot render metrics: %s", strerror(-rc));
		return;
	}
	if (m->written && !strcmp(text, m->written)) {
		m->pending = false;
		free(text);
		return;
	}
	if (m->written_mono && now < m->written_mono + METRICS_MIN_GAP_MS) {
		m->pending = true;
		free(text);
		return;
	}
	m->written_mono = now;
	m->pending = false;
	rc = metrics_write(m, text);
	if (rc) {
		if (!m->failing)
			log_warning("cannot write metrics to %s: %s%s", m->path, strerror(-rc),
				    rc == -ENOENT ? " (is prometheus-node-exporter installed? metrics = off silences this)" : "");
		m->failing = true;
		free(text);
		return;
	}
	if (m->failing)
		log_notice("metrics written to %s again", m->path);
	m->failing = false;
	free(m->written);
	m->written = text;
}

int64_t metrics_next_deadline(const struct metrics *m)
{
	return m->pending ? m->written_mono + METRICS_MIN_GAP_MS : -1;
}
