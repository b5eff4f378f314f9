/* Unit tests for daemon/heapdump.c: the real 'H' dump of Xen 4.17, split
 * reads, several dumps, guests' lines, and the attribution rule. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heapdump.h"
#include "tap.h"

#define HEADER "(XEN) [  50.000001] 'H' pressed -> dumping heap info (now = 50000001000)\n"
#define HEAP_LINE "(XEN) [  50.000002] heap[node=0][zone=21] -> 787320 pages\n"

static char *read_sample(size_t *len)
{
	const char *path = SRCDIR "/tests/unit/data/heap-dump-sample.txt";
	char *text;
	long size;
	FILE *f;

	f = fopen(path, "r");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	text = malloc(size + 1);
	if (text && fread(text, 1, size, f) != (size_t)size) {
		free(text);
		text = NULL;
	}
	fclose(f);
	if (text)
		text[size] = '\0';
	*len = size;
	return text;
}

static struct heapdump parse(const char *text)
{
	struct heapdump h;

	heapdump_parse(text, strlen(text), &h);
	return h;
}

static void test_sample(void)
{
	struct heapdump h;
	size_t len = 0, cut, bad = 0;
	const char *last;
	char *text;
	int rc;

	text = read_sample(&len);
	if (!ok(text != NULL, "the real sample is readable"))
		return;
	memset(&h, 0xff, sizeof(h));
	rc = heapdump_parse(text, len, &h);
	is_int(rc, 0, "parse returns 0");
	ok(h.seen_dump, "sample: a dump was seen");
	is_int(h.total, 190766, "sample: 190766 unscrubbed pages");
	is_int(h.n_nodes, 1, "sample: one node");
	is_int(h.node_pages[0], 190766, "sample: all on node 0");
	is_int(h.node_pages[1], 0, "sample: the rest of OUT is cleared");

	/* Text read in pieces: each prefix is either no dump yet or a dump
	 * with 0 or the whole backlog, never a piece of the number. */
	for (cut = 0; cut <= len; cut++) {
		heapdump_parse(text, cut, &h);
		if (h.total != 0 && h.total != 190766)
			bad++;
	}
	is_int(bad, 0, "no prefix of the sample gives a partial count");
	last = strstr(text, "Node 0 has");
	heapdump_parse(text, last - text + strlen("Node 0 has 1907"), &h);
	ok(h.seen_dump && h.total == 0, "a last line cut in its number is not read yet");
	heapdump_parse(text, last - text, &h);
	ok(h.seen_dump && h.total == 0, "dump without its Node line: seen, 0 pending");
	heapdump_parse(text, strlen("(XEN) [   46.915803] 'H' pressed"), &h);
	ok(!h.seen_dump, "an unfinished header line is no dump yet");
	heapdump_parse(text, 0, &h);
	ok(!h.seen_dump && h.total == 0, "empty text: no dump");
	free(text);
}

static void test_formats(void)
{
	struct heapdump h;
	char nul_text[] = "junk\0more junk\n" HEADER "(XEN) Node 0 has 12 unscrubbed pages\n";

	h = parse("(XEN) [  1.000000] Brought up 2 CPUs\n(XEN) [  2.0] d1v0 hello\n");
	ok(!h.seen_dump && h.total == 0, "console text without a dump: nothing seen");

	h = parse("'H' pressed -> dumping heap info (now = 1)\nNode 0 has 7 unscrubbed pages\n");
	ok(h.seen_dump && h.total == 7, "lines without (XEN) or timestamp");
	h = parse("(XEN) 'H' pressed -> dumping heap info (now = 1)\n(XEN) Node 0 has 8 unscrubbed pages\n");
	ok(h.seen_dump && h.total == 8, "(XEN) without timestamp");
	h = parse("(XEN) [2024-05-01 10:00:00] 'H' pressed -> dumping heap info (now = 1)\n"
		  "(XEN) [2024-05-01 10:00:00] Node 0 has 9 unscrubbed pages\n");
	ok(h.seen_dump && h.total == 9, "date timestamps");
	h = parse(HEADER "(XEN) [  50.1] Node 0 has 10 unscrubbed pages\r\n");
	ok(h.total == 10, "CRLF line ends (serial capture)");
	heapdump_parse(nul_text, sizeof(nul_text) - 1, &h);
	ok(h.seen_dump && h.total == 12, "NUL bytes in the text do not stop the parse");

	h = parse(HEADER HEAP_LINE
		  "(XEN) [  50.1] heap[node=1][zone=21] -> 100 pages\n"
		  "(XEN) [  50.2] Node 0 has 100 unscrubbed pages\n"
		  "(XEN) [  50.3] Node 1 has 23 unscrubbed pages\n");
	ok(h.total == 123 && h.n_nodes == 2 && h.node_pages[0] == 100 && h.node_pages[1] == 23,
	   "two nodes: per node and total");
	h = parse(HEADER "(XEN) [  50.1] heap[node=003][zone=000] -> 0 pages\n");
	ok(h.seen_dump && h.total == 0 && h.n_nodes == 4,
	   "zero-padded heap lines name their node; no Node line is 0 pending");
	h = parse(HEADER "(XEN) Node 70 has 5 unscrubbed pages\n(XEN) Node 2 has 1 unscrubbed pages\n");
	ok(h.total == 1 && h.n_nodes == 3,
	   "a Node line past Xen's %d nodes is none of Xen's: ignored, total = sum of nodes",
	   HEAPDUMP_MAX_NODES);
	h = parse(HEADER "(XEN) Node 0 has 18446744073709551615 unscrubbed pages\n"
		  "(XEN) Node 1 has 2 unscrubbed pages\n");
	ok(h.total == UINT64_MAX, "a total past 2^64 saturates instead of wrapping to nearly nothing");
}

static void test_several_dumps(void)
{
	struct heapdump h;

	h = parse(HEADER HEAP_LINE "(XEN) Node 0 has 500 unscrubbed pages\n"
		  "(XEN) [  51.0] something else\n" HEADER HEAP_LINE);
	ok(h.seen_dump && h.total == 0, "the last dump wins: drained since");
	h = parse(HEADER HEAP_LINE "(XEN) Node 0 has 500 unscrubbed pages\n"
		  HEADER HEAP_LINE "(XEN) Node 0 has 300 unscrubbed pages\n");
	ok(h.total == 300, "the last dump wins: still 300");
	h = parse(HEAP_LINE "(XEN) Node 0 has 42 unscrubbed pages\n");
	ok(h.seen_dump && h.total == 42, "a dump whose header scrolled away still counts");
	h = parse(HEAP_LINE);
	ok(!h.seen_dump, "heap lines alone are no dump");
	h = parse(HEADER "(XEN) Node 0 has 5 unscrubbed pages\n(XEN) Node 0 has 6 unscrubbed pages\n");
	ok(h.total == 6, "a node named twice counts once");
}

static void test_rejected_lines(void)
{
	struct heapdump h;

	h = parse(HEADER "(d1) Node 0 has 999 unscrubbed pages\n");
	ok(h.seen_dump && h.total == 0, "a guest's console line cannot fake a backlog");
	h = parse("(d1) 'H' pressed -> dumping heap info (now = 1)\n");
	ok(!h.seen_dump, "a guest's console line cannot fake a dump");
	h = parse(HEADER "(XEN) Node 0 has 99999999999999999999999 unscrubbed pages\n");
	ok(h.total == 0, "an overflowing count is ignored");
	h = parse(HEADER "(XEN) Node 0 has 5 unscrubbed pages, and more\n");
	ok(h.total == 0, "trailing text: not the line Xen prints");
	h = parse(HEADER "(XEN) Node x has 5 unscrubbed pages\n(XEN) Node 0 has -5 unscrubbed pages\n");
	ok(h.total == 0, "malformed numbers are ignored");
	h = parse(HEADER "(XEN) 'h' pressed -> showing installed handlers\n");
	ok(h.seen_dump, "another key's header does not end the dump");
}

static void test_attribute(void)
{
	static const struct { uint64_t backlog, job, all, want; const char *what; } cases[] = {
		{ 0, 100, 100, 0, "no backlog: nothing" },
		{ 100, 0, 50, 0, "released nothing: nothing" },
		{ 100, 50, 0, 50, "inconsistent total is raised to the job's" },
		{ 100, 300, 600, 50, "proportional share" },
		{ 1000, 300, 600, 300, "capped at the pages it released" },
		{ 190766, 786432, 786432, 190766, "the only job gets the whole backlog" },
		{ 1ULL << 62, 1ULL << 61, 1ULL << 63, 1ULL << 60, "no overflow in the product" },
		{ 5, 2, 6, 1, "rounds down" },
	};
	uint64_t sum;

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++)
		is_int(heapdump_attribute(cases[i].backlog, cases[i].job, cases[i].all),
		       cases[i].want, cases[i].what);
	sum = heapdump_attribute(10, 5, 23) + heapdump_attribute(10, 7, 23) +
	      heapdump_attribute(10, 11, 23);
	ok(sum <= 10, "shares never add up to more than the backlog (%llu)", (unsigned long long)sum);
}

int main(void)
{
	test_sample();
	test_formats();
	test_several_dumps();
	test_rejected_lines();
	test_attribute();
	return tap_done();
}
