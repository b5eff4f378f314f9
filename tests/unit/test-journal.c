/*
 * Unit tests for the daemon's journal entries (issue 19, part 2): when
 * stderr is the journal's stream, and what each event sends there (its
 * MESSAGE_ID and fields: XEN_DOMID, XEN_DOMAIN_UUID, XEN_DOMAIN_NAME,
 * XENREAPER_JOB_STATE and the rest), on the test doubles with the journal
 * sink replaced by fake_journal.c; and that off the journal the lines on
 * stderr are what they were, and the same text as the entries' MESSAGE.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bed.h"
#include "clock.h"
#include "config.h"
#include "fake_hv.h"
#include "fake_journal.h"
#include "fake_store.h"
#include "layout.h"
#include "log-ids.h"
#include "log.h"
#include "orphans.h"
#include "reaper.h"
#include "scrub.h"
#include "stuck.h"
#include "tap.h"
#include "runner.h"

#define FIELD(e, name) fake_journal_field((e), (name))

static char scratch[] = "/tmp/xr-journal-XXXXXX";

/* stderr caught in a file, for the lines off the journal. */
static FILE *caught;
static int saved_stderr = -1;

static void catch_stderr(void)
{
	fflush(stderr);
	caught = tmpfile();
	saved_stderr = dup(STDERR_FILENO);
	if (!caught || saved_stderr < 0 || dup2(fileno(caught), STDERR_FILENO) < 0)
		printf("# cannot catch stderr: %s\n", strerror(errno));
}

/* Stop catching; what was written, to free(). */
static char *release_stderr(void)
{
	char *text;
	long len;

	fflush(stderr);
	dup2(saved_stderr, STDERR_FILENO);
	close(saved_stderr);
	len = ftell(caught);
	text = calloc(1, len + 1);
	rewind(caught);
	if (text && fread(text, 1, len, caught) != (size_t)len)
		text[0] = '\0';
	fclose(caught);
	return text;
}

/* With XR_JOURNAL_EXPORT set (tests/unit/test-catalog.sh sets it), add
 * the entries sent so far to that file in the journal export format, for
 * the catalog to be checked against what the daemon really sends. */
static void export_entries(void)
{
	const char *path = getenv("XR_JOURNAL_EXPORT");
	FILE *f;

	if (!path)
		return;
	f = fopen(path, "a");
	if (!f || fake_journal_export(f) || fclose(f))
		printf("# cannot export the entries to %s\n", path);
}

static void test_ids(void)
{
	const char *id, *other;
	bool hex = true, distinct = true;

	ok(log_event_id(LOG_EVENT_NONE) == NULL, "a plain message has no MESSAGE_ID");
	ok(log_event_id(LOG_EVENT_COUNT) == NULL, "nor does an event out of range");
	for (int e = LOG_EVENT_NONE + 1; e < LOG_EVENT_COUNT; e++) {
		id = log_event_id(e);
		if (!id || strlen(id) != 32 || strspn(id, "0123456789abcdef") != 32) {
			printf("# event %d: id '%s'\n", e, id ? id : "(none)");
			hex = false;
			continue;
		}
		for (int f = LOG_EVENT_NONE + 1; f < e; f++) {
			other = log_event_id(f);
			if (other && !strcmp(id, other)) {
				printf("# events %d and %d share %s\n", f, e, id);
				distinct = false;
			}
		}
	}
	ok(hex, "every event has a MESSAGE_ID of 32 lowercase hex digits, as sd-id128 formats one");
	ok(distinct, "  and no two events share one");
}

static void test_detect(void)
{
	struct stat st;
	char value[64];

	unsetenv("JOURNAL_STREAM");
	ok(!log_stderr_is_journal(), "no JOURNAL_STREAM: stderr lines");
	fstat(STDERR_FILENO, &st);
	snprintf(value, sizeof(value), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", value, 1);
	ok(log_stderr_is_journal(), "JOURNAL_STREAM naming stderr's device and inode: the journal");
	snprintf(value, sizeof(value), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino + 1);
	setenv("JOURNAL_STREAM", value, 1);
	ok(!log_stderr_is_journal(),
	   "JOURNAL_STREAM of another file (stderr redirected since systemd set it): stderr lines");
	setenv("JOURNAL_STREAM", "journal", 1);
	ok(!log_stderr_is_journal(), "a JOURNAL_STREAM that is no device:inode: stderr lines");
	snprintf(value, sizeof(value), "%llu:", (unsigned long long)st.st_dev);
	setenv("JOURNAL_STREAM", value, 1);
	ok(!log_stderr_is_journal(), "  nor is one without its inode");
	setenv("JOURNAL_STREAM", "", 1);
	ok(!log_stderr_is_journal(), "  nor an empty one");
	unsetenv("JOURNAL_STREAM");
}

/* stderr: a line before the sink, none while it takes them, and the one
 * it refuses. */
static void test_sink(void)
{
	char *text;

	catch_stderr();
	log_msg(LOG_WARNING, "hello %d", 7);
	fake_journal_start(0);
	log_msg(LOG_WARNING, "to the journal");
	fake_journal_start(1);
	log_msg(LOG_ERR, "the journal refused this");
	fake_journal_stop();
	text = release_stderr();
	is_str(text, "<4>hello 7\n<3>the journal refused this\n",
	       "stderr has the line before the sink and the one it refused, not the one it took");
	free(text);
}

/* What an entry carries. */
static void test_sink_entries(void)
{
	const struct fake_journal_entry *e;
	char long_value[10000];
	struct log_fields f;

	fake_journal_start(0);
	log_msg(LOG_WARNING, "to the journal %d", 8);
	log_debug("below the level");
	f = (struct log_fields){ .event = LOG_EVENT_DONE, .has_domid = true, .domid = 0,
				 .uuid = "u", .name = "two\nlines", .state = "s", .reason = "r",
				 .held_by = "h", .error = "e", .rate = "1.5", .config = "/c" };
	log_event(LOG_NOTICE, &f, "an event");
	memset(long_value, 'x', sizeof(long_value) - 1);
	long_value[sizeof(long_value) - 1] = '\0';
	f = (struct log_fields){ .event = LOG_EVENT_STUCK, .held_by = long_value, .error = "after it" };
	log_event(LOG_WARNING, &f, "a long one");
	fake_journal_stop();

	is_int(fake_journal_count(), 3, "three entries: the debug message is below the level");
	e = fake_journal_entry(0);
	is_str(FIELD(e, "MESSAGE"), "to the journal 8", "a plain message: MESSAGE is its text");
	is_str(FIELD(e, "PRIORITY"), "4", "  PRIORITY its priority");
	is_str(FIELD(e, "SYSLOG_IDENTIFIER"), "xenreaperd", "  SYSLOG_IDENTIFIER the daemon's");
	ok(!FIELD(e, "MESSAGE_ID") && !FIELD(e, "XEN_DOMID"), "  and no MESSAGE_ID nor domain");
	e = fake_journal_entry(1);
	is_str(FIELD(e, "MESSAGE_ID"), XR_MESSAGE_DONE, "an event: its MESSAGE_ID");
	is_str(FIELD(e, "XEN_DOMID"), "0", "  XEN_DOMID, even 0 when it is set");
	is_str(FIELD(e, "XEN_DOMAIN_UUID"), "u", "  XEN_DOMAIN_UUID");
	is_str(FIELD(e, "XEN_DOMAIN_NAME"), "two\nlines", "  XEN_DOMAIN_NAME, a newline and all");
	is_str(FIELD(e, "XENREAPER_JOB_STATE"), "s", "  XENREAPER_JOB_STATE");
	is_str(FIELD(e, "XENREAPER_JOB_REASON"), "r", "  XENREAPER_JOB_REASON");
	is_str(FIELD(e, "XENREAPER_HELD_BY"), "h", "  XENREAPER_HELD_BY");
	is_str(FIELD(e, "XENREAPER_ERROR"), "e", "  XENREAPER_ERROR");
	is_str(FIELD(e, "XENREAPER_RATE_MIB_S"), "1.5", "  XENREAPER_RATE_MIB_S");
	is_str(FIELD(e, "XENREAPER_CONFIG_FILE"), "/c", "  XENREAPER_CONFIG_FILE");
	is_str(FIELD(e, "PRIORITY"), "5", "  PRIORITY");
	e = fake_journal_entry(2);
	is_str(FIELD(e, "MESSAGE"), "a long one", "a 10 KB field: the entry is still sent");
	ok(FIELD(e, "XENREAPER_HELD_BY") && strlen(FIELD(e, "XENREAPER_HELD_BY")) > 1000 &&
	   strlen(FIELD(e, "XENREAPER_HELD_BY")) < 2048,
	   "  with the field cut to 2 KiB (%zu bytes)", FIELD(e, "XENREAPER_HELD_BY") ?
	   strlen(FIELD(e, "XENREAPER_HELD_BY")) : 0);
	is_str(FIELD(e, "XENREAPER_ERROR"), "after it", "  leaving room for the fields after it");
	ok(!FIELD(e, "XEN_DOMID") && !FIELD(e, "XENREAPER_JOB_STATE"), "  and only the fields set");
}

/* Tear down domain 5 ("web", 512 MiB) in 2 s of fake time; the messages
 * the daemon wrote (on the journal or on stderr). */
static void teardown_web(void)
{
	struct bed b;

	bed_init(&b, 0, 1);
	b.cfg->scrub_probe = CONFIG_PROBE_NONE;
	bed_start(&b);
	bed_add_named(&b, 5, 131072, 0, "web");
	fake_hv_hold(b.hv);
	bed_request(&b, 5, 5);
	reaper_handle_store_events(b.r);
	reaper_tick(b.r);
	clock_advance(2000);
	fake_hv_release(b.hv);
	bed_settle(&b);
	if (strcmp(bed_node(&b, 5, "state") ? bed_node(&b, 5, "state") : "", "done"))
		printf("# domain 5 ended %s\n", bed_node(&b, 5, "state"));
	bed_dispose(&b);
}

static void test_done(void)
{
	const struct fake_journal_entry *e;
	char uuid[HV_UUID_STR_LEN], *plain, *from_journal, *at;
	size_t used = 0;

	fake_hv_uuid_text(5, uuid);
	fake_journal_start(0);
	teardown_web();
	export_entries();
	fake_journal_stop();

	e = fake_journal_find(XR_MESSAGE_ACCEPTED, 5);
	ok(e != NULL, "request accepted: an entry with its MESSAGE_ID");
	is_str(FIELD(e, "XENREAPER_JOB_STATE"), "queued", "  state queued");
	is_str(FIELD(e, "XENREAPER_JOB_REASON"), "request", "  reason request");
	is_str(FIELD(e, "XEN_DOMAIN_NAME"), "web", "  the domain's name");
	is_str(FIELD(e, "XEN_DOMAIN_UUID"), uuid, "  and UUID");
	ok(FIELD(e, "MESSAGE") && strstr(FIELD(e, "MESSAGE"), "domain 5 (web, 512 MiB, pool Pool-0, request"),
	   "  MESSAGE the queued line: %s", FIELD(e, "MESSAGE"));
	e = fake_journal_find(XR_MESSAGE_STARTED, 5);
	is_str(FIELD(e, "XENREAPER_JOB_STATE"), "destroying", "teardown started: state destroying");
	e = fake_journal_find(XR_MESSAGE_RELEASED, 5);
	is_str(FIELD(e, "XENREAPER_RATE_MIB_S"), "256.0", "pages back: the rate line with its rate field");
	ok(FIELD(e, "MESSAGE") && strstr(FIELD(e, "MESSAGE"), "131072 pages (512 MiB) released in 2.000 s, 256.0 MiB/s"),
	   "  MESSAGE the rate line: %s", FIELD(e, "MESSAGE"));
	e = fake_journal_find(XR_MESSAGE_DONE, 5);
	ok(e != NULL, "done: an entry with its MESSAGE_ID");
	is_str(FIELD(e, "XEN_DOMID"), "5", "  XEN_DOMID");
	is_str(FIELD(e, "XEN_DOMAIN_UUID"), uuid, "  XEN_DOMAIN_UUID");
	is_str(FIELD(e, "XEN_DOMAIN_NAME"), "web", "  XEN_DOMAIN_NAME");
	is_str(FIELD(e, "XENREAPER_JOB_STATE"), "done", "  XENREAPER_JOB_STATE");
	is_str(FIELD(e, "XENREAPER_RATE_MIB_S"), "256.0", "  the rate");
	is_str(FIELD(e, "PRIORITY"), "6", "  PRIORITY info");
	is_str(FIELD(e, "MESSAGE"), "domain 5 (web, 512 MiB): destroying -> done after 2.0 s",
	       "  MESSAGE the transition line");
	ok(!FIELD(e, "XENREAPER_ERROR"), "  no error");
	is_int(fake_journal_count_id(XR_MESSAGE_DONE), 1, "one done entry for one teardown");

	/* The same teardown off the journal: the same text, line by line. */
	from_journal = calloc(fake_journal_count() + 1, LOG_QUOTE_LEN * 8);
	for (size_t i = 0; from_journal && i < fake_journal_count(); i++)
		used += sprintf(from_journal + used, "<%s>%s\n",
				FIELD(fake_journal_entry(i), "PRIORITY"),
				FIELD(fake_journal_entry(i), "MESSAGE"));
	catch_stderr();
	teardown_web();
	plain = release_stderr();
	ok(plain && from_journal && !strcmp(plain, from_journal),
	   "off the journal, stderr has the same lines, as <N>MESSAGE (%zu entries)", fake_journal_count());
	if (plain && from_journal && strcmp(plain, from_journal))
		printf("# stderr:\n%s# journal:\n%s", plain, from_journal);
	at = plain ? strstr(plain, "<6>domain 5 (web, 512 MiB): destroying -> done after 2.0 s\n") : NULL;
	ok(at != NULL, "  the done line as it always was");
	free(plain);
	free(from_journal);
}

static void test_zombie(void)
{
	const struct fake_journal_entry *e;
	struct bed b;

	fake_journal_start(0);
	bed_init(&b, 0, 1);
	bed_start(&b);
	bed_add_named(&b, 30, 1000, 0, "ghost");
	fake_hv_make_zombie(b.hv, 30, 100, 50);
	bed_request(&b, 30, 30);
	bed_settle(&b);
	clock_advance(REAPER_ZOMBIE_SETTLE_MS);
	bed_settle(&b);
	is_str(bed_node(&b, 30, "state"), "zombie", "a zombie");
	e = fake_journal_find(XR_MESSAGE_ZOMBIE, 30);
	ok(e != NULL, "  an entry with the zombie MESSAGE_ID");
	is_str(FIELD(e, "XENREAPER_JOB_STATE"), "zombie", "  state zombie");
	is_str(FIELD(e, "XEN_DOMAIN_NAME"), "ghost", "  its name");
	ok(FIELD(e, "XENREAPER_HELD_BY") && bed_node(&b, 30, "held-by") &&
	   !strcmp(FIELD(e, "XENREAPER_HELD_BY"), bed_node(&b, 30, "held-by")),
	   "  what holds it, as its held-by node says: %s", FIELD(e, "XENREAPER_HELD_BY"));
	is_str(FIELD(e, "PRIORITY"), "4", "  PRIORITY warning");
	ok(FIELD(e, "MESSAGE") && strstr(FIELD(e, "MESSAGE"), "domain 30 (ghost) is a zombie: dead, "),
	   "  MESSAGE the zombie line");
	e = fake_journal_find(NULL, 30);
	ok(e && FIELD(e, "MESSAGE") && strstr(FIELD(e, "MESSAGE"), "destroying -> zombie"),
	   "the transition has the domain's fields without a MESSAGE_ID of its own");
	is_str(FIELD(e, "XENREAPER_JOB_STATE"), "zombie", "  state zombie");
	fake_hv_make_zombie(b.hv, 30, 0, 0);
	clock_advance(60000);
	bed_settle(&b);
	e = fake_journal_find(XR_MESSAGE_DONE, 30);
	ok(e && FIELD(e, "MESSAGE") && strstr(FIELD(e, "MESSAGE"), "zombie -> done"),
	   "a zombie that goes at last: done");
	bed_dispose(&b);
	export_entries();
	fake_journal_stop();
}

static void test_stuck(void)
{
	const struct fake_journal_entry *e;
	char empty[300];
	struct bed b;

	snprintf(empty, sizeof(empty), "%s/empty", scratch);
	mkdir(empty, 0755);
	stuck_set_roots(empty, empty, 0);
	fake_journal_start(0);
	bed_init(&b, 0, 1);
	bed_set_policy(&b, "[daemon]\nstuck-after = 5s\n");
	bed_start(&b);
	bed_add_named(&b, 5, 1000, 0, "slow");
	fake_hv_hold_domain(b.hv, 5, true);
	bed_request(&b, 5, 5);
	bed_run_busy(&b, 1000);
	fake_hv_wait_inside(b.hv, 1);
	bed_run_busy(&b, 4500);
	is_str(bed_node(&b, 5, "state"), "stuck", "a destroy standing still past stuck-after: stuck");
	e = fake_journal_find(XR_MESSAGE_STUCK, 5);
	ok(e != NULL, "  an entry with the stuck MESSAGE_ID");
	is_str(FIELD(e, "XENREAPER_JOB_STATE"), "stuck", "  state stuck");
	is_str(FIELD(e, "XEN_DOMAIN_NAME"), "slow", "  its name");
	ok(FIELD(e, "XENREAPER_HELD_BY") &&
	   strstr(FIELD(e, "XENREAPER_HELD_BY"), "libxl_domain_destroy has not returned, nothing released for 5 s"),
	   "  what it waits on: %s", FIELD(e, "XENREAPER_HELD_BY"));
	is_str(FIELD(e, "XENREAPER_HELD_BY"), bed_node(&b, 5, "held-by"), "  as its held-by node says");
	is_str(FIELD(e, "PRIORITY"), "4", "  PRIORITY warning");

	fake_hv_set_pages(b.hv, 5, 600);
	bed_run_busy(&b, 300);
	e = fake_journal_find(XR_MESSAGE_UNSTUCK, 5);
	ok(e && FIELD(e, "MESSAGE") && strstr(FIELD(e, "MESSAGE"), "its stuck teardown releases pages again"),
	   "its pages fall again: an entry with the unstuck MESSAGE_ID");
	is_str(FIELD(e, "XENREAPER_JOB_STATE"), "destroying", "  state destroying");
	fake_hv_hold_domain(b.hv, 5, false);
	bed_wait_gone(&b, 5);
	ok(fake_journal_find(XR_MESSAGE_DONE, 5) != NULL, "it returns: done");
	bed_dispose(&b);
	export_entries();
	fake_journal_stop();
	stuck_set_roots(NULL, NULL, 0);
}

static void test_failed(void)
{
	const struct fake_journal_entry *e;
	struct bed b;

	fake_journal_start(0);
	bed_init(&b, 0, 1);
	b.cfg->scrub_probe = CONFIG_PROBE_NONE;
	bed_start(&b);
	bed_add_named(&b, 14, 100, 0, "locked");
	fake_hv_make_failing(b.hv, 14);
	bed_request(&b, 14, 14);
	bed_run(&b, 6 * 60 * 1000);
	is_str(bed_node(&b, 14, "state"), "failed", "a destroy failing every time: failed");
	e = fake_journal_find(XR_MESSAGE_FAILED, 14);
	ok(e != NULL, "  an entry with the failed MESSAGE_ID");
	is_str(FIELD(e, "XENREAPER_JOB_STATE"), "failed", "  state failed");
	is_str(FIELD(e, "XEN_DOMAIN_NAME"), "locked", "  its name");
	ok(FIELD(e, "XENREAPER_ERROR") && strstr(FIELD(e, "XENREAPER_ERROR"), "the domain is still alive"),
	   "  why, in its error field: %s", FIELD(e, "XENREAPER_ERROR"));
	is_str(FIELD(e, "XENREAPER_ERROR"), bed_node(&b, 14, "error"), "  as its error node says");
	is_str(FIELD(e, "PRIORITY"), "4", "  PRIORITY warning: a job given up on");
	ok(FIELD(e, "MESSAGE") && strstr(FIELD(e, "MESSAGE"), "domain 14 (locked, 0 MiB): destroying -> failed after "),
	   "  MESSAGE the transition line: %s", FIELD(e, "MESSAGE"));
	is_int(fake_journal_count_id(XR_MESSAGE_DONE), 0, "  and no done entry");

	/* Refused at once: failed too, and no UUID to name. */
	fake_store_set(b.s, LAYOUT_REQUEST_DIR "/9", "not-a-uuid");
	bed_settle(&b);
	e = fake_journal_find(XR_MESSAGE_FAILED, 9);
	ok(e && FIELD(e, "MESSAGE") && strstr(FIELD(e, "MESSAGE"), "domain 9: request refused: "),
	   "a request refused: an entry with the failed MESSAGE_ID: %s", e ? FIELD(e, "MESSAGE") : "(none)");
	is_str(FIELD(e, "XENREAPER_JOB_STATE"), "failed", "  state failed");
	ok(!FIELD(e, "XEN_DOMAIN_UUID"), "  and no XEN_DOMAIN_UUID, since the request named none");
	bed_dispose(&b);
	export_entries();
	fake_journal_stop();
}

static void test_orphan(void)
{
	const struct fake_journal_entry *e;
	struct bed b;

	fake_journal_start(0);
	bed_init(&b, 0, 1);
	b.cfg->scrub_probe = CONFIG_PROBE_NONE;
	bed_start(&b);
	bed_add_named(&b, 20, 65536, 0, "left");
	fake_store_fire(b.s, "@introduceDomain");
	bed_settle(&b);
	bed_other_toolstack_destroys(&b, 20, 3);
	bed_settle(&b);
	bed_run(&b, ORPHANS_SETTLE_MS);
	bed_settle(&b);
	e = fake_journal_find(XR_MESSAGE_ORPHAN, 20);
	ok(e != NULL, "an orphan adopted: an entry with its MESSAGE_ID");
	is_str(FIELD(e, "XENREAPER_JOB_REASON"), "orphan", "  reason orphan");
	is_str(FIELD(e, "XENREAPER_JOB_STATE"), "zombie", "  state zombie");
	is_str(FIELD(e, "XEN_DOMAIN_NAME"), "left", "  the name it had alive");
	ok(FIELD(e, "XENREAPER_HELD_BY") != NULL, "  and what holds it");
	bed_dispose(&b);
	export_entries();
	fake_journal_stop();
}

static void test_scrub_gave_up(void)
{
	const struct fake_journal_entry *e;
	struct bed b;

	fake_journal_start(0);
	bed_init(&b, 0, 1);
	bed_set_policy(&b, "[default]\nscrub = sync\n");
	bed_start(&b);
	fake_hv_set_scrub(b.hv, HV_SCRUB_HEAP_DUMP, 500);
	fake_hv_inject(b.hv, FAKE_HV_SCRUB_PROBE, 1, -EACCES, true);
	fake_hv_add(b.hv, 80, 80, 1000, 0);
	bed_request(&b, 80, 80);
	bed_settle(&b);
	ok(fake_journal_find(XR_MESSAGE_SCRUB_GAVE_UP, -1) == NULL, "scrub probes failing: nothing given up yet");
	bed_run(&b, SCRUB_GIVE_UP_MS + 20000);
	e = fake_journal_find(XR_MESSAGE_SCRUB_GAVE_UP, -1);
	ok(e != NULL, "failing for long: an entry with the scrub-given-up MESSAGE_ID");
	is_str(FIELD(e, "XENREAPER_ERROR"), strerror(EACCES), "  the probe's error");
	ok(!FIELD(e, "XEN_DOMID"), "  and no domain: it is the host's");
	is_int(fake_journal_count_id(XR_MESSAGE_SCRUB_GAVE_UP), 1, "  once");
	bed_dispose(&b);
	export_entries();
	fake_journal_stop();
}

static void test_reload(void)
{
	const char *bad = SRCDIR "/tests/unit/bad-configs/jobs-zero.conf";
	const char *good = SRCDIR "/tests/unit/data/good-full.conf";
	const char *missing = SRCDIR "/tests/unit/data/no-such.conf";
	struct config_errors errs = { 0 };
	const struct fake_journal_entry *e;
	struct config *cfg = NULL;
	char *joined = NULL, *plain, want[1024];
	int rc;

	rc = config_load(bad, &cfg, &errs);
	ok(rc && errs.n == 1 && !config_errors_join(&errs, &joined), "a bad policy file does not load");
	fake_journal_start(0);
	config_log_reload_failed(bad, rc, &errs, joined);
	export_entries();
	fake_journal_stop();
	e = fake_journal_find(XR_MESSAGE_RELOAD_FAILED, -1);
	ok(e != NULL, "reload error: an entry with its MESSAGE_ID");
	is_str(FIELD(e, "XENREAPER_CONFIG_FILE"), bad, "  the file");
	ok(FIELD(e, "XENREAPER_ERROR") && strstr(FIELD(e, "XENREAPER_ERROR"), "jobs = '0' is out of range"),
	   "  what is wrong with it: %s", FIELD(e, "XENREAPER_ERROR"));
	is_str(FIELD(e, "XENREAPER_ERROR"), joined, "  every error, as the config-error node has them");
	is_str(FIELD(e, "PRIORITY"), "3", "  PRIORITY err");
	ok(!FIELD(e, "XEN_DOMID") && !FIELD(e, "XENREAPER_JOB_STATE"), "  and no domain");
	snprintf(want, sizeof(want), "reload of %s failed, keeping the policy in effect:", bad);
	is_str(FIELD(e, "MESSAGE"), want, "  MESSAGE the line it always was");
	is_int(fake_journal_count(), 2, "  then one entry per error");
	is_str(FIELD(fake_journal_entry(1), "MESSAGE"), errs.v[0].text, "  saying it");

	catch_stderr();
	config_log_reload_failed(bad, rc, &errs, joined);
	plain = release_stderr();
	snprintf(want, sizeof(want), "<3>reload of %s failed, keeping the policy in effect:\n<3>%s\n",
		 bad, errs.v[0].text);
	is_str(plain, want, "off the journal: the same two lines on stderr");
	free(plain);
	free(joined);
	config_errors_clear(&errs);

	/* A file named with -c that went away. */
	fake_journal_start(0);
	config_log_reload_failed(missing, -ENOENT, &errs, "gone");
	fake_journal_stop();
	e = fake_journal_find(XR_MESSAGE_RELOAD_FAILED, -1);
	is_str(FIELD(e, "XENREAPER_ERROR"), "gone", "a missing file: the error it is given");
	snprintf(want, sizeof(want), "%s: %s", missing, strerror(ENOENT));
	is_str(FIELD(fake_journal_entry(1), "MESSAGE"), want, "  and the line saying why");

	ok(config_load(good, &cfg, &errs) == 0, "a good file loads");
	fake_journal_start(0);
	config_log_reloaded(cfg);
	export_entries();
	fake_journal_stop();
	e = fake_journal_find(XR_MESSAGE_RELOADED, -1);
	is_str(FIELD(e, "XENREAPER_CONFIG_FILE"), good, "reloaded: an entry with its MESSAGE_ID and the file");
	is_str(FIELD(e, "PRIORITY"), "5", "  PRIORITY notice");
	config_free(cfg);
	config_errors_clear(&errs);
}

/* A name a tenant chose: an OSC that retitles a terminal (ESC ] 0 ; ...
 * BEL), a newline and a forged line at priority 0, then 60 characters. */
#define HOSTILE_NAME "\033]0;pwned\a\n<0>forged " \
	"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefgh"
#define HOSTILE_SHOWN "\\x1b]0;pwned\\a\\n<0>forged " \
	"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefgh"

/* Whether TEXT has a control byte (C0 or DEL) other than those in ALLOWED. */
static bool has_control(const char *text, const char *allowed)
{
	for (const unsigned char *c = (const unsigned char *)text; *c; c++)
		if ((*c < 0x20 || *c == 0x7f) && !strchr(allowed, *c))
			return true;
	return false;
}

/* TEXT with its control bytes but newlines as '?', for a TAP diagnostic. */
static void show_text(const char *text)
{
	printf("# ");
	for (const char *c = text; *c; c++)
		if (*c == '\n')
			printf("\n# ");
		else
			putchar((unsigned char)*c < 0x20 || *c == 0x7f ? '?' : *c);
	putchar('\n');
}

/* Tear down domain 6, named HOSTILE_NAME, as teardown_web does domain 5. */
static void teardown_hostile(void)
{
	struct bed b;

	bed_init(&b, 0, 1);
	b.cfg->scrub_probe = CONFIG_PROBE_NONE;
	bed_start(&b);
	bed_add_named(&b, 6, 32768, 0, HOSTILE_NAME);
	bed_request(&b, 6, 6);
	bed_settle(&b);
	if (strcmp(bed_node(&b, 6, "state") ? bed_node(&b, 6, "state") : "", "done"))
		printf("# domain 6 ended %s\n", bed_node(&b, 6, "state"));
	bed_dispose(&b);
}

/* A guest's name is its tenant's: one message stays one line, on stderr
 * and in the journal's MESSAGE, its control characters escaped, while
 * XEN_DOMAIN_NAME keeps the name as it is. */
static void test_hostile_name(void)
{
	const struct fake_journal_entry *e;
	size_t raw_messages = 0, with_name = 0, lines = 0, bad_lines = 0;
	char *plain, *line, *save = NULL;

	fake_journal_start(0);
	teardown_hostile();
	fake_journal_stop();
	for (size_t i = 0; i < fake_journal_count(); i++) {
		const char *message = FIELD(fake_journal_entry(i), "MESSAGE");

		if (message && has_control(message, "")) {
			raw_messages++;
			show_text(message);
		}
		with_name += message && strstr(message, HOSTILE_SHOWN) != NULL;
	}
	ok(fake_journal_count() > 3 && raw_messages == 0,
	   "a guest named with an escape and a newline: no MESSAGE has a control character (%zu of %zu)",
	   raw_messages, fake_journal_count());
	ok(with_name > 0, "  %zu MESSAGEs name it escaped", with_name);
	e = fake_journal_find(XR_MESSAGE_DONE, 6);
	is_str(FIELD(e, "XEN_DOMAIN_NAME"), HOSTILE_NAME, "  XEN_DOMAIN_NAME is the name as it is");
	ok(FIELD(e, "MESSAGE") && strstr(FIELD(e, "MESSAGE"), "domain 6 (" HOSTILE_SHOWN ", 128 MiB): destroying -> done"),
	   "  the done MESSAGE names it escaped");

	catch_stderr();
	teardown_hostile();
	log_msg(LOG_NOTICE, "tab\there, bell\a, delete\x7f, back\\slash");
	plain = release_stderr();
	for (line = plain ? strtok_r(plain, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		lines++;
		if (line[0] != '<' || line[1] < '0' || line[1] > '7' || line[2] != '>' ||
		    has_control(line, "")) {
			bad_lines++;
			show_text(line);
		}
	}
	ok(lines > 3 && bad_lines == 0,
	   "off the journal: every line starts with <N> and has no control character (%zu of %zu)",
	   bad_lines, lines);
	free(plain);
	catch_stderr();
	log_msg(LOG_NOTICE, "tab\there, bell\a, delete\x7f, back\\slash, \xc3\xa4");
	plain = release_stderr();
	is_str(plain, "<5>tab\\there, bell\\a, delete\\x7f, back\\slash, \xc3\xa4\n",
	       "  control characters as xenreaper(1) shows them; a backslash and UTF-8 as they are");
	free(plain);
}

int main(void)
{
	char empty[300];

	if (!mkdtemp(scratch))
		return 1;
	test_ids();
	test_detect();
	test_sink();
	test_sink_entries();
	test_done();
	test_zombie();
	test_stuck();
	test_failed();
	test_orphan();
	test_scrub_gave_up();
	test_reload();
	test_hostile_name();
	fake_journal_start(0);	/* free what the last test kept */
	fake_journal_stop();
	snprintf(empty, sizeof(empty), "%s/empty", scratch);
	rmdir(empty);
	rmdir(scratch);
	return tap_done();
}
