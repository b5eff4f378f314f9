/*
 * config-parse: reads the policy file into a struct config and says, for
 * every problem in it, which line and what was expected, all of them at
 * once so one edit fixes a file.  inih splits the text into sections and
 * keys; this module feeds it through a reader that numbers the lines (inih
 * tells a handler nothing about lines) and looks at each raw line only as
 * far as needed to see what inih does not report: section headers (for
 * duplicate, unknown and empty sections), indented continuation lines, and
 * syntax errors past the first.
 *
 * It does not apply anything (the daemon does, from the struct), watch the
 * file or merge command-line options, and it keeps no state between loads.
 * The struct itself, its defaults and its printing are config.c's.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <ini.h>

#include "config.h"
#include "config-private.h"
#include "duration.h"
#include "log.h"


#define JOBS_MAX 64
#define PROGRESS_MIN_MS 10
#define PROGRESS_MAX_MS (60 * 1000)
/* Below a second a teardown still busy removing devices would be called
 * stuck; past an hour nobody is told in time. */
#define STUCK_MIN_MS 1000
#define STUCK_MAX_MS (3600LL * 1000)
#define TAKE_BACK_MAX_MS (24 * 3600LL * 1000)
#define PROBE_INTERVAL_MIN_MS 100
/* Upper bounds, so that no span added to "now" can overflow and every
 * value means something an admin could want. */
#define PROBE_INTERVAL_MAX_MS (3600LL * 1000)
#define GRACE_MAX_MS (24 * 3600LL * 1000)
#define RETENTION_MAX_MS (30 * 24 * 3600LL * 1000)

enum daemon_key {
	DK_JOBS, DK_RETENTION, DK_PROGRESS_INTERVAL, DK_SCRUB_PROBE,
	DK_SCRUB_PROBE_INTERVAL, DK_PROTECT, DK_LOG_LEVEL, DK_METRICS, DK_STUCK_AFTER, DK_TAKE_BACK_AFTER, N_DAEMON_KEYS
};

static const char *const daemon_keys[] = {
	[DK_JOBS] = "jobs", [DK_RETENTION] = "retention",
	[DK_PROGRESS_INTERVAL] = "progress-interval", [DK_SCRUB_PROBE] = "scrub-probe",
	[DK_SCRUB_PROBE_INTERVAL] = "scrub-probe-interval", [DK_PROTECT] = "protect",
	[DK_LOG_LEVEL] = "log-level", [DK_METRICS] = "metrics", [DK_STUCK_AFTER] = "stuck-after",
	[DK_TAKE_BACK_AFTER] = "take-back-after",
};

enum pool_key { PK_SCRUB, PK_TEARDOWN, PK_GRACE, PK_PRIORITY, PK_ORPHANS, N_POOL_KEYS };

static const char *const pool_keys[] = {
	[PK_SCRUB] = "scrub", [PK_TEARDOWN] = "teardown", [PK_GRACE] = "grace",
	[PK_PRIORITY] = "priority", [PK_ORPHANS] = "orphans",
};


/* What the reader made of the line inih is working on. */
enum line_kind {
	LINE_NONE,		/* before the first line */
	LINE_IGNORED,		/* blank, comment, bad header: nothing more to say */
	LINE_HEADER,
	LINE_KEY,		/* inih must call the handler, else it is a syntax error */
	LINE_CONTINUATION,	/* indented: inih appends it to the previous key */
};

enum section_kind { SECTION_NONE, SECTION_DAEMON, SECTION_DEFAULT, SECTION_POOL, SECTION_UNKNOWN };

struct seen_section {
	char *name;
	unsigned line;
};

struct parser {
	FILE *file;
	const char *name;
	struct config *cfg;
	struct config_errors *errs;
	unsigned n_errors;
	bool nomem;

	unsigned lineno;
	enum line_kind kind;
	bool handled;		/* inih called the handler for this line */
	char excerpt[48];	/* the line's start, for messages */

	enum section_kind section;
	size_t pool;		/* SECTION_POOL: index in cfg->pools */
	bool have_prev_key;	/* inih's notion: an indented line continues it */
	enum section_kind prev_key_section;
	int prev_key;

	struct seen_section *seen;
	size_t n_seen;
	/* Line each key was set on, 0 if not set: duplicates and inheritance. */
	unsigned daemon_lines[N_DAEMON_KEYS];
	unsigned default_lines[N_POOL_KEYS];
	unsigned (*pool_lines)[N_POOL_KEYS];
};

static void parser_error(struct parser *p, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void parser_error(struct parser *p, unsigned line, const char *fmt, ...)
{
	struct config_error *v;
	char *what, *text;
	va_list ap;
	int rc;

	p->n_errors++;
	if (!p->errs)
		return;
	va_start(ap, fmt);
	rc = vasprintf(&what, fmt, ap);
	va_end(ap);
	if (rc < 0) {
		p->nomem = true;
		return;
	}
	if (line)
		rc = asprintf(&text, "%s:%u: %s", p->name, line, what);
	else
		rc = asprintf(&text, "%s: %s", p->name, what);
	free(what);
	if (rc < 0) {
		p->nomem = true;
		return;
	}
	v = realloc(p->errs->v, (p->errs->n + 1) * sizeof(*v));
	if (!v) {
		free(text);
		p->nomem = true;
		return;
	}
	p->errs->v = v;
	v[p->errs->n].line = line;
	v[p->errs->n].text = text;
	p->errs->n++;
}

static int name_lookup(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return i;
	return -EINVAL;
}

static bool all_digits(const char *s)
{
	return *s && strspn(s, "0123456789") == strlen(s);
}

/* ---------------------------------------------------------------- values */

static void parse_jobs(struct parser *p, const char *value)
{
	unsigned long n;

	if (!strcmp(value, "auto")) {
		p->cfg->jobs = config_jobs_auto();
		p->cfg->jobs_auto = true;
		return;
	}
	if (!all_digits(value)) {
		parser_error(p, p->lineno, "jobs = '%s' is not a number; expected a whole number from 1 to %d, or auto",
			     value, JOBS_MAX);
		return;
	}
	/* Too many digits saturate at ULONG_MAX: out of range, not garbage. */
	n = strtoul(value, NULL, 10);
	if (n < 1 || n > JOBS_MAX) {
		parser_error(p, p->lineno, "jobs = '%s' is out of range; expected a whole number from 1 to %d, or auto",
			     value, JOBS_MAX);
		return;
	}
	p->cfg->jobs = n;
	p->cfg->jobs_auto = false;
}

static void parse_duration(struct parser *p, const char *key, const char *value,
			   int64_t min, int64_t max, int64_t *ms)
{
	char lo[DURATION_STR_LEN], hi[DURATION_STR_LEN];
	int64_t v;
	int rc;

	rc = duration_parse(value, &v);
	if (rc == -EINVAL && all_digits(value)) {
		parser_error(p, p->lineno, "%s = '%s' has no unit, and units are required; expected %s",
			     key, value, DURATION_HINT);
		return;
	}
	if (rc == -EINVAL) {
		parser_error(p, p->lineno, "%s = '%s' is not a duration; expected %s",
			     key, value, DURATION_HINT);
		return;
	}
	duration_format(min, lo, sizeof(lo));
	duration_format(max, hi, sizeof(hi));
	if (rc == 0 && v >= min && v <= max) {
		*ms = v;
		return;
	}
	parser_error(p, p->lineno, "%s = '%s' is out of range; expected a duration from %s to %s",
		     key, value, lo, hi);
}

/* One protect item from S: a bare word, or a "quoted name" in which \" and
 * \\ stand for themselves (a guest named `web 1`).  Returns the malloc'd
 * item and sets *END past it; NULL with a message on a bad item. */
static char *protect_item(struct parser *p, const char *s, const char **end)
{
	char *item, *out;
	size_t len;

	if (*s != '"') {
		len = strcspn(s, " \t");
		if (memchr(s, '"', len) || memchr(s, '\\', len)) {
			parser_error(p, p->lineno,
				     "protect item '%.*s' has a quote or backslash inside a bare name; expected names, UUIDs, or \"quoted names\" with \\\" and \\\\ escapes",
				     (int)len, s);
			return NULL;
		}
		*end = s + len;
		item = strndup(s, len);
		if (!item)
			p->nomem = true;
		return item;
	}
	out = item = malloc(strlen(s));
	if (!item) {
		p->nomem = true;
		return NULL;
	}
	for (s++; *s && *s != '"'; s++) {
		if (*s == '\\') {
			if (s[1] != '"' && s[1] != '\\') {
				parser_error(p, p->lineno,
					     "protect has '\\%c' in a quoted name; expected \\\" or \\\\ (the only escapes)",
					     s[1] ? s[1] : ' ');
				free(item);
				return NULL;
			}
			s++;
		}
		*out++ = *s;
	}
	*out = '\0';
	if (*s != '"') {
		parser_error(p, p->lineno, "protect has a quoted name with no closing quote; expected \"NAME\"");
		free(item);
		return NULL;
	}
	if (!item[0]) {
		parser_error(p, p->lineno, "protect has an empty quoted name; expected a domain name or UUID");
		free(item);
		return NULL;
	}
	s++;
	if (*s && *s != ' ' && *s != '\t') {
		parser_error(p, p->lineno, "protect has text right after a closing quote; expected a space between items");
		free(item);
		return NULL;
	}
	*end = s;
	return item;
}

static void parse_protect(struct parser *p, const char *value)
{
	struct config *cfg = p->cfg;
	const char *s = value, *end;
	char **v, *item;

	for (;;) {
		s += strspn(s, " \t");
		if (!*s)
			return;
		item = protect_item(p, s, &end);
		if (!item)
			return;
		s = end;
		if (all_digits(item)) {
			parser_error(p, p->lineno,
				     "protect lists '%s', a domid; expected domain names or UUIDs (domids are reused)",
				     item);
			free(item);
			continue;
		}
		v = realloc(cfg->protect, (cfg->n_protect + 1) * sizeof(*v));
		if (!v) {
			free(item);
			p->nomem = true;
			return;
		}
		cfg->protect = v;
		cfg->protect[cfg->n_protect++] = item;
	}
}

/* A continuation line of protect: inih hands it over as it is, so its
 * inline comment (a ';' after a space or tab, as on a key line) goes here. */
static void parse_protect_continued(struct parser *p, const char *value)
{
	char *copy = strdup(value);

	if (!copy) {
		p->nomem = true;
		return;
	}
	for (char *c = copy; *c; c++) {
		if (*c == ';' && c > copy && isspace((unsigned char)c[-1])) {
			*c = '\0';
			break;
		}
	}
	parse_protect(p, copy);
	free(copy);
}

static void parse_log_level(struct parser *p, const char *value)
{
	int prio;

	if (log_level_parse(value, &prio)) {
		parser_error(p, p->lineno,
			     "log-level = '%s' is not valid; expected err, warning, notice, info or debug",
			     value);
		return;
	}
	p->cfg->log_level = prio;
}

/* "off", or an absolute path to a .prom file (node_exporter reads only
 * those, from its textfile directory). */
static void parse_metrics(struct parser *p, const char *value)
{
	size_t len = strlen(value);
	char *copy = NULL;

	if (strcmp(value, "off")) {
		if (value[0] != '/' || len < 6 || strcmp(value + len - 5, ".prom") ||
		    value[len - 6] == '/') {
			parser_error(p, p->lineno,
				     "metrics = '%s' is not valid; expected off or an absolute path ending in .prom (node_exporter's textfile collector reads only those)",
				     value);
			return;
		}
		copy = strdup(value);
		if (!copy) {
			p->nomem = true;
			return;
		}
	}
	free(p->cfg->metrics);
	p->cfg->metrics = copy;
}

static void parse_scrub_probe(struct parser *p, const char *value)
{
	int i = name_lookup(config_scrub_probe_names, N_ELEMS(config_scrub_probe_names), value);

	if (i < 0) {
		parser_error(p, p->lineno,
			     "scrub-probe = '%s' is not valid; expected auto, physinfo, heap-dump or none",
			     value);
		return;
	}
	p->cfg->scrub_probe = i;
}

/* "request", or "shutdown" and/or "crash" joined by commas. */
static int teardown_parse(const char *value, unsigned *teardown)
{
	unsigned bits = 0, bit;
	const char *s = value;
	size_t len;

	if (!strcmp(value, "request")) {
		*teardown = 0;
		return 0;
	}
	for (;;) {
		s += strspn(s, " \t");
		len = strcspn(s, ", \t");
		if (len == strlen("shutdown") && !strncmp(s, "shutdown", len))
			bit = CONFIG_TEARDOWN_SHUTDOWN;
		else if (len == strlen("crash") && !strncmp(s, "crash", len))
			bit = CONFIG_TEARDOWN_CRASH;
		else
			return -EINVAL;
		if (bits & bit)
			return -EINVAL;
		bits |= bit;
		s += len;
		s += strspn(s, " \t");
		if (!*s)
			break;
		if (*s++ != ',')
			return -EINVAL;
	}
	*teardown = bits;
	return 0;
}

static void parse_pool_key(struct parser *p, struct config_pool *pool, int key, const char *value)
{
	enum job_policy policy;
	int i;

	switch (key) {
	case PK_SCRUB:
		if (job_policy_parse(value, &policy)) {
			parser_error(p, p->lineno, "scrub = '%s' is not valid; expected deferred or sync",
				     value);
			return;
		}
		pool->scrub = policy;
		return;
	case PK_TEARDOWN:
		if (teardown_parse(value, &pool->teardown))
			parser_error(p, p->lineno,
				     "teardown = '%s' is not valid; expected request, shutdown, crash or shutdown,crash",
				     value);
		return;
	case PK_GRACE:
		parse_duration(p, "grace", value, 0, GRACE_MAX_MS, &pool->grace_ms);
		return;
	case PK_PRIORITY:
		i = name_lookup(config_priority_names, N_ELEMS(config_priority_names), value);
		if (i < 0) {
			parser_error(p, p->lineno, "priority = '%s' is not valid; expected idle, low or normal",
				     value);
			return;
		}
		pool->priority = i;
		return;
	case PK_ORPHANS:
		if (strcmp(value, "adopt") && strcmp(value, "ignore")) {
			parser_error(p, p->lineno, "orphans = '%s' is not valid; expected adopt or ignore",
				     value);
			return;
		}
		pool->adopt_orphans = !strcmp(value, "adopt");
		return;
	}
}

static void parse_daemon_key(struct parser *p, int key, const char *value)
{
	struct config *cfg = p->cfg;

	switch (key) {
	case DK_JOBS:
		parse_jobs(p, value);
		return;
	case DK_RETENTION:
		parse_duration(p, "retention", value, 0, RETENTION_MAX_MS, &cfg->retention_ms);
		return;
	case DK_PROGRESS_INTERVAL:
		parse_duration(p, "progress-interval", value, PROGRESS_MIN_MS, PROGRESS_MAX_MS,
			       &cfg->progress_interval_ms);
		return;
	case DK_STUCK_AFTER:
		parse_duration(p, "stuck-after", value, STUCK_MIN_MS, STUCK_MAX_MS, &cfg->stuck_after_ms);
		return;
	case DK_TAKE_BACK_AFTER:
		if (!strcmp(value, "off"))
			cfg->take_back_after_ms = 0;
		else if (duration_parse(value, &(int64_t){ 0 }) == -EINVAL && !all_digits(value))
			parser_error(p, p->lineno, "take-back-after = '%s' is not off or a duration; expected off or %s",
				     value, DURATION_HINT);
		else
			parse_duration(p, "take-back-after", value, STUCK_MIN_MS, TAKE_BACK_MAX_MS,
				       &cfg->take_back_after_ms);
		return;
	case DK_SCRUB_PROBE:
		parse_scrub_probe(p, value);
		return;
	case DK_SCRUB_PROBE_INTERVAL:
		parse_duration(p, "scrub-probe-interval", value, PROBE_INTERVAL_MIN_MS, PROBE_INTERVAL_MAX_MS,
			       &cfg->scrub_probe_interval_ms);
		return;
	case DK_PROTECT:
		parse_protect(p, value);
		return;
	case DK_LOG_LEVEL:
		parse_log_level(p, value);
		return;
	case DK_METRICS:
		parse_metrics(p, value);
		return;
	}
}

/* ---------------------------------------------------------------- sections */

static const char *section_label(const struct parser *p)
{
	switch (p->section) {
	case SECTION_DAEMON:
		return "[daemon]";
	case SECTION_DEFAULT:
		return "[default]";
	default:
		return "this section";
	}
}

static int pool_add(struct parser *p, const char *name, size_t *index)
{
	struct config *cfg = p->cfg;
	struct config_pool *pools;
	unsigned (*lines)[N_POOL_KEYS];
	char *copy;

	copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	pools = realloc(cfg->pools, (cfg->n_pools + 1) * sizeof(*pools));
	if (!pools) {
		free(copy);
		return -ENOMEM;
	}
	cfg->pools = pools;
	lines = realloc(p->pool_lines, (cfg->n_pools + 1) * sizeof(*lines));
	if (!lines) {
		free(copy);
		return -ENOMEM;
	}
	p->pool_lines = lines;
	memset(p->pool_lines[cfg->n_pools], 0, sizeof(*lines));
	/* Unset keys are filled from [default] once the whole file is read. */
	cfg->pools[cfg->n_pools] = cfg->defaults;
	cfg->pools[cfg->n_pools].name = copy;
	*index = cfg->n_pools++;
	return 0;
}

/* Whether NAME is a section we know; reports it if not. */
static bool section_valid(struct parser *p, const char *name)
{
	const char *pool_name = name + strlen("pool:");

	if (!strcmp(name, "daemon") || !strcmp(name, "default"))
		return true;
	if (strncmp(name, "pool:", strlen("pool:"))) {
		parser_error(p, p->lineno,
			     "unknown section [%s]; expected [daemon], [default] or [pool:NAME]", name);
		return false;
	}
	if (!*pool_name || isspace((unsigned char)pool_name[0]) ||
	    isspace((unsigned char)pool_name[strlen(pool_name) - 1])) {
		parser_error(p, p->lineno,
			     "section [%s] names no cpupool; expected [pool:NAME] with NAME as xl cpupool-list shows it",
			     name);
		return false;
	}
	return true;
}

/* Remember NAME's first line; reports it if it was seen before. */
static void section_note(struct parser *p, const char *name)
{
	struct seen_section *seen;
	size_t i;

	for (i = 0; i < p->n_seen; i++) {
		if (!strcmp(p->seen[i].name, name)) {
			/* Keys below still count, so one set in both halves is reported too. */
			parser_error(p, p->lineno,
				     "section [%s] appears again (first on line %u); expected each section once",
				     name, p->seen[i].line);
			return;
		}
	}
	seen = realloc(p->seen, (p->n_seen + 1) * sizeof(*seen));
	if (!seen) {
		p->nomem = true;
		return;
	}
	p->seen = seen;
	seen[p->n_seen].line = p->lineno;
	seen[p->n_seen].name = strdup(name);
	if (!seen[p->n_seen].name) {
		p->nomem = true;
		return;
	}
	p->n_seen++;
}

static void section_start(struct parser *p, const char *name)
{
	const char *pool_name = name + strlen("pool:");
	size_t i;

	p->have_prev_key = false;
	p->section = SECTION_UNKNOWN;
	if (!section_valid(p, name))
		return;
	section_note(p, name);
	if (!strcmp(name, "daemon")) {
		p->section = SECTION_DAEMON;
		return;
	}
	if (!strcmp(name, "default")) {
		p->section = SECTION_DEFAULT;
		return;
	}
	for (i = 0; i < p->cfg->n_pools; i++) {
		if (!strcmp(p->cfg->pools[i].name, pool_name)) {
			p->section = SECTION_POOL;
			p->pool = i;
			return;
		}
	}
	if (pool_add(p, pool_name, &p->pool)) {
		p->nomem = true;
		return;
	}
	p->section = SECTION_POOL;
}

/* ---------------------------------------------------------------- inih glue */

/* Called by inih for each key and each continuation line.  The section is
 * our own reader's: inih's SECTION is cut at 50 characters. */
static int parser_handle(void *user, const char *section, const char *name, const char *value)
{
	struct parser *p = user;
	struct config_pool *pool;
	unsigned *lines;
	int key;

	p->handled = true;
	if (p->kind == LINE_CONTINUATION) {
		if (p->prev_key_section == SECTION_DAEMON && p->prev_key == DK_PROTECT)
			parse_protect_continued(p, value);
		else if (p->prev_key_section != SECTION_UNKNOWN)
			parser_error(p, p->lineno,
				     "indented line continues the value of '%s'; expected each key at the start of its own line",
				     name);
		return 1;
	}

	p->have_prev_key = true;
	p->prev_key_section = p->section;
	p->prev_key = -1;
	switch (p->section) {
	case SECTION_NONE:
		parser_error(p, p->lineno,
			     "key '%s' comes before any section; expected a [daemon], [default] or [pool:NAME] line above it",
			     name);
		return 1;
	case SECTION_UNKNOWN:
		/* Reported once, at its header. */
		return 1;
	case SECTION_DAEMON:
		key = name_lookup(daemon_keys, N_ELEMS(daemon_keys), name);
		if (key < 0) {
			parser_error(p, p->lineno,
				     "unknown key '%s' in [daemon]; expected jobs, retention, progress-interval, stuck-after, take-back-after, scrub-probe, scrub-probe-interval, protect, log-level or metrics",
				     name);
			return 1;
		}
		lines = p->daemon_lines;
		pool = NULL;
		break;
	default:
		key = name_lookup(pool_keys, N_ELEMS(pool_keys), name);
		if (p->section == SECTION_DEFAULT) {
			lines = p->default_lines;
			pool = &p->cfg->defaults;
		} else {
			lines = p->pool_lines[p->pool];
			pool = &p->cfg->pools[p->pool];
		}
		if (key < 0) {
			if (pool->name)
				parser_error(p, p->lineno,
					     "unknown key '%s' in [pool:%s]; expected scrub, teardown, grace, priority or orphans",
					     name, pool->name);
			else
				parser_error(p, p->lineno,
					     "unknown key '%s' in [default]; expected scrub, teardown, grace, priority or orphans",
					     name);
			return 1;
		}
		break;
	}

	p->prev_key = key;
	if (lines[key]) {
		if (pool && pool->name)
			parser_error(p, p->lineno,
				     "'%s' is set again in [pool:%s] (first on line %u); expected each key once per section",
				     name, pool->name, lines[key]);
		else
			parser_error(p, p->lineno,
				     "'%s' is set again in %s (first on line %u); expected each key once per section",
				     name, section_label(p), lines[key]);
		return 1;
	}
	lines[key] = p->lineno;
	if (pool)
		parse_pool_key(p, pool, key, value);
	else
		parse_daemon_key(p, key, value);
	/* Our own errors are collected above; a 0 would only make inih
	 * report the first of them a second time. */
	return 1;
}

/* inih's find_chars_or_comment() for "]": the header closes before any
 * " ;" inline comment, else inih calls the line an error. */
static char *header_close(char *s)
{
	bool was_space = false;

	for (; *s; s++) {
		if (*s == ']')
			return s;
		if (was_space && *s == ';')
			return NULL;
		was_space = isspace((unsigned char)*s);
	}
	return NULL;
}

/* See what inih will make of LINE, in its order: comment, continuation,
 * header, key. */
static void classify_line(struct parser *p, char *line)
{
	char *s = line, *close;
	size_t len;

	if (p->lineno == 1 && !strncmp(s, "\xEF\xBB\xBF", 3))
		s += 3;
	while (isspace((unsigned char)*s))
		s++;
	len = strlen(s);
	while (len && isspace((unsigned char)s[len - 1]))
		len--;
	snprintf(p->excerpt, sizeof(p->excerpt), "%.*s%s", len > 40 ? 40 : (int)len, s,
		 len > 40 ? "..." : "");

	p->handled = false;
	if (!*s || *s == ';' || *s == '#') {
		p->kind = LINE_IGNORED;
	} else if (s > line && p->have_prev_key) {
		p->kind = LINE_CONTINUATION;
	} else if (*s == '[') {
		close = header_close(s + 1);
		if (!close) {
			/* inih stays in the previous section; the keys below were
			 * meant for this one, so judging them there only adds noise. */
			p->kind = LINE_IGNORED;
			p->section = SECTION_UNKNOWN;
			parser_error(p, p->lineno,
				     "section header '%s' has no closing ']'; expected [daemon], [default] or [pool:NAME]",
				     p->excerpt);
			return;
		}
		p->kind = LINE_HEADER;
		*close = '\0';
		section_start(p, s + 1);
		*close = ']';
	} else {
		p->kind = LINE_KEY;
	}
}

/* The line inih just finished: a key line it did not hand over was one it
 * could not read. */
static void finish_line(struct parser *p)
{
	if (p->kind == LINE_KEY && !p->handled)
		parser_error(p, p->lineno,
			     "cannot read '%s'; expected key = value, a [section] line or a # comment",
			     p->excerpt);
	p->kind = LINE_NONE;
}

/* inih's ini_reader: fgets() that numbers lines and keeps an overlong line
 * from being read as several. */
static char *parser_read(char *buf, int size, void *user)
{
	struct parser *p = user;
	size_t len = 0, chars = 0, room = size - 2;	/* for the newline and the NUL */
	bool nul = false;
	int c;

	finish_line(p);
	/* By hand, not fgets(): a NUL byte would end fgets()'s string early and
	 * hide the rest of the line (or shift every line number after it). */
	while ((c = getc(p->file)) != EOF && c != '\n') {
		if (c == '\0')
			nul = true;
		else if (chars++ < room)
			buf[len++] = c;
	}
	if (c == EOF && !chars && !nul)
		return NULL;
	p->lineno++;
	if (c == '\n')
		buf[len++] = '\n';
	buf[len] = '\0';
	if (nul || chars > room) {
		if (nul)
			parser_error(p, p->lineno, "line has a NUL byte; expected text");
		else
			parser_error(p, p->lineno,
				     "line is longer than %zu characters; expected shorter lines (split protect over indented lines)",
				     room);
		p->kind = LINE_IGNORED;
		strcpy(buf, "\n");
		return buf;
	}
	classify_line(p, buf);
	return buf;
}

/* ---------------------------------------------------------------- API */

static void pool_inherit(struct config_pool *pool, const struct config_pool *def,
			 const unsigned lines[N_POOL_KEYS])
{
	if (!lines[PK_SCRUB])
		pool->scrub = def->scrub;
	if (!lines[PK_TEARDOWN])
		pool->teardown = def->teardown;
	if (!lines[PK_GRACE])
		pool->grace_ms = def->grace_ms;
	if (!lines[PK_PRIORITY])
		pool->priority = def->priority;
	if (!lines[PK_ORPHANS])
		pool->adopt_orphans = def->adopt_orphans;
}

int config_parse(FILE *file, const char *name, struct config **out,
		 struct config_errors *errs)
{
	struct parser p = { .file = file, .name = name, .errs = errs };
	size_t i;
	int rc;

	rc = config_new(&p.cfg);
	if (rc)
		goto out;
	p.cfg->path = strdup(name);
	if (!p.cfg->path) {
		rc = -ENOMEM;
		goto out;
	}

	rc = ini_parse_stream(parser_read, &p, parser_handle, &p);
	finish_line(&p);
	if (rc == -2 || p.nomem) {
		rc = -ENOMEM;
		goto out;
	}
	if (ferror(file)) {
		parser_error(&p, 0, "cannot read: %s", strerror(EIO));
		rc = -EIO;
		goto out;
	}
	if (rc > 0 && !p.n_errors) {
		/* inih saw something our reader did not; never leave it silent. */
		parser_error(&p, rc, "cannot read this line; expected key = value or a [section] line");
	}
	if (p.n_errors) {
		rc = -EINVAL;
		goto out;
	}

	for (i = 0; i < p.cfg->n_pools; i++)
		pool_inherit(&p.cfg->pools[i], &p.cfg->defaults, p.pool_lines[i]);
	*out = p.cfg;
	p.cfg = NULL;
	rc = 0;
out:
	config_free(p.cfg);
	for (i = 0; i < p.n_seen; i++)
		free(p.seen[i].name);
	free(p.seen);
	free(p.pool_lines);
	return rc;
}

int config_load(const char *path, struct config **out, struct config_errors *errs)
{
	struct parser p = { .name = path, .errs = errs };
	FILE *file;
	int rc;

	file = fopen(path, "re");
	if (!file) {
		rc = -errno;
		parser_error(&p, 0, "cannot open: %s", strerror(-rc));
		return rc;
	}
	rc = config_parse(file, path, out, errs);
	fclose(file);
	return rc;
}
