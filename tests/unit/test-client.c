/* Unit tests for the clients' pure logic: the xl front's argument
 * classifier and its choice of the real xl (in a fake root), the CLI's
 * choice of job, progress formatting (rate, ETA, lines), the daemon-down
 * bound, seconds parsing and JSON escaping.  No Xen needed. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli-target.h"
#include "progress.h"
#include "tap.h"
#include "xl-front-args.h"
#include "xl-front-real.h"

/* Split LINE at spaces and classify it; A->domain points into a static
 * copy, valid until the next call. */
static int parse(struct xl_front_args *a, const char *line)
{
	static char copy[256];
	char *argv[32], *save = NULL;
	int argc = 0;

	snprintf(copy, sizeof(copy), "%s", line);
	for (char *w = strtok_r(copy, " ", &save); w && argc < 31; w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	argv[argc] = NULL;
	return xl_front_parse(argc, argv, a);
}

static void test_front_parse(void)
{
	static const struct {
		const char *line;
		enum xl_front_mode mode;
		int wait;
		const char *domain;
	} cases[] = {
		{ "xl", XL_FRONT_PASS, 0, NULL },
		{ "xl list", XL_FRONT_PASS, 0, NULL },
		{ "xl destroy 5", XL_FRONT_PASS, 0, NULL },
		{ "xl destroy -f 5", XL_FRONT_PASS, 0, NULL },
		{ "xl destroy --wait 5", XL_FRONT_PASS, 0, NULL },
		{ "xl create -a guest.cfg", XL_FRONT_CREATE, 0, NULL },
		{ "xl cr guest.cfg", XL_FRONT_CREATE, 0, NULL },
		{ "xl -v create guest.cfg", XL_FRONT_CREATE, 0, NULL },
		{ "xl -N create guest.cfg", XL_FRONT_PASS, 0, NULL },
		{ "xl -vN create guest.cfg", XL_FRONT_PASS, 0, NULL },
		{ "xl c guest.cfg", XL_FRONT_PASS, 0, NULL },
		{ "xl createx guest.cfg", XL_FRONT_PASS, 0, NULL },
		{ "xl cpupool-create p.cfg", XL_FRONT_PASS, 0, NULL },
		{ "xl -- create guest.cfg", XL_FRONT_CREATE, 0, NULL },
		{ "xl des --async 5", XL_FRONT_ASYNC, 0, "5" },
		{ "xl de --async 5", XL_FRONT_PASS, 0, NULL },
		{ "xl -T destroy --async 5", XL_FRONT_ASYNC, 0, "5" },
		{ "xl -N destroy --async 5", XL_FRONT_PASS, 0, NULL },
		{ "xl --bogus destroy --async 5", XL_FRONT_PASS, 0, NULL },
		{ "xl destroy -- --async", XL_FRONT_PASS, 0, NULL },
		{ "xl destroy --async 5", XL_FRONT_ASYNC, 0, "5" },
		{ "xl destroy -a guest", XL_FRONT_ASYNC, 0, "guest" },
		{ "xl destroy --async --wait 5", XL_FRONT_ASYNC, 1, "5" },
		{ "xl destroy 5 --async -w", XL_FRONT_ASYNC, 1, "5" },
		{ "xl destroy -afw guest", XL_FRONT_ASYNC, 1, "guest" },
		{ "xl -v destroy --async -f 7", XL_FRONT_ASYNC, 0, "7" },
		{ "xl -vf -t destroy -a 7", XL_FRONT_ASYNC, 0, "7" },
		{ "xl destroy --async -- -odd-name", XL_FRONT_ASYNC, 0, "-odd-name" },
		{ "xl destroy --async --help", XL_FRONT_HELP, 0, NULL },
		{ "xl destroy -ah", XL_FRONT_HELP, 0, NULL },
		{ "xl destroy --async", XL_FRONT_USAGE, 0, NULL },
		{ "xl destroy --async 5 6", XL_FRONT_USAGE, 0, NULL },
		{ "xl destroy --async --force 5", XL_FRONT_USAGE, 0, NULL },
		{ "xl destroy -ax 5", XL_FRONT_USAGE, 0, NULL },
		{ "xl destroy --async=yes -a 5", XL_FRONT_USAGE, 0, NULL },
	};
	struct xl_front_args a;

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		int rc = parse(&a, cases[i].line);

		ok(a.mode == cases[i].mode && (rc == 0) == (cases[i].mode != XL_FRONT_USAGE) &&
		   (cases[i].mode != XL_FRONT_ASYNC || (a.wait == cases[i].wait &&
		    a.domain && !strcmp(a.domain, cases[i].domain))),
		   "front: '%s' -> mode %d (got %d, wait %d, domain %s)", cases[i].line,
		   cases[i].mode, a.mode, a.wait, a.domain ? a.domain : "-");
	}
	parse(&a, "xl destroy --async --force 5");
	ok(strstr(a.error, "'--force'") && strstr(a.error, "--async"),
	   "front: the usage error names the option and what is accepted: %s", a.error);
	parse(&a, "xl destroy -ax 5");
	ok(strstr(a.error, "'-x'"), "front: a bad short option is named: %s", a.error);
	parse(&a, "xl destroy --async");
	ok(strstr(a.error, "DOMAIN"), "front: a missing DOMAIN is said so: %s", a.error);
	parse(&a, "xl -v destroy --async -f 7");
	ok(a.verbose && a.force, "front: -v and -f are noted");
	parse(&a, "xl -v -t create guest.cfg");
	is_int(a.command, 3, "front: create's word is found after the global options");
}

static void test_rate_eta(void)
{
	char buf[64];

	progress_format_rate(buf, sizeof(buf), -1);
	is_str(buf, "-- MiB/s", "rate unknown");
	progress_format_rate(buf, sizeof(buf), 0);
	is_str(buf, "0.0 MiB/s", "rate zero");
	progress_format_rate(buf, sizeof(buf), 256 * 2.5);
	is_str(buf, "2.5 MiB/s", "rate below 10 MiB/s has a decimal");
	progress_format_rate(buf, sizeof(buf), 256 * 812);
	is_str(buf, "812 MiB/s", "rate in MiB/s");
	progress_format_rate(buf, sizeof(buf), 256 * 1024 * 1.5);
	is_str(buf, "1.5 GiB/s", "rate in GiB/s");

	progress_format_eta(buf, sizeof(buf), -1);
	is_str(buf, "--", "ETA unknown");
	progress_format_eta(buf, sizeof(buf), 0.2);
	is_str(buf, "0s", "ETA under a second");
	progress_format_eta(buf, sizeof(buf), 42.4);
	is_str(buf, "42s", "ETA in seconds");
	progress_format_eta(buf, sizeof(buf), 185);
	is_str(buf, "3m05s", "ETA in minutes");
	progress_format_eta(buf, sizeof(buf), 2 * 3600 + 7 * 60 + 30);
	is_str(buf, "2h07m", "ETA in hours");
	progress_format_eta(buf, sizeof(buf), 1e9);
	is_str(buf, "--", "absurd ETA");

	is_int(progress_mib(0), 0, "0 pages = 0 MiB");
	is_int(progress_mib(256), 1, "256 pages = 1 MiB");
	is_int(progress_mib(1048576), 4096, "4 GiB of pages");
}

static struct xenreaper_status status(enum xenreaper_state state, uint64_t total, uint64_t left)
{
	struct xenreaper_status st;

	memset(&st, 0, sizeof(st));
	st.domid = 5;
	st.state = state;
	snprintf(st.state_name, sizeof(st.state_name), "%s",
		 state == XENREAPER_STATE_DESTROYING ? "destroying" :
		 state == XENREAPER_STATE_SCRUBBING ? "scrubbing" :
		 state == XENREAPER_STATE_DONE ? "done" :
		 state == XENREAPER_STATE_FAILED ? "failed" :
		 state == XENREAPER_STATE_REQUESTED ? "requested" : "queued");
	st.pages_total = total;
	st.pages_left = left;
	st.progress = total ? (total - left) * 100 / total : 0;
	st.rate_mib_s = -1;	/* as libxenreaper reads a job that publishes none */
	st.eta_s = -1;
	st.daemon_running = 1;
	return st;
}

static void test_lines(void)
{
	struct xenreaper_status st;
	struct progress p;
	char line[256];
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	/* Plain: the brief's format, at most once a second, only on change. */
	progress_init(&p, out, false, 5, "guest");
	st = status(XENREAPER_STATE_DESTROYING, 1048576, 1048576 - 440402);
	progress_format_line(&p, &st, 0, line, sizeof(line));
	is_str(line, "domain 5: destroying 42% (2376 MiB left)",
	       "plain destroying line, before xenreaperd publishes a rate");
	st.rate_mib_s = 812.4;
	st.eta_s = 3;
	progress_format_line(&p, &st, 0, line, sizeof(line));
	is_str(line, "domain 5: destroying 42% (2376 MiB left, 812 MiB/s, ETA 3s)",
	       "plain destroying line with the published rate and time left");
	st.rate_mib_s = 0.0;
	st.eta_s = -1;
	st.stalled = 1;
	progress_format_line(&p, &st, 0, line, sizeof(line));
	is_str(line, "domain 5: destroying 42% (2376 MiB left, 0.0 MiB/s, stalled)",
	       "plain line: a stalled teardown says so, with no time left");
	st.stalled = 0;
	st.rate_mib_s = -1;
	is_int(progress_update(&p, &st, 1000), 0, "update");
	st.pages_left -= 2560;
	st.progress = 42;
	progress_update(&p, &st, 1500);	/* too soon: not printed */
	progress_update(&p, &st, 2100);	/* printed */
	progress_update(&p, &st, 3200);	/* unchanged: not printed */
	fflush(out);
	is_str(text, "domain 5: destroying 42% (2376 MiB left)\n"
		     "domain 5: destroying 42% (2366 MiB left)\n", "plain lines are rate-limited");
	ok(progress_rate(&p) < 0, "no rate of its own is measured while destroying");

	st = status(XENREAPER_STATE_SCRUBBING, 1048576, 0);
	st.scrub_pages = 256 * 100;
	progress_format_line(&p, &st, 0, line, sizeof(line));
	is_str(line, "domain 5: scrubbing (100 MiB left to scrub)", "plain scrubbing line");
	st = status(XENREAPER_STATE_REQUESTED, 0, 0);
	st.daemon_running = 0;
	progress_update(&p, &st, 5000);
	progress_format_line(&p, &st, 5000, line, sizeof(line));
	is_str(line, "domain 5: requested (waiting for xenreaperd to take it); xenreaperd is not running",
	       "plain line says the daemon is down");

	/* TTY: a bar with the rate and ETA xenreaperd published with it. */
	progress_init(&p, out, true, 5, NULL);
	p.columns = 200;
	st = status(XENREAPER_STATE_DESTROYING, 1048576, 524288);
	progress_update(&p, &st, 0);
	st.pages_left -= 256 * 100;
	st.progress = 52;
	st.rate_mib_s = 100;
	st.eta_s = 19;
	progress_update(&p, &st, 1000);
	progress_format_line(&p, &st, 1000, line, sizeof(line));
	is_str(line, "domain 5: destroying [=======>        ]  52%  2148/4096 MiB  100 MiB/s  ETA 19s",
	       "tty bar: released/total, rate, ETA");
	st.rate_mib_s = 0.4;
	st.eta_s = -1;
	st.stalled = 1;
	progress_format_line(&p, &st, 1000, line, sizeof(line));
	is_str(line, "domain 5: destroying [=======>        ]  52%  2148/4096 MiB  0.4 MiB/s  stalled",
	       "tty bar: stalled instead of a time that will not come");
	/* One line, one reading: a status without figures shows none, even
	 * after readings that had them. */
	st.stalled = 0;
	st.rate_mib_s = -1;
	progress_format_line(&p, &st, 1000, line, sizeof(line));
	is_str(line, "domain 5: destroying [=======>        ]  52%  2148/4096 MiB  -- MiB/s  ETA --",
	       "tty bar: nothing carried over from an earlier reading");
	st = status(XENREAPER_STATE_SCRUBBING, 1048576, 0);
	st.scrub_pages = 256 * 400;
	progress_update(&p, &st, 2000);
	st.scrub_pages = 256 * 300;
	progress_update(&p, &st, 3000);
	progress_format_line(&p, &st, 3000, line, sizeof(line));
	is_str(line, "domain 5: scrubbing  [===>            ]  25%  300 MiB to scrub  100 MiB/s  ETA 3s",
	       "tty scrubbing phase has its own rate");
	p.columns = 40;
	progress_format_line(&p, &st, 3000, line, sizeof(line));
	is_int(strlen(line), 39, "tty lines are cut to the terminal width");

	fclose(out);
	free(text);
}

static void test_daemon_limit(void)
{
	struct xenreaper_status st = status(XENREAPER_STATE_REQUESTED, 0, 0);
	volatile sig_atomic_t stop = 0;
	struct progress p;
	FILE *out = fopen("/dev/null", "w");
	int64_t ms;

	progress_init(&p, out, true, 5, "guest");
	p.daemon_limit_ms = 10000;
	p.interrupted = &stop;
	st.daemon_running = 0;
	is_int(progress_update(&p, &st, 100), 0, "daemon down: keep waiting at first");
	is_int(progress_update(&p, &st, 9000), 0, "daemon down: still within the bound");
	st.daemon_running = 1;
	is_int(progress_update(&p, &st, 12000), 0, "daemon back: the count restarts");
	st.daemon_running = 0;
	is_int(progress_update(&p, &st, 13000), 0, "daemon down again");
	is_int(progress_update(&p, &st, 23000), -EHOSTDOWN, "daemon down for the bound: give up");
	p.quiet = true;		/* the final sentences would only clutter the log */
	is_int(progress_finish(&p, -EHOSTDOWN, ""), PROGRESS_EXIT_DAEMON, "which exits 3");
	stop = 1;
	is_int(progress_update(&p, &st, 23100), -EINTR, "interrupted");
	is_int(progress_finish(&p, -EINTR, ""), PROGRESS_EXIT_INTERRUPTED, "which exits 130");
	is_int(progress_finish(&p, 0, ""), PROGRESS_EXIT_OK, "done exits 0");
	is_int(progress_finish(&p, -EIO, ""), PROGRESS_EXIT_FAILED, "failed exits 1");
	is_int(progress_finish(&p, -ETIMEDOUT, ""), PROGRESS_EXIT_DAEMON, "timeout exits 3");
	is_int(progress_finish(&p, -ENOENT, "no job"), PROGRESS_EXIT_FAILED, "other errors exit 1");

	is_int(progress_daemon_limit(NULL, &ms), 0, "no XENREAPER_WAIT_TIMEOUT");
	is_int(ms, 10000, "defaults to 10 s");
	is_int(progress_daemon_limit("2.5", &ms), 0, "XENREAPER_WAIT_TIMEOUT=2.5");
	is_int(ms, 2500, "is 2500 ms");
	is_int(progress_daemon_limit("0", &ms), 0, "0 is allowed");
	is_int(ms, 0, "and means at once");
	is_int(progress_parse_seconds("30", &ms), 0, "30 s");
	is_int(ms, 30000, "30000 ms");
	is_int(progress_parse_seconds("-1", &ms), -EINVAL, "negative refused");
	is_int(progress_parse_seconds("1e3", &ms), -EINVAL, "exponent refused");
	is_int(progress_parse_seconds("10s", &ms), -EINVAL, "unit refused");
	is_int(progress_parse_seconds("1.2.3", &ms), -EINVAL, "two dots refused");
	is_int(progress_parse_seconds("", &ms), -EINVAL, "empty refused");
	is_int(progress_parse_seconds("999999999", &ms), -EINVAL, "beyond 7 days refused");
	fclose(out);
}

static void test_json(void)
{
	char buf[128];
	char *text = NULL;
	size_t size = 0, n;
	FILE *out;

	progress_json_escape(buf, sizeof(buf), "plain guest-1");
	is_str(buf, "plain guest-1", "JSON: plain text unchanged");
	progress_json_escape(buf, sizeof(buf), "a\"b\\c");
	is_str(buf, "a\\\"b\\\\c", "JSON: quote and backslash");
	progress_json_escape(buf, sizeof(buf), "l1\nl2\tx\r\b\f");
	is_str(buf, "l1\\nl2\\tx\\r\\b\\f", "JSON: short escapes");
	progress_json_escape(buf, sizeof(buf), "\x01\x1f\x7f");
	is_str(buf, "\\u0001\\u001f\\u007f", "JSON: other control characters");
	progress_json_escape(buf, sizeof(buf), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x92\x80");
	is_str(buf, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x92\x80", "JSON: valid UTF-8 kept");
	progress_json_escape(buf, sizeof(buf), "\xff" "a\xc3" "b\xc0\xaf\xed\xa0\x80");
	is_str(buf, "\\ufffda\\ufffdb\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd",
	       "JSON: invalid, overlong and surrogate bytes become U+FFFD");
	n = progress_json_escape(buf, 5, "abc\"def");
	is_int(n, 8, "JSON: the full length is returned");
	is_str(buf, "abc\\", "JSON: output is cut and NUL-terminated");
	is_int(progress_json_escape(NULL, 0, "\n"), 2, "JSON: length only");

	out = open_memstream(&text, &size);
	progress_json_string(out, "say \"hi\"");
	fclose(out);
	is_str(text, "\"say \\\"hi\\\"\"", "JSON: quoted string");
	free(text);
}

static struct xenreaper_status job(uint32_t domid, const char *name, enum xenreaper_state state,
				   int64_t requested_ms)
{
	struct xenreaper_status st;

	memset(&st, 0, sizeof(st));
	st.domid = domid;
	st.state = state;
	st.requested_ms = requested_ms;
	snprintf(st.name, sizeof(st.name), "%s", name);
	return st;
}

static void test_target_pick(void)
{
	const struct xenreaper_status jobs[] = {
		job(2, "other", XENREAPER_STATE_DONE, 1000),
		job(7, "2fast", XENREAPER_STATE_DONE, 2000),
		job(9, "web", XENREAPER_STATE_DONE, 3000),
		job(4, "web", XENREAPER_STATE_DONE, 5000),
		job(11, "web", XENREAPER_STATE_DESTROYING, 4000),
		job(12, "db", XENREAPER_STATE_FAILED, 100),
		job(13, "db", XENREAPER_STATE_DONE, 200),
		job(14, "007", XENREAPER_STATE_DONE, 300),
	};
	size_t n = sizeof(jobs) / sizeof(*jobs);

	is_int(cli_target_pick("2fast", jobs, n), 1,
	       "target: a name that starts with a digit is a name, not domain 2");
	is_int(cli_target_pick("2", jobs, n), 0, "target: all digits is a domid");
	is_int(cli_target_pick("0007", jobs, n), 1, "target: a domid may have leading zeros, as in xl");
	is_int(cli_target_pick("007", jobs, n), 1, "target: '007' is domain 7, as xl reads it");
	is_int(cli_target_pick("2 ", jobs, n), -ESRCH, "target: '2 ' is neither domid 2 nor a job's name");
	is_int(cli_target_pick("-2", jobs, n), -ESRCH, "target: '-2' is a name, which no job has");
	is_int(cli_target_pick("+2", jobs, n), -ESRCH, "target: '+2' is a name, which no job has");
	is_int(cli_target_pick("web", jobs, n), 4, "target: an unfinished job wins over newer finished ones");
	is_int(cli_target_pick("db", jobs, n), 6, "target: among finished ones, the newest request");
	is_int(cli_target_pick("3", jobs, n), -ESRCH, "target: an unknown domid matches nothing");
	is_int(cli_target_pick("99999999999999999999", jobs, n), -ESRCH,
	       "target: a domid beyond 32 bits matches nothing (it does not wrap)");
	is_int(cli_target_pick("4294967298", jobs, n), -ESRCH,
	       "target: 2^32 + 2 is not domain 2");
	is_int(cli_target_pick("web", jobs, 0), -ESRCH, "target: no jobs, no match");
}

/* ---------------------------------------------------------------- real xl */

static char real_root[256];		/* a directory in TMPDIR */

/* Create REAL_ROOT/REL (and its directories) holding TEXT, with MODE. */
static void real_put(const char *rel, const char *text, mode_t mode)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", real_root, rel);
	for (char *slash = strchr(path + strlen(real_root) + 1, '/'); slash;
	     slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	if (!f) {
		printf("Bail out! cannot create %s\n", path);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
}

static void real_remove(const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s%s", real_root, rel);
	unlink(path);
}

/* xl_front_real_choose in the fake root; PATH comes back without it. */
static int real_choose(const char *configured, const struct stat *self, char *rel, size_t len,
		       char *why, size_t why_len)
{
	char path[PATH_MAX];
	size_t root_len = strlen(real_root);
	int rc;

	rc = xl_front_real_choose(real_root, configured, self, path, sizeof(path), why, why_len);
	if (!strncmp(path, real_root, root_len))
		snprintf(rel, len, "%s", path + root_len);
	else
		snprintf(rel, len, "%s", path);
	return rc;
}

static void test_real_xl(void)
{
	char rel[PATH_MAX], why[1024], cmd[PATH_MAX], path[PATH_MAX];
	struct stat front;
	int rc;

	snprintf(real_root, sizeof(real_root), "%s/test-client-root.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(real_root)) {
		printf("Bail out! mkdtemp %s failed\n", real_root);
		exit(1);
	}
	real_put("/usr/sbin/xl", "#!/bin/sh\n", 0755);		/* Debian's wrapper */
	real_put("/usr/lib/xen-4.17/bin/xl", "4.17\n", 0755);
	real_put("/usr/lib/xen-4.19/bin/xl", "4.19\n", 0755);
	real_put("/sys/hypervisor/version/major", "4\n", 0444);
	real_put("/sys/hypervisor/version/minor", "17\n", 0444);

	rc = real_choose("", NULL, rel, sizeof(rel), why, sizeof(why));
	is_int(rc, 0, "real xl: found with 4.17 and 4.19 installed");
	is_str(rel, "/usr/lib/xen-4.17/bin/xl",
	       "real xl: the running hypervisor's version (4.17), not the newest installed");
	real_put("/sys/hypervisor/version/minor", "19\n", 0444);
	real_choose("", NULL, rel, sizeof(rel), why, sizeof(why));
	is_str(rel, "/usr/lib/xen-4.19/bin/xl", "real xl: after the reboot into 4.19, 4.19's");
	real_put("/sys/hypervisor/version/minor", "1\n", 0444);
	rc = real_choose("", NULL, rel, sizeof(rel), why, sizeof(why));
	is_str(rel, "/usr/sbin/xl",
	       "real xl: Xen 4.1 is not 4.17 or 4.19: the wrapper, which reports what is missing");
	is_int(rc, 0, "real xl: and that is a success for the front");
	ok(strstr(why, "/usr/lib/xen-4.1/bin/xl is missing") != NULL,
	   "real xl: the note says what was passed over: %s", why);

	real_put("/sys/hypervisor/version/minor", "17\n", 0444);
	real_remove("/usr/lib/xen-4.17/bin/xl");
	real_choose("", NULL, rel, sizeof(rel), why, sizeof(why));
	is_str(rel, "/usr/sbin/xl",
	       "real xl: 4.17 running, only 4.19's tools left: the wrapper, never 4.19's xl");
	real_put("/usr/lib/xen-4.17/bin/xl", "4.17\n", 0644);
	real_choose("", NULL, rel, sizeof(rel), why, sizeof(why));
	is_str(rel, "/usr/sbin/xl", "real xl: a versioned xl that is not executable is passed over");
	real_put("/usr/lib/xen-4.17/bin/xl", "4.17\n", 0755);

	real_put("/sys/hypervisor/version/minor", "17rc\n", 0444);
	real_choose("", NULL, rel, sizeof(rel), why, sizeof(why));
	is_str(rel, "/usr/sbin/xl", "real xl: a version that is not a number: the wrapper");
	real_put("/sys/hypervisor/version/minor", "0000000000000000017\n", 0444);
	real_choose("", NULL, rel, sizeof(rel), why, sizeof(why));
	is_str(rel, "/usr/sbin/xl", "real xl: a version too long to be one: the wrapper");
	real_put("/sys/hypervisor/version/minor", "", 0444);
	real_choose("", NULL, rel, sizeof(rel), why, sizeof(why));
	is_str(rel, "/usr/sbin/xl", "real xl: an empty version: the wrapper");
	real_put("/sys/hypervisor/version/minor", "17", 0444);
	real_choose("", NULL, rel, sizeof(rel), why, sizeof(why));
	is_str(rel, "/usr/lib/xen-4.17/bin/xl", "real xl: a version without a newline is read");

	real_remove("/sys/hypervisor/version/major");
	rc = real_choose("", NULL, rel, sizeof(rel), why, sizeof(why));
	is_str(rel, "/usr/sbin/xl", "real xl: no /sys/hypervisor: the wrapper, not the newest xl");
	real_remove("/usr/sbin/xl");
	real_put("/usr/local/sbin/xl", "local\n", 0755);
	rc = real_choose("", NULL, rel, sizeof(rel), why, sizeof(why));
	is_int(rc, -ENOENT, "real xl: no version, no wrapper: -ENOENT, not the newest xl");
	ok(strstr(why, "not running under Xen") && strstr(why, "/usr/sbin/xl is missing"),
	   "real xl: and why says what was tried: %s", why);
	ok(!strstr(why, "/usr/local"), "real xl: /usr/local/sbin/xl, where the front may be linked, "
	   "is not tried: %s", why);
	real_remove("/usr/local/sbin/xl");

	/* The front symlinked over /usr/sbin/xl must not run itself. */
	real_put("/sys/hypervisor/version/major", "4\n", 0444);
	real_put("/sys/hypervisor/version/minor", "18\n", 0444);
	real_put("/front", "the front\n", 0755);
	snprintf(path, sizeof(path), "%s/front", real_root);
	stat(path, &front);
	snprintf(cmd, sizeof(cmd), "%s/usr/sbin/xl", real_root);
	ok(!symlink(path, cmd), "real xl: /usr/sbin/xl made a link to the front");
	rc = real_choose("", &front, rel, sizeof(rel), why, sizeof(why));
	is_int(rc, -ENOENT, "real xl: the front is never chosen as the real xl");
	ok(strstr(why, "/usr/sbin/xl is this front itself") != NULL,
	   "real xl: and why says so: %s", why);
	real_put("/sys/hypervisor/version/minor", "17\n", 0444);
	real_choose("", &front, rel, sizeof(rel), why, sizeof(why));
	is_str(rel, "/usr/lib/xen-4.17/bin/xl", "real xl: with the front as /usr/sbin/xl, 4.17's xl");
	real_remove("/usr/lib/xen-4.17/bin/xl");
	snprintf(cmd, sizeof(cmd), "%s/usr/lib/xen-4.17/bin/xl", real_root);
	ok(!link(path, cmd), "real xl: 4.17's xl made a hard link to the front");
	rc = real_choose("", &front, rel, sizeof(rel), why, sizeof(why));
	is_int(rc, -ENOENT, "real xl: a hard link to the front is the front too");
	ok(strstr(why, "/usr/lib/xen-4.17/bin/xl is this front itself") != NULL,
	   "real xl: and why says so: %s", why);

	rc = real_choose("/opt/xen/sbin/xl", &front, rel, sizeof(rel), why, sizeof(why));
	is_int(rc, 0, "real xl: a configured REAL_XL is taken");
	is_str(rel, "/opt/xen/sbin/xl", "real xl: as it is, whatever /sys/hypervisor says");
	rc = xl_front_real_choose(real_root, path, &front, cmd, sizeof(cmd), why, sizeof(why));
	is_int(rc, -ELOOP, "real xl: a configured REAL_XL that is the front is refused");
	ok(strstr(why, "configured") && strstr(why, "this front itself"),
	   "real xl: and why says so: %s", why);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", real_root);
	if (system(cmd))
		printf("# could not remove %s\n", real_root);
}

/* A symlink REL in the fake root pointing at TARGET (taken as it is). */
static int real_link(const char *target, const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s%s", real_root, rel);
	unlink(path);
	return symlink(target, path);
}

/* The root as the Debian package leaves it (debian/xenreaper.preinst and
 * xenreaper.links): Debian's /usr/sbin/xl, the relative symlink to
 * xen-utils-wrapper, diverted to /usr/libexec/xl, and /usr/sbin/xl the
 * relative link dh_link makes to the front in /usr/libexec/xenreaper. */
static void test_real_xl_packaged(void)
{
	char rel[PATH_MAX], why[1024], path[PATH_MAX + 32];
	struct stat front;
	int rc;

	snprintf(real_root, sizeof(real_root), "%s/test-client-pkg.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(real_root)) {
		printf("Bail out! mkdtemp %s failed\n", real_root);
		exit(1);
	}
	real_put("/usr/lib/xen-common/bin/xen-utils-wrapper", "#!/bin/sh\n", 0755);
	real_put("/usr/libexec/xenreaper/xl", "the front\n", 0755);
	real_put("/usr/lib/xen-4.17/bin/xl", "4.17\n", 0755);
	real_put("/usr/sbin/xenreaperd", "the daemon\n", 0755);
	real_put("/sys/hypervisor/version/major", "4\n", 0444);
	real_put("/sys/hypervisor/version/minor", "17\n", 0444);
	ok(!real_link("../lib/xen-common/bin/xen-utils-wrapper", "/usr/libexec/xl"),
	   "packaged: Debian's xl diverted to /usr/libexec/xl");
	ok(!real_link("../libexec/xenreaper/xl", "/usr/sbin/xl"),
	   "packaged: /usr/sbin/xl a link to the front");
	snprintf(path, sizeof(path), "%s/usr/libexec/xenreaper/xl", real_root);
	stat(path, &front);

	rc = real_choose("", &front, rel, sizeof(rel), why, sizeof(why));
	is_int(rc, 0, "packaged: 4.17 running and installed: found");
	is_str(rel, "/usr/lib/xen-4.17/bin/xl", "packaged: and it is 4.17's xl");

	/* The running version's tools removed before the reboot: only
	 * Debian's wrapper says so, and it lives at the diverted name now. */
	real_remove("/usr/lib/xen-4.17/bin/xl");
	rc = real_choose("", &front, rel, sizeof(rel), why, sizeof(why));
	is_int(rc, 0, "packaged: 4.17's tools gone: the front still has an xl to run");
	is_str(rel, "/usr/libexec/xl",
	       "packaged: Debian's wrapper at the diverted name, which explains what is missing");
	ok(strstr(why, "/usr/sbin/xl is this front itself") != NULL,
	   "packaged: /usr/sbin/xl, the front, was passed over: %s", why);

	real_remove("/sys/hypervisor/version/major");
	real_choose("", &front, rel, sizeof(rel), why, sizeof(why));
	is_str(rel, "/usr/libexec/xl", "packaged: not under Xen: Debian's wrapper says so");

	/* A diverted wrapper that cannot run: nothing is left, and why says
	 * what each candidate was. */
	real_remove("/usr/libexec/xl");
	real_put("/usr/libexec/xl", "not executable\n", 0644);
	rc = real_choose("", &front, rel, sizeof(rel), why, sizeof(why));
	is_int(rc, -ENOENT, "packaged, the diverted wrapper not executable: -ENOENT");
	ok(strstr(why, "/usr/sbin/xl is this front itself") &&
	   strstr(why, "/usr/libexec/xl is not an executable file"),
	   "packaged: and why names both: %s", why);

	/* `apt remove xenreaper` gives the wrapper back to /usr/sbin/xl and
	 * /usr/libexec/xl goes: the wrapper is found where it always was. */
	real_remove("/usr/libexec/xl");
	ok(!real_link("../lib/xen-common/bin/xen-utils-wrapper", "/usr/sbin/xl"),
	   "removed: the wrapper back at /usr/sbin/xl");
	rc = real_choose("", &front, rel, sizeof(rel), why, sizeof(why));
	is_int(rc, 0, "removed: found");
	is_str(rel, "/usr/sbin/xl", "removed: /usr/sbin/xl, the wrapper");

	snprintf(path, sizeof(path), "rm -rf '%s'", real_root);
	if (system(path))
		printf("# could not remove %s\n", real_root);
}

static void test_text_escape(void)
{
	static const struct {
		const char *in, *want, *what;
	} cases[] = {
		{ "web-01", "web-01", "plain text as it is" },
		{ "caf\xc3\xa9 \xf0\x9f\x98\x80", "caf\xc3\xa9 \xf0\x9f\x98\x80", "printable UTF-8 as it is" },
		{ "a\\b", "a\\\\b", "a backslash doubled, so escapes are unambiguous" },
		{ "a\"{b}", "a\"{b}", "quotes and braces are printable" },
		{ "a\nb\tc\rd", "a\\nb\\tc\\rd", "newline, tab and return as C escapes" },
		{ "\x01\x1b[2K\x7f", "\\x01\\x1b[2K\\x7f", "other C0 controls and DEL as \\xNN" },
		{ "\xc2\x9b" "2J", "\\xc2\\x9b" "2J", "a C1 control (CSI) byte by byte" },
		{ "ab\xe2\x80\xae" "cd", "ab\\xe2\\x80\\xae" "cd", "a right-to-left override" },
		{ "\xe2\x80\x8b\xe2\x80\xa8\xef\xbb\xbf", "\\xe2\\x80\\x8b\\xe2\\x80\\xa8\\xef\\xbb\\xbf",
		  "zero-width space, line separator, BOM" },
		{ "\xff\xc0\xaf", "\\xff\\xc0\\xaf", "bytes that are not UTF-8" },
		{ "\xe2\x82", "\\xe2\\x82", "a character cut short" },
	};
	char buf[128];
	size_t n;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		n = progress_text_escape(buf, sizeof(buf), cases[i].in);
		is_str(buf, cases[i].want, cases[i].what);
		is_int(n, strlen(cases[i].want), "  and the length it returns");
	}
	n = progress_text_escape(buf, 5, "ab\ncd");
	is_str(buf, "ab\\n", "cut to fit: whole escapes only (5 bytes: \"ab\\n\")");
	progress_text_escape(buf, 4, "ab\ncd");
	is_str(buf, "ab", "cut to fit: never half an escape");
	is_int(n, 6, "cut to fit: the full length is still returned");
	progress_text_escape(buf, 3, "\xc3\xa9\xc3\xa9");
	is_str(buf, "\xc3\xa9", "cut to fit: never half a character");
	is_int(progress_text_escape(NULL, 0, "a\x01"), 5, "length only, with no buffer");
}

/* xenreaper(1) says how text is escaped: every escape the code makes for
 * a byte must be named there as the page spells it (\e for a backslash),
 * the \xNN ones by the one generic form. */
static void test_escape_documented(void)
{
	const char *path = SRCDIR "/man/xenreaper.1";
	char page[200000], esc[8], want[16], missing[256] = "";
	const char *from, *to;
	size_t n = 0;
	FILE *f = fopen(path, "r");

	if (f) {
		n = fread(page, 1, sizeof(page) - 1, f);
		fclose(f);
	}
	page[n] = '\0';
	from = strstr(page, "A guest's name is whatever its owner put in its config");
	to = from ? strstr(from, ".Sh ") : NULL;
	ok(from && to, "xenreaper(1) has the paragraph on escaping (%s)", path);
	if (!from || !to)
		return;
	page[to - page] = '\0';
	for (int c = 1; c < 0x80; c++) {
		char in[2] = { (char)c, 0 };

		progress_text_escape(esc, sizeof(esc), in);
		if (!strcmp(esc, in))
			continue;
		if (esc[1] == 'x')
			snprintf(want, sizeof(want), ".Ql \\exNN");
		else
			snprintf(want, sizeof(want), ".Ql \\e%s", esc[1] == '\\' ? "\\e" : esc + 1);
		if (!strstr(from, want) && !strstr(missing, want))
			snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing), " '%s'", want);
	}
	ok(!missing[0], "  it names every escape the clients print (missing:%s)",
	   missing[0] ? missing : " none");
}

int main(void)
{
	test_front_parse();
	test_target_pick();
	test_real_xl();
	test_real_xl_packaged();
	test_rate_eta();
	test_lines();
	test_daemon_limit();
	test_json();
	test_text_escape();
	test_escape_documented();
	return tap_done();
}
