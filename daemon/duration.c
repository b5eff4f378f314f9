/*
 * duration: reads and writes the spans used in the policy file.  Units are
 * mandatory because the keys mix scales (milliseconds for sampling, minutes
 * for retention) and a bare "30" would be a guess.  It accepts only whole
 * numbers and one unit, with no spaces, signs or fractions, so a value
 * means one thing; it does not know which spans a key allows (config.c
 * does).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "duration.h"

static const struct {
	const char *name;
	int64_t ms;
} duration_units[] = {
	/* Largest first: duration_format() takes the first that divides. */
	{ "h", 3600 * 1000 }, { "m", 60 * 1000 }, { "s", 1000 }, { "ms", 1 },
};

#define N_UNITS (sizeof(duration_units) / sizeof(*duration_units))

int duration_parse(const char *text, int64_t *ms)
{
	const char *p = text;
	int64_t count = 0;
	size_t i;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (count > (INT64_MAX - (*p - '0')) / 10) {
			/* Still garbage if what follows is not a unit. */
			while (*p >= '0' && *p <= '9')
				p++;
			for (i = 0; i < N_UNITS; i++)
				if (!strcmp(p, duration_units[i].name))
					return -ERANGE;
			return -EINVAL;
		}
		count = count * 10 + (*p - '0');
	}
	for (i = 0; i < N_UNITS; i++) {
		if (strcmp(p, duration_units[i].name))
			continue;
		if (count > INT64_MAX / duration_units[i].ms)
			return -ERANGE;
		*ms = count * duration_units[i].ms;
		return 0;
	}
	return -EINVAL;
}

void duration_format(int64_t ms, char *buf, size_t len)
{
	size_t i;

	if (ms == 0) {
		snprintf(buf, len, "0s");
		return;
	}
	if (ms < 0) {
		/* Only reachable by a caller's arithmetic; keep it exact. */
		snprintf(buf, len, "%" PRId64 "ms", ms);
		return;
	}
	for (i = 0; i < N_UNITS - 1; i++)
		if (ms % duration_units[i].ms == 0)
			break;
	snprintf(buf, len, "%" PRId64 "%s", ms / duration_units[i].ms, duration_units[i].name);
}
