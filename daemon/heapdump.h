/*
 * heapdump: the scrub backlog as Xen 4.17 prints it for debug key 'H'
 * (physinfo.scrub_pages is always 0 there), read back from the console ring.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Xen's MAX_NUMNODES on x86. */
#define HEAPDUMP_MAX_NODES 64

struct heapdump {
	uint64_t total;		/* unscrubbed pages, all nodes (saturating sum) */
	unsigned n_nodes;	/* 1 + highest node the dump named, at most HEAPDUMP_MAX_NODES */
	uint64_t node_pages[HEAPDUMP_MAX_NODES];	/* unscrubbed pages per node */
	bool seen_dump;		/* the text holds a dump; if not, the rest means nothing */
};

/* Parse the last heap dump in TEXT (LEN bytes, the whole text read from the
 * console ring so far, NULs allowed).  A dump without an "unscrubbed" line
 * means nothing pending.  Lines from guests and an unterminated last line
 * are ignored.  Fills OUT completely; always 0. */
int heapdump_parse(const char *text, size_t len, struct heapdump *out);
/* The part of BACKLOG a job accounts for: its share of the pages released
 * by every recent teardown (RELEASED_BY_ALL), never more than the
 * RELEASED_BY_JOB it released itself; 0 if nothing was released.  Rounds
 * down, so the shares of jobs never add up to more than BACKLOG. */
uint64_t heapdump_attribute(uint64_t backlog, uint64_t released_by_job,
			    uint64_t released_by_all);
