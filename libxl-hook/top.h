/*
 * top: what `xenreaper top` shows, worked out from node values alone:
 * which watch events matter, the jobs kept between them, the screen they
 * make, and which of its lines changed (top-run.c does the I/O).
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xenreaper.h"

#define TOP_ROWS_MAX 200	/* lines of a screen kept; a taller terminal shows this many */
#define TOP_COLS_MAX 500	/* columns a line is cut to at most */
#define TOP_LINE_LEN (4 * TOP_COLS_MAX + 1)	/* escaped text: 4 bytes a column at most */

/* What a change of one node under /tool/xenreaper calls for. */
enum top_event {
	TOP_EVENT_NONE,		/* nothing shown depends on it (ping/, scrub/, ...) */
	TOP_EVENT_HEADER,	/* daemon/ or memory/: read the summary again */
	TOP_EVENT_JOB,		/* job/<domid> or request/<domid>: read that job again */
	TOP_EVENT_ALL,		/* job/, request/ or above: read everything again */
};

/* The summary's nodes (daemon/ and memory/). */
struct top_header {
	bool daemon_running;		/* daemon/state says so and its pid exists */
	char daemon_state[16];		/* daemon/state; "" when absent */
	bool config_error;		/* daemon/config-error exists */
	int64_t free_pages;		/* memory/free; < 0 when absent */
	int64_t releasing_pages;	/* memory/releasing; < 0 when absent */
	int64_t scrub_pending_pages;	/* memory/scrub-pending; < 0 when absent */
};

/* Everything shown: the summary and the jobs, sorted by domid. */
struct top_view {
	struct top_header head;
	struct xenreaper_status *jobs;	/* malloc'd */
	size_t n_jobs, room;
};

/* What a line of the screen is, so that plain output can tell a job's
 * line that changed from one that is new. */
#define TOP_KEY_DAEMON 1
#define TOP_KEY_MEMORY 2
#define TOP_KEY_OTHER 3			/* the column titles, blank lines, "more" */
#define TOP_KEY_JOB(domid) (0x10000u + (domid))

struct top_screen {
	unsigned rows;			/* lines in use */
	uint32_t key[TOP_ROWS_MAX];
	char line[TOP_ROWS_MAX][TOP_LINE_LEN];
};

/* Which of the nodes PATH names changed; *DOMID set for TOP_EVENT_JOB. */
enum top_event top_event_of(const char *path, uint32_t *domid);

/* An empty view (nothing read yet). */
void top_view_init(struct top_view *v);
void top_view_free(struct top_view *v);
/* The N JOBS (malloc'd, sorted by domid) replace the view's; V owns them. */
void top_view_replace(struct top_view *v, struct xenreaper_status *jobs, size_t n);
/* Add ST, or replace the job of its domid; -ENOMEM. */
int top_view_set(struct top_view *v, const struct xenreaper_status *st);
/* Forget the job of DOMID (there is none any more). */
void top_view_drop(struct top_view *v, uint32_t domid);
/* Whether a job is not yet done or failed, or memory/releasing says
 * something is still coming back: top then follows the figures. */
bool top_view_under_way(const struct top_view *v);

/* How the jobs' lines are laid out. */
struct top_columns {
	int name_width;			/* NAME column */
	bool narrow;			/* one space between columns, a shorter bar, and a
					 * name wider than NAME_WIDTH cut with a mark */
};
/* The layout for the N JOBS on COLS columns, with NAME_WIDTH columns for
 * names (0: their longest, jobline_name_width): the wide one when DOMID,
 * NAME, STATE and the bar fit; else the narrow one, its NAME column what
 * is left of COLS (at least 4), so that they fit from 32 columns on. */
void top_columns_for(const struct xenreaper_status *jobs, size_t n, unsigned cols, int name_width,
		     struct top_columns *c);
/* One job's line, laid out as C says. */
void top_format_job(const struct xenreaper_status *st, const struct top_columns *c, char *buf,
		    size_t len);
/* The column titles over top_format_job's lines. */
void top_format_titles(const struct top_columns *c, char *buf, size_t len);
/* The summary's two lines: xenreaperd's state and the jobs under way
 * (UNDER_WAY of N_JOBS), then the memory nodes. */
void top_format_daemon(const struct top_header *h, size_t under_way, size_t n_jobs, char *buf,
		       size_t len);
void top_format_memory(const struct top_header *h, char *buf, size_t len);

/* How top_render lays a screen out. */
struct top_layout {
	unsigned cols, rows;		/* the terminal's size (TOP_COLS_MAX, TOP_ROWS_MAX at most) */
	int name_width;			/* NAME column: 0 fits the longest name shown;
					 * plain output gives JOBLINE_NAME_MAX, so that a
					 * longer name does not change every job's line */
	bool keys_hint;			/* name the keys on the first line (a terminal) */
};

/* V as a screen: the summary, the titles, the jobs under way by domid,
 * then the finished ones, newest first, and a last line saying how many
 * did not fit. */
void top_render(const struct top_view *v, const struct top_layout *layout, struct top_screen *s);
/* Which lines of NOW differ from BEFORE (NULL: nothing drawn yet), in
 * CHANGED (TOP_ROWS_MAX); a line BEFORE had and NOW has not counts as
 * changed (it must be cleared).  Returns how many: 0 means no redraw. */
unsigned top_screen_diff(const struct top_screen *before, const struct top_screen *now,
			 bool *changed);
/* Plain output: whether NOW's line I is new or differs from BEFORE's line
 * with the same key (BEFORE may be NULL). */
bool top_line_changed(const struct top_screen *before, const struct top_screen *now, unsigned i);
/* Plain output: whether BEFORE's line I (a job) has no line in NOW: its
 * job went. */
bool top_line_gone(const struct top_screen *before, const struct top_screen *now, unsigned i);
