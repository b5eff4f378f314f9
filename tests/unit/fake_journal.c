/*
 * fake_journal: an in-process journal for unit tests (never a product
 * mode).  It stands where sd_journal_sendv(3) does, takes each entry's
 * iovecs as that function would (one "NAME=value" field each) and keeps
 * them; a field without '=' or with an empty name fails the entry with
 * -EINVAL, as journald's protocol has no place for one.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fake_journal.h"
#include "log.h"

#define FAKE_JOURNAL_MAX 4096

struct fake_journal_entry {
	int n;
	char **fields;
};

static struct fake_journal_entry entries[FAKE_JOURNAL_MAX];
static size_t n_entries;
static int failing;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void fake_journal_forget(void)
{
	for (size_t i = 0; i < n_entries; i++) {
		for (int f = 0; f < entries[i].n; f++)
			free(entries[i].fields[f]);
		free(entries[i].fields);
	}
	n_entries = 0;
}

static int fake_journal_sendv(const struct iovec *iov, int n)
{
	struct fake_journal_entry e = { 0 };
	const char *eq;
	int rc;

	for (int i = 0; i < n; i++) {
		eq = memchr(iov[i].iov_base, '=', iov[i].iov_len);
		if (!eq || eq == iov[i].iov_base)
			return -EINVAL;
	}
	pthread_mutex_lock(&lock);
	if (failing) {
		rc = -ENOTCONN;
		goto out;
	}
	if (n_entries == FAKE_JOURNAL_MAX) {
		rc = -ENOBUFS;
		goto out;
	}
	e.fields = calloc(n, sizeof(*e.fields));
	if (!e.fields) {
		rc = -ENOMEM;
		goto out;
	}
	for (e.n = 0; e.n < n; e.n++) {
		e.fields[e.n] = strndup(iov[e.n].iov_base, iov[e.n].iov_len);
		if (!e.fields[e.n])
			abort();	/* a test without memory has nothing to say */
	}
	entries[n_entries++] = e;
	rc = 0;
out:
	pthread_mutex_unlock(&lock);
	return rc;
}

void fake_journal_start(int fail)
{
	pthread_mutex_lock(&lock);
	fake_journal_forget();
	failing = fail;
	pthread_mutex_unlock(&lock);
	log_set_journal_sink(fake_journal_sendv);
}

void fake_journal_stop(void)
{
	log_set_journal_sink(NULL);
}

/* Readers lock too: a worker thread may log while a test looks. */
size_t fake_journal_count(void)
{
	size_t n;

	pthread_mutex_lock(&lock);
	n = n_entries;
	pthread_mutex_unlock(&lock);
	return n;
}

const struct fake_journal_entry *fake_journal_entry(size_t n)
{
	const struct fake_journal_entry *e;

	pthread_mutex_lock(&lock);
	e = n < n_entries ? &entries[n] : NULL;
	pthread_mutex_unlock(&lock);
	return e;
}

const char *fake_journal_field(const struct fake_journal_entry *e, const char *name)
{
	size_t len = strlen(name);

	for (int f = 0; e && f < e->n; f++)
		if (!strncmp(e->fields[f], name, len) && e->fields[f][len] == '=')
			return e->fields[f] + len + 1;
	return NULL;
}

/* Whether E has MESSAGE_ID ID (NULL: none). */
static int fake_journal_has_id(const struct fake_journal_entry *e, const char *id)
{
	const char *got = fake_journal_field(e, "MESSAGE_ID");

	return id ? got && !strcmp(got, id) : !got;
}

const struct fake_journal_entry *fake_journal_find(const char *id, long domid)
{
	const struct fake_journal_entry *found = NULL;
	const char *got;

	pthread_mutex_lock(&lock);
	for (size_t i = n_entries; i-- > 0 && !found;) {
		if (!fake_journal_has_id(&entries[i], id))
			continue;
		got = fake_journal_field(&entries[i], "XEN_DOMID");
		if (domid < 0 || (got && strtol(got, NULL, 10) == domid))
			found = &entries[i];
	}
	pthread_mutex_unlock(&lock);
	return found;
}

size_t fake_journal_count_id(const char *id)
{
	size_t count = 0;

	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < n_entries; i++)
		count += fake_journal_has_id(&entries[i], id);
	pthread_mutex_unlock(&lock);
	return count;
}

/* One field of an export: NAME=value, or, for a value with a newline,
 * NAME, a newline, its length as 64-bit little endian, and the value. */
static void fake_journal_export_field(FILE *f, const char *field)
{
	const char *eq = strchr(field, '='), *value = eq + 1;
	uint64_t len = strlen(value);
	unsigned char le[8];

	if (!strchr(value, '\n')) {
		fprintf(f, "%s\n", field);
		return;
	}
	for (int i = 0; i < 8; i++)
		le[i] = len >> (8 * i);
	fprintf(f, "%.*s\n", (int)(eq - field), field);
	fwrite(le, 1, sizeof(le), f);
	fprintf(f, "%s\n", value);
}

int fake_journal_export(FILE *f)
{
	static uint64_t usec = 1700000000000000ULL;
	int rc = 0;

	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < n_entries; i++) {
		usec += 1000;
		fprintf(f, "__REALTIME_TIMESTAMP=%" PRIu64 "\n__MONOTONIC_TIMESTAMP=%" PRIu64 "\n"
			"_BOOT_ID=6d2a0f5b3c8e4e7f9a1b2c3d4e5f6071\n", usec, (uint64_t)(usec - 1699999000000000ULL));
		for (int field = 0; field < entries[i].n; field++)
			fake_journal_export_field(f, entries[i].fields[field]);
		fputc('\n', f);
	}
	if (ferror(f))
		rc = -EIO;
	pthread_mutex_unlock(&lock);
	return rc;
}
