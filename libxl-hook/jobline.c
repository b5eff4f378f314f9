/*
 * jobline: the cells of one job's row, shared by `xenreaper list` and
 * `xenreaper top` (state, rate, time left, reason, what holds a zombie or
 * why a job failed, and a guest name cut to a column), so that the two
 * tables cannot drift apart.  Everything from xenstore is escaped here
 * (a guest's name is its tenant's choice).  It lays out cells only: which
 * columns a table has, and where each goes, is its caller's choice.  No
 * I/O, no libxenreaper calls, so unit tests link it without Xen.
 */
#include <stdio.h>
#include <string.h>

#include "jobline.h"
#include "xenreaper-layout.h"

void jobline_cells(const struct xenreaper_status *st, struct jobline_cells *c)
{
	progress_text(c->state, sizeof(c->state), st->state_name);
	if (st->rate_mib_s >= 0)
		progress_format_rate(c->rate, sizeof(c->rate), st->rate_mib_s * 256);
	else
		snprintf(c->rate, sizeof(c->rate), "-");
	if (st->stalled)
		snprintf(c->eta, sizeof(c->eta), "stalled");
	else if (st->eta_s >= 0)
		progress_format_eta(c->eta, sizeof(c->eta), (double)st->eta_s);
	else
		snprintf(c->eta, sizeof(c->eta), "-");
	progress_text(c->reason, sizeof(c->reason), st->reason[0] ? st->reason : "-");
	progress_text(c->failed, sizeof(c->failed),
		      st->state == XENREAPER_STATE_FAILED ? st->error : "");
	c->holder_word = st->state == XENREAPER_STATE_STUCK ? "waiting on" : "held by";
	progress_text(c->holder, sizeof(c->holder), st->held_by);
}

int jobline_columns(const char *text)
{
	int n = 0;

	for (const unsigned char *c = (const unsigned char *)text; *c; c++)
		n += (*c & 0xc0) != 0x80;
	return n;
}

void jobline_cut(char *escaped, int max)
{
	size_t at = 0, unit;
	int cols = 0;

	while (escaped[at]) {
		if (escaped[at] == '\\') {
			unit = escaped[at + 1] == 'x' ? 4 : 2;
			cols += unit;
		} else {
			for (unit = 1; (escaped[at + unit] & 0xc0) == 0x80; unit++)
				;
			cols++;
		}
		if (cols > max)
			break;
		at += unit;
	}
	escaped[at] = '\0';
}

const char *jobline_cell(char *buf, size_t len, const char *text, int max)
{
	progress_text_escape(buf, len, text);
	jobline_cut(buf, max);
	return buf;
}

int jobline_name_width(const struct xenreaper_status *jobs, size_t n)
{
	char name[PROGRESS_TEXT_LEN(128)];
	int width = 4, cols;

	for (size_t i = 0; i < n; i++) {
		cols = jobline_columns(jobline_cell(name, sizeof(name), jobs[i].name,
						    JOBLINE_NAME_MAX));
		if (cols > width)
			width = cols;
	}
	return width;
}

void jobline_name(char *buf, size_t len, const struct xenreaper_status *st, int width)
{
	char name[PROGRESS_TEXT_LEN(128)];

	jobline_cell(name, sizeof(name), st->name[0] ? st->name : "-", width);
	snprintf(buf, len, "%s%*s", name, width - jobline_columns(name), "");
}

void jobline_name_marked(char *buf, size_t len, const struct xenreaper_status *st, int width)
{
	char name[PROGRESS_TEXT_LEN(128) + 1];

	progress_text_escape(name, sizeof(name) - 1, st->name[0] ? st->name : "-");
	if (width >= 1 && jobline_columns(name) > width) {
		jobline_cut(name, width - 1);
		strcat(name, JOBLINE_CUT_MARK);
	}
	snprintf(buf, len, "%s%*s", name, width - jobline_columns(name), "");
}
