/* Unit tests for cli-args, the `xenreaper` command-line parser: what each
 * line is read as, the sentence a bad line gets, and that the parser
 * writes nothing itself.  No Xen needed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli-args.h"
#include "progress.h"
#include "tap.h"

#define ARGV_MAX 32

static char words[ARGV_MAX][64];
static char *argv_[ARGV_MAX + 1];

/* Split LINE at spaces into argv_ (argv_[0] is "xenreaper"); returns argc.
 * The words stay valid until the next call. */
static int split(const char *line)
{
	char copy[512], *save = NULL;
	int argc = 0;

	snprintf(words[argc], sizeof(words[argc]), "xenreaper");
	argv_[argc] = words[argc];
	argc++;
	snprintf(copy, sizeof(copy), "%s", line);
	for (char *w = strtok_r(copy, " ", &save); w && argc < ARGV_MAX;
	     w = strtok_r(NULL, " ", &save)) {
		snprintf(words[argc], sizeof(words[argc]), "%s", w);
		argv_[argc] = words[argc];
		argc++;
	}
	argv_[argc] = NULL;
	return argc;
}

static int parse(struct cli_args *a, const char *line)
{
	int argc = split(line);

	return cli_args_parse(argc, argv_, a);
}

static void test_good_lines(void)
{
	static const struct {
		const char *line;
		enum cli_command command;
		const char *domain;
		int json, wait, help, version;
		long long timeout_ms;
	} cases[] = {
		{ "list", CLI_LIST, NULL, 0, 0, 0, 0, -1 },
		{ "--json list", CLI_LIST, NULL, 1, 0, 0, 0, -1 },
		{ "list --json", CLI_LIST, NULL, 1, 0, 0, 0, -1 },
		{ "status", CLI_STATUS, NULL, 0, 0, 0, 0, -1 },
		{ "status web", CLI_STATUS, "web", 0, 0, 0, 0, -1 },
		{ "status 7 --json", CLI_STATUS, "7", 1, 0, 0, 0, -1 },
		{ "wait web", CLI_WAIT, "web", 0, 0, 0, 0, -1 },
		{ "wait web --timeout 2.5", CLI_WAIT, "web", 0, 0, 0, 0, 2500 },
		{ "wait -t 30 web", CLI_WAIT, "web", 0, 0, 0, 0, 30000 },
		{ "wait --timeout=0 web", CLI_WAIT, "web", 0, 0, 0, 0, 0 },
		{ "wait -t 1 -t 2 web", CLI_WAIT, "web", 0, 0, 0, 0, 2000 },
		{ "destroy 5", CLI_DESTROY, "5", 0, 0, 0, 0, -1 },
		{ "destroy --wait 5", CLI_DESTROY, "5", 0, 1, 0, 0, -1 },
		{ "destroy -w -t 10 5 --json", CLI_DESTROY, "5", 1, 1, 0, 0, 10000 },
		{ "destroy -- -odd", CLI_DESTROY, "-odd", 0, 0, 0, 0, -1 },
		{ "-- destroy --wait", CLI_DESTROY, "--wait", 0, 0, 0, 0, -1 },
		{ "destroy -", CLI_DESTROY, "-", 0, 0, 0, 0, -1 },
		{ "--help", CLI_NONE, NULL, 0, 0, 1, 0, -1 },
		{ "-h destroy", CLI_NONE, NULL, 0, 0, 1, 0, -1 },
		{ "bogus -h", CLI_NONE, NULL, 0, 0, 1, 0, -1 },
		{ "help", CLI_NONE, NULL, 0, 0, 1, 0, -1 },
		{ "help destroy", CLI_NONE, NULL, 0, 0, 1, 0, -1 },
		{ "-V", CLI_NONE, NULL, 0, 0, 0, 1, -1 },
		{ "--version list", CLI_NONE, NULL, 0, 0, 0, 1, -1 },
		{ "wait-free 512M", CLI_WAIT_FREE, "512M", 0, 0, 0, 0, -1 },
		{ "--json wait-free 4G --timeout 30", CLI_WAIT_FREE, "4G", 1, 0, 0, 0, 30000 },
		{ "wait-free -t 0 2.5g", CLI_WAIT_FREE, "2.5g", 0, 0, 0, 0, 0 },
		{ "top", CLI_TOP, NULL, 0, 0, 0, 0, -1 },
		{ "top --help", CLI_NONE, NULL, 0, 0, 1, 0, -1 },
	};
	struct cli_args a;

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		int rc = parse(&a, cases[i].line);
		int same_domain = cases[i].domain ? a.domain && !strcmp(a.domain, cases[i].domain)
						  : !a.domain;

		ok(rc == 0 && a.command == cases[i].command && same_domain &&
		   a.json == cases[i].json && a.wait == cases[i].wait && a.help == cases[i].help &&
		   a.version == cases[i].version && a.timeout_ms == cases[i].timeout_ms,
		   "'%s' -> command %d domain %s json %d wait %d help %d version %d timeout %lld "
		   "(got rc %d command %d domain %s json %d wait %d help %d version %d timeout %lld%s%s)",
		   cases[i].line, cases[i].command, cases[i].domain ? cases[i].domain : "-",
		   cases[i].json, cases[i].wait, cases[i].help, cases[i].version, cases[i].timeout_ms,
		   rc, a.command, a.domain ? a.domain : "-", a.json, a.wait, a.help, a.version,
		   (long long)a.timeout_ms, rc ? ": " : "", rc ? a.error : "");
	}
	parse(&a, "status web");
	ok(a.domain == argv_[2], "DOMAIN points into argv, not into a copy");
	ok(!a.error[0], "no error after a good line");
	parse(&a, "wait-free 2.5G");
	is_int(a.size_pages, 655360, "wait-free 2.5G is 655360 pages");
}

static void test_sizes(void)
{
	static const struct {
		const char *text;
		int rc;
		long long pages;
	} cases[] = {
		{ "512M", 0, 131072 },
		{ "512m", 0, 131072 },
		{ "512MiB", 0, 131072 },
		{ "4G", 0, 1048576 },
		{ "4GiB", 0, 1048576 },
		{ "2.5G", 0, 655360 },
		{ "1T", 0, 268435456 },
		{ "1024K", 0, 256 },
		{ "1K", 0, 1 },			/* a part page is a page */
		{ "4096B", 0, 1 },
		{ "4097b", 0, 2 },
		{ "0M", 0, 0 },
		{ "0.5K", 0, 1 },
		{ "1.0000001G", 0, 262145 },	/* a fraction beyond 6 digits still rounds up */
		{ "1024T", 0, 1ULL << 38 },
		{ "1025T", -ERANGE, 0 },
		{ "99999999999999999999G", -ERANGE, 0 },
		{ "512", -EINVAL, 0 },		/* bare: bytes, KiB or MiB? */
		{ "512MB", -EINVAL, 0 },
		{ "512 M", -EINVAL, 0 },
		{ "M", -EINVAL, 0 },
		{ ".5G", -EINVAL, 0 },
		{ "5.G", -EINVAL, 0 },
		{ "1.2.3G", -EINVAL, 0 },
		{ "-1G", -EINVAL, 0 },
		{ "+1G", -EINVAL, 0 },
		{ "1e3M", -EINVAL, 0 },
		{ "1BiB", -EINVAL, 0 },
		{ "", -EINVAL, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		uint64_t pages = 0;
		int rc = progress_parse_size(cases[i].text, &pages);

		ok(rc == cases[i].rc && (rc || pages == (uint64_t)cases[i].pages),
		   "size '%s' -> rc %d, %lld pages (got %d, %llu)", cases[i].text, cases[i].rc,
		   cases[i].pages, rc, (unsigned long long)pages);
	}
}

static void test_bad_lines(void)
{
	static const struct {
		const char *line;
		const char *says[3];	/* what the sentence must contain */
	} cases[] = {
		{ "", { "no command given", "list, status, wait, destroy" } },
		{ "--json", { "no command given" } },
		{ "frobnicate", { "unknown command 'frobnicate'", "list, status, wait, destroy", "top" } },
		{ "-- --json", { "unknown command '--json'" } },
		{ "list --bogus", { "unknown option '--bogus'", "--json", "--timeout" } },
		{ "list -x", { "unknown option '-x'" } },
		{ "wait web -t5", { "unknown option '-t5'" } },
		{ "list web", { "'list' takes no DOMAIN", "'web'", "xenreaper status web" } },
		{ "status a b", { "unexpected argument 'b'", "at most one DOMAIN" } },
		{ "list --wait", { "do not apply to 'list'" } },
		{ "status web -t 3", { "do not apply to 'status'" } },
		{ "wait", { "'wait' needs a DOMAIN", "domid or a domain name" } },
		{ "wait web --wait", { "'wait' always waits", "drop --wait" } },
		{ "destroy", { "'destroy' needs a DOMAIN" } },
		{ "destroy web -t 3", { "only with --wait" } },
		{ "wait web -t", { "-t needs a number of seconds" } },
		{ "wait web --timeout", { "--timeout needs a number of seconds" } },
		{ "wait web -t soon", { "not 'soon'", "e.g. 30 or 2.5" } },
		{ "wait web --timeout=", { "not ''" } },
		{ "wait web --timeout=-1", { "not '-1'" } },
		{ "wait web --timeout=99999999", { "at most 7 days" } },
		{ "wait-free", { "'wait-free' needs a SIZE", "512M" } },
		{ "wait-free 512", { "'512' is not a SIZE", "K, M, G or T", "bare number" } },
		{ "wait-free 4 G", { "unexpected argument 'G'" } },
		{ "wait-free 2X", { "'2X' is not a SIZE", "e.g. 512M" } },
		{ "wait-free 2000T", { "'2000T' is more memory than any host has" } },
		{ "wait-free 1G --wait", { "'wait-free' always waits" } },
		{ "wait-free 1G -t soon", { "not 'soon'" } },
		{ "top web", { "'top' takes no DOMAIN", "'web'", "every teardown" } },
		{ "top --json", { "'top' has no --json", "xenreaper --json list" } },
		{ "top -t 3", { "do not apply to 'top'" } },
		{ "top --wait", { "do not apply to 'top'" } },
		{ "top -q", { "unknown option '-q'" } },
	};
	struct cli_args a;

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		int rc = parse(&a, cases[i].line);
		int all = 1;

		for (int j = 0; j < 3 && cases[i].says[j]; j++)
			all = all && strstr(a.error, cases[i].says[j]);
		ok(rc == -EINVAL && all, "'%s' is refused with what was wrong and what is accepted: %s",
		   cases[i].line, a.error);
	}
}

/* Lines that spaces cannot spell. */
static void test_odd_words(void)
{
	char list[] = "list", status[] = "status", empty[] = "", spaced[] = "my guest";
	char *only_argv0[] = { NULL };
	char *status_empty[] = { NULL, status, empty, NULL };
	char *status_spaced[] = { NULL, status, spaced, NULL };
	char *list_argv0[] = { list, NULL };
	struct cli_args a;

	is_int(cli_args_parse(3, status_empty, &a), -EINVAL, "an empty DOMAIN is refused");
	ok(strstr(a.error, "DOMAIN is empty") != NULL, "and said so: %s", a.error);
	is_int(cli_args_parse(3, status_spaced, &a), 0, "a DOMAIN with a space is taken whole");
	is_str(a.domain, "my guest", "as one name");
	is_int(cli_args_parse(0, only_argv0, &a), -EINVAL, "argc 0: no command");
	is_int(cli_args_parse(1, list_argv0, &a), -EINVAL, "argv[0] is never read as the command");
}

/* A usage error goes into the struct only: a fuzzer, or a caller with its
 * own way of reporting, must see nothing on stdout or stderr. */
static void test_quiet(void)
{
	FILE *sink = tmpfile();
	int saved_out, saved_err;
	struct cli_args a;
	long size;

	fflush(stdout);
	fflush(stderr);
	saved_out = dup(STDOUT_FILENO);
	saved_err = dup(STDERR_FILENO);
	dup2(fileno(sink), STDOUT_FILENO);
	dup2(fileno(sink), STDERR_FILENO);
	parse(&a, "list --bogus");
	parse(&a, "wait");
	parse(&a, "wait web -t soon");
	parse(&a, "--help");
	fflush(stdout);
	fflush(stderr);
	dup2(saved_out, STDOUT_FILENO);
	dup2(saved_err, STDERR_FILENO);
	close(saved_out);
	close(saved_err);
	fseek(sink, 0, SEEK_END);
	size = ftell(sink);
	fclose(sink);
	is_int(size, 0, "the parser writes nothing to stdout or stderr");
}

int main(void)
{
	test_good_lines();
	test_bad_lines();
	test_sizes();
	test_odd_words();
	test_quiet();
	return tap_done();
}
