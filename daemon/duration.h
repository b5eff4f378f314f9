/* duration: the time spans of the policy file, "500ms", "5s", "10m", "1h". */
#pragma once
#include <stddef.h>
#include <stdint.h>

/* Room for any duration_format() result, NUL included. */
#define DURATION_STR_LEN 24

/* What a duration looks like, for "expected ..." messages. */
#define DURATION_HINT "a whole number with a unit ms, s, m or h (e.g. 500ms, 5s, 10m, 1h)"

/* Parse digits followed by exactly one unit (ms, s, m, h) into milliseconds.
 * A bare number, a sign, spaces or any other text is -EINVAL; a span beyond
 * INT64_MAX ms is -ERANGE.  *MS is untouched on error. */
int duration_parse(const char *text, int64_t *ms);
/* The shortest exact text for MS that duration_parse() reads back: the
 * largest unit dividing it ("1h", "90s", "250ms"; 0 is "0s").  Negative
 * spans (not parseable) are printed as "-Nms".  Truncates to LEN. */
void duration_format(int64_t ms, char *buf, size_t len);
