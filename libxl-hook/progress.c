/*
 * progress: the display both clients use while they follow a teardown.  On
 * a terminal it redraws one line with \r (a bar of pages released, the
 * rate and time left xenreaperd publishes, "stalled" when it says so, then
 * the scrubbing phase, whose rate it measures itself); otherwise it prints
 * plain lines, at most one a second and only when they change;
 * then one final line, which also decides the exit code.  It also counts
 * down the wait for a stopped xenreaperd.  It never calls libxenreaper (it
 * only reads the status it is handed) and never exits, so unit tests link
 * it without Xen; the JSON and seconds helpers live here for the same
 * reason.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"
#include "textesc.h"

#define PROGRESS_MIN_SPAN_MS 500	/* samples closer than this give no rate */
#define PROGRESS_PLAIN_MS 1000		/* plain lines at most this often */
#define PROGRESS_MAX_SECONDS (7 * 24 * 3600)

/* done or failed (libxenreaper has this too, but this file must not call it). */
static bool progress_final(enum xenreaper_state state)
{
	return state == XENREAPER_STATE_DONE || state == XENREAPER_STATE_FAILED;
}

int64_t progress_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

unsigned progress_columns(FILE *out, bool tty)
{
	struct winsize ws;

	if (tty && ioctl(fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20)
		return ws.ws_col;
	return 80;
}

void progress_init(struct progress *p, FILE *out, bool tty, uint32_t domid, const char *name)
{
	memset(p, 0, sizeof(*p));
	p->out = out;
	p->tty = tty;
	p->domid = domid;
	p->columns = progress_columns(out, tty);
	p->daemon_limit_ms = PROGRESS_DAEMON_LIMIT_MS;
	p->phase = XENREAPER_STATE_UNKNOWN;
	if (name && name[0]) {
		char shown[PROGRESS_TEXT_LEN(128)];

		snprintf(p->label, sizeof(p->label), "domain %u (%s)", domid,
			 progress_text(shown, sizeof(shown), name));
	} else
		snprintf(p->label, sizeof(p->label), "domain %u", domid);
}

uint64_t progress_mib(uint64_t pages)
{
	return (pages + 128) / 256;
}

void progress_format_rate(char *buf, size_t len, double pages_per_s)
{
	double mib = pages_per_s / 256;

	if (pages_per_s < 0)
		snprintf(buf, len, "-- MiB/s");
	else if (mib >= 1024)
		snprintf(buf, len, "%.1f GiB/s", mib / 1024);
	else if (mib >= 10)
		snprintf(buf, len, "%.0f MiB/s", mib);
	else
		snprintf(buf, len, "%.1f MiB/s", mib);
}

void progress_format_eta(char *buf, size_t len, double seconds)
{
	long s;

	if (!(seconds >= 0) || seconds > 99 * 3600) {
		snprintf(buf, len, "--");
		return;
	}
	s = (long)(seconds + 0.5);
	if (s < 60)
		snprintf(buf, len, "%lds", s);
	else if (s < 3600)
		snprintf(buf, len, "%ldm%02lds", s / 60, s % 60);
	else
		snprintf(buf, len, "%ldh%02ldm", s / 3600, s % 3600 / 60);
}

double progress_rate(const struct progress *p)
{
	int64_t span;
	uint64_t first, last;

	if (p->n_samples < 2)
		return -1;
	span = p->samples[p->n_samples - 1].ms - p->samples[0].ms;
	if (span < PROGRESS_MIN_SPAN_MS)
		return -1;
	first = p->samples[0].pages;
	last = p->samples[p->n_samples - 1].pages;
	return first > last ? (first - last) * 1000.0 / span : 0;
}

/* Record the pages still to scrub: xenreaperd publishes the release rate,
 * but not the scrub rate, which is measured here. */
static void progress_sample(struct progress *p, const struct xenreaper_status *st, int64_t now_ms)
{
	enum xenreaper_state phase;
	uint64_t pages;

	switch (st->state) {
	case XENREAPER_STATE_SCRUBBING:
		phase = XENREAPER_STATE_SCRUBBING;
		pages = st->scrub_pages;
		break;
	default:
		return;
	}
	if (phase != p->phase) {
		p->phase = phase;
		p->n_samples = 0;
	}
	if (p->n_samples == PROGRESS_SAMPLES) {
		memmove(&p->samples[0], &p->samples[1], sizeof(p->samples[0]) * (PROGRESS_SAMPLES - 1));
		p->n_samples--;
	}
	p->samples[p->n_samples].ms = now_ms;
	p->samples[p->n_samples].pages = pages;
	p->n_samples++;
	/* Keep a window: drop the oldest while the next one is old enough. */
	while (p->n_samples > 2 && now_ms - p->samples[1].ms >= PROGRESS_WINDOW_MS) {
		memmove(&p->samples[0], &p->samples[1], sizeof(p->samples[0]) * (p->n_samples - 1));
		p->n_samples--;
	}
}

void progress_format_bar(char *buf, unsigned width, unsigned percent)
{
	unsigned filled = (percent > 100 ? 100 : percent) * width / 100;

	for (unsigned i = 0; i < width; i++)
		buf[i] = i < filled ? '=' : ' ';
	if (filled > 0 && filled < width)
		buf[filled - 1] = '>';
	buf[width] = '\0';
}

/* ", 812 MiB/s, ETA 3s" / ", stalled" from what xenreaperd published with
 * ST (nothing of what is not published: the figures all come from the
 * one reading of the job, so they agree with its pages and percent). */
static void progress_plain_pace(const struct xenreaper_status *st, char *buf, size_t len)
{
	char rate[32] = "", eta[32] = "";

	if (st->rate_mib_s >= 0) {
		rate[0] = ',';
		rate[1] = ' ';
		progress_format_rate(rate + 2, sizeof(rate) - 2, st->rate_mib_s * 256);
	}
	if (st->stalled)
		snprintf(eta, sizeof(eta), ", stalled");
	else if (st->eta_s >= 0) {
		snprintf(eta, sizeof(eta), ", ETA ");
		progress_format_eta(eta + 6, sizeof(eta) - 6, (double)st->eta_s);
	}
	snprintf(buf, len, "%s%s", rate, eta);
}

/* The bar's "812 MiB/s  ETA 3s" from what xenreaperd published with ST. */
static void progress_bar_pace(const struct xenreaper_status *st, char *buf, size_t len)
{
	char rate[32], eta[32];

	progress_format_rate(rate, sizeof(rate), st->rate_mib_s >= 0 ? st->rate_mib_s * 256 : -1);
	if (st->stalled)
		snprintf(buf, len, "%s  stalled", rate);
	else {
		progress_format_eta(eta, sizeof(eta), st->eta_s >= 0 ? (double)st->eta_s : -1);
		snprintf(buf, len, "%s  ETA %s", rate, eta);
	}
}

void progress_format_line(const struct progress *p, const struct xenreaper_status *st,
			  int64_t now_ms, char *buf, size_t len)
{
	char bar[PROGRESS_BAR_WIDTH + 1], rate[32], eta[32], pace[80], down[80] = "";
	char state[PROGRESS_TEXT_LEN(16)];
	double r = progress_rate(p);
	uint64_t done, togo;
	unsigned percent;

	if (p->daemon_down && !progress_final(st->state)) {
		int64_t left = p->daemon_limit_ms - (now_ms - p->down_since_ms);

		if (p->tty && p->daemon_limit_ms >= 0)
			snprintf(down, sizeof(down), "; xenreaperd is not running (giving up in %" PRId64 "s)",
				 left > 0 ? (left + 999) / 1000 : 0);
		else
			snprintf(down, sizeof(down), "; xenreaperd is not running");
	}
	if (!p->tty) {
		switch (st->state) {
		case XENREAPER_STATE_DESTROYING:
		case XENREAPER_STATE_ZOMBIE:
		case XENREAPER_STATE_STUCK:
			progress_plain_pace(st, pace, sizeof(pace));
			snprintf(buf, len, "domain %u: %s %u%% (%" PRIu64 " MiB left%s)%s", st->domid,
				 st->state_name, st->progress, progress_mib(st->pages_left), pace, down);
			break;
		case XENREAPER_STATE_SCRUBBING:
			snprintf(buf, len, "domain %u: scrubbing (%" PRIu64 " MiB left to scrub)%s",
				 st->domid, progress_mib(st->scrub_pages), down);
			break;
		case XENREAPER_STATE_REQUESTED:
			snprintf(buf, len, "domain %u: requested (waiting for xenreaperd to take it)%s",
				 st->domid, down);
			break;
		default:
			snprintf(buf, len, "domain %u: %s%s", st->domid,
				 progress_text(state, sizeof(state), st->state_name), down);
			break;
		}
		return;
	}
	switch (st->state) {
	case XENREAPER_STATE_DESTROYING:
		progress_format_bar(bar, PROGRESS_BAR_WIDTH, st->progress);
		progress_bar_pace(st, pace, sizeof(pace));
		done = st->pages_total > st->pages_left ? st->pages_total - st->pages_left : 0;
		snprintf(buf, len, "domain %u: destroying [%s] %3u%%  %" PRIu64 "/%" PRIu64
			 " MiB  %s%s", st->domid, bar, st->progress, progress_mib(done),
			 progress_mib(st->pages_total), pace, down);
		break;
	case XENREAPER_STATE_SCRUBBING:
		/* xenreaperd publishes no scrub rate: this one is measured here. */
		togo = st->scrub_pages;
		percent = p->scrub_total ? (p->scrub_total - togo) * 100 / p->scrub_total : 0;
		progress_format_bar(bar, PROGRESS_BAR_WIDTH, percent);
		progress_format_rate(rate, sizeof(rate), r);
		progress_format_eta(eta, sizeof(eta), r > 0 ? togo / r : -1);
		snprintf(buf, len, "domain %u: scrubbing  [%s] %3u%%  %" PRIu64 " MiB to scrub  %s  ETA %s%s",
			 st->domid, bar, percent, progress_mib(togo), rate, eta, down);
		break;
	case XENREAPER_STATE_ZOMBIE:
		snprintf(buf, len, "domain %u: zombie: dead but %" PRIu64
			 " MiB still referenced; xenreaperd retries%s", st->domid,
			 progress_mib(st->pages_left), down);
		break;
	case XENREAPER_STATE_STUCK:
		snprintf(buf, len, "domain %u: stuck: its teardown waits, %" PRIu64
			 " MiB left (`xenreaper status %u` says on what)%s", st->domid,
			 progress_mib(st->pages_left), st->domid, down);
		break;
	case XENREAPER_STATE_QUEUED:
		snprintf(buf, len, "domain %u: queued, waiting for a free teardown slot%s",
			 st->domid, down);
		break;
	case XENREAPER_STATE_REQUESTED:
		snprintf(buf, len, "domain %u: requested, waiting for xenreaperd to take it%s",
			 st->domid, down);
		break;
	default:
		snprintf(buf, len, "domain %u: %s%s", st->domid,
			 progress_text(state, sizeof(state), st->state_name), down);
		break;
	}
	if (p->columns && len >= p->columns)
		buf[p->columns - 1] = '\0';	/* a wrapped line cannot be redrawn */
}

static void progress_draw(struct progress *p, const struct xenreaper_status *st, int64_t now_ms)
{
	char line[256];
	size_t n;

	progress_format_line(p, st, now_ms, line, sizeof(line));
	if (!p->tty) {
		if (!strcmp(line, p->last_line) ||
		    (p->last_line[0] && now_ms - p->last_print_ms < PROGRESS_PLAIN_MS))
			return;
		fprintf(p->out, "%s\n", line);
		fflush(p->out);
		snprintf(p->last_line, sizeof(p->last_line), "%s", line);
		p->last_print_ms = now_ms;
		return;
	}
	n = strlen(line);
	fprintf(p->out, "\r%s%*s", line, p->drawn > n ? (int)(p->drawn - n) : 0, "");
	fflush(p->out);
	p->drawn = n;
}

int progress_update(struct progress *p, const struct xenreaper_status *st, int64_t now_ms)
{
	bool final = progress_final(st->state);

	if (p->interrupted && *p->interrupted)
		return -EINTR;
	p->last = *st;
	p->have_last = true;
	if (st->state == XENREAPER_STATE_SCRUBBING && st->scrub_pages > p->scrub_total)
		p->scrub_total = st->scrub_pages;
	progress_sample(p, st, now_ms);
	if (final || st->daemon_running) {
		p->daemon_down = false;
	} else if (!p->daemon_down) {
		p->daemon_down = true;
		p->down_since_ms = now_ms;
	}
	if (!p->quiet && !final)
		progress_draw(p, st, now_ms);
	if (p->daemon_down && p->daemon_limit_ms >= 0 &&
	    now_ms - p->down_since_ms >= p->daemon_limit_ms)
		return -EHOSTDOWN;
	return 0;
}

int progress_wait_cb(const struct xenreaper_status *st, void *arg)
{
	return progress_update(arg, st, progress_now_ms());
}

/* An error line on stderr, after the tty line is cleared. */
static void progress_error(const struct progress *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void progress_error(const struct progress *p, const char *fmt, ...)
{
	va_list ap;

	fflush(p->out);
	if (p->prog)
		fprintf(stderr, "%s: ", p->prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int progress_finish(struct progress *p, int rc, const char *why_raw)
{
	const struct xenreaper_status *st = &p->last;
	char limit[32], why[PROGRESS_TEXT_LEN(512)], error[PROGRESS_TEXT_LEN(512)];
	char state[PROGRESS_TEXT_LEN(16)];

	/* Sentences from xenstore (a guest's name, a job's error) may hold
	 * anything a tenant chose: never printed raw. */
	progress_text(why, sizeof(why), why_raw && why_raw[0] ? why_raw :
		      strerror(rc < 0 ? -rc : rc));
	progress_text(error, sizeof(error), p->have_last ? st->error : "");
	progress_text(state, sizeof(state), p->have_last ? st->state_name : "requested");
	if (!p->quiet && p->tty && p->drawn) {
		fprintf(p->out, "\r%*s\r", (int)p->drawn, "");
		p->drawn = 0;
	}
	switch (rc) {
	case 0:
		if (p->quiet)
			break;
		if (p->have_last && st->pages_total && st->started_ms &&
		    st->finished_ms >= st->started_ms)
			fprintf(p->out, "%s: done, %" PRIu64 " MiB released in %.1f s\n", p->label,
				progress_mib(st->pages_total),
				(st->finished_ms - st->started_ms) / 1000.0);
		else
			fprintf(p->out, "%s: done\n", p->label);
		fflush(p->out);
		/* The domain is gone, but something of it is not (what xl
		 * would print as libxl's errors, and exit 0 as well). */
		if (error[0])
			progress_error(p, "%s: warning: %s", p->label, error);
		return PROGRESS_EXIT_OK;
	case -EIO:
		if (!p->quiet)
			progress_error(p, "%s: failed: %s", p->label, error[0] ? error : why);
		return PROGRESS_EXIT_FAILED;
	case -ETIMEDOUT:
		if (!p->quiet)
			progress_error(p, "%s: still %s; stopped waiting (the teardown goes on: follow it with `xenreaper wait %u`)",
				       p->label, state, p->domid);
		return PROGRESS_EXIT_DAEMON;
	case -EHOSTDOWN:
		progress_format_eta(limit, sizeof(limit), p->daemon_limit_ms / 1000.0);
		if (!p->quiet)
			progress_error(p, "%s: xenreaperd is not running (waited %s); the request stays recorded and is served when xenreaperd starts (hint: systemctl start xenreaperd)",
				       p->label, limit);
		return PROGRESS_EXIT_DAEMON;
	case -EINTR:
		if (!p->quiet)
			progress_error(p, "%s: interrupted; the teardown goes on in the background (follow it with `xenreaper wait %u`)",
				       p->label, p->domid);
		return PROGRESS_EXIT_INTERRUPTED;
	case -EHOSTUNREACH:
		if (!p->quiet)
			progress_error(p, "%s: %s", p->label, why);
		return PROGRESS_EXIT_HUNG;
	default:
		if (!p->quiet)
			progress_error(p, "%s", why);
		break;
	}
	return rc ? PROGRESS_EXIT_FAILED : PROGRESS_EXIT_OK;
}

int progress_parse_seconds(const char *text, int64_t *ms)
{
	unsigned dots = 0;
	double value;
	char *end;

	if (!text || !text[0] || text[0] == '.')
		return -EINVAL;
	for (const char *c = text; *c; c++) {
		if (*c == '.')
			dots++;
		else if (*c < '0' || *c > '9')
			return -EINVAL;
	}
	if (dots > 1)
		return -EINVAL;
	errno = 0;
	value = strtod(text, &end);
	if (errno || *end || !(value >= 0) || value > PROGRESS_MAX_SECONDS)
		return -EINVAL;
	*ms = (int64_t)(value * 1000 + 0.5);
	return 0;
}

#define PROGRESS_SIZE_MAX (1ULL << 50)	/* 1 PiB: beyond any host Xen runs on */

int progress_parse_size(const char *text, uint64_t *pages)
{
	unsigned long long whole = 0, frac = 0, scale = 1, mult, bytes;
	const char *c = text;
	unsigned digits = 0;

	if (!text || !isdigit((unsigned char)*c))
		return -EINVAL;
	for (; isdigit((unsigned char)*c); c++) {
		if (whole > PROGRESS_SIZE_MAX)
			return -ERANGE;
		whole = whole * 10 + (*c - '0');
	}
	if (*c == '.') {
		bool beyond = false;

		for (c++; isdigit((unsigned char)*c); c++, digits++) {
			if (digits < 6) {	/* 10^6 * 2^40 fits in 64 bits */
				frac = frac * 10 + (*c - '0');
				scale *= 10;
			} else if (*c != '0') {
				beyond = true;
			}
		}
		if (!digits)
			return -EINVAL;
		frac += beyond;		/* rounded up, as below */
	}
	switch (*c) {
	case 'b': case 'B': mult = 1; break;
	case 'k': case 'K': mult = 1ULL << 10; break;
	case 'm': case 'M': mult = 1ULL << 20; break;
	case 'g': case 'G': mult = 1ULL << 30; break;
	case 't': case 'T': mult = 1ULL << 40; break;
	default: return -EINVAL;	/* no unit, or an unknown one */
	}
	c++;
	if (mult > 1 && (!strcmp(c, "iB") || !strcmp(c, "ib")))
		c += 2;
	if (*c)
		return -EINVAL;
	if (whole > PROGRESS_SIZE_MAX / mult)
		return -ERANGE;
	/* The fraction is rounded up: asking for 1.0000000001G is more than 1G. */
	bytes = whole * mult + (frac * mult + scale - 1) / scale;
	if (bytes > PROGRESS_SIZE_MAX)
		return -ERANGE;
	*pages = (bytes + 4095) / 4096;
	return 0;
}

int progress_answer_limit(int64_t limit_ms)
{
	if (limit_ms < XENREAPER_ANSWER_TIMEOUT_MIN_MS)
		return XENREAPER_ANSWER_TIMEOUT_MIN_MS;
	return limit_ms > INT32_MAX ? INT32_MAX : (int)limit_ms;
}

int progress_daemon_limit(const char *env_value, int64_t *ms)
{
	if (!env_value || !env_value[0]) {
		*ms = PROGRESS_DAEMON_LIMIT_MS;
		return 0;
	}
	return progress_parse_seconds(env_value, ms);
}

/* Append N bytes of S at *POS, as far as LEN allows (keeping the NUL). */
static void json_put(char *out, size_t len, size_t *pos, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++, (*pos)++)
		if (*pos + 1 < len)
			out[*pos] = s[i];
}

size_t progress_text_escape(char *out, size_t len, const char *in)
{
	return textesc_escape(out, len, in, false);
}

const char *progress_text(char *buf, size_t len, const char *in)
{
	progress_text_escape(buf, len, in);
	return buf;
}

size_t progress_json_escape(char *out, size_t len, const char *in)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t pos = 0, n;
	char esc[8];

	while (*s) {
		if (*s == '"' || *s == '\\') {
			esc[0] = '\\';
			esc[1] = *s;
			json_put(out, len, &pos, esc, 2);
			s++;
		} else if (*s < 0x20 || *s == 0x7f) {
			switch (*s) {
			case '\n': json_put(out, len, &pos, "\\n", 2); break;
			case '\r': json_put(out, len, &pos, "\\r", 2); break;
			case '\t': json_put(out, len, &pos, "\\t", 2); break;
			case '\b': json_put(out, len, &pos, "\\b", 2); break;
			case '\f': json_put(out, len, &pos, "\\f", 2); break;
			default:
				snprintf(esc, sizeof(esc), "\\u%04x", *s);
				json_put(out, len, &pos, esc, 6);
				break;
			}
			s++;
		} else if (*s < 0x80) {
			json_put(out, len, &pos, (const char *)s, 1);
			s++;
		} else if ((n = textesc_utf8_len(s)) > 0) {
			json_put(out, len, &pos, (const char *)s, n);
			s += n;
		} else {
			json_put(out, len, &pos, "\\ufffd", 6);
			s++;
		}
	}
	if (len)
		out[pos < len ? pos : len - 1] = '\0';
	return pos;
}

int progress_json_string(FILE *f, const char *in)
{
	size_t n = progress_json_escape(NULL, 0, in);
	char *buf = malloc(n + 1);

	if (!buf)
		return -ENOMEM;
	progress_json_escape(buf, n + 1, in);
	fprintf(f, "\"%s\"", buf);
	free(buf);
	return 0;
}
