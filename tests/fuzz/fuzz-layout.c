/*
 * fuzz-layout: libFuzzer on the value formats of the xenstore layout that
 * the daemon reads back from text: domids in node names
 * (layout_parse_domid), times in job nodes (layout_parse_time) and domain
 * UUIDs in requests and job nodes (hv_uuid_parse).  The input, as a string,
 * goes to each parser; what a parser accepts must mean what it says: a
 * domid exactly as "%u" prints it, a time as the decimal seconds it reads
 * as (leading zeros or spaces do no harm, "1.5" read as 1.005 s does), a
 * UUID as its canonical text in either case.  The input's bytes, as numbers, also go the other way:
 * formatted, then parsed back to the same value.
 *
 * It does not touch xenstore or build paths.
 */
#include <ctype.h>
#include <inttypes.h>

#include "fuzz.h"
#include "hv.h"
#include "layout.h"

static void check_domid(const char *text)
{
	char again[16];
	uint32_t domid;

	if (layout_parse_domid(text, &domid))
		return;
	fuzz_check(domid <= LAYOUT_DOMID_MAX, "domid '%s' read as %" PRIu32 ", past %u", text, domid,
		   LAYOUT_DOMID_MAX);
	snprintf(again, sizeof(again), "%" PRIu32, domid);
	fuzz_check(!strcmp(text, again), "domid '%s' read as %s", text, again);
}

/* What TEXT means as seconds with at most three decimals, in ms; -1 if it
 * is not such a number (or does not fit). */
static int64_t decimal_ms(const char *text)
{
	const char *p = text;
	int64_t sec = 0, frac = 0;
	int digits = 0;

	while (isspace((unsigned char)*p))
		p++;
	if (*p == '+' || *p == '-')
		p++;
	if (!isdigit((unsigned char)*p))
		return -1;
	for (; isdigit((unsigned char)*p); p++) {
		if (sec > ((INT64_MAX - 999) / 1000 - (*p - '0')) / 10)
			return -1;
		sec = sec * 10 + (*p - '0');
	}
	if (*p++ != '.')
		return -1;
	for (; isdigit((unsigned char)*p) && digits < 3; p++, digits++)
		frac = frac * 10 + (*p - '0');
	if (!digits || *p)
		return -1;
	for (; digits < 3; digits++)
		frac *= 10;
	if (text[strspn(text, " \t\n\v\f\r")] == '-' && (sec || frac))
		return -1;
	return sec * 1000 + frac;
}

/* An accepted time means what it says (layout_format_time() writes
 * "seconds.milliseconds"; a reader must not take "1.5" for 1.005 s). */
static void check_time(const char *text)
{
	char again[32];
	int64_t ms, back;

	if (layout_parse_time(text, &ms))
		return;
	fuzz_check(ms >= 0 && ms <= LAYOUT_TIME_MAX_MS, "time '%s' read as %" PRId64 " ms", text, ms);
	fuzz_check(decimal_ms(text) == ms, "time '%s' read as %" PRId64 " ms", text, ms);
	layout_format_time(again, ms);
	fuzz_check(layout_parse_time(again, &back) == 0 && back == ms,
		   "time %" PRId64 " ms, written '%s', does not read back", ms, again);
}

static void check_uuid(const char *text)
{
	char again[HV_UUID_STR_LEN];
	uint8_t uuid[HV_UUID_LEN];

	if (hv_uuid_parse(text, uuid))
		return;
	hv_uuid_format(uuid, again);
	fuzz_check(strlen(text) == HV_UUID_STR_LEN - 1, "UUID '%s' accepted", text);
	for (size_t i = 0; i < HV_UUID_STR_LEN - 1; i++)
		fuzz_check(tolower((unsigned char)text[i]) == again[i], "UUID '%s' read as %s", text, again);
}

/* Values taken from the input's bytes: formatted, then parsed back. */
static void check_values(const uint8_t *data, size_t size)
{
	uint8_t uuid[HV_UUID_LEN] = { 0 }, back[HV_UUID_LEN];
	char text[HV_UUID_STR_LEN], time_text[32];
	uint64_t raw = 0;
	uint32_t domid;
	int64_t ms;

	memcpy(uuid, data, size < HV_UUID_LEN ? size : HV_UUID_LEN);
	hv_uuid_format(uuid, text);
	fuzz_check(hv_uuid_parse(text, back) == 0 && !memcmp(uuid, back, HV_UUID_LEN),
		   "UUID %s does not read back", text);
	if (size >= HV_UUID_LEN + 8)
		memcpy(&raw, data + HV_UUID_LEN, 8);
	/* Every time a node may carry: from the epoch to the end of year 9999. */
	layout_format_time(time_text, (int64_t)(raw % (LAYOUT_TIME_MAX_MS + 1)));
	fuzz_check(layout_parse_time(time_text, &ms) == 0 &&
		   ms == (int64_t)(raw % (LAYOUT_TIME_MAX_MS + 1)),
		   "time %" PRId64 " ms, written '%s', does not read back",
		   (int64_t)(raw % (LAYOUT_TIME_MAX_MS + 1)), time_text);
	snprintf(text, sizeof(text), "%" PRIu32, (uint32_t)(raw % (LAYOUT_DOMID_MAX + 1)));
	fuzz_check(layout_parse_domid(text, &domid) == 0 && domid == raw % (LAYOUT_DOMID_MAX + 1),
		   "domid %s does not read back", text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_string(data, size);

	check_domid(text);
	check_time(text);
	check_uuid(text);
	free(text);
	check_values(data, size);
	return 0;
}
