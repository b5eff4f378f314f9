/*
 * memwait: what `xenreaper wait-free` and the xl front's `xl create` show
 * while they wait for the teardowns under way to free memory.
 */
#pragma once
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "progress.h"
#include "xenreaper.h"

/* Room for a line: the figures and a guest name escaped (4 bytes a byte at most). */
#define MEMWAIT_LINE_LEN (PROGRESS_TEXT_LEN(128) + 384)

struct memwait {
	FILE *out;
	bool tty;			/* redraw one line with \r */
	bool quiet;			/* show nothing (--json) */
	const char *prog;		/* prefix of each line ("xl"), may be NULL */
	uint64_t need;			/* pages waited for */
	unsigned columns;		/* tty: width lines are cut to */
	volatile sig_atomic_t *interrupted;	/* stop waiting when it becomes non-zero */
	int64_t start_ms;		/* the first reading */
	int64_t last_ms;		/* the newest */
	int64_t last_print_ms;		/* plain output: when the last line was printed */
	char last_line[MEMWAIT_LINE_LEN];		/* plain output: that line */
	size_t drawn;			/* tty: width of the line on screen */
	unsigned shown;			/* lines drawn or printed: 0 if it never waited */
	struct xenreaper_memory last;	/* the newest reading */
	bool have_last;
};

/* Start showing a wait for NEED pages on OUT; TTY selects the bar. */
void memwait_init(struct memwait *w, FILE *out, bool tty, uint64_t need);
/* Take reading MEM at NOW_MS (monotonic) and show it if it is one to wait
 * on (freemem_decide says WAIT); -EINTR once interrupted. */
int memwait_update(struct memwait *w, const struct xenreaper_memory *mem, int64_t now_ms);
/* memwait_update at the current time; a xenreaper_memory_cb, ARG is the memwait. */
int memwait_cb(const struct xenreaper_memory *mem, void *arg);
/* The line for MEM: a bar on a tty, else the plain form. */
void memwait_format_line(const struct memwait *w, const struct xenreaper_memory *mem,
			 char *buf, size_t len);
/* Seconds from the first reading to the newest. */
double memwait_waited_s(const struct memwait *w);
/* Clear the tty line (if one is drawn) before a final message. */
void memwait_clear(struct memwait *w);
