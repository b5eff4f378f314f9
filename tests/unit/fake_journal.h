/* fake_journal: a journal sink for unit tests (log_set_journal_sink): it
 * keeps every entry the daemon sends, field by field. */
#pragma once
#include <stddef.h>
#include <stdio.h>

struct fake_journal_entry;

/* Send the daemon's log here, forgetting earlier entries; FAIL makes the
 * sink refuse each entry (-ENOTCONN), as a journal gone away would. */
void fake_journal_start(int fail);
/* Back to stderr; the entries stay readable until the next start. */
void fake_journal_stop(void);
/* How many entries were sent, and the Nth (from 0), or NULL. */
size_t fake_journal_count(void);
const struct fake_journal_entry *fake_journal_entry(size_t n);
/* The latest entry with MESSAGE_ID ID (NULL: with none) and, if DOMID is
 * not negative, XEN_DOMID DOMID; or NULL. */
const struct fake_journal_entry *fake_journal_find(const char *id, long domid);
/* How many entries have MESSAGE_ID ID. */
size_t fake_journal_count_id(const char *id);
/* The value of field NAME in E, or NULL (also for a NULL E). */
const char *fake_journal_field(const struct fake_journal_entry *e, const char *name);
/* Write the entries to F in the journal export format
 * (systemd-journal-remote reads it), with made-up timestamps; -errno. */
int fake_journal_export(FILE *f);
