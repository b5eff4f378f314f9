/*
 * cli-target: the xenreaper CLI's fallback when DOMAIN is no longer a
 * running domain: the job that remembers it.  DOMAIN is read the way xl
 * and libxenreaper read it.  This file only chooses among jobs it is
 * given; it reads nothing from xenstore and prints nothing.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "cli-target.h"
#include "lookup.h"

/* xenreaper_state_is_final(), which this file does not call so that
 * unit tests need not link libxenreaper. */
static bool cli_target_final(enum xenreaper_state state)
{
	return state == XENREAPER_STATE_DONE || state == XENREAPER_STATE_FAILED;
}

/* Whether CANDIDATE should replace BEST as the job DOMAIN means. */
static bool cli_target_better(const struct xenreaper_status *candidate,
			      const struct xenreaper_status *best)
{
	bool cand_final = cli_target_final(candidate->state);
	bool best_final = cli_target_final(best->state);

	if (cand_final != best_final)
		return best_final;
	return candidate->requested_ms > best->requested_ms;
}

int cli_target_pick(const char *domain, const struct xenreaper_status *jobs, size_t n)
{
	uint32_t domid = 0;
	bool by_id;
	int best = -ESRCH, rc;

	/* xl's rule, shared with libxenreaper: "2fast" is a name, "007" is
	 * domain 7, and digits past the last domid name no job. */
	by_id = lookup_is_domid(domain);
	rc = by_id ? lookup_parse_domid(domain, &domid) : 0;
	if (rc)
		return -ESRCH;
	for (size_t i = 0; i < n; i++) {
		const struct xenreaper_status *st = &jobs[i];

		if (by_id ? st->domid != domid : strcmp(st->name, domain))
			continue;
		if (best < 0 || cli_target_better(st, &jobs[best]))
			best = i;
	}
	return best;
}
