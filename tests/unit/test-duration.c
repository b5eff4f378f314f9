/* Unit tests for daemon/duration.c: the units, the refusals, the round trip. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "duration.h"
#include "tap.h"

static void test_parse(void)
{
	static const struct { const char *text; int rc; int64_t ms; } cases[] = {
		{ "500ms", 0, 500 }, { "5s", 0, 5000 }, { "10m", 0, 600000 },
		{ "1h", 0, 3600000 }, { "0s", 0, 0 }, { "0ms", 0, 0 }, { "007s", 0, 7000 },
		{ "9223372036854775807ms", 0, INT64_MAX },
		{ "2562047788015h", 0, 2562047788015LL * 3600000 },
		{ "30", -EINVAL, 0 }, { "", -EINVAL, 0 }, { "s", -EINVAL, 0 },
		{ "-5s", -EINVAL, 0 }, { "+5s", -EINVAL, 0 }, { " 5s", -EINVAL, 0 },
		{ "5 s", -EINVAL, 0 }, { "5s ", -EINVAL, 0 }, { "1.5s", -EINVAL, 0 },
		{ "5S", -EINVAL, 0 }, { "5sec", -EINVAL, 0 }, { "5d", -EINVAL, 0 },
		{ "5us", -EINVAL, 0 }, { "5h5m", -EINVAL, 0 }, { "0x10s", -EINVAL, 0 },
		{ "9223372036854775808ms", -ERANGE, 0 }, { "2562047788016h", -ERANGE, 0 },
		{ "99999999999999999999999s", -ERANGE, 0 },
		{ "99999999999999999999999", -EINVAL, 0 },
		{ "99999999999999999999999x", -EINVAL, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		int64_t ms = -42;
		int rc = duration_parse(cases[i].text, &ms);

		ok(rc == cases[i].rc && ms == (rc ? -42 : cases[i].ms),
		   "'%s' -> %s", cases[i].text,
		   cases[i].rc == -ERANGE ? "ERANGE" : cases[i].rc ? "EINVAL" : "parsed");
	}
}

static void test_format(void)
{
	static const struct { int64_t ms; const char *text; } cases[] = {
		{ 0, "0s" }, { 1, "1ms" }, { 250, "250ms" }, { 1000, "1s" },
		{ 1500, "1500ms" }, { 90000, "90s" }, { 600000, "10m" },
		{ 3600000, "1h" }, { 5400000, "90m" }, { -5, "-5ms" },
		{ INT64_MAX, "9223372036854775807ms" },
	};
	char buf[DURATION_STR_LEN];

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		duration_format(cases[i].ms, buf, sizeof(buf));
		if (!ok(!strcmp(buf, cases[i].text), "%lld ms is %s", (long long)cases[i].ms, cases[i].text))
			printf("#   got '%s'\n", buf);
	}
	duration_format(600000, buf, 3);
	is_str(buf, "10", "truncates to the buffer");
}

static void test_round_trip(void)
{
	static const int64_t values[] = { 0, 1, 999, 1000, 59999, 60000, 3599000, 3600000,
					  86400000, 123456789, INT64_MAX };
	char buf[DURATION_STR_LEN];
	int failed = 0;
	int64_t back;

	for (size_t i = 0; i < sizeof(values) / sizeof(*values); i++) {
		duration_format(values[i], buf, sizeof(buf));
		if (duration_parse(buf, &back) || back != values[i])
			failed++;
	}
	is_int(failed, 0, "format then parse gives the value back");
}

int main(void)
{
	test_parse();
	test_format();
	test_round_trip();
	return tap_done();
}
