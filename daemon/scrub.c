/*
 * scrub: decides when to ask the hypervisor for the scrub backlog and what
 * each job's share of it is.  The probe is not free (on Xen 4.17 it is a
 * heap dump of ~40 console lines per NUMA node), so it runs only while a
 * finished teardown's pages may still be pending, and never more often
 * than the configured interval.  A job's share is its proportional part of
 * the backlog among the teardowns counted since the backlog was last zero,
 * capped at what it released: pages freed by anyone else are in the
 * backlog too, and are never pinned on a job.  It does not decide job
 * states; reaper.c turns "share reached 0" into done for sync jobs.
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
	int64_t last_probe_mono;	/* 0: never */
	unsigned tracked;		/* jobs whose pages may be pending */
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

void scrub_configure(struct scrub *sc, unsigned sources, int64_t interval_ms)
{
	sc->sources = sources;
	sc->interval_ms = interval_ms;
}

void scrub_track(struct scrub *sc, struct job *job)
{
	if (job->scrub_tracked)
		return;
	job->scrub_tracked = true;
	sc->tracked++;
}

void scrub_untrack(struct scrub *sc, struct job *job)
{
	if (!job->scrub_tracked)
		return;
	job->scrub_tracked = false;
	sc->tracked--;
}

int64_t scrub_next_probe(const struct scrub *sc)
{
	if (!sc->tracked)
		return -1;
	/* Possibly in the past: "now" read here would be later than the
	 * caller's, and a probe due "now" would never be due for it. */
	return sc->last_probe_mono ? sc->last_probe_mono + sc->interval_ms : 0;
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

static int scrub_publish(struct scrub *sc, const struct hv_scrub *reading)
{
	char path[LAYOUT_PATH_LEN], when[32];
	int rc;

	rc = store_write(sc->store, STORE_TX_NONE, LAYOUT_SCRUB_DIR "/source",
			 scrub_source_name(reading ? reading->source : HV_SCRUB_NONE));
	if (rc)
		return rc;
	layout_format_time(when, clock_wall_ms());
	rc = store_write(sc->store, STORE_TX_NONE, LAYOUT_SCRUB_DIR "/probed", when);
	if (rc)
		return rc;
	/* No figure: say so by its absence rather than publish a guess. */
	if (!reading) {
		sc->published_nodes = 0;
		rc = store_rm(sc->store, STORE_TX_NONE, LAYOUT_SCRUB_DIR "/pages");
		return rc ? rc : store_rm(sc->store, STORE_TX_NONE, LAYOUT_SCRUB_DIR "/node");
	}
	rc = store_writef(sc->store, STORE_TX_NONE, LAYOUT_SCRUB_DIR "/pages", "%" PRIu64,
			  reading->pages);
	if (!rc && reading->n_nodes != sc->published_nodes)
		rc = store_rm(sc->store, STORE_TX_NONE, LAYOUT_SCRUB_DIR "/node");
	sc->published_nodes = reading->n_nodes;
	for (unsigned n = 0; !rc && n < reading->n_nodes; n++) {
		snprintf(path, sizeof(path), LAYOUT_SCRUB_DIR "/node/%u", n);
		rc = store_writef(sc->store, STORE_TX_NONE, path, "%" PRIu64, reading->node_pages[n]);
	}
	return rc;
}

int scrub_publish_none(struct scrub *sc)
{
	return scrub_publish(sc, NULL);
}

int scrub_probe(struct scrub *sc, struct job *jobs, bool *figure)
{
	struct hv_scrub reading;
	uint64_t released = 0;
	int rc;

	sc->last_probe_mono = clock_mono_ms();
	rc = sc->sources ? hv_scrub_probe(sc->hv, sc->sources, &reading) : -ENODATA;
	if (rc && rc != -ENODATA)
		return rc;
	*figure = rc == 0;
	if (!*figure) {
		if (sc->last_source != HV_SCRUB_NONE || !sc->last_probe_mono)
			log_warning("no scrub backlog figure available: sync jobs end at pages returned");
		sc->last_source = HV_SCRUB_NONE;
		for (struct job *job = jobs; job; job = job->next) {
			job->scrub_pages = 0;
			scrub_untrack(sc, job);
		}
		return scrub_publish(sc, NULL);
	}
	sc->last_source = reading.source;
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
	log_debug("scrub backlog %" PRIu64 " pages (%s), %u job(s) accounted", reading.pages,
		  scrub_source_name(reading.source), sc->tracked);
	return scrub_publish(sc, &reading);
}
