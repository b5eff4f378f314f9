/* Unit tests for daemon/config.c: defaults, the shipped file, good files,
 * and every file in tests/unit/bad-configs (each names the line and the
 * words its error must have). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "tap.h"

#define DATA SRCDIR "/tests/unit/data/"
#define BAD_DIR SRCDIR "/tests/unit/bad-configs"
#define SHIPPED SRCDIR "/config/xenreaper.conf"

static char *format(const struct config *cfg)
{
	char *text = NULL;

	if (config_format(cfg, &text))
		return NULL;
	return text;
}

/* Parse TEXT as a file called NAME. */
static int parse_text(const char *text, const char *name, struct config **out,
		      struct config_errors *errs)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int rc;

	if (!f)
		return -errno;
	rc = config_parse(f, name, out, errs);
	fclose(f);
	return rc;
}

static void print_errors(const struct config_errors *errs)
{
	for (size_t i = 0; i < errs->n; i++)
		printf("#   %s\n", errs->v[i].text);
}

static void test_defaults(void)
{
	struct config *cfg = NULL;
	const struct config_pool *pool;

	is_int(config_new(&cfg), 0, "config_new");
	{
		long online = sysconf(_SC_NPROCESSORS_ONLN);
		unsigned want = online < 1 ? 1 : online > CONFIG_JOBS_AUTO_MAX ? CONFIG_JOBS_AUTO_MAX : (unsigned)online;

		is_int(cfg->jobs, want, "default jobs = auto: this machine's online CPUs, at most 4");
		ok(cfg->jobs_auto, "  and says it is auto");
		ok(config_jobs_auto() >= 1 && config_jobs_auto() <= CONFIG_JOBS_AUTO_MAX,
		   "  config_jobs_auto() lies within 1..4");
	}
	is_int(cfg->retention_ms, 600000, "default retention = 10m");
	is_int(cfg->progress_interval_ms, 250, "default progress-interval = 250ms");
	is_int(cfg->stuck_after_ms, 30000, "default stuck-after = 30s");
	is_int(cfg->take_back_after_ms, 0, "default take-back-after = off");
	is_int(cfg->scrub_probe, CONFIG_PROBE_AUTO, "default scrub-probe = auto");
	is_int(cfg->scrub_probe_interval_ms, 1000, "default scrub-probe-interval = 1s");
	is_int(cfg->n_protect, 0, "default protect is empty");
	is_int(cfg->log_level, LOG_INFO, "default log-level = info");
	ok(cfg->path == NULL, "built-in defaults have no path");
	pool = config_pool_for(cfg, "Pool-0");
	ok(pool == &cfg->defaults && pool->name == NULL, "any pool gets [default]");
	is_int(pool->scrub, JOB_POLICY_DEFERRED, "default scrub = deferred");
	is_int(pool->teardown, 0, "default teardown = request");
	is_int(pool->grace_ms, 30000, "default grace = 30s");
	is_int(pool->priority, CONFIG_PRIORITY_LOW, "default priority = low");
	config_free(cfg);
	config_free(NULL);
}

/* The shipped file with the '#' of every "#key = value" line dropped. */
static char *uncomment_keys(const char *text)
{
	char *out = malloc(strlen(text) + 1), *w = out;
	const char *line = text;
	size_t len, n;

	if (!out)
		return NULL;
	while (*line) {
		len = strcspn(line, "\n");
		n = strspn(line + 1, "abcdefghijklmnopqrstuvwxyz-");
		if (line[0] == '#' && n && !strncmp(line + 1 + n, " =", 2)) {
			line++;
			len--;
		}
		memcpy(w, line, len);
		w += len;
		line += len;
		if (*line)
			*w++ = *line++;
	}
	*w = '\0';
	return out;
}

static void test_shipped(void)
{
	struct config_errors errs = { 0 };
	struct config *defaults = NULL, *cfg = NULL, *all = NULL;
	char *want = NULL, *got = NULL, *text = NULL, *opened;
	size_t len = 0, keys = 0;
	FILE *f;
	int rc;

	config_new(&defaults);
	want = format(defaults);
	rc = config_load(SHIPPED, &cfg, &errs);
	is_int(rc, 0, "config/xenreaper.conf parses");
	is_int(errs.n, 0, "config/xenreaper.conf has no errors");
	print_errors(&errs);
	got = cfg ? format(cfg) : NULL;
	is_str(got, want, "config/xenreaper.conf as shipped gives the defaults");
	is_str(cfg ? cfg->path : NULL, SHIPPED, "the config remembers its path");

	/* The documented values must be the defaults, not just be commented. */
	f = fopen(SHIPPED, "r");
	if (f) {
		getdelim(&text, &len, '\0', f);
		fclose(f);
	}
	opened = text ? uncomment_keys(text) : NULL;
	for (const char *s = opened; s && (s = strstr(s, "\n")); s++)
		if (s[1] >= 'a' && s[1] <= 'z')
			keys++;
	is_int(keys, 15, "the shipped file documents all 15 keys");
	rc = opened ? parse_text(opened, "uncommented", &all, &errs) : -ENOMEM;
	is_int(rc, 0, "every documented key uncommented still parses");
	print_errors(&errs);
	free(got);
	got = all ? format(all) : NULL;
	is_str(got, want, "the documented values are the defaults");

	config_errors_clear(&errs);
	config_free(defaults);
	config_free(cfg);
	config_free(all);
	free(want);
	free(got);
	free(text);
	free(opened);
}

static void test_good_full(void)
{
	struct config_errors errs = { 0 };
	struct config *cfg = NULL, *again = NULL;
	const struct config_pool *pool;
	char *text = NULL, *text2 = NULL;
	int rc;

	rc = config_load(DATA "good-full.conf", &cfg, &errs);
	is_int(rc, 0, "good-full.conf parses");
	print_errors(&errs);
	if (!cfg)
		return;
	is_int(cfg->jobs, 4, "jobs");
	is_int(cfg->retention_ms, 3600000, "retention");
	is_int(cfg->progress_interval_ms, 100, "progress-interval");
	is_int(cfg->stuck_after_ms, 120000, "stuck-after");
	is_int(cfg->take_back_after_ms, 900000, "take-back-after");
	is_int(cfg->scrub_probe, CONFIG_PROBE_HEAP_DUMP, "scrub-probe");
	is_int(cfg->scrub_probe_interval_ms, 2000, "scrub-probe-interval");
	is_int(cfg->log_level, LOG_DEBUG, "log-level");
	is_int(cfg->n_protect, 4, "protect: 4 entries over 3 lines");
	if (cfg->n_protect == 4) {
		is_str(cfg->protect[0], "web-frontend", "protect[0]");
		is_str(cfg->protect[1], "8C1C8F0D-5E4B-4A8E-9E3A-0A6B2A5F7C11", "protect[1]");
		is_str(cfg->protect[2], "db-primary", "protect[2] from a continuation line");
		is_str(cfg->protect[3], "db-replica", "protect[3] from a continuation line");
	}
	ok(config_is_protected(cfg, "db-replica", NULL), "protected by name");
	ok(config_is_protected(cfg, "other", "8c1c8f0d-5e4b-4a8e-9e3a-0a6b2a5f7c11"),
	   "protected by UUID, in any case");
	ok(!config_is_protected(cfg, "db", "00000000-0000-0000-0000-000000000000"),
	   "others are not protected");
	ok(!config_is_protected(cfg, NULL, NULL), "nothing named, nothing protected");
	ok(!config_is_protected(cfg, "", ""), "empty name and UUID are not protected");

	is_int(cfg->defaults.scrub, JOB_POLICY_DEFERRED, "[default] scrub");
	is_int(cfg->defaults.teardown, CONFIG_TEARDOWN_CRASH, "[default] teardown");
	is_int(cfg->defaults.grace_ms, 120000, "[default] grace");
	is_int(cfg->defaults.priority, CONFIG_PRIORITY_IDLE, "[default] priority");
	is_int(cfg->n_pools, 2, "two pool sections");

	pool = config_pool_for(cfg, "fast");
	is_str(pool->name, "fast", "[pool:fast] found");
	is_int(pool->scrub, JOB_POLICY_SYNC, "[pool:fast] scrub set");
	is_int(pool->teardown, CONFIG_TEARDOWN_SHUTDOWN | CONFIG_TEARDOWN_CRASH,
	       "[pool:fast] teardown = shutdown,crash");
	is_int(pool->grace_ms, 120000, "[pool:fast] grace from a later [default]");
	is_int(pool->priority, CONFIG_PRIORITY_IDLE, "[pool:fast] priority from [default]");
	ok(config_pool_tears_down(pool, JOB_REASON_POWEROFF) &&
	   config_pool_tears_down(pool, JOB_REASON_CRASH) &&
	   config_pool_tears_down(pool, JOB_REASON_REQUEST), "[pool:fast] tears down on all");

	pool = config_pool_for(cfg, "Pool-0");
	is_str(pool->name, "Pool-0", "[pool:Pool-0] found");
	is_int(pool->scrub, JOB_POLICY_DEFERRED, "[pool:Pool-0] scrub from [default]");
	is_int(pool->teardown, CONFIG_TEARDOWN_SHUTDOWN, "[pool:Pool-0] teardown");
	is_int(pool->grace_ms, 0, "[pool:Pool-0] grace = 0s");
	is_int(pool->priority, CONFIG_PRIORITY_NORMAL, "[pool:Pool-0] priority");
	ok(config_pool_tears_down(pool, JOB_REASON_POWEROFF) &&
	   !config_pool_tears_down(pool, JOB_REASON_CRASH), "[pool:Pool-0] shutdown only");

	ok(config_pool_for(cfg, "pool-0") == &cfg->defaults, "pool names are case-sensitive");
	ok(config_pool_for(cfg, NULL) == &cfg->defaults, "no pool name: [default]");
	ok(!config_pool_tears_down(&cfg->defaults, JOB_REASON_POWEROFF) &&
	   config_pool_tears_down(&cfg->defaults, JOB_REASON_CRASH), "[default] crash only");

	text = format(cfg);
	rc = text ? parse_text(text, "formatted", &again, &errs) : -ENOMEM;
	is_int(rc, 0, "config_format output parses");
	text2 = again ? format(again) : NULL;
	is_str(text2, text, "config_format round-trips");

	config_errors_clear(&errs);
	config_free(cfg);
	config_free(again);
	free(text);
	free(text2);
}

static void test_long_protect(void)
{
	struct config *cfg = NULL, *again = NULL;
	char text[2048] = "[daemon]\nprotect =", *out = NULL, *out2 = NULL;
	unsigned i;

	for (i = 0; i < 40; i++) {
		strcat(text, i % 10 ? " " : "\n\t");
		snprintf(text + strlen(text), 16, "guest-%02u", i);
	}
	strcat(text, "\n");
	ok(!parse_text(text, "long", &cfg, NULL) && cfg->n_protect == 40,
	   "40 protected names over continuation lines");
	out = cfg ? format(cfg) : NULL;
	ok(out && !parse_text(out, "formatted", &again, NULL) && again->n_protect == 40,
	   "config_format wraps a long protect list so it parses back");
	out2 = again ? format(again) : NULL;
	is_str(out2, out, "... to the same list");
	config_free(cfg);
	config_free(again);
	free(out);
	free(out2);
}

/* A guest named `web 1` can be protected (quoted); before, protect split
 * on whitespace and protected `web` and `1` instead. */
static void test_protect_quoted(void)
{
	struct config *cfg = NULL, *again = NULL;
	char *out = NULL, *out2 = NULL;
	const char *text = "[daemon]\nprotect = db \"web 1\" \"say \\\"hi\\\"\" \"back\\\\slash\"\n";

	ok(!parse_text(text, "quoted", &cfg, NULL) && cfg && cfg->n_protect == 4,
	   "quoted protect names parse");
	if (!cfg)
		return;
	is_str(cfg->protect[1], "web 1", "a quoted name keeps its space");
	is_str(cfg->protect[2], "say \"hi\"", "\\\" is a quote");
	is_str(cfg->protect[3], "back\\slash", "\\\\ is a backslash");
	ok(config_is_protected(cfg, "web 1", NULL), "`web 1` is protected");
	ok(!config_is_protected(cfg, "web", NULL) && !config_is_protected(cfg, "1", NULL),
	   "  and neither `web` nor `1` is");
	ok(config_protects_names(cfg), "the list names guests");
	out = format(cfg);
	ok(out && strstr(out, "\"web 1\"") != NULL, "config_format quotes it");
	ok(out && !parse_text(out, "formatted", &again, NULL) && again && again->n_protect == 4 &&
	   !strcmp(again->protect[2], "say \"hi\""), "  and it parses back the same");
	out2 = again ? format(again) : NULL;
	is_str(out2, out, "  to the same text");
	config_free(cfg);
	config_free(again);
	free(out);
	free(out2);
	cfg = NULL;
	ok(!parse_text("[daemon]\nprotect = 0123abcd-0000-0000-0000-000000000000\n", "uuid", &cfg, NULL) &&
	   cfg && !config_protects_names(cfg), "a protect list of UUIDs names no guest");
	config_free(cfg);
}

/* Every duration is bounded, so none can overflow "now" plus it. */
static void test_duration_bounds(void)
{
	static const struct { const char *text; int ok; } cases[] = {
		{ "[default]\ngrace = 24h\n", 1 },
		{ "[default]\ngrace = 86400001ms\n", 0 },
		{ "[daemon]\nretention = 720h\n", 1 },
		{ "[daemon]\nretention = 43201m\n", 0 },
		{ "[daemon]\nscrub-probe-interval = 1h\n", 1 },
		{ "[daemon]\nscrub-probe-interval = 3601s\n", 0 },
		{ "[pool:p]\ngrace = 9223372036854775807ms\n", 0 },
		{ "[daemon]\ntake-back-after = off\n", 1 },
		{ "[daemon]\ntake-back-after = 24h\n", 1 },
		{ "[daemon]\ntake-back-after = 86401s\n", 0 },
		{ "[daemon]\ntake-back-after = 999ms\n", 0 },
		{ "[daemon]\ntake-back-after = never\n", 0 },
	};
	struct config *cfg;

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		cfg = NULL;
		ok((parse_text(cases[i].text, "bounds", &cfg, NULL) == 0) == cases[i].ok, "%s %s",
		   cases[i].ok ? "accepted:" : "refused:", strchr(cases[i].text, '\n') + 1);
		config_free(cfg);
	}
}

static void test_good_crlf_bom(void)
{
	struct config_errors errs = { 0 };
	struct config *cfg = NULL;
	int rc;

	rc = config_load(DATA "good-crlf-bom.conf", &cfg, &errs);
	is_int(rc, 0, "BOM, CRLF, ':' and ';' comments parse");
	print_errors(&errs);
	if (!cfg)
		return;
	is_int(cfg->jobs, 2, "jobs: 2 ; comment");
	is_int(cfg->retention_ms, 90000, "retention=90s");
	is_int(config_pool_for(cfg, "Pool-1")->scrub, JOB_POLICY_SYNC, "scrub : sync");
	config_free(cfg);
}

static void test_teardown_spellings(void)
{
	static const struct { const char *value; unsigned want; } cases[] = {
		{ "request", 0 }, { "shutdown", CONFIG_TEARDOWN_SHUTDOWN },
		{ "crash", CONFIG_TEARDOWN_CRASH },
		{ "shutdown,crash", CONFIG_TEARDOWN_SHUTDOWN | CONFIG_TEARDOWN_CRASH },
		{ "crash, shutdown", CONFIG_TEARDOWN_SHUTDOWN | CONFIG_TEARDOWN_CRASH },
	};
	char text[128], buf[16];
	struct config *cfg;
	int bad = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		cfg = NULL;
		snprintf(text, sizeof(text), "[default]\nteardown = %s\n", cases[i].value);
		if (parse_text(text, "t", &cfg, NULL) || cfg->defaults.teardown != cases[i].want)
			bad++;
		config_free(cfg);
	}
	is_int(bad, 0, "teardown spellings");
	config_teardown_format(CONFIG_TEARDOWN_CRASH | CONFIG_TEARDOWN_SHUTDOWN, buf);
	is_str(buf, "shutdown,crash", "teardown format");
	is_str(config_scrub_probe_name(CONFIG_PROBE_HEAP_DUMP), "heap-dump", "probe name");
	is_str(config_priority_name(CONFIG_PRIORITY_IDLE), "idle", "priority name");
}

static void test_empty_and_sections_only(void)
{
	struct config *cfg = NULL, *defaults = NULL;
	char *want, *got;
	int rc;

	config_new(&defaults);
	want = format(defaults);
	rc = parse_text("", "empty", &cfg, NULL);
	got = cfg ? format(cfg) : NULL;
	ok(rc == 0 && got && !strcmp(got, want), "an empty file is the defaults");
	free(got);
	config_free(cfg);
	cfg = NULL;
	rc = parse_text("[daemon]\n[default]\n[pool:idle-pool]\n", "sections", &cfg, NULL);
	ok(rc == 0 && cfg->n_pools == 1 && config_pool_for(cfg, "idle-pool")->grace_ms == 30000,
	   "an empty pool section inherits everything");
	config_free(cfg);
	config_free(defaults);
	free(want);
}

static void test_multi_error(void)
{
	static const unsigned want[] = { 4, 5, 6, 10, 12, 14 };
	struct config_errors errs = { 0 };
	struct config *cfg = (struct config *)&errs;	/* must stay untouched */
	char *joined = NULL;
	size_t i;
	int rc;

	rc = config_load(DATA "multi-error.conf", &cfg, &errs);
	is_int(rc, -EINVAL, "multi-error.conf is refused");
	ok(cfg == (struct config *)&errs, "OUT untouched on error");
	is_int(errs.n, 6, "all six errors reported");
	print_errors(&errs);
	for (i = 0; i < errs.n && i < 6; i++)
		if (errs.v[i].line != want[i])
			break;
	is_int(i, 6, "errors in line order, each on its line");
	is_int(config_errors_join(&errs, &joined), 0, "errors join");
	ok(joined && strstr(joined, "multi-error.conf:4: jobs = '100'") &&
	   strstr(joined, "\n") && !strstr(joined, ":13:"), "joined text, one per line");
	free(joined);

	/* Appended, not replaced. */
	config_load(DATA "multi-error.conf", &cfg, &errs);
	is_int(errs.n, 12, "a second load appends");
	config_errors_clear(&errs);
	is_int(errs.n, 0, "clear empties");
	is_int(config_errors_join(&errs, &joined), 0, "joining no errors");
	is_str(joined, "", "... gives an empty string");
	free(joined);
	rc = config_load(DATA "multi-error.conf", &cfg, NULL);
	is_int(rc, -EINVAL, "ERRS may be NULL");
}

static void test_open_errors(void)
{
	struct config_errors errs = { 0 };
	struct config *cfg = NULL;
	int rc;

	rc = config_load(DATA "no-such-file.conf", &cfg, &errs);
	is_int(rc, -ENOENT, "a missing file is -ENOENT");
	ok(errs.n == 1 && errs.v[0].line == 0 && strstr(errs.v[0].text, "no-such-file.conf: cannot open"),
	   "... with a message naming it");
	print_errors(&errs);
	config_errors_clear(&errs);
	rc = config_load(SRCDIR "/tests/unit/data", &cfg, &errs);
	ok(rc < 0 && rc != -EINVAL && cfg == NULL && errs.n == 1, "a directory is not a file (%d)", rc);
	print_errors(&errs);
	config_errors_clear(&errs);
}

/* "# expect-line: N" and "# expect: WORDS" head every bad file. */
static int read_expectations(const char *path, unsigned *line, char *words, size_t size)
{
	char buf[512];
	FILE *f = fopen(path, "r");
	int found = 0;

	if (!f)
		return -errno;
	if (fgets(buf, sizeof(buf), f) && sscanf(buf, "# expect-line: %u", line) == 1)
		found++;
	if (fgets(buf, sizeof(buf), f) && !strncmp(buf, "# expect: ", 10)) {
		buf[strcspn(buf, "\n")] = '\0';
		snprintf(words, size, "%s", buf + 10);
		found++;
	}
	fclose(f);
	return found == 2 ? 0 : -EINVAL;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static void test_bad_configs(void)
{
	struct dirent **names;
	int n, files = 0;

	n = scandir(BAD_DIR, &names, NULL, by_name);
	if (!ok(n > 0, "%s is readable", BAD_DIR))
		return;
	for (int i = 0; i < n; i++) {
		struct config_errors errs = { 0 };
		struct config *cfg = NULL;
		char path[512], words[512], prefix[600];
		const char *name = names[i]->d_name;
		size_t len = strlen(name), matched = 0, malformed = 0;
		unsigned line = 0;
		int rc;

		if (len < 6 || strcmp(name + len - 5, ".conf")) {
			free(names[i]);
			continue;
		}
		files++;
		snprintf(path, sizeof(path), "%s/%s", BAD_DIR, name);
		if (!ok(!read_expectations(path, &line, words, sizeof(words)),
			"%s: has # expect-line and # expect", name)) {
			free(names[i]);
			continue;
		}
		rc = config_load(path, &cfg, &errs);
		snprintf(prefix, sizeof(prefix), "%s:%u: ", path, line);
		for (size_t e = 0; e < errs.n; e++) {
			if (errs.v[e].line == line && !strncmp(errs.v[e].text, prefix, strlen(prefix)) &&
			    strstr(errs.v[e].text, words))
				matched++;
			/* Every message has the FILE:LINE: what; expected WHAT shape. */
			if (strncmp(errs.v[e].text, path, strlen(path)) || !strstr(errs.v[e].text, "; expected "))
				malformed++;
		}
		if (!ok(rc == -EINVAL && cfg == NULL && matched == 1 && !malformed,
			"%s: line %u says '%s'", name, line, words))
			print_errors(&errs);
		config_errors_clear(&errs);
		config_free(cfg);
		free(names[i]);
	}
	free(names);
	ok(files >= 15, "at least 15 bad files (%d)", files);
}

/* jobs = auto and a number, both ways, and what --check-config prints. */
static void test_jobs_auto(void)
{
	struct config *cfg = NULL, *again = NULL;
	struct config_errors errs = { 0 };
	char *text;

	ok(!parse_text("[daemon]\njobs = 3\n", "three", &cfg, NULL) && cfg->jobs == 3 && !cfg->jobs_auto,
	   "jobs = 3 is 3, not auto");
	text = cfg ? format(cfg) : NULL;
	ok(text && strstr(text, "\njobs = 3\n") && !strstr(text, "jobs = auto"), "  and is printed as 3");
	free(text);
	config_free(cfg);
	cfg = NULL;
	ok(!parse_text("[daemon]\njobs = auto\n", "auto", &cfg, NULL) && cfg->jobs_auto &&
	   cfg->jobs == config_jobs_auto(), "jobs = auto is config_jobs_auto()'s number");
	text = cfg ? format(cfg) : NULL;
	ok(text && strstr(text, "\njobs = auto\n") && strstr(text, "# auto: "),
	   "  printed as auto, with what it is here in a comment");
	ok(text && !parse_text(text, "formatted", &again, NULL) && again->jobs_auto,
	   "  which reads back as auto");
	free(text);
	config_free(again);
	config_free(cfg);
	cfg = NULL;
	ok(parse_text("[daemon]\njobs = Auto\n", "caps", &cfg, &errs) && errs.n == 1 &&
	   strstr(errs.v[0].text, "jobs = 'Auto' is not a number; expected a whole number from 1 to 64, or auto"),
	   "jobs = Auto is an error that names what is accepted");
	config_errors_clear(&errs);
	config_free(cfg);
}

int main(void)
{
	log_set_level(LOG_EMERG);
	test_defaults();
	test_jobs_auto();
	test_shipped();
	test_good_full();
	test_long_protect();
	test_protect_quoted();
	test_duration_bounds();
	test_good_crlf_bom();
	test_teardown_spellings();
	test_empty_and_sections_only();
	test_multi_error();
	test_open_errors();
	test_bad_configs();
	return tap_done();
}
