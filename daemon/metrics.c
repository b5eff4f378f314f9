/*
 * metrics: renders the daemon's figures as Prometheus text (exposition
 * format 0.0.4) and keeps node_exporter's textfile up to date.  Counters
 * (teardowns by reason and result, pages released, a duration histogram)
 * accumulate from the daemon's start; gauges (jobs by state, the scrub
 * backlog per NUMA node, when it was probed, the daemon's identity) are
 * read from the job list and the scrub figure at each render.  Guest names
 * and domids are never labels: cardinality stays bounded.  The file is
 * written beside itself and renamed over, only when the text changed and
 * at most once per METRICS_MIN_GAP_MS, and not at all while the daemon is
 * idle (nothing renders then).  It does not serve HTTP; node_exporter does.
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

int metrics_render(const struct metrics *m, const struct job *jobs,
		   const struct scrub_snapshot *scrub, char **out)
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
	if (scrub->have_figure) {
		metrics_head(f, "xen_teardown_scrub_backlog_pages", "gauge",
			     "Freed pages Xen has not scrubbed yet, by NUMA node, when last probed.");
		if (scrub->n_nodes) {
			for (unsigned n = 0; n < scrub->n_nodes; n++) {
				fprintf(f, "xen_teardown_scrub_backlog_pages{node=\"%u\",source=", n);
				metrics_label(f, scrub->source);
				fprintf(f, "} %" PRIu64 "\n", scrub->node_pages[n]);
			}
		} else {
			fputs("xen_teardown_scrub_backlog_pages{node=\"all\",source=", f);
			metrics_label(f, scrub->source);
			fprintf(f, "} %" PRIu64 "\n", scrub->pages);
		}
	}
	if (scrub->probed_wall) {
		metrics_head(f, "xen_teardown_scrub_probe_timestamp_seconds", "gauge",
			     "When the scrub backlog was last probed (a figure or not).");
		fprintf(f, "xen_teardown_scrub_probe_timestamp_seconds %" PRId64 ".%03" PRId64 "\n",
			scrub->probed_wall / 1000, scrub->probed_wall % 1000);
	}
	metrics_head(f, "xen_teardown_daemon_info", "gauge", "xenreaperd's version and policy file.");
	fputs("xen_teardown_daemon_info{version=", f);
	metrics_label(f, PACKAGE_VERSION);
	fputs(",policy=", f);
	metrics_label(f, m->policy ? m->policy : "");
	fputs("} 1\n", f);
	metrics_head(f, "xen_teardown_daemon_start_time_seconds", "gauge",
		     "When xenreaperd started, in seconds since the epoch.");
	fprintf(f, "xen_teardown_daemon_start_time_seconds %" PRId64 ".%03" PRId64 "\n",
		m->start_wall / 1000, m->start_wall % 1000);
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
	/* Close-on-exec: a worker may fork a hotplug script while it is open. */
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
		    int64_t now)
{
	char *text = NULL;
	int rc;

	if (!m->path)
		return;
	rc = metrics_render(m, jobs, scrub, &text);
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
