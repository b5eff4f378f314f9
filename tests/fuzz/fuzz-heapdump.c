/*
 * fuzz-heapdump: libFuzzer on heapdump_parse(), fed the input as console
 * ring text (NULs and all).  Beyond surviving it, it checks heapdump.h's
 * contract on what comes out:
 *
 *   - total is the sum of the per-node figures, exactly (no node counted
 *     twice or left out, no wrap-around);
 *   - n_nodes is at most HEAPDUMP_MAX_NODES and no node at or past it has
 *     pages;
 *   - no backlog without a dump: seen_dump false means total 0;
 *   - only whole lines count: the text cut after its last newline parses
 *     the same;
 *   - lines a guest wrote ("(dN)") change nothing: the text with every
 *     line tagged "(XEN)" retagged "(d1)" parses as if those lines were
 *     absent.
 *
 * It does not read a console ring or decide anything about scrubbing.
 */
#include "fuzz.h"
#include "heapdump.h"

static void check_contract(const struct heapdump *d, const char *what)
{
	unsigned __int128 sum = 0;

	fuzz_check(d->n_nodes <= HEAPDUMP_MAX_NODES, "%s: n_nodes %u", what, d->n_nodes);
	for (unsigned i = 0; i < HEAPDUMP_MAX_NODES; i++) {
		sum += d->node_pages[i];
		fuzz_check(i < d->n_nodes || d->node_pages[i] == 0,
			   "%s: node %u has %llu pages but n_nodes is %u", what, i,
			   (unsigned long long)d->node_pages[i], d->n_nodes);
	}
	fuzz_check(sum == d->total, "%s: total %llu is not the sum of the nodes' pages (%s%llu)",
		   what, (unsigned long long)d->total, sum > UINT64_MAX ? "2^64 + " : "",
		   (unsigned long long)sum);
	fuzz_check(d->seen_dump || d->total == 0, "%s: a backlog of %llu pages without a dump",
		   what, (unsigned long long)d->total);
}

static int same(const struct heapdump *a, const struct heapdump *b)
{
	return a->total == b->total && a->n_nodes == b->n_nodes && a->seen_dump == b->seen_dump &&
	       !memcmp(a->node_pages, b->node_pages, sizeof(a->node_pages));
}

/* TEXT with every line that starts with "(XEN)" turned into a guest's
 * "(d1)" line (GUEST), or dropped (DROPPED). */
static void as_guest(const char *text, size_t len, char **guest, size_t *guest_len,
		     char **dropped, size_t *dropped_len)
{
	char *g = malloc(len + 1), *d = malloc(len + 1);
	size_t i = 0;

	if (!g || !d)
		abort();
	*guest = g;
	*dropped = d;
	while (i < len) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t line = nl ? (size_t)(nl - (text + i)) + 1 : len - i;

		if (line >= 5 && !memcmp(text + i, "(XEN)", 5)) {
			memcpy(g, "(d1)", 4);
			memcpy(g + 4, text + i + 5, line - 5);
			g += line - 1;
		} else {
			memcpy(g, text + i, line);
			memcpy(d, text + i, line);
			g += line;
			d += line;
		}
		i += line;
	}
	*guest_len = g - *guest;
	*dropped_len = d - *dropped;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct heapdump dump, again, without;
	size_t whole = size, guest_len, dropped_len;
	char *guest, *dropped;

	fuzz_check(heapdump_parse(text, size, &dump) == 0, "heapdump_parse failed");
	check_contract(&dump, "input");

	while (whole && text[whole - 1] != '\n')
		whole--;
	heapdump_parse(text, whole, &again);
	fuzz_check(same(&dump, &again), "an unterminated last line changed the figures");

	as_guest(text, size, &guest, &guest_len, &dropped, &dropped_len);
	heapdump_parse(guest, guest_len, &again);
	heapdump_parse(dropped, dropped_len, &without);
	fuzz_check(same(&again, &without), "lines a guest wrote changed the figures "
		   "(total %llu with them, %llu without)", (unsigned long long)again.total,
		   (unsigned long long)without.total);
	free(guest);
	free(dropped);
	return 0;
}
