/*
 * jobline: one teardown job as a row of a table, the cells `xenreaper
 * list` and `xenreaper top` share, so that both say the same thing the
 * same way.
 */
#pragma once
#include <stddef.h>

#include "progress.h"
#include "xenreaper.h"

/* The widest NAME column: a longer name is cut. */
#define JOBLINE_NAME_MAX 32
/* What ends a name jobline_name_marked cut (procps top's mark). */
#define JOBLINE_CUT_MARK "+"

/* What a row shows of one job, each cell escaped for a terminal. */
struct jobline_cells {
	char state[PROGRESS_TEXT_LEN(16)];
	char rate[32];				/* "812 MiB/s"; "-" when not published */
	char eta[32];				/* "3s", "stalled"; "-" when not published */
	char reason[PROGRESS_TEXT_LEN(16)];	/* "-" when none */
	char failed[PROGRESS_TEXT_LEN(512)];	/* a failed job's error, else "" */
	const char *holder_word;		/* "held by" or "waiting on" (stuck) */
	char holder[PROGRESS_TEXT_LEN(512)];	/* held_by, else "" */
};

/* ST's cells. */
void jobline_cells(const struct xenreaper_status *st, struct jobline_cells *c);
/* Columns TEXT (UTF-8) takes on a terminal, wide characters aside. */
int jobline_columns(const char *text);
/* TEXT escaped and cut to at most MAX columns into BUF (LEN), never
 * inside an escape or a character; returns BUF. */
const char *jobline_cell(char *buf, size_t len, const char *text, int max);
/* ESCAPED (text already escaped: every backslash starts an escape) cut in
 * place to at most MAX columns, never inside an escape or a character. */
void jobline_cut(char *escaped, int max);
/* The NAME column's width for the N JOBS: their longest name, escaped,
 * at least 4 ("NAME"), at most JOBLINE_NAME_MAX. */
int jobline_name_width(const struct xenreaper_status *jobs, size_t n);
/* The NAME cell of ST ("-" when it has none) padded to WIDTH columns. */
void jobline_name(char *buf, size_t len, const struct xenreaper_status *st, int width);
/* jobline_name, but a name wider than WIDTH is cut to WIDTH - 1 columns
 * and ends in JOBLINE_CUT_MARK, so a reader knows it is not whole. */
void jobline_name_marked(char *buf, size_t len, const struct xenreaper_status *st, int width);
