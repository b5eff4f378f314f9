/*
 * config: the policy as a struct: its built-in defaults, the lookups the
 * daemon makes (a pool's section, the protect list, what tears a guest
 * down), printing it back as a file, the error list, and the log entries
 * of a reload.  Reading a file is config-parse.c's.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <strings.h>

#include "config.h"
#include "config-private.h"
#include "duration.h"
#include "hv.h"
#include "log.h"
#include "sentence.h"

const char *const config_scrub_probe_names[CONFIG_N_PROBES] = {
	[CONFIG_PROBE_AUTO] = "auto", [CONFIG_PROBE_PHYSINFO] = "physinfo",
	[CONFIG_PROBE_HEAP_DUMP] = "heap-dump", [CONFIG_PROBE_NONE] = "none",
};

const char *const config_priority_names[CONFIG_N_PRIORITIES] = {
	[CONFIG_PRIORITY_IDLE] = "idle", [CONFIG_PRIORITY_LOW] = "low",
	[CONFIG_PRIORITY_NORMAL] = "normal",
};

/* log.c owns the mapping; these are only the spellings to try. */
const char *const config_log_level_names[CONFIG_N_LOG_LEVELS] = {
	"err", "warning", "notice", "info", "debug",
};

unsigned config_jobs_auto(void)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);

	if (online < 1)
		return 1;
	return online < CONFIG_JOBS_AUTO_MAX ? (unsigned)online : CONFIG_JOBS_AUTO_MAX;
}

int config_new(struct config **out)
{
	struct config *cfg;

	cfg = calloc(1, sizeof(*cfg));
	if (!cfg)
		return -ENOMEM;
	cfg->jobs = config_jobs_auto();
	cfg->jobs_auto = true;
	cfg->retention_ms = 10 * 60 * 1000;
	cfg->progress_interval_ms = 250;
	/* Under libxl's own 40 s hotplug-script timeout, so a hung script is
	 * seen before libxl kills it; past what device removal takes. */
	cfg->stuck_after_ms = 30 * 1000;
	cfg->scrub_probe = CONFIG_PROBE_AUTO;
	cfg->scrub_probe_interval_ms = 1000;
	cfg->log_level = LOG_INFO;
	cfg->metrics = strdup(CONFIG_DEFAULT_METRICS);
	if (!cfg->metrics) {
		free(cfg);
		return -ENOMEM;
	}
	cfg->defaults.scrub = JOB_POLICY_DEFERRED;
	cfg->defaults.teardown = 0;
	cfg->defaults.grace_ms = 30 * 1000;
	cfg->defaults.priority = CONFIG_PRIORITY_LOW;
	cfg->defaults.adopt_orphans = true;
	*out = cfg;
	return 0;
}

void config_free(struct config *cfg)
{
	size_t i;

	if (!cfg)
		return;
	for (i = 0; i < cfg->n_protect; i++)
		free(cfg->protect[i]);
	free(cfg->protect);
	for (i = 0; i < cfg->n_pools; i++)
		free(cfg->pools[i].name);
	free(cfg->pools);
	free(cfg->path);
	free(cfg->metrics);
	free(cfg);
}

const struct config_pool *config_pool_for(const struct config *cfg, const char *pool_name)
{
	for (size_t i = 0; pool_name && i < cfg->n_pools; i++)
		if (!strcmp(cfg->pools[i].name, pool_name))
			return &cfg->pools[i];
	return &cfg->defaults;
}

bool config_is_protected(const struct config *cfg, const char *name, const char *uuid_text)
{
	for (size_t i = 0; i < cfg->n_protect; i++) {
		if (name && *name && !strcmp(cfg->protect[i], name))
			return true;
		if (uuid_text && *uuid_text && !strcasecmp(cfg->protect[i], uuid_text))
			return true;
	}
	return false;
}

bool config_protects_names(const struct config *cfg)
{
	uint8_t uuid[HV_UUID_LEN];

	for (size_t i = 0; i < cfg->n_protect; i++)
		if (hv_uuid_parse(cfg->protect[i], uuid))
			return true;
	return false;
}

bool config_pool_tears_down(const struct config_pool *pool, enum job_reason reason)
{
	switch (reason) {
	case JOB_REASON_POWEROFF:
		return pool->teardown & CONFIG_TEARDOWN_SHUTDOWN;
	case JOB_REASON_CRASH:
		return pool->teardown & CONFIG_TEARDOWN_CRASH;
	case JOB_REASON_ORPHAN:
		return pool->adopt_orphans;
	default:
		return true;
	}
}

const char *config_scrub_probe_name(enum config_scrub_probe probe)
{
	return config_scrub_probe_names[probe];
}

const char *config_priority_name(enum config_priority priority)
{
	return config_priority_names[priority];
}

void config_teardown_format(unsigned teardown, char *buf)
{
	switch (teardown & (CONFIG_TEARDOWN_SHUTDOWN | CONFIG_TEARDOWN_CRASH)) {
	case 0:
		strcpy(buf, "request");
		break;
	case CONFIG_TEARDOWN_SHUTDOWN:
		strcpy(buf, "shutdown");
		break;
	case CONFIG_TEARDOWN_CRASH:
		strcpy(buf, "crash");
		break;
	default:
		strcpy(buf, "shutdown,crash");
		break;
	}
}

static const char *log_level_name(int prio)
{
	int p;

	for (size_t i = 0; i < N_ELEMS(config_log_level_names); i++)
		if (!log_level_parse(config_log_level_names[i], &p) && p == prio)
			return config_log_level_names[i];
	return "info";
}

static void format_pool(FILE *f, const struct config_pool *pool)
{
	char grace[DURATION_STR_LEN], teardown[16];

	duration_format(pool->grace_ms, grace, sizeof(grace));
	config_teardown_format(pool->teardown, teardown);
	if (pool->name)
		fprintf(f, "\n[pool:%s]\n", pool->name);
	else
		fprintf(f, "\n[default]\n");
	fprintf(f, "scrub = %s\nteardown = %s\ngrace = %s\npriority = %s\norphans = %s\n",
		job_policy_name(pool->scrub), teardown, grace, config_priority_name(pool->priority),
		pool->adopt_orphans ? "adopt" : "ignore");
}

/* Whether ITEM must be quoted to read back the same: it holds blanks of
 * any kind (inih strips them at either end), a quote or a backslash, or it
 * starts like a comment (on a continuation line it would be one). */
static bool protect_item_quoted(const char *item)
{
	if (item[0] == '#' || item[0] == ';')
		return true;
	for (const char *c = item; *c; c++)
		if (isspace((unsigned char)*c) || *c == '"' || *c == '\\')
			return true;
	return false;
}

/* ITEM as config_parse() reads it back: bare, or quoted with escapes. */
static void format_protect_item(FILE *f, const char *item)
{
	if (!protect_item_quoted(item)) {
		fputs(item, f);
		return;
	}
	fputc('"', f);
	for (const char *c = item; *c; c++) {
		if (*c == '"' || *c == '\\')
			fputc('\\', f);
		fputc(*c, f);
	}
	fputc('"', f);
}

/* How many columns format_protect_item() takes for ITEM. */
static size_t protect_item_width(const char *item)
{
	size_t n = strlen(item);

	if (!protect_item_quoted(item))
		return n;
	for (const char *c = item; *c; c++)
		n += *c == '"' || *c == '\\';
	return n + 2;
}

int config_format(const struct config *cfg, char **out)
{
	char retention[DURATION_STR_LEN], progress[DURATION_STR_LEN], probe[DURATION_STR_LEN];
	char stuck[DURATION_STR_LEN], take_back[DURATION_STR_LEN];
	char *text = NULL;
	size_t len, i, col;
	FILE *f;

	f = open_memstream(&text, &len);
	if (!f)
		return -ENOMEM;
	duration_format(cfg->retention_ms, retention, sizeof(retention));
	duration_format(cfg->progress_interval_ms, progress, sizeof(progress));
	duration_format(cfg->scrub_probe_interval_ms, probe, sizeof(probe));
	duration_format(cfg->stuck_after_ms, stuck, sizeof(stuck));
	if (cfg->take_back_after_ms)
		duration_format(cfg->take_back_after_ms, take_back, sizeof(take_back));
	else
		snprintf(take_back, sizeof(take_back), "off");
	if (cfg->jobs_auto)
		fprintf(f, "[daemon]\n# auto: %u here (dom0's online vCPUs, at most %d)\njobs = auto\n",
			cfg->jobs, CONFIG_JOBS_AUTO_MAX);
	else
		fprintf(f, "[daemon]\njobs = %u\n", cfg->jobs);
	fprintf(f, "retention = %s\nprogress-interval = %s\nstuck-after = %s\ntake-back-after = %s\n"
		"scrub-probe = %s\nscrub-probe-interval = %s\nprotect =",
		retention, progress, stuck, take_back, config_scrub_probe_name(cfg->scrub_probe), probe);
	col = strlen("protect =");
	for (i = 0; i < cfg->n_protect; i++) {
		size_t width = protect_item_width(cfg->protect[i]);

		/* Continuation lines keep a long list (or a long first item)
		 * under inih's line limit. */
		if (col + 1 + width > 72) {
			fputs("\n\t", f);
			col = 8 + width;
		} else {
			fputc(' ', f);
			col += 1 + width;
		}
		format_protect_item(f, cfg->protect[i]);
	}
	fprintf(f, "\nlog-level = %s\n", log_level_name(cfg->log_level));
	fprintf(f, "metrics = %s\n", cfg->metrics ? cfg->metrics : "off");
	format_pool(f, &cfg->defaults);
	for (i = 0; i < cfg->n_pools; i++)
		format_pool(f, &cfg->pools[i]);
	if (fclose(f)) {
		free(text);
		return -ENOMEM;
	}
	*out = text;
	return 0;
}

void config_errors_clear(struct config_errors *errs)
{
	for (size_t i = 0; i < errs->n; i++)
		free(errs->v[i].text);
	free(errs->v);
	errs->v = NULL;
	errs->n = 0;
}

void config_errors_log(const struct config_errors *errs)
{
	for (size_t i = 0; i < errs->n; i++)
		log_err("%s", errs->v[i].text);
}

void config_log_reload_failed(const char *path, int rc, const struct config_errors *errs,
			      const char *error)
{
	struct log_fields fields = { .event = LOG_EVENT_RELOAD_FAILED, .config = path, .error = error };

	log_event(LOG_ERR, &fields, "reload of %s failed, keeping the policy in effect:", path);
	config_errors_log(errs);
	if (!errs->n)
		log_err("%s: %s", path, strerror(-rc));
}

void config_log_reloaded(const struct config *cfg)
{
	struct log_fields fields = { .event = LOG_EVENT_RELOADED, .config = cfg->path };

	log_event(LOG_NOTICE, &fields, "policy reloaded from %s",
		  cfg->path ? cfg->path : "built-in defaults");
}

int config_errors_join(const struct config_errors *errs, char **out)
{
	static const struct sentence_kind error = { "error", "errors" };
	struct sentence st;

	sentence_init(&st, SENTENCE_MAX);
	for (size_t i = 0; i < errs->n; i++)
		sentence_item(&st, &error, "%s%s", i ? "\n" : "", errs->v[i].text);
	sentence_left(&st, "\n");
	return sentence_finish(&st, out);
}
