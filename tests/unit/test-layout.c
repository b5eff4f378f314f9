/* Unit tests for daemon/layout.c (domids, times), log.c's log_quote and
 * backoff.c: the small parsers and formulas every other module trusts. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "backoff.h"
#include "layout.h"
#include "log.h"
#include "tap.h"

static void test_parse_time(void)
{
	static const struct { const char *text; int ok; int64_t ms; } cases[] = {
		{ "1700000000.123", 1, 1700000000123LL },
		{ "0.000", 1, 0 },
		{ "5.700", 1, 5700 },
		{ "5.7", 0, 0 },		/* was read as 5.007 s */
		{ "5.70", 0, 0 },
		{ "5.7000", 0, 0 },
		{ "-1.000", 0, 0 },
		{ "+1.000", 0, 0 },
		{ " 1.000", 0, 0 },
		{ "1.000 ", 0, 0 },
		{ "1", 0, 0 },
		{ ".123", 0, 0 },
		{ "253402300799.999", 1, LAYOUT_TIME_MAX_MS },
		{ "253402300800.000", 0, 0 },
		{ "99999999999999999999.000", 0, 0 },	/* was sec * 1000 overflowing */
		{ "9223372036854775807.000", 0, 0 },
	};
	char buf[32];
	int64_t ms;

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		ms = -1;
		int rc = layout_parse_time(cases[i].text, &ms);

		ok(cases[i].ok ? rc == 0 && ms == cases[i].ms : rc == -EINVAL && ms == -1,
		   "time '%s' %s", cases[i].text, cases[i].ok ? "parses" : "is refused");
	}
	layout_format_time(buf, 1700000000005LL);
	is_str(buf, "1700000000.005", "format keeps three digits of ms");
	ok(!layout_parse_time(buf, &ms) && ms == 1700000000005LL, "  and parses back");
}

static void test_parse_domid(void)
{
	static const struct { const char *text; int ok; } cases[] = {
		{ "0", 1 }, { "5", 1 }, { "32751", 1 }, { "32752", 0 }, { "007", 0 },
		{ "", 0 }, { "-1", 0 }, { "1a", 0 }, { "99999999999", 0 },
	};
	uint32_t domid;

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++)
		ok((layout_parse_domid(cases[i].text, &domid) == 0) == cases[i].ok, "domid '%s' %s",
		   cases[i].text, cases[i].ok ? "parses" : "is refused");
}

static void test_log_quote(void)
{
	char buf[LOG_QUOTE_LEN], longer[200];

	is_str(log_quote("plain text", buf), "plain text", "printable text is kept");
	is_str(log_quote("a\n<3>forged", buf), "a\\x0a<3>forged", "a newline cannot forge a journal line");
	is_str(log_quote("back\\slash", buf), "back\\x5cslash", "a backslash is escaped too");
	is_str(log_quote("\xc3\xa4", buf), "\\xc3\\xa4", "bytes past ASCII as \\xNN");
	memset(longer, '\x01', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	log_quote(longer, buf);
	is_int(strlen(buf), 64 * 4 + 3, "long text is cut after 64 characters, escaped, with ...");
}

static void test_backoff(void)
{
	struct backoff b = { 0 };
	int64_t delays[9];

	ok(backoff_due(&b, 0), "a fresh back-off allows a try");
	for (int i = 0; i < 9; i++)
		delays[i] = backoff_fail(&b, 1000);
	ok(delays[0] == 1000 && delays[1] == 2000 && delays[2] == 4000 && delays[5] == 32000,
	   "1 s, doubling per failure in a row");
	ok(delays[6] == 60000 && delays[8] == 60000, "  up to a minute");
	ok(!backoff_due(&b, 60999) && backoff_due(&b, 61000), "not due before the delay");
	is_int(backoff_gate(&b, 5), 61000, "a deadline waits for the back-off");
	is_int(backoff_gate(&b, -1), -1, "  'nothing due' stays so");
	backoff_reset(&b);
	ok(backoff_due(&b, 0) && b.failures == 0, "a success resets it");
}

int main(void)
{
	test_parse_time();
	test_parse_domid();
	test_log_quote();
	test_backoff();
	return tap_done();
}
