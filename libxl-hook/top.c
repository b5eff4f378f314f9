/*
 * top: the logic of `xenreaper top`, a live view of the host's teardowns
 * in the manner of xentop.  It decides which xenstore changes matter (a
 * job's or request's node names the one job to read again; daemon/ and
 * memory/ the summary; ping/ and scrub/ nothing), keeps the jobs between
 * changes, lays out the screen (xenreaperd's state, the memory nodes, then
 * one line per job: state, a bar, pages left, rate, time left, reason,
 * and what holds a zombie or waits a stuck destroy, cut to the terminal's
 * width; on a terminal too narrow for the domid, name, state and bar with
 * the name as wide as the longest, a narrow form keeps those four in it,
 * cutting names with a mark) and says which of its lines changed, so that
 * nothing is redrawn while nothing changes.  It deliberately does no I/O (top-run.c talks to
 * xenstore and the terminal) and computes nothing xenreaperd does not
 * publish: the rate and time left are the daemon's, not counted down
 * here between its updates, so the screen never shows a figure xenstore
 * does not hold.  The cells are jobline's, as `xenreaper list` shows them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobline.h"
#include "lookup.h"
#include "progress.h"
#include "top.h"
#include "xenreaper-layout.h"

/* "[bar] 100%": the progress cell's width. */
#define TOP_PROGRESS_WIDTH (PROGRESS_BAR_WIDTH + 2 + 5)
/* The narrow view's bar (inside its brackets) and progress cell. */
#define TOP_NARROW_BAR_WIDTH 8
#define TOP_NARROW_PROGRESS_WIDTH (TOP_NARROW_BAR_WIDTH + 2 + 5)
/* Columns DOMID, STATE and the bar take with their separators, the name
 * aside: "%5u  NAME  %-10s  [bar]" wide, single spaces narrow. */
#define TOP_WIDE_FIXED (5 + 2 + 2 + 10 + 2 + PROGRESS_BAR_WIDTH + 2)
#define TOP_NARROW_FIXED (5 + 1 + 1 + 10 + 1 + TOP_NARROW_BAR_WIDTH + 2)
/* The narrowest NAME column: as wide as its title. */
#define TOP_NAME_MIN 4
/* Lines above the jobs: daemon, memory, a blank line, the titles. */
#define TOP_HEAD_ROWS 4

/* done or failed (libxenreaper has this too, but this file links without it). */
static bool top_final(enum xenreaper_state state)
{
	return state == XENREAPER_STATE_DONE || state == XENREAPER_STATE_FAILED;
}

/* Whether PATH is DIR or below it; *REST is what follows DIR ("" or "/..."). */
static bool top_under(const char *path, const char *dir, const char **rest)
{
	size_t len = strlen(dir);

	if (strncmp(path, dir, len) || (path[len] && path[len] != '/'))
		return false;
	*rest = path + len;
	return true;
}

/* Whether PATH is DIR itself or one of the directories above it. */
static bool top_above(const char *path, const char *dir)
{
	size_t len = strlen(path);

	while (len > 1 && path[len - 1] == '/')
		len--;
	return !strncmp(dir, path, len) && (dir[len] == '/' || !dir[len]);
}

/* The domid REST ("/<domid>" or "/<domid>/...") names; -EINVAL if none. */
static int top_rest_domid(const char *rest, uint32_t *domid)
{
	char id[8];
	size_t n;

	if (rest[0] != '/')
		return -EINVAL;
	n = strcspn(rest + 1, "/");
	if (!n || n >= sizeof(id))
		return -EINVAL;
	memcpy(id, rest + 1, n);
	id[n] = '\0';
	return lookup_parse_domid(id, domid) ? -EINVAL : 0;
}

enum top_event top_event_of(const char *path, uint32_t *domid)
{
	const char *rest;

	if (top_above(path, XENREAPER_JOB_DIR) || top_above(path, XENREAPER_REQUEST_DIR))
		return TOP_EVENT_ALL;
	if (top_under(path, XENREAPER_JOB_DIR, &rest) ||
	    top_under(path, XENREAPER_REQUEST_DIR, &rest))
		return top_rest_domid(rest, domid) ? TOP_EVENT_NONE : TOP_EVENT_JOB;
	if (top_under(path, XENREAPER_DAEMON_DIR, &rest) ||
	    top_under(path, XENREAPER_MEMORY_DIR, &rest))
		return TOP_EVENT_HEADER;
	return TOP_EVENT_NONE;
}

void top_view_init(struct top_view *v)
{
	memset(v, 0, sizeof(*v));
	v->head.free_pages = -1;
	v->head.releasing_pages = -1;
	v->head.scrub_pending_pages = -1;
}

void top_view_free(struct top_view *v)
{
	free(v->jobs);
	v->jobs = NULL;
	v->n_jobs = v->room = 0;
}

void top_view_replace(struct top_view *v, struct xenreaper_status *jobs, size_t n)
{
	free(v->jobs);
	v->jobs = jobs;
	v->n_jobs = v->room = n;
}

/* Where the job of DOMID is in V, or where it would go. */
static size_t top_view_find(const struct top_view *v, uint32_t domid)
{
	size_t lo = 0, hi = v->n_jobs, mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (v->jobs[mid].domid < domid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int top_view_set(struct top_view *v, const struct xenreaper_status *st)
{
	size_t at = top_view_find(v, st->domid), room;
	struct xenreaper_status *bigger;

	if (at < v->n_jobs && v->jobs[at].domid == st->domid) {
		v->jobs[at] = *st;
		return 0;
	}
	if (v->n_jobs == v->room) {
		room = v->room ? 2 * v->room : 16;
		bigger = realloc(v->jobs, room * sizeof(*bigger));
		if (!bigger)
			return -ENOMEM;
		v->jobs = bigger;
		v->room = room;
	}
	memmove(&v->jobs[at + 1], &v->jobs[at], (v->n_jobs - at) * sizeof(*v->jobs));
	v->jobs[at] = *st;
	v->n_jobs++;
	return 0;
}

void top_view_drop(struct top_view *v, uint32_t domid)
{
	size_t at = top_view_find(v, domid);

	if (at == v->n_jobs || v->jobs[at].domid != domid)
		return;
	memmove(&v->jobs[at], &v->jobs[at + 1], (v->n_jobs - at - 1) * sizeof(*v->jobs));
	v->n_jobs--;
}

bool top_view_under_way(const struct top_view *v)
{
	for (size_t i = 0; i < v->n_jobs; i++)
		if (!top_final(v->jobs[i].state))
			return true;
	return v->head.releasing_pages > 0;
}

void top_columns_for(const struct xenreaper_status *jobs, size_t n, unsigned cols, int name_width,
		     struct top_columns *c)
{
	int longest = name_width ? name_width : jobline_name_width(jobs, n);

	c->narrow = TOP_WIDE_FIXED + longest > (int)cols;
	c->name_width = longest;
	if (c->narrow && TOP_NARROW_FIXED + longest > (int)cols)
		c->name_width = (int)cols - TOP_NARROW_FIXED > TOP_NAME_MIN ?
				(int)cols - TOP_NARROW_FIXED : TOP_NAME_MIN;
}

void top_format_job(const struct xenreaper_status *st, const struct top_columns *c, char *buf,
		    size_t len)
{
	char name[PROGRESS_TEXT_LEN(128) + JOBLINE_NAME_MAX], bar[PROGRESS_BAR_WIDTH + 1];
	char note[PROGRESS_TEXT_LEN(512) + 16];
	const char *sep = c->narrow ? " " : "  ";
	struct jobline_cells cells;

	jobline_cells(st, &cells);
	if (c->narrow)
		jobline_name_marked(name, sizeof(name), st, c->name_width);
	else
		jobline_name(name, sizeof(name), st, c->name_width);
	progress_format_bar(bar, c->narrow ? TOP_NARROW_BAR_WIDTH : PROGRESS_BAR_WIDTH, st->progress);
	if (cells.holder[0])
		snprintf(note, sizeof(note), "%s: %s", cells.holder_word, cells.holder);
	else if (cells.failed[0])
		snprintf(note, sizeof(note), "failed: %s", cells.failed);
	else if (st->state == XENREAPER_STATE_SCRUBBING)
		snprintf(note, sizeof(note), "%" PRIu64 " MiB to scrub", progress_mib(st->scrub_pages));
	else
		note[0] = '\0';
	snprintf(buf, len, "%5u%s%s%s%-10s%s[%s] %3u%%%s%9" PRIu64 "%s%10s%s%7s%s%-8s%s%s",
		 st->domid, sep, name, sep, cells.state, sep, bar, st->progress, sep,
		 progress_mib(st->pages_left), sep, cells.rate, sep, cells.eta, sep, cells.reason,
		 sep, note);
}

void top_format_titles(const struct top_columns *c, char *buf, size_t len)
{
	const char *sep = c->narrow ? " " : "  ";

	snprintf(buf, len, "%5s%s%-*s%s%-10s%s%-*s%s%9s%s%10s%s%7s%s%-8s%s%s", "DOMID", sep,
		 c->name_width, "NAME", sep, "STATE", sep,
		 c->narrow ? TOP_NARROW_PROGRESS_WIDTH : TOP_PROGRESS_WIDTH, "PROGRESS", sep,
		 "LEFT MiB", sep, "RATE", sep, "ETA", sep, "REASON", sep, "HELD BY / ERROR");
}

void top_format_daemon(const struct top_header *h, size_t under_way, size_t n_jobs, char *buf,
		       size_t len)
{
	char state[PROGRESS_TEXT_LEN(16)], jobs[96];

	snprintf(jobs, sizeof(jobs), "%zu teardown%s under way, %zu job%s in all", under_way,
		 under_way == 1 ? "" : "s", n_jobs, n_jobs == 1 ? "" : "s");
	progress_text(state, sizeof(state), h->daemon_state);
	if (h->daemon_running)
		snprintf(buf, len, "xenreaperd %s; %s%s", state, jobs,
			 h->config_error ? "; its policy file has errors (daemon/config-error)" : "");
	else if (state[0])
		snprintf(buf, len, "xenreaperd not running (daemon/state: %s), nothing moves; %s",
			 state, jobs);
	else
		snprintf(buf, len, "xenreaperd not running, nothing moves; %s", jobs);
}

/* "1234 MiB free" / "free ?" for a node that is absent. */
static void top_pages(char *buf, size_t len, int64_t pages, const char *what)
{
	if (pages >= 0)
		snprintf(buf, len, "%" PRIu64 " MiB %s", progress_mib((uint64_t)pages), what);
	else
		snprintf(buf, len, "%s ?", what);
}

void top_format_memory(const struct top_header *h, char *buf, size_t len)
{
	char free_[48], releasing[48], scrub[48];

	if (h->free_pages < 0 && h->releasing_pages < 0 && h->scrub_pending_pages < 0) {
		snprintf(buf, len, "memory: not published yet (xenreaperd writes it while a teardown is in flight)");
		return;
	}
	top_pages(free_, sizeof(free_), h->free_pages, "free");
	top_pages(releasing, sizeof(releasing), h->releasing_pages, "releasing");
	top_pages(scrub, sizeof(scrub), h->scrub_pending_pages, "to scrub");
	snprintf(buf, len, "memory: %s, %s, %s", free_, releasing, scrub);
}

/* Put TEXT as line ROW of S, with KEY, cut to COLS columns. */
static void top_put(struct top_screen *s, unsigned row, uint32_t key, const char *text,
		    unsigned cols)
{
	snprintf(s->line[row], TOP_LINE_LEN, "%s", text);
	jobline_cut(s->line[row], (int)cols);
	s->key[row] = key;
}

/* The order jobs are shown in: those under way by domid, then the
 * finished ones, newest first (an operator looks for what moves). */
static int top_order(const void *a, const void *b)
{
	const struct xenreaper_status *x = a, *y = b;
	int fx = top_final(x->state), fy = top_final(y->state);

	if (fx != fy)
		return fx - fy;
	if (fx && x->finished_ms != y->finished_ms)
		return x->finished_ms > y->finished_ms ? -1 : 1;
	return x->domid < y->domid ? -1 : x->domid > y->domid;
}

void top_render(const struct top_view *v, const struct top_layout *layout, struct top_screen *s)
{
	unsigned cols = layout->cols, rows = layout->rows, row = 0, room;
	char text[TOP_LINE_LEN + 64];
	struct xenreaper_status *order = NULL;
	size_t under_way = 0, shown;
	struct top_columns columns;

	if (rows > TOP_ROWS_MAX)
		rows = TOP_ROWS_MAX;
	if (cols > TOP_COLS_MAX)
		cols = TOP_COLS_MAX;
	for (size_t i = 0; i < v->n_jobs; i++)
		under_way += !top_final(v->jobs[i].state);
	top_format_daemon(&v->head, under_way, v->n_jobs, text, sizeof(text));
	if (layout->keys_hint)
		snprintf(text + strlen(text), sizeof(text) - strlen(text), "   (q: quit)");
	if (row < rows)
		top_put(s, row++, TOP_KEY_DAEMON, text, cols);
	top_format_memory(&v->head, text, sizeof(text));
	if (row < rows)
		top_put(s, row++, TOP_KEY_MEMORY, text, cols);
	if (row < rows)
		top_put(s, row++, TOP_KEY_OTHER, "", cols);
	top_columns_for(v->jobs, v->n_jobs, cols, layout->name_width, &columns);
	top_format_titles(&columns, text, sizeof(text));
	if (row < rows)
		top_put(s, row++, TOP_KEY_OTHER, text, cols);
	/* Without memory to sort a copy, the jobs go by domid: still all of them. */
	if (v->n_jobs) {
		order = malloc(v->n_jobs * sizeof(*order));
		if (order) {
			memcpy(order, v->jobs, v->n_jobs * sizeof(*order));
			qsort(order, v->n_jobs, sizeof(*order), top_order);
		}
	}
	room = rows > row ? rows - row : 0;
	shown = v->n_jobs <= room ? v->n_jobs : room ? room - 1 : 0;
	for (size_t i = 0; i < shown; i++) {
		const struct xenreaper_status *st = order ? &order[i] : &v->jobs[i];

		top_format_job(st, &columns, text, sizeof(text));
		top_put(s, row++, TOP_KEY_JOB(st->domid), text, cols);
	}
	if (shown < v->n_jobs && row < rows) {
		snprintf(text, sizeof(text), "  ... %zu more job%s (a taller terminal shows them)",
			 v->n_jobs - shown, v->n_jobs - shown == 1 ? "" : "s");
		top_put(s, row++, TOP_KEY_OTHER, text, cols);
	}
	s->rows = row;
	free(order);
}

unsigned top_screen_diff(const struct top_screen *before, const struct top_screen *now,
			 bool *changed)
{
	unsigned n = 0;

	for (unsigned i = 0; i < TOP_ROWS_MAX; i++) {
		bool had = before && i < before->rows, has = i < now->rows;

		changed[i] = has ? !had || strcmp(before->line[i], now->line[i]) : had;
		n += changed[i];
	}
	return n;
}

/* The line of BEFORE (NULL: none) with KEY, or -1. */
static int top_line_of(const struct top_screen *s, uint32_t key)
{
	if (!s)
		return -1;
	for (unsigned i = 0; i < s->rows; i++)
		if (s->key[i] == key)
			return (int)i;
	return -1;
}

bool top_line_changed(const struct top_screen *before, const struct top_screen *now, unsigned i)
{
	int was = top_line_of(before, now->key[i]);

	return was < 0 || strcmp(before->line[was], now->line[i]);
}

bool top_line_gone(const struct top_screen *before, const struct top_screen *now, unsigned i)
{
	return before->key[i] >= TOP_KEY_JOB(0) && top_line_of(now, before->key[i]) < 0;
}
