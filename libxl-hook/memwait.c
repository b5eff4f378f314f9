/*
 * memwait: the display of a wait for free memory.  Each line is made from
 * one reading (xenreaper_memory: the teardowns read in one transaction,
 * then the hypervisor), so the free, needed and releasing figures and the
 * rate on it agree with each other.  On a terminal it redraws one line
 * with \r (a bar of the memory needed that is free, the release rate the
 * teardowns publish, the time until enough is free at that rate, and the
 * teardown that holds most); otherwise it prints plain lines, the first
 * at once, then at most one a second and only when they change.  Only
 * readings that are waited on are shown: one that is enough, or that
 * waiting cannot help, shows nothing.  What it shows from xenstore (the
 * guest's name, the job's state) is escaped as progress_text_escape does,
 * on a terminal or off it: a name is its tenant's choice.  It does not decide when
 * to stop (libxenreaper and freemem do) and prints no final line: the
 * callers' outcomes differ.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "freemem.h"
#include "jobline.h"
#include "memwait.h"
#include "progress.h"

#define MEMWAIT_BAR_WIDTH 16
#define MEMWAIT_PLAIN_MS 1000

void memwait_init(struct memwait *w, FILE *out, bool tty, uint64_t need)
{
	memset(w, 0, sizeof(*w));
	w->out = out;
	w->tty = tty;
	w->need = need;
	w->columns = progress_columns(out, tty);
}

/* "150 MiB/s, ETA 16s" / "stalled" / "" for how soon MEM covers the need. */
static void memwait_pace(const struct memwait *w, const struct xenreaper_memory *mem,
			 const char *sep, char *buf, size_t len)
{
	char rate[32], eta[32];
	uint64_t short_pages = w->need > mem->free_pages ? w->need - mem->free_pages : 0;

	if (mem->stalled) {
		snprintf(buf, len, "%sstalled", sep);
		return;
	}
	if (mem->rate_mib_s < 0) {
		buf[0] = '\0';
		return;
	}
	progress_format_rate(rate, sizeof(rate), mem->rate_mib_s * 256);
	progress_format_eta(eta, sizeof(eta),
			    mem->rate_mib_s > 0 ? short_pages / (mem->rate_mib_s * 256) : -1);
	snprintf(buf, len, "%s%s%sETA %s", sep, rate, sep, eta);
}

/* Who the memory is coming from: "domain 5 (old), destroying".  Not the
 * job's percent: the figures on the line are the hypervisor's, read after
 * the job, and the two would disagree while pages come back. */
static void memwait_source(const struct xenreaper_memory *mem, char *buf, size_t len)
{
	const struct xenreaper_status *st = &mem->largest;
	char who[PROGRESS_TEXT_LEN(sizeof(st->name)) + 32], name[PROGRESS_TEXT_LEN(sizeof(st->name))];
	char state[PROGRESS_TEXT_LEN(sizeof(st->state_name))];

	/* The name is its tenant's choice: escaped, as everywhere a person reads it. */
	if (st->name[0])
		snprintf(who, sizeof(who), "domain %u (%s)", st->domid,
			 progress_text(name, sizeof(name), st->name));
	else
		snprintf(who, sizeof(who), "domain %u", st->domid);
	progress_text(state, sizeof(state), st->state_name);
	if (mem->teardowns > 1)
		snprintf(buf, len, "%u teardowns, most from %s, %s", mem->teardowns, who, state);
	else if (st->state == XENREAPER_STATE_REQUESTED)
		snprintf(buf, len, "%s, requested, not yet taken by xenreaperd", who);
	else
		snprintf(buf, len, "%s, %s", who, state);
}

void memwait_format_line(const struct memwait *w, const struct xenreaper_memory *mem,
			 char *buf, size_t len)
{
	char source[MEMWAIT_LINE_LEN], pace[96], bar[MEMWAIT_BAR_WIDTH + 1], prefix[32] = "";
	uint64_t need_mib = freemem_mib_up(w->need), free_mib = mem->free_pages / 256;
	unsigned percent, filled;

	if (w->prog)
		snprintf(prefix, sizeof(prefix), "%s: ", w->prog);
	memwait_source(mem, source, sizeof(source));
	if (!w->tty) {
		memwait_pace(w, mem, ", ", pace, sizeof(pace));
		snprintf(buf, len, "%swaiting for memory: %" PRIu64 " of %" PRIu64
			 " MiB free, %" PRIu64 " MiB to come back from %s%s", prefix, free_mib,
			 need_mib, mem->releasing_pages / 256, source, pace);
		return;
	}
	percent = w->need ? (unsigned)(mem->free_pages >= w->need ? 100 :
				       mem->free_pages * 100 / w->need) : 100;
	filled = percent * MEMWAIT_BAR_WIDTH / 100;
	for (unsigned i = 0; i < MEMWAIT_BAR_WIDTH; i++)
		bar[i] = i < filled ? '=' : ' ';
	if (filled > 0 && filled < MEMWAIT_BAR_WIDTH)
		bar[filled - 1] = '>';
	bar[MEMWAIT_BAR_WIDTH] = '\0';
	memwait_pace(w, mem, "  ", pace, sizeof(pace));
	snprintf(buf, len, "%swaiting for memory [%s] %" PRIu64 "/%" PRIu64 " MiB free%s  (%s)",
		 prefix, bar, free_mib, need_mib, pace, source);
	/* A wrapped line cannot be redrawn: cut to the columns, between
	 * characters and escapes (the source is escaped, the rest ASCII). */
	if (w->columns)
		jobline_cut(buf, (int)w->columns - 1);
}

static void memwait_draw(struct memwait *w, const struct xenreaper_memory *mem, int64_t now_ms)
{
	char line[MEMWAIT_LINE_LEN];
	size_t n;

	memwait_format_line(w, mem, line, sizeof(line));
	if (!w->tty) {
		if (!strcmp(line, w->last_line) ||
		    (w->last_line[0] && now_ms - w->last_print_ms < MEMWAIT_PLAIN_MS))
			return;
		fprintf(w->out, "%s\n", line);
		fflush(w->out);
		snprintf(w->last_line, sizeof(w->last_line), "%s", line);
		w->last_print_ms = now_ms;
		w->shown++;
		return;
	}
	n = strlen(line);
	fprintf(w->out, "\r%s%*s", line, w->drawn > n ? (int)(w->drawn - n) : 0, "");
	fflush(w->out);
	w->drawn = n;
	w->shown++;
}

int memwait_update(struct memwait *w, const struct xenreaper_memory *mem, int64_t now_ms)
{
	if (w->interrupted && *w->interrupted)
		return -EINTR;
	if (!w->have_last)
		w->start_ms = now_ms;
	w->last = *mem;
	w->last_ms = now_ms;
	w->have_last = true;
	/* Only a reading that will be waited on is shown: enough free, or
	 * no hope, ends the wait and its caller says so. */
	if (!w->quiet && freemem_decide(w->need, mem->free_pages, mem->releasing_pages,
					mem->daemon_running) == FREEMEM_WAIT)
		memwait_draw(w, mem, now_ms);
	return 0;
}

int memwait_cb(const struct xenreaper_memory *mem, void *arg)
{
	return memwait_update(arg, mem, progress_now_ms());
}

double memwait_waited_s(const struct memwait *w)
{
	return w->have_last ? (w->last_ms - w->start_ms) / 1000.0 : 0;
}

void memwait_clear(struct memwait *w)
{
	if (w->tty && w->drawn) {
		fprintf(w->out, "\r%*s\r", (int)w->drawn, "");
		fflush(w->out);
		w->drawn = 0;
	}
}
