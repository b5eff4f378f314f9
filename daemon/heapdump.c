/*
 * heapdump: turns the console text of Xen's 'H' debug key into the number
 * of pages still waiting to be scrubbed, per NUMA node.  Xen 4.17 prints
 *
 *   (XEN) [   46.915803] 'H' pressed -> dumping heap info (now = 46915703280)
 *   (XEN) [   46.916149] heap[node=0][zone=0] -> 0 pages
 *   ...one line per zone of each node with memory...
 *   (XEN) [   46.925665] Node 0 has 190766 unscrubbed pages
 *
 * with a "Node" line only for nodes whose backlog is not zero, so a dump
 * without one means nothing is pending; the "(XEN)" tag and the timestamp
 * depend on the console settings.  Lines must come from Xen itself: text a
 * guest writes to the console ring is tagged "(dN)" and ignored, so a guest
 * cannot fake a backlog.
 *
 * It does not send the key or read the ring (hv_xen.c does), and it does
 * not know when a dump is complete: Xen prints the whole dump inside the
 * debug-keys hypercall, so text read after that call returns holds all of
 * it.  It also decides nothing about rate limits or which job waits.
 */
#include <string.h>

#include "heapdump.h"

struct cursor {
	const char *p, *end;
};

static void skip_spaces(struct cursor *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t'))
		c->p++;
}

static bool eat(struct cursor *c, const char *lit)
{
	size_t n = strlen(lit);

	if ((size_t)(c->end - c->p) < n || memcmp(c->p, lit, n))
		return false;
	c->p += n;
	return true;
}

static bool eat_u64(struct cursor *c, uint64_t *value)
{
	uint64_t v = 0;
	const char *start = c->p;

	for (; c->p < c->end && *c->p >= '0' && *c->p <= '9'; c->p++) {
		if (v > (UINT64_MAX - (*c->p - '0')) / 10)
			return false;
		v = v * 10 + (*c->p - '0');
	}
	*value = v;
	return c->p > start;
}

static bool at_end(struct cursor *c)
{
	skip_spaces(c);
	return c->p == c->end;
}

/* Step over "(XEN) " and a "[timestamp] ", either of them optional; any
 * other tag stays, so the line will not match. */
static void skip_prefix(struct cursor *c)
{
	const char *close;

	skip_spaces(c);
	if (eat(c, "(XEN)"))
		skip_spaces(c);
	if (c->p < c->end && *c->p == '[') {
		close = memchr(c->p, ']', c->end - c->p);
		if (close) {
			c->p = close + 1;
			skip_spaces(c);
		}
	}
}

static void note_node(struct heapdump *out, uint64_t node)
{
	if (node < HEAPDUMP_MAX_NODES && node + 1 > out->n_nodes)
		out->n_nodes = node + 1;
}

static void reset_dump(struct heapdump *out)
{
	memset(out, 0, sizeof(*out));
	out->seen_dump = true;
}

static void parse_line(const char *line, const char *end, struct heapdump *out)
{
	struct cursor c = { line, end };
	uint64_t node, zone, pages;

	skip_prefix(&c);
	if (c.end - c.p >= 3 && c.p[0] == '\'' && c.p[2] == '\'') {
		c.p += 3;
		if (eat(&c, " pressed -> dumping heap info"))
			reset_dump(out);
		return;
	}
	if (eat(&c, "heap[node=")) {
		if (eat_u64(&c, &node) && eat(&c, "][zone=") && eat_u64(&c, &zone) &&
		    eat(&c, "] -> ") && eat_u64(&c, &pages) && eat(&c, " pages") && at_end(&c))
			note_node(out, node);
		return;
	}
	/* Xen has no node past HEAPDUMP_MAX_NODES: such a line is not its. */
	if (eat(&c, "Node ") && eat_u64(&c, &node) && node < HEAPDUMP_MAX_NODES &&
	    eat(&c, " has ") && eat_u64(&c, &pages) && eat(&c, " unscrubbed pages") && at_end(&c)) {
		/* A dump whose header the ring already dropped still counts. */
		out->seen_dump = true;
		note_node(out, node);
		out->node_pages[node] = pages;
	}
}

/* The total of the nodes, saturating: no figure of Xen's comes near 2^64
 * pages, and a total that wrapped would read as nearly nothing. */
static uint64_t heapdump_sum(const struct heapdump *dump)
{
	uint64_t total = 0;

	for (unsigned n = 0; n < dump->n_nodes; n++)
		total = dump->node_pages[n] > UINT64_MAX - total ? UINT64_MAX : total + dump->node_pages[n];
	return total;
}

int heapdump_parse(const char *text, size_t len, struct heapdump *out)
{
	const char *p = text, *end = text + len, *nl, *line_end;

	memset(out, 0, sizeof(*out));
	/* An unterminated last line may be cut short ("has 19" of "has 190766"),
	 * so only whole lines count. */
	while (p < end && (nl = memchr(p, '\n', end - p))) {
		line_end = nl;
		if (line_end > p && line_end[-1] == '\r')
			line_end--;
		parse_line(p, line_end, out);
		p = nl + 1;
	}
	out->total = heapdump_sum(out);
	return 0;
}

uint64_t heapdump_attribute(uint64_t backlog, uint64_t released_by_job,
			    uint64_t released_by_all)
{
	uint64_t share;

	if (!released_by_job || !backlog)
		return 0;
	/* The job is part of "all"; a caller that lost count gets the cap. */
	if (released_by_all < released_by_job)
		released_by_all = released_by_job;
#ifdef __SIZEOF_INT128__
	share = (unsigned __int128)backlog * released_by_job / released_by_all;
#else
	share = (long double)backlog * released_by_job / released_by_all;
#endif
	return share < released_by_job ? share : released_by_job;
}
