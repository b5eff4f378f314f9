/*
 * log: the daemon's only output channel.  Lines go to stderr as "<N>text",
 * the sd-daemon(3) convention, so journald files them at the right priority
 * and a terminal still reads them.  It does not open syslog, rotate files or
 * buffer: one write(2) per line keeps worker threads from interleaving.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

static int log_level = LOG_INFO;

static const char *const log_level_names[] = {
	[LOG_ERR] = "err", [LOG_WARNING] = "warning", [LOG_NOTICE] = "notice",
	[LOG_INFO] = "info", [LOG_DEBUG] = "debug",
};

void log_set_level(int prio)
{
	log_level = prio;
}

int log_level_parse(const char *name, int *prio)
{
	for (int i = 0; i < (int)(sizeof(log_level_names) / sizeof(*log_level_names)); i++) {
		if (log_level_names[i] && !strcmp(name, log_level_names[i])) {
			*prio = i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *log_quote(const char *text, char *buf)
{
	size_t used = 0;
	unsigned shown = 0;

	for (const unsigned char *c = (const unsigned char *)text; *c; c++, shown++) {
		if (shown == 64) {
			memcpy(buf + used, "...", 3);
			used += 3;
			break;
		}
		if (*c >= 0x20 && *c < 0x7f && *c != '\\')
			buf[used++] = *c;
		else
			used += snprintf(buf + used, 5, "\\x%02x", *c);
	}
	buf[used] = '\0';
	return buf;
}

void log_msg(int prio, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int len, saved_errno = errno;

	if (prio > log_level)
		return;
	len = snprintf(line, sizeof(line), "<%d>", prio);
	va_start(ap, fmt);
	len += vsnprintf(line + len, sizeof(line) - len - 1, fmt, ap);
	va_end(ap);
	if (len > (int)sizeof(line) - 2)
		len = sizeof(line) - 2;
	line[len++] = '\n';
	if (write(STDERR_FILENO, line, len) < 0) {
		/* Nowhere left to report it. */
	}
	errno = saved_errno;
}
