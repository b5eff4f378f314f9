/* log: leveled messages on stderr, each one line prefixed with its syslog
 * priority, or, when stderr is the journal's stream, journal entries with
 * fields; a message's control characters are escaped, fields are not. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <syslog.h>
#include <sys/uio.h>

/* Show messages of priority PRIO and more urgent (LOG_INFO by default). */
void log_set_level(int prio);
/* Parse "err", "warning", "notice", "info" or "debug"; -EINVAL otherwise. */
int log_level_parse(const char *name, int *prio);
/* Room for a log_quote() result: 64 characters of text, escaped. */
#define LOG_QUOTE_LEN (64 * 4 + 4)

/* TEXT as a log line may carry it, in BUF (LOG_QUOTE_LEN): printable ASCII
 * as is, a backslash and any other byte as \xNN, cut after 64 characters
 * with "...".  Values from xenstore are anybody's: a newline in one must
 * not forge a second journal line.  Returns BUF. */
const char *log_quote(const char *text, char *buf);
/* Write one line; thread-safe (one write(2) per line). */
void log_msg(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_err(...)     log_msg(LOG_ERR, __VA_ARGS__)
#define log_warning(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_notice(...)  log_msg(LOG_NOTICE, __VA_ARGS__)
#define log_info(...)    log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...)   log_msg(LOG_DEBUG, __VA_ARGS__)

/* The kinds of event a log pipeline filters on, each with its MESSAGE_ID
 * (log-ids.h) and its entry in config/xenreaper.catalog. */
enum log_event {
	LOG_EVENT_NONE,		/* no MESSAGE_ID: fields alone */
	LOG_EVENT_ACCEPTED,
	LOG_EVENT_STARTED,
	LOG_EVENT_RELEASED,
	LOG_EVENT_DONE,
	LOG_EVENT_ZOMBIE,
	LOG_EVENT_ORPHAN,
	LOG_EVENT_STUCK,
	LOG_EVENT_UNSTUCK,
	LOG_EVENT_FAILED,
	LOG_EVENT_SCRUB_GAVE_UP,
	LOG_EVENT_RELOADED,
	LOG_EVENT_RELOAD_FAILED,
	LOG_EVENT_COUNT
};

/* What a journal entry carries besides MESSAGE, PRIORITY and
 * SYSLOG_IDENTIFIER; NULL members (and domid without has_domid) are left
 * out.  Off the journal only the message is written. */
struct log_fields {
	enum log_event event;	/* MESSAGE_ID */
	bool has_domid;
	uint32_t domid;		/* XEN_DOMID */
	const char *uuid;	/* XEN_DOMAIN_UUID */
	const char *name;	/* XEN_DOMAIN_NAME */
	const char *state;	/* XENREAPER_JOB_STATE */
	const char *reason;	/* XENREAPER_JOB_REASON: request, poweroff, crash, orphan */
	const char *held_by;	/* XENREAPER_HELD_BY: what holds a zombie, what a stuck destroy waits on */
	const char *error;	/* XENREAPER_ERROR */
	const char *rate;	/* XENREAPER_RATE_MIB_S */
	const char *config;	/* XENREAPER_CONFIG_FILE */
};

/* The MESSAGE_ID of EVENT (32 hex digits), or NULL for LOG_EVENT_NONE. */
const char *log_event_id(enum log_event event);
/* Log one event: its message as log_msg() writes it, and on the journal
 * the FIELDS with it. */
void log_event(int prio, const struct log_fields *fields, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Where journal entries go: sd_journal_sendv(3)'s signature, replaceable
 * by tests.  Must be thread-safe. */
typedef int log_journal_sink(const struct iovec *iov, int n);
/* Whether stderr is the journal's stream: JOURNAL_STREAM (systemd.exec(5))
 * names stderr's device and inode.  Not sd_booted(): a daemon started by
 * hand on a systemd host writes to its terminal. */
bool log_stderr_is_journal(void);
/* Send every message to SINK (NULL: back to stderr lines); a message SINK
 * refuses goes to stderr.  Call before threads start. */
void log_set_journal_sink(log_journal_sink *sink);
