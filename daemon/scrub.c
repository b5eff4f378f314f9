/*
 * scrub: decides when to ask the hypervisor for the scrub backlog and what
 * each job's share of it is.  On Xen 4.17 a probe is a heap dump of about
 * 43 lines per NUMA node into a console ring of 16 KiB, so every probe
 * pushes boot and crash messages out of `xl dmesg`: probes are spent only
 * where a figure is owed.  Nothing is probed while no released pages are
 * counted.  A sync job waiting for clean pages gets a probe when the
 * backlog is predicted to reach 0 (the host's scrub rate is learnt from
 * successive probes), no sooner than the configured interval and no later
 * than SCRUB_SYNC_MAX_GAP_MS.  Deferred jobs, already done, only get a
 * figure once releases have settled, at most once a minute.  Probes that
 * keep failing back off and, after SCRUB_GIVE_UP_MS, end counting the way
 * scrub-probe = none does.  A hypervisor that reports its backlog in
 * physinfo (hv_scrub_exact) is read every progress interval instead, while
 * any job is counted: one silent sysctl.  With a sync job waiting it is
 * read sooner when the learnt rate says the backlog drains before the next
 * interval: a drain shorter than a few intervals would otherwise end up to
 * one whole interval before the job is done.  With no rate learnt yet, the
 * second reading comes a quarter interval after the first, to learn one
 * (under emulation 1 GiB drained within one interval of its first
 * reading).  Then each reading comes at half the time the rate says is
 * left: a drain speeds up once the teardown's own work is over, so a rate
 * learnt early says too long (read at the whole predicted time, done came
 * 1.15x clean).  Reading early costs another sysctl and the figure's
 * publish, so the gap never drops below a tenth of the interval.
 *
 * Xen scrubs each NUMA node with one CPU at a time, so each node also gets
 * a rate of its own, learnt the same way from successive figures of that
 * node (a heap dump's; physinfo has none), and with it a time to drain.
 * Only a figure that fell teaches anything: one that stood or rose may
 * hide scrubbing behind pages freed meanwhile.
 *
 * A job's share is its proportional part of the backlog among the
 * teardowns counted since the backlog was last zero, capped at what it
 * released: pages freed by anyone else are in the backlog too, and are
 * never pinned on a job.  It does not decide job states; reaper.c turns
 * "share reached 0" into done for sync jobs.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "heapdump.h"
#include "layout.h"
#include "log.h"
#include "scrub.h"

struct scrub {
	struct store *store;
	struct hv *hv;
	unsigned sources;
	int64_t interval_ms;
	int64_t every_ms;		/* cheap probes: this often; 0: rationed */
	unsigned tracked;		/* jobs whose pages may be pending */
	unsigned tracked_sync;		/* of which sync jobs, waiting on it */
	int64_t pending_since_mono;	/* first release not yet measured; 0: none */
	int64_t last_release_mono;
	int64_t last_probe_mono;	/* last probe with a figure; 0: never */
	uint64_t last_pages;		/* its figure */
	bool have_last;			/* a figure since counting began */
	double rate;			/* pages scrubbed per ms, learnt; 0: unknown */
	double node_rate[HV_SCRUB_MAX_NODES];	/* the same for each node */
	unsigned stalled;		/* probes in a row without progress */
	struct backoff failing;		/* probes failing in a row */
	int64_t failing_since_mono;
	int64_t broken_until_mono;	/* gave up: no probes before this */
	unsigned probes, failures;
	struct hv_scrub last_reading;	/* of the last probe with a figure */
	int64_t last_probe_wall;
	enum hv_scrub_source last_source;
	unsigned published_nodes;	/* scrub/node/<n> entries in xenstore */
};

int scrub_new(struct store *store, struct hv *hv, struct scrub **out)
{
	struct scrub *sc;

	sc = calloc(1, sizeof(*sc));
	if (!sc)
		return -ENOMEM;
	sc->store = store;
	sc->hv = hv;
	sc->sources = HV_SCRUB_PHYSINFO | HV_SCRUB_HEAP_DUMP;
	sc->interval_ms = 1000;
	sc->last_source = HV_SCRUB_NONE;
	*out = sc;
	return 0;
}

void scrub_free(struct scrub *sc)
{
	free(sc);
}

void scrub_configure(struct scrub *sc, unsigned sources, int64_t interval_ms, int64_t every_ms)
{
	sc->sources = sources;
	sc->interval_ms = interval_ms;
	sc->every_ms = every_ms;
}

bool scrub_track(struct scrub *sc, struct job *job)
{
	int64_t now = clock_mono_ms();

	if (job->scrub_tracked)
		return true;
	if (!sc->sources || now < sc->broken_until_mono)
		return false;
	job->scrub_tracked = true;
	/* Xen marks every page a dying domain frees as needing a scrub
	 * (free_domheap_pages: d->is_dying), so until a probe says how many
	 * are clean, all of them wait. */
	job->scrub_pages = job->pages_total;
	if (!sc->tracked++)
		sc->have_last = false;	/* a new backlog: the old figure says nothing */
	sc->tracked_sync += job->policy == JOB_POLICY_SYNC;
	if (!sc->pending_since_mono)
		sc->pending_since_mono = now;
	sc->last_release_mono = now;
	return true;
}

void scrub_untrack(struct scrub *sc, struct job *job)
{
	if (!job->scrub_tracked)
		return;
	job->scrub_tracked = false;
	sc->tracked--;
	sc->tracked_sync -= job->policy == JOB_POLICY_SYNC;
	if (!sc->tracked)
		sc->pending_since_mono = 0;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

/* When the backlog should read 0, from the last figure and the rate. */
static int64_t scrub_predicted_gap(const struct scrub *sc, int64_t fallback)
{
	if (!sc->have_last || sc->rate <= 0)
		return fallback;
	return (int64_t)(sc->last_pages / sc->rate) + 1;
}

int64_t scrub_next_probe(const struct scrub *sc)
{
	int64_t gap;

	if (!sc->tracked)
		return -1;
	if (sc->failing.failures)
		return sc->failing.next_mono;
	if (sc->every_ms) {
		if (!sc->last_probe_mono)
			return 0;
		gap = sc->every_ms;
		/* No rate yet: the second reading comes soon, to learn one
		 * (a drain often ends within the first interval). */
		if (sc->tracked_sync && sc->have_last && sc->rate <= 0 && !sc->stalled)
			gap = sc->every_ms / SCRUB_EXACT_LEARN_DIV;
		else if (sc->tracked_sync)
			gap = (scrub_predicted_gap(sc, gap) + 1) / 2;
		gap = clamp64(gap, max64(sc->every_ms / SCRUB_EXACT_MIN_GAP_DIV, 1), sc->every_ms);
		return sc->last_probe_mono + gap;
	}
	if (sc->tracked_sync) {
		/* The first figure as soon as the interval allows (possibly in
		 * the past: "now" read here would be later than the caller's). */
		if (!sc->have_last)
			return sc->last_probe_mono ? sc->last_probe_mono + sc->interval_ms : 0;
		gap = scrub_predicted_gap(sc, sc->interval_ms << (sc->stalled < 5 ? sc->stalled : 5));
		return sc->last_probe_mono + clamp64(gap, sc->interval_ms, SCRUB_SYNC_MAX_GAP_MS);
	}
	gap = max64(sc->last_release_mono + SCRUB_DEFERRED_SETTLE_MS,
		    sc->have_last ? sc->last_probe_mono + scrub_predicted_gap(sc, 0) : 0);
	if (sc->pending_since_mono && gap > sc->pending_since_mono + SCRUB_DEFERRED_MAX_DELAY_MS)
		gap = sc->pending_since_mono + SCRUB_DEFERRED_MAX_DELAY_MS;
	return sc->last_probe_mono ? max64(gap, sc->last_probe_mono + SCRUB_DEFERRED_MIN_GAP_MS) : gap;
}

static const char *scrub_source_name(enum hv_scrub_source source)
{
	switch (source) {
	case HV_SCRUB_PHYSINFO:
		return "physinfo";
	case HV_SCRUB_HEAP_DUMP:
		return "heap-dump";
	default:
		return "none";
	}
}

/* The figure first, then probed: a client that sees a new probed time
 * reads the figure of that probe, never the one before. */
static int scrub_publish(struct scrub *sc, const struct hv_scrub *reading)
{
	char path[LAYOUT_PATH_LEN], when[32];
	int rc;

	rc = store_write(sc->store, STORE_TX_NONE, LAYOUT_SCRUB_DIR "/source",
			 scrub_source_name(reading ? reading->source : HV_SCRUB_NONE));
	if (rc)
		return rc;
	if (!reading) {
		/* No figure: say so by its absence rather than publish a guess. */
		sc->published_nodes = 0;
		rc = store_rm(sc->store, STORE_TX_NONE, LAYOUT_SCRUB_DIR "/pages");
		if (!rc)
			rc = store_rm(sc->store, STORE_TX_NONE, LAYOUT_SCRUB_DIR "/node");
	} else {
		rc = store_writef(sc->store, STORE_TX_NONE, LAYOUT_SCRUB_DIR "/pages", "%" PRIu64,
				  reading->pages);
		if (!rc && reading->n_nodes != sc->published_nodes)
			rc = store_rm(sc->store, STORE_TX_NONE, LAYOUT_SCRUB_DIR "/node");
		if (!rc)
			sc->published_nodes = reading->n_nodes;
		for (unsigned n = 0; !rc && n < reading->n_nodes; n++) {
			snprintf(path, sizeof(path), LAYOUT_SCRUB_DIR "/node/%u", n);
			rc = store_writef(sc->store, STORE_TX_NONE, path, "%" PRIu64, reading->node_pages[n]);
		}
		if (rc)
			sc->published_nodes = UINT32_MAX;	/* rewrite them all next time */
	}
	if (rc)
		return rc;
	layout_format_time(when, clock_wall_ms());
	return store_write(sc->store, STORE_TX_NONE, LAYOUT_SCRUB_DIR "/probed", when);
}

int scrub_publish_none(struct scrub *sc)
{
	return scrub_publish(sc, NULL);
}

/* No figure to be had: every job stops counting, at 0. */
static int scrub_no_figure(struct scrub *sc, struct job *jobs)
{
	int rc;

	for (struct job *job = jobs; job; job = job->next) {
		job->scrub_pages = 0;
		scrub_untrack(sc, job);
	}
	sc->last_source = HV_SCRUB_NONE;
	sc->last_probe_wall = clock_wall_ms();
	rc = scrub_publish(sc, NULL);
	if (rc)
		log_warning("could not publish that no scrub figure is available: %s", strerror(-rc));
	return -ENODATA;
}

/* A probe failed with RC at NOW: back off, and give up after a while. */
static int scrub_failed(struct scrub *sc, struct job *jobs, int rc, int64_t now)
{
	struct log_fields fields;
	int64_t delay;

	sc->failures++;
	if (!sc->failing.failures)
		sc->failing_since_mono = now;
	if (now - sc->failing_since_mono >= SCRUB_GIVE_UP_MS) {
		fields = (struct log_fields){ .event = LOG_EVENT_SCRUB_GAVE_UP, .error = strerror(-rc) };
		log_event(LOG_WARNING, &fields, "the scrub backlog could not be measured for %.0f s (%s): "
			  "sync jobs end when their pages are back, as with scrub-probe = none; "
			  "next try in %d min", (now - sc->failing_since_mono) / 1000.0,
			  strerror(-rc), SCRUB_BROKEN_MS / 60000);
		backoff_reset(&sc->failing);
		sc->broken_until_mono = now + SCRUB_BROKEN_MS;
		return scrub_no_figure(sc, jobs);
	}
	delay = backoff_fail(&sc->failing, now);
	if (sc->failing.failures == 1)
		log_warning("scrub probe failed: %s; trying again with back-off (next in %.0f s)",
			    strerror(-rc), delay / 1000.0);
	return rc;
}

/* A new pages-per-ms figure SEEN folded into the learnt RATE. */
static double scrub_average(double rate, double seen)
{
	return rate > 0 ? (rate + seen) / 2 : seen;
}

/* Learn each node's scrub rate from READING at NOW against the last
 * figure of the same backlog, source and nodes; before scrub_learn moves
 * the last figure on. */
static void scrub_learn_nodes(struct scrub *sc, const struct hv_scrub *reading, int64_t now)
{
	const struct hv_scrub *last = &sc->last_reading;

	if (!sc->have_last || now <= sc->last_probe_mono || last->source != reading->source ||
	    last->n_nodes != reading->n_nodes)
		return;
	for (unsigned n = 0; n < reading->n_nodes; n++)
		if (reading->node_pages[n] < last->node_pages[n])
			sc->node_rate[n] = scrub_average(sc->node_rate[n],
							 (double)(last->node_pages[n] - reading->node_pages[n]) /
							 (now - sc->last_probe_mono));
}

/* Learn the host's scrub rate from the figure PAGES read at NOW. */
static void scrub_learn(struct scrub *sc, uint64_t pages, int64_t now)
{
	double seen;

	if (sc->have_last && pages < sc->last_pages && now > sc->last_probe_mono) {
		seen = (double)(sc->last_pages - pages) / (now - sc->last_probe_mono);
		sc->rate = scrub_average(sc->rate, seen);
		sc->stalled = 0;
	} else if (sc->have_last) {
		sc->stalled++;	/* a busy host, or more pages freed meanwhile */
	}
	sc->have_last = true;
	sc->last_pages = pages;
	sc->last_probe_mono = now;
	sc->pending_since_mono = 0;
}

int scrub_probe(struct scrub *sc, struct job *jobs)
{
	int64_t now = clock_mono_ms();
	struct hv_scrub reading;
	uint64_t released = 0;
	int rc;

	rc = sc->sources ? hv_scrub_probe(sc->hv, sc->sources, &reading) : -ENODATA;
	if (rc == -ENODATA) {
		if (sc->last_source != HV_SCRUB_NONE || !sc->probes)
			log_warning("no scrub backlog figure available: sync jobs end at pages returned");
		return scrub_no_figure(sc, jobs);
	}
	if (rc)
		return scrub_failed(sc, jobs, rc, now);
	if (sc->failing.failures)
		log_notice("scrub probe works again after %u failure(s)", sc->failing.failures);
	backoff_reset(&sc->failing);
	sc->probes++;
	sc->last_source = reading.source;
	scrub_learn_nodes(sc, &reading, now);
	sc->last_reading = reading;
	sc->last_probe_wall = clock_wall_ms();
	scrub_learn(sc, reading.pages, now);
	for (struct job *job = jobs; job; job = job->next)
		if (job->scrub_tracked)
			released += job->pages_total;
	for (struct job *job = jobs; job; job = job->next) {
		if (!job->scrub_tracked)
			continue;
		job->scrub_pages = heapdump_attribute(reading.pages, job->pages_total, released);
		if (reading.pages == 0)
			scrub_untrack(sc, job);
	}
	/* The probe's own cost is in the line: the benchmarks count it. */
	log_debug("scrub backlog %" PRIu64 " pages (%s, probe %u, %" PRId64 " ms), %u job(s) counted, rate %.0f MiB/s",
		  reading.pages, scrub_source_name(reading.source), sc->probes,
		  clock_mono_ms() - now, sc->tracked, sc->rate * 1000 / 256);
	rc = scrub_publish(sc, &reading);
	if (rc)
		log_warning("could not publish the scrub backlog: %s", strerror(-rc));
	return 0;
}

/* Seconds to scrub PAGES at RATE pages per ms; -1 when no rate is known. */
static double scrub_drain_s(uint64_t pages, double rate)
{
	if (!pages)
		return 0;
	return rate > 0 ? pages / rate / 1000.0 : -1;
}

void scrub_snapshot(const struct scrub *sc, struct scrub_snapshot *out)
{
	memset(out, 0, sizeof(*out));
	out->have_figure = sc->probes && sc->last_source != HV_SCRUB_NONE;
	out->source = scrub_source_name(sc->last_source);
	out->probed_wall = sc->last_probe_wall;
	if (!out->have_figure)
		return;
	out->pages = sc->last_reading.pages;
	out->drain_s = scrub_drain_s(out->pages, sc->rate);
	out->n_nodes = sc->last_reading.n_nodes;
	memcpy(out->node_pages, sc->last_reading.node_pages, sizeof(out->node_pages));
	for (unsigned n = 0; n < out->n_nodes; n++)
		out->node_drain_s[n] = scrub_drain_s(out->node_pages[n], sc->node_rate[n]);
}

int scrub_backlog(const struct scrub *sc, uint64_t *pages)
{
	if (!sc->probes || sc->last_source == HV_SCRUB_NONE)
		return -ENODATA;
	*pages = sc->last_pages;
	return 0;
}

unsigned scrub_counted(const struct scrub *sc)
{
	return sc->tracked;
}

void scrub_counts(const struct scrub *sc, unsigned *probes, unsigned *failures)
{
	*probes = sc->probes;
	*failures = sc->failures;
}
