/* log: leveled messages on stderr, each prefixed with its syslog priority. */
#pragma once
#include <syslog.h>

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
