/*
 * log: the daemon's only output channel.  Lines go to stderr as "<N>text",
 * the sd-daemon(3) convention, so journald files them at the right priority
 * and a terminal still reads them.  When stderr is the journal's stream
 * (main.c asks log_stderr_is_journal()), every message goes to the journal
 * sink instead, as one entry with the event's MESSAGE_ID and fields, so that
 * a log pipeline can filter on them; its MESSAGE is the line stderr would
 * have had, and all messages take the one path, so the journal keeps their
 * order.  Each message is one line either way: its control characters,
 * and any byte that is not UTF-8, are escaped (textesc, backslashes kept),
 * while the journal's fields carry their values as they are, binary-safe.
 * It does not open syslog, rotate files or buffer: one write(2) (or one
 * sink call) per message keeps the daemon's lines and its teardown
 * processes', on the same stderr, from interleaving.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log-ids.h"
#include "log.h"
#include "textesc.h"

/* Room for one message's text (longer ones are cut), for one field of its
 * journal entry (a longer one is cut, so that it leaves room for the
 * others), and for all of them. */
#define LOG_TEXT_LEN 1024
#define LOG_FIELD_LEN 2048
#define LOG_ENTRY_LEN 6144
#define LOG_ENTRY_FIELDS 16

static int log_level = LOG_INFO;
static log_journal_sink *journal_sink;

static const char *const log_event_ids[LOG_EVENT_COUNT] = {
	[LOG_EVENT_ACCEPTED] = XR_MESSAGE_ACCEPTED,
	[LOG_EVENT_STARTED] = XR_MESSAGE_STARTED,
	[LOG_EVENT_RELEASED] = XR_MESSAGE_RELEASED,
	[LOG_EVENT_DONE] = XR_MESSAGE_DONE,
	[LOG_EVENT_ZOMBIE] = XR_MESSAGE_ZOMBIE,
	[LOG_EVENT_ORPHAN] = XR_MESSAGE_ORPHAN,
	[LOG_EVENT_STUCK] = XR_MESSAGE_STUCK,
	[LOG_EVENT_UNSTUCK] = XR_MESSAGE_UNSTUCK,
	[LOG_EVENT_FAILED] = XR_MESSAGE_FAILED,
	[LOG_EVENT_SCRUB_GAVE_UP] = XR_MESSAGE_SCRUB_GAVE_UP,
	[LOG_EVENT_RELOADED] = XR_MESSAGE_RELOADED,
	[LOG_EVENT_RELOAD_FAILED] = XR_MESSAGE_RELOAD_FAILED,
};

/* One journal entry being put together: its fields, each "NAME=value" in
 * one iovec (sd_journal_sendv(3) takes no field split across two). */
struct log_entry {
	struct iovec iov[LOG_ENTRY_FIELDS];
	int n;
	size_t used;
	char buf[LOG_ENTRY_LEN];
};

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

const char *log_event_id(enum log_event event)
{
	return event > LOG_EVENT_NONE && event < LOG_EVENT_COUNT ? log_event_ids[event] : NULL;
}

bool log_stderr_is_journal(void)
{
	const char *stream = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	char *end;

	if (!stream || !*stream)
		return false;
	errno = 0;
	dev = strtoull(stream, &end, 10);
	if (errno || end == stream || *end != ':')
		return false;
	stream = end + 1;
	ino = strtoull(stream, &end, 10);
	if (errno || end == stream || *end)
		return false;
	if (fstat(STDERR_FILENO, &st))
		return false;
	return st.st_dev == dev && st.st_ino == ino;
}

void log_set_journal_sink(log_journal_sink *sink)
{
	journal_sink = sink;
}

/* Add a field to E, cut at LOG_FIELD_LEN or where E's room ends; one that
 * finds no room at all is left out. */
static void log_entry_add(struct log_entry *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void log_entry_add(struct log_entry *e, const char *fmt, ...)
{
	size_t room = sizeof(e->buf) - e->used;
	va_list ap;
	int len;

	if (room > LOG_FIELD_LEN)
		room = LOG_FIELD_LEN;
	if (e->n == LOG_ENTRY_FIELDS || room < 2)
		return;
	va_start(ap, fmt);
	len = vsnprintf(e->buf + e->used, room, fmt, ap);
	va_end(ap);
	if (len < 0)
		return;
	if ((size_t)len >= room)
		len = room - 1;
	e->iov[e->n].iov_base = e->buf + e->used;
	e->iov[e->n].iov_len = len;
	e->n++;
	e->used += len + 1;
}

/* TEXT with its FIELDS (or none) to the journal sink; its result. */
static int log_journal_send(int prio, const struct log_fields *f, const char *text)
{
	struct log_entry e;
	const char *id;

	e.n = 0;
	e.used = 0;
	log_entry_add(&e, "MESSAGE=%s", text);
	log_entry_add(&e, "PRIORITY=%d", prio);
	log_entry_add(&e, "SYSLOG_IDENTIFIER=xenreaperd");
	if (f) {
		if ((id = log_event_id(f->event)))
			log_entry_add(&e, "MESSAGE_ID=%s", id);
		if (f->has_domid)
			log_entry_add(&e, "XEN_DOMID=%u", f->domid);
		if (f->uuid)
			log_entry_add(&e, "XEN_DOMAIN_UUID=%s", f->uuid);
		if (f->name)
			log_entry_add(&e, "XEN_DOMAIN_NAME=%s", f->name);
		if (f->state)
			log_entry_add(&e, "XENREAPER_JOB_STATE=%s", f->state);
		if (f->reason)
			log_entry_add(&e, "XENREAPER_JOB_REASON=%s", f->reason);
		if (f->held_by)
			log_entry_add(&e, "XENREAPER_HELD_BY=%s", f->held_by);
		if (f->error)
			log_entry_add(&e, "XENREAPER_ERROR=%s", f->error);
		if (f->rate)
			log_entry_add(&e, "XENREAPER_RATE_MIB_S=%s", f->rate);
		if (f->config)
			log_entry_add(&e, "XENREAPER_CONFIG_FILE=%s", f->config);
	}
	return journal_sink(e.iov, e.n);
}

static void log_vemit(int prio, const struct log_fields *fields, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
static void log_vemit(int prio, const struct log_fields *fields, const char *fmt, va_list ap)
{
	char raw[LOG_TEXT_LEN], text[LOG_TEXT_LEN], line[LOG_TEXT_LEN + 8];
	int len, saved_errno = errno;

	if (prio > log_level)
		return;
	vsnprintf(raw, sizeof(raw), fmt, ap);
	/* Once, for both paths: messages quote names, which are anybody's.
	 * Backslashes stay, so log_quote's \xNN are not escaped again. */
	textesc_escape(text, sizeof(text), raw, true);
	/* A journal that refuses the entry still has our stream. */
	if (journal_sink && log_journal_send(prio, fields, text) >= 0)
		goto out;
	/* Room enough: TEXT is shorter than LINE by more than "<N>\n". */
	len = snprintf(line, sizeof(line), "<%d>%s\n", prio, text);
	if (write(STDERR_FILENO, line, len) < 0) {
		/* Nowhere left to report it. */
	}
out:
	errno = saved_errno;
}

void log_msg(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vemit(prio, NULL, fmt, ap);
	va_end(ap);
}

void log_event(int prio, const struct log_fields *fields, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vemit(prio, fields, fmt, ap);
	va_end(ap);
}
