/* Unit tests for top, the logic of `xenreaper top`: which xenstore
 * changes call for which reading, a job's line from its node values, the
 * summary, the screen's order and bounds, and the change detection that
 * decides what is redrawn (nothing while nothing changes) and which plain
 * lines are printed.  No Xen needed. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobline.h"
#include "tap.h"
#include "top.h"
#include "xenreaper-layout.h"

static struct top_screen screen_a, screen_b;

/* A job as xenreaperd would publish it. */
static struct xenreaper_status job(uint32_t domid, const char *name, enum xenreaper_state state,
				   const char *state_name)
{
	struct xenreaper_status st;

	memset(&st, 0, sizeof(st));
	st.domid = domid;
	st.state = state;
	snprintf(st.state_name, sizeof(st.state_name), "%s", state_name);
	snprintf(st.name, sizeof(st.name), "%s", name);
	snprintf(st.reason, sizeof(st.reason), "request");
	st.rate_mib_s = -1;
	st.eta_s = -1;
	return st;
}

static struct xenreaper_status destroying(uint32_t domid, const char *name, unsigned percent)
{
	struct xenreaper_status st = job(domid, name, XENREAPER_STATE_DESTROYING, "destroying");

	st.pages_total = 131072;	/* 512 MiB */
	st.pages_left = st.pages_total * (100 - percent) / 100;
	st.progress = percent;
	st.rate_mib_s = 812;
	st.eta_s = 3;
	return st;
}

static void test_events(void)
{
	static const struct {
		const char *path;
		enum top_event want;
		uint32_t domid;
	} cases[] = {
		{ XENREAPER_JOB_DIR "/5/pages-left", TOP_EVENT_JOB, 5 },
		{ XENREAPER_JOB_DIR "/5", TOP_EVENT_JOB, 5 },
		{ XENREAPER_JOB_DIR "/32751/state", TOP_EVENT_JOB, 32751 },
		{ XENREAPER_REQUEST_DIR "/12", TOP_EVENT_JOB, 12 },
		{ XENREAPER_JOB_DIR, TOP_EVENT_ALL, 0 },
		{ XENREAPER_JOB_DIR "/", TOP_EVENT_ALL, 0 },
		{ XENREAPER_REQUEST_DIR, TOP_EVENT_ALL, 0 },
		{ XENREAPER_ROOT, TOP_EVENT_ALL, 0 },
		{ "/tool", TOP_EVENT_ALL, 0 },
		{ XENREAPER_DAEMON_DIR "/state", TOP_EVENT_HEADER, 0 },
		{ XENREAPER_MEMORY_DIR "/free", TOP_EVENT_HEADER, 0 },
		{ XENREAPER_MEMORY_DIR, TOP_EVENT_HEADER, 0 },
		{ XENREAPER_PING_DIR "/123-1-1", TOP_EVENT_NONE, 0 },
		{ XENREAPER_SCRUB_DIR "/pages", TOP_EVENT_NONE, 0 },
		{ XENREAPER_ROOT "/jobs/5", TOP_EVENT_NONE, 0 },
		{ XENREAPER_ROOT "/daemonic", TOP_EVENT_NONE, 0 },
		{ XENREAPER_JOB_DIR "/abc/state", TOP_EVENT_NONE, 0 },
		{ XENREAPER_JOB_DIR "/32752/state", TOP_EVENT_NONE, 0 },
		{ XENREAPER_JOB_DIR "/123456789/state", TOP_EVENT_NONE, 0 },
		{ "/tool/xenreaperd/job/5", TOP_EVENT_NONE, 0 },
		{ "/local/domain/5", TOP_EVENT_NONE, 0 },
	};
	char what[160];

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		uint32_t domid = 99999;
		enum top_event got = top_event_of(cases[i].path, &domid);

		snprintf(what, sizeof(what), "a change of %s calls for reading %s", cases[i].path,
			 cases[i].want == TOP_EVENT_JOB ? "one job" : cases[i].want == TOP_EVENT_ALL ?
			 "everything" : cases[i].want == TOP_EVENT_HEADER ? "the summary" : "nothing");
		is_int(got, cases[i].want, what);
		if (cases[i].want == TOP_EVENT_JOB)
			is_int(domid, cases[i].domid, "  the job of the domid in the path");
	}
}

static void test_job_lines(void)
{
	const struct top_columns name4 = { .name_width = 4 };
	struct top_columns fit = { 0 };
	struct xenreaper_status st;
	char line[TOP_LINE_LEN], titles[TOP_LINE_LEN];

	st = destroying(7, "web", 50);
	top_format_job(&st, &name4, line, sizeof(line));
	is_str(line, "    7  web   destroying  [=======>        ]  50%        256   812 MiB/s       3s  request   ",
	       "a destroying job: domid, name, state, bar, percent, MiB left, rate, time left, reason");
	top_format_titles(&name4, titles, sizeof(titles));
	is_str(titles, "DOMID  NAME  STATE       PROGRESS                  LEFT MiB        RATE      ETA  REASON    HELD BY / ERROR",
	       "the titles");
	is_int(strstr(titles, "PROGRESS") - titles, strchr(line, '[') - line,
	       "  PROGRESS stands over the bar");
	is_int(strstr(titles, "LEFT MiB") + strlen("LEFT MiB") - titles,
	       strstr(line, " 256") + strlen(" 256") - line, "  LEFT MiB over the MiB left, right-aligned");

	st = destroying(7, "web", 0);
	top_format_job(&st, &name4, line, sizeof(line));
	ok(strstr(line, "[                ]   0%"), "an empty bar at 0%%: %s", line);
	st = destroying(7, "web", 100);
	top_format_job(&st, &name4, line, sizeof(line));
	ok(strstr(line, "[================] 100%"), "a full bar at 100%%: %s", line);

	st = destroying(7, "web", 40);
	st.stalled = 1;
	st.eta_s = -1;
	top_format_job(&st, &name4, line, sizeof(line));
	ok(strstr(line, "812 MiB/s  stalled  request"), "stalled in the ETA column: %s", line);

	st = destroying(7, "web", 40);
	st.rate_mib_s = -1;
	st.eta_s = -1;
	top_format_job(&st, &name4, line, sizeof(line));
	ok(strstr(line, "         -        -  request"), "no rate or time left published: '-': %s", line);

	st = job(9, "held", XENREAPER_STATE_ZOMBIE, "zombie");
	snprintf(st.reason, sizeof(st.reason), "orphan");
	snprintf(st.held_by, sizeof(st.held_by), "pid 1234 qemu-system-i38 maps its pages");
	top_format_job(&st, &name4, line, sizeof(line));
	ok(strstr(line, " zombie ") && strstr(line, "orphan    held by: pid 1234 qemu-system-i38 maps its pages"),
	   "a zombie's line says what holds it: %s", line);

	st = job(9, "held", XENREAPER_STATE_STUCK, "stuck");
	snprintf(st.held_by, sizeof(st.held_by), "blkback 51712");
	top_format_job(&st, &name4, line, sizeof(line));
	ok(strstr(line, "request   waiting on: blkback 51712"), "a stuck one's what it waits on: %s", line);

	st = job(3, "bad", XENREAPER_STATE_FAILED, "failed");
	snprintf(st.error, sizeof(st.error), "libxl_domain_destroy: -3");
	top_format_job(&st, &name4, line, sizeof(line));
	ok(strstr(line, "request   failed: libxl_domain_destroy: -3"), "a failed one's error: %s", line);

	st = job(3, "ok", XENREAPER_STATE_DONE, "done");
	snprintf(st.error, sizeof(st.error), "left behind: vif3.0");
	top_format_job(&st, &name4, line, sizeof(line));
	ok(!strstr(line, "failed:"), "a done job with a warning is not called failed: %s", line);

	st = job(4, "s", XENREAPER_STATE_SCRUBBING, "scrubbing");
	st.progress = 100;
	st.scrub_pages = 25600;
	top_format_job(&st, &name4, line, sizeof(line));
	ok(strstr(line, "request   100 MiB to scrub"), "a scrubbing one's backlog: %s", line);

	st = destroying(7, "evil\n\033[2Jname", 10);
	fit.name_width = jobline_name_width(&st, 1);
	top_format_job(&st, &fit, line, sizeof(line));
	ok(!strchr(line, '\n') && !strchr(line, '\033') && strstr(line, "evil\\n\\x1b[2Jname"),
	   "a name with a newline and an escape is shown escaped: %s", line);
	st = destroying(7, "a-very-long-guest-name-that-goes-on-and-on", 10);
	fit.name_width = jobline_name_width(&st, 1);
	top_format_job(&st, &fit, line, sizeof(line));
	ok(strstr(line, "  a-very-long-guest-name-that-goes  destroying"),
	   "a name is cut to %d columns: %s", JOBLINE_NAME_MAX, line);
}

static void test_summary(void)
{
	struct top_header head;
	char line[256];

	memset(&head, 0, sizeof(head));
	head.free_pages = head.releasing_pages = head.scrub_pending_pages = -1;
	top_format_memory(&head, line, sizeof(line));
	ok(strstr(line, "not published yet"), "no memory nodes: said so: %s", line);
	head.free_pages = 256000;
	head.releasing_pages = 131072;
	top_format_memory(&head, line, sizeof(line));
	is_str(line, "memory: 1000 MiB free, 512 MiB releasing, to scrub ?",
	       "the memory nodes, one absent");
	head.scrub_pending_pages = 2560;
	top_format_memory(&head, line, sizeof(line));
	is_str(line, "memory: 1000 MiB free, 512 MiB releasing, 10 MiB to scrub", "all three");

	head.daemon_running = true;
	snprintf(head.daemon_state, sizeof(head.daemon_state), "running");
	top_format_daemon(&head, 1, 3, line, sizeof(line));
	is_str(line, "xenreaperd running; 1 teardown under way, 3 jobs in all", "a running daemon");
	head.config_error = true;
	top_format_daemon(&head, 2, 1, line, sizeof(line));
	is_str(line, "xenreaperd running; 2 teardowns under way, 1 job in all; its policy file has errors (daemon/config-error)",
	       "  with a bad policy file");
	head.daemon_running = false;
	top_format_daemon(&head, 0, 0, line, sizeof(line));
	is_str(line, "xenreaperd not running (daemon/state: running), nothing moves; 0 teardowns under way, 0 jobs in all",
	       "a daemon whose pid is gone though its state says running");
	head.daemon_state[0] = '\0';
	top_format_daemon(&head, 0, 0, line, sizeof(line));
	is_str(line, "xenreaperd not running, nothing moves; 0 teardowns under way, 0 jobs in all",
	       "no daemon ever");
}

/* The row of S whose line starts with domid DOMID, or -1. */
static int row_of(const struct top_screen *s, uint32_t domid)
{
	for (unsigned i = 0; i < s->rows; i++)
		if (s->key[i] == TOP_KEY_JOB(domid))
			return (int)i;
	return -1;
}

static void test_view(void)
{
	struct xenreaper_status st;
	struct top_view v;

	top_view_init(&v);
	st = destroying(9, "c", 10);
	is_int(top_view_set(&v, &st), 0, "a job is added");
	st = destroying(2, "a", 10);
	top_view_set(&v, &st);
	st = destroying(5, "b", 10);
	top_view_set(&v, &st);
	ok(v.n_jobs == 3 && v.jobs[0].domid == 2 && v.jobs[1].domid == 5 && v.jobs[2].domid == 9,
	   "jobs are kept sorted by domid");
	st = destroying(5, "b", 60);
	top_view_set(&v, &st);
	ok(v.n_jobs == 3 && v.jobs[1].progress == 60, "a job read again replaces its old reading");
	top_view_drop(&v, 4);
	is_int(v.n_jobs, 3, "dropping a domid with no job changes nothing");
	top_view_drop(&v, 2);
	ok(v.n_jobs == 2 && v.jobs[0].domid == 5 && v.jobs[1].domid == 9, "a job that went is dropped");
	for (uint32_t d = 100; d < 140; d++) {
		st = destroying(d, "many", 1);
		top_view_set(&v, &st);
	}
	ok(v.n_jobs == 42 && v.jobs[41].domid == 139 && v.jobs[2].domid == 100,
	   "the view grows past its first allocation, still sorted");
	ok(top_view_under_way(&v), "a job destroying: under way (top follows the figures)");
	top_view_free(&v);
	top_view_init(&v);
	v.head.releasing_pages = -1;
	ok(!top_view_under_way(&v), "no job, nothing releasing: not under way (top neither pings nor wakes)");
	st = job(3, "x", XENREAPER_STATE_DONE, "done");
	top_view_set(&v, &st);
	st = job(4, "y", XENREAPER_STATE_FAILED, "failed");
	top_view_set(&v, &st);
	ok(!top_view_under_way(&v), "  nor with jobs done and failed only");
	v.head.releasing_pages = 1000;
	ok(top_view_under_way(&v), "  but with memory/releasing above 0");
	v.head.releasing_pages = 0;
	st = job(5, "z", XENREAPER_STATE_SCRUBBING, "scrubbing");
	top_view_set(&v, &st);
	ok(top_view_under_way(&v), "  or a job scrubbing");
	top_view_free(&v);
}

/* Render V on COLS x ROWS, fitting the names, naming the keys if KEYS. */
static void render(const struct top_view *v, unsigned cols, unsigned rows, bool keys,
		   struct top_screen *s)
{
	struct top_layout layout = { .cols = cols, .rows = rows, .keys_hint = keys };

	top_render(v, &layout, s);
}

/* Render V as plain output does. */
static void render_plain(const struct top_view *v, struct top_screen *s)
{
	struct top_layout layout = { .cols = TOP_COLS_MAX, .rows = TOP_ROWS_MAX,
				     .name_width = JOBLINE_NAME_MAX };

	top_render(v, &layout, s);
}

static void test_render(void)
{
	struct xenreaper_status st;
	struct top_view v;
	bool changed[TOP_ROWS_MAX];
	int cols_over = 0;

	top_view_init(&v);
	v.head.daemon_running = true;
	snprintf(v.head.daemon_state, sizeof(v.head.daemon_state), "running");
	st = job(3, "old", XENREAPER_STATE_DONE, "done");
	st.finished_ms = 1000;
	top_view_set(&v, &st);
	st = job(4, "new", XENREAPER_STATE_DONE, "done");
	st.finished_ms = 2000;
	top_view_set(&v, &st);
	st = destroying(8, "busy", 30);
	top_view_set(&v, &st);
	render(&v, 120, 24, true, &screen_a);
	ok(strstr(screen_a.line[0], "1 teardown under way, 3 jobs in all") &&
	   strstr(screen_a.line[0], "(q: quit)"), "the first line: the daemon and the keys: %s",
	   screen_a.line[0]);
	is_int(screen_a.key[1], TOP_KEY_MEMORY, "the memory line second");
	ok(!strncmp(screen_a.line[3], "DOMID", 5), "the titles above the jobs");
	ok(row_of(&screen_a, 8) == 4 && row_of(&screen_a, 4) == 5 && row_of(&screen_a, 3) == 6,
	   "the job under way first, then the finished ones, newest first");
	is_int(screen_a.rows, 7, "no more lines than that");
	render(&v, 120, 24, false, &screen_b);
	ok(!strstr(screen_b.line[0], "q: quit"), "no keys named where there are none");

	render(&v, 40, 24, true, &screen_a);
	for (unsigned i = 0; i < screen_a.rows; i++)
		cols_over += jobline_columns(screen_a.line[i]) > 40;
	is_int(cols_over, 0, "on 40 columns no line is longer than 40");

	render(&v, 120, 6, true, &screen_a);
	ok(screen_a.rows == 6 && row_of(&screen_a, 8) == 4 &&
	   strstr(screen_a.line[5], "2 more jobs"), "on 6 rows: one job and how many more: %s",
	   screen_a.line[5]);

	/* Change detection. */
	render(&v, 120, 24, true, &screen_a);
	render(&v, 120, 24, true, &screen_b);
	is_int(top_screen_diff(&screen_a, &screen_b, changed), 0,
	       "the same nodes read again: nothing to redraw");
	is_int(top_screen_diff(NULL, &screen_b, changed), screen_b.rows,
	       "nothing drawn yet: every line is drawn");
	st = destroying(8, "busy", 31);
	top_view_set(&v, &st);
	render(&v, 120, 24, true, &screen_b);
	is_int(top_screen_diff(&screen_a, &screen_b, changed), 1, "one job progresses: one line redrawn");
	ok(changed[4], "  its own");
	ok(top_line_changed(&screen_a, &screen_b, 4) && !top_line_changed(&screen_a, &screen_b, 5) &&
	   !top_line_changed(&screen_a, &screen_b, 0), "plain output: only its line is printed");
	v.head.free_pages = 1000;
	render(&v, 120, 24, true, &screen_a);
	is_int(top_screen_diff(&screen_b, &screen_a, changed), 1, "memory/free changes: one line");
	ok(changed[1], "  the memory line");

	top_view_drop(&v, 3);
	render(&v, 120, 24, true, &screen_b);
	is_int(top_screen_diff(&screen_a, &screen_b, changed), 2,
	       "a job expires: the first line (its count) and its own line, left blank");
	ok(changed[0] && changed[6] && screen_b.rows == 6, "  lines 1 and 7");
	ok(top_line_gone(&screen_a, &screen_b, 6) && !top_line_gone(&screen_a, &screen_b, 5) &&
	   !top_line_gone(&screen_a, &screen_b, 1), "plain output: that job, and only it, is gone");
	render(&v, 120, 1, true, &screen_b);
	ok(!top_line_gone(&screen_a, &screen_b, 1), "  the summary's lines are never said to be gone");
	render_plain(&v, &screen_b);
	st = destroying(1, "longer-name", 0);
	top_view_set(&v, &st);
	render_plain(&v, &screen_a);
	ok(top_line_changed(&screen_b, &screen_a, (unsigned)row_of(&screen_a, 1)),
	   "plain output: a new job is printed");
	ok(row_of(&screen_a, 8) == row_of(&screen_b, 8) + 1 &&
	   !top_line_changed(&screen_b, &screen_a, (unsigned)row_of(&screen_a, 8)),
	   "  a job that moved down a line, its name now narrower than another's, is not");
	render(&v, 120, 24, true, &screen_a);
	ok(strstr(screen_a.line[row_of(&screen_a, 8)], "  busy         destroying"),
	   "on a terminal, the NAME column widens to the longest name: %s",
	   screen_a.line[row_of(&screen_a, 8)]);
	top_view_free(&v);
}

/* A name a tenant chose: an OSC that retitles a terminal (ESC ] 0 ; ...
 * BEL), a newline, and 60 characters. */
#define HOSTILE_NAME "\033]0;pwned\a\nforged " \
	"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefgh"

/* Whether LINE shows a job's DOMID first, then NAME_START (the start of
 * its name, escaped), STATE and a whole bar, within COLS columns. */
static bool job_line_whole(const char *line, uint32_t domid, const char *name_start,
			   const char *state, unsigned cols)
{
	char lead[16];
	const char *name, *st, *open, *close;

	snprintf(lead, sizeof(lead), "%5u ", domid);
	if (strncmp(line, lead, strlen(lead)) || jobline_columns(line) > (int)cols)
		return false;
	name = strstr(line + strlen(lead), name_start);
	st = name ? strstr(name + strlen(name_start), state) : NULL;
	open = st ? strchr(st, '[') : NULL;
	close = open ? strchr(open, ']') : NULL;
	return name && st && st[-1] == ' ' && st[strlen(state)] == ' ' && close &&
	       close - open == (long)strspn(open + 1, " =>") + 1;
}

/* At 40 columns (top-run draws 39, leaving the last free), one long name,
 * escaped, must not push STATE or the bar off any job's line: the narrow
 * view gives the name what is left and cuts it with a mark. */
static void test_narrow(void)
{
	struct xenreaper_status st;
	struct top_view v;
	struct top_columns c;
	const char *line, *titles;
	bool whole = true, raw = false;
	static const struct { uint32_t domid; const char *name, *state; } jobs[] = {
		{ 3, "web", "destroying" },
		{ 12, "\\x1b]0;", "destroying" },
		{ 4, "db-primary", "done" },
	};

	top_view_init(&v);
	v.head.daemon_running = true;
	snprintf(v.head.daemon_state, sizeof(v.head.daemon_state), "running");
	st = destroying(3, "web", 50);
	top_view_set(&v, &st);
	st = destroying(12, HOSTILE_NAME, 20);
	top_view_set(&v, &st);
	st = job(4, "db-primary", XENREAPER_STATE_DONE, "done");
	st.progress = 100;
	top_view_set(&v, &st);

	render(&v, 39, 24, true, &screen_a);
	for (unsigned i = 0; i < screen_a.rows; i++)
		raw |= strpbrk(screen_a.line[i], "\033\a\n") != NULL;
	ok(!raw, "at 40 columns, no line has a raw escape, BEL or newline");
	for (size_t j = 0; j < sizeof(jobs) / sizeof(*jobs); j++) {
		int row = row_of(&screen_a, jobs[j].domid);

		line = row >= 0 ? screen_a.line[row] : "";
		if (!job_line_whole(line, jobs[j].domid, jobs[j].name, jobs[j].state, 39)) {
			whole = false;
			printf("# domain %u: '%s'\n", jobs[j].domid, line);
		}
	}
	ok(whole, "at 40 columns, every job's line shows DOMID, NAME, STATE and a whole bar");
	line = row_of(&screen_a, 12) >= 0 ? screen_a.line[row_of(&screen_a, 12)] : "";
	ok(strstr(line, "+ destroying"), "  the long name is cut with a mark: %s", line);
	line = row_of(&screen_a, 3) >= 0 ? screen_a.line[row_of(&screen_a, 3)] : "";
	ok(strstr(line, "web ") && !strstr(line, "web+"), "  a short one is not: %s", line);
	titles = screen_a.line[3];
	ok(strstr(titles, "STATE") && strstr(line, "destroying") &&
	   strstr(titles, "STATE") - titles == strstr(line, "destroying") - line &&
	   strstr(titles, "NAME") - titles == strstr(line, "web") - line,
	   "  the titles stand over their columns: %s", titles);

	top_columns_for(v.jobs, v.n_jobs, 39 + JOBLINE_NAME_MAX, 0, &c);
	ok(!c.narrow && c.name_width == JOBLINE_NAME_MAX,
	   "on %d columns the wide view fits DOMID, the longest name, STATE and the bar",
	   39 + JOBLINE_NAME_MAX);
	top_columns_for(v.jobs, v.n_jobs, 38 + JOBLINE_NAME_MAX, 0, &c);
	ok(c.narrow && c.name_width == JOBLINE_NAME_MAX,
	   "  one column less: the narrow view, the name still %d wide (%d)", JOBLINE_NAME_MAX,
	   c.name_width);
	top_columns_for(v.jobs, v.n_jobs, 20, 0, &c);
	is_int(c.name_width, 4, "  on 20 columns the name keeps 4, the width of its title");
	top_columns_for(v.jobs, v.n_jobs, 500, JOBLINE_NAME_MAX, &c);
	ok(!c.narrow, "plain output (%d columns, names %d wide): the wide view", 500,
	   JOBLINE_NAME_MAX);

	render(&v, 99, 24, true, &screen_a);
	line = row_of(&screen_a, 3) >= 0 ? screen_a.line[row_of(&screen_a, 3)] : "";
	ok(job_line_whole(line, 3, "web", "destroying", 99) &&
	   strstr(line, "    3  web  ") && strstr(line, "  destroying  [======="),
	   "at 100 columns, the wide view as ever: %s", line);
	top_view_free(&v);
}

int main(void)
{
	test_events();
	test_job_lines();
	test_summary();
	test_view();
	test_render();
	test_narrow();
	return tap_done();
}
