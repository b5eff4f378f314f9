/*
 * config: the policy file, /etc/xen/xenreaper.conf (see xenreaper.conf(5)):
 *
 *   [daemon]          jobs, retention, progress-interval, stuck-after,
 *                     take-back-after,
 *                     scrub-probe, scrub-probe-interval, protect, log-level,
 *                     metrics
 *   [default]         scrub, teardown, grace, priority, orphans: pools not
 *                     named below
 *   [pool:NAME]       the same keys for the cpupool NAME; unset ones come
 *                     from [default]
 *
 * Not to be confused with the build's config.h, which is -include'd
 * everywhere and never included by name.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "job.h"

#define CONFIG_DEFAULT_PATH SYSCONFDIR "/xen/xenreaper.conf"
/* Where Debian's prometheus-node-exporter reads textfile metrics. */
#define CONFIG_DEFAULT_METRICS "/var/lib/prometheus/node-exporter/xenreaper.prom"

enum config_scrub_probe {
	CONFIG_PROBE_AUTO,	/* the daemon picks one that works */
	CONFIG_PROBE_PHYSINFO,
	CONFIG_PROBE_HEAP_DUMP,
	CONFIG_PROBE_NONE,
};

/* dom0 CPU priority of the teardown processes and their children. */
enum config_priority {
	CONFIG_PRIORITY_IDLE,	/* only when dom0 has nothing else to run */
	CONFIG_PRIORITY_LOW,	/* behind dom0's ordinary work */
	CONFIG_PRIORITY_NORMAL,	/* like any dom0 process */
};

/* What tears a dead preserved guest down without a request; 0 = nothing. */
#define CONFIG_TEARDOWN_SHUTDOWN (1U << 0)	/* it powered off */
#define CONFIG_TEARDOWN_CRASH    (1U << 1)	/* it crashed */

struct config_pool {
	char *name;			/* NULL for [default] */
	enum job_policy scrub;
	unsigned teardown;		/* CONFIG_TEARDOWN_* */
	int64_t grace_ms;		/* before an automatic teardown */
	enum config_priority priority;
	bool adopt_orphans;		/* take on dead domains nobody tears down */
};

struct config {
	char *path;			/* NULL for the built-in defaults */
	unsigned jobs;			/* teardowns at once, 1..64 */
	bool jobs_auto;			/* jobs is config_jobs_auto()'s */
	int64_t retention_ms;
	int64_t progress_interval_ms;	/* 10 ms..1 min */
	int64_t stuck_after_ms;		/* a destroy standing still this long is
					 * stuck: 1 s..1 h */
	int64_t take_back_after_ms;	/* a destroy standing still this long has
					 * its process ended and starts again:
					 * 1 s..24 h, 0 never */
	enum config_scrub_probe scrub_probe;
	int64_t scrub_probe_interval_ms;	/* >= 100 ms */
	int log_level;			/* LOG_ERR..LOG_DEBUG */
	char *metrics;			/* Prometheus textfile to write, NULL: off */
	char **protect;			/* domain names and UUIDs never torn down */
	size_t n_protect;
	struct config_pool defaults;	/* [default] */
	struct config_pool *pools;	/* [pool:NAME], in file order */
	size_t n_pools;
};

struct config_error {
	unsigned line;			/* 0: about the whole file */
	char *text;			/* "FILE:LINE: what was wrong; expected WHAT" */
};

/* Zero-initialise; config_errors_clear() frees. */
struct config_errors {
	struct config_error *v;
	size_t n;
};

/* At most this many teardowns at once when jobs = auto: Xen frees every
 * domain's pages under one heap lock, so parallel teardowns gain less
 * with each one more (measured: 2 took most of the gain of 4). */
#define CONFIG_JOBS_AUTO_MAX 4
/* jobs = auto: dom0's online vCPUs (each teardown keeps one busy in its
 * hypercall), from 1 to CONFIG_JOBS_AUTO_MAX. */
unsigned config_jobs_auto(void);
/* The built-in defaults (what an empty file gives). */
int config_new(struct config **out);
/* Accepts NULL. */
void config_free(struct config *cfg);
/* Read PATH.  On error *OUT is left alone and messages are appended to ERRS
 * (may be NULL): -EINVAL for a bad file (every problem reported), -ENOENT
 * if there is none (built-in defaults are then the caller's call), another
 * -errno if it cannot be read; -ENOMEM comes without a message. */
int config_load(const char *path, struct config **out, struct config_errors *errs);
/* The same from an open FILE, NAME being what messages call it. */
int config_parse(FILE *file, const char *name, struct config **out,
		 struct config_errors *errs);
/* The [pool:POOL_NAME] section, or [default] if none (or POOL_NAME NULL). */
const struct config_pool *config_pool_for(const struct config *cfg, const char *pool_name);
/* Whether protect names NAME or UUID_TEXT (either may be NULL; UUIDs match
 * in any case). */
bool config_is_protected(const struct config *cfg, const char *name, const char *uuid_text);
/* Whether protect lists any name (anything but a UUID): then a domain
 * whose name cannot be read cannot be told apart from a protected one. */
bool config_protects_names(const struct config *cfg);
/* Whether POOL tears a guest down for REASON (requests always do). */
bool config_pool_tears_down(const struct config_pool *pool, enum job_reason reason);
/* The effective configuration as a file config_parse() reads back to the
 * same values, every key spelled out; free() it. */
int config_format(const struct config *cfg, char **out);

const char *config_scrub_probe_name(enum config_scrub_probe probe);
const char *config_priority_name(enum config_priority priority);
/* "request", "shutdown", "crash" or "shutdown,crash" into BUF (16). */
void config_teardown_format(unsigned teardown, char *buf);

/* Drop every message; ERRS stays usable. */
void config_errors_clear(struct config_errors *errs);
/* Each message through log_err(). */
void config_errors_log(const struct config_errors *errs);
/* Log that a reload of PATH failed with RC and ERRS, the policy in effect
 * kept: one entry with the errors (ERROR, as config_errors_join() gives
 * them) for a log pipeline, then each on a line of its own. */
void config_log_reload_failed(const char *path, int rc, const struct config_errors *errs,
			      const char *error);
/* Log that a reload put CFG in effect. */
void config_log_reloaded(const struct config *cfg);
/* The messages, one per line, into a string to free(); "" if none.  It
 * is published, so it holds what fits in SENTENCE_MAX and ends "and N
 * more errors" for the rest (config_errors_log logs each). */
int config_errors_join(const struct config_errors *errs, char **out);
