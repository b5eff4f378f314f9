/*
 * top-run: the one loop of `xenreaper top`.  It watches /tool/xenreaper
 * (one xenstore watch on its own libxenstore handle) and sleeps in ppoll
 * on the watch fd and the keyboard, with no timeout: it wakes only when a
 * node changes, a key is pressed or a signal comes, reads again only what
 * the changed nodes name (a job through libxenreaper, as `list` and
 * `status` read it, or the daemon/ and memory/ nodes), and writes only the
 * lines of the screen that changed, so an idle host costs nothing and a
 * still screen is never redrawn.  On a terminal it draws on the alternate
 * screen with plain ANSI sequences (no curses: a cursor move and an erase
 * to the end of the line are all it needs), reads keys in non-canonical
 * mode, and restores both on `q`, SIGINT and SIGTERM; the signal handlers
 * only set flags, which ppoll's signal mask makes race-free.  Elsewhere
 * (a pipe, a file) it prints plain lines, one for each summary or job
 * line that changed, with the time.  While a teardown is under way it
 * pings the daemon every TOP_PING_MS, as a waiting client does
 * (daemon/liveness.c): the daemon then publishes the figures at every
 * sample instead of every few seconds.  Otherwise it neither writes nor
 * wakes on a timer, so a daemon killed without a word (SIGKILL leaves
 * daemon/state "running") shows as running until the next change, and
 * the time left is the daemon's last figure, not counted down here; it
 * does not handle SIGTSTP (suspending leaves the alternate screen up
 * until `fg`).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <xenstore.h>

#include "jobline.h"
#include "top-run.h"
#include "top.h"
#include "xenreaper-layout.h"

#define TOP_TOKEN "xenreaper-top"
#define TOP_PING_MS 2000
#define TOP_ENTER "\033[?1049h\033[?25l\033[H\033[2J"	/* alternate screen, no cursor */
#define TOP_LEAVE "\033[?25h\033[?1049l"

static volatile sig_atomic_t top_stop, top_resized;

static void top_on_stop(int sig)
{
	(void)sig;
	top_stop = 1;
}

static void top_on_resize(int sig)
{
	(void)sig;
	top_resized = 1;
}

/* What the loop keeps between turns. */
struct top_run {
	struct xenreaper *h;
	struct xs_handle *xs;
	bool tty;			/* stdout is a terminal: draw the screen */
	bool keys;			/* stdin is a terminal: read keys from it */
	bool raw;			/* the terminal's modes are changed (SAVED) */
	bool entered;			/* the alternate screen is up */
	struct termios saved;
	struct top_view view;
	struct top_screen *shown, *next;	/* on screen (or printed last), and the new one */
	bool drawn;			/* SHOWN holds what is on screen */
	bool read_all, read_header;
	uint8_t dirty[XENREAPER_DOMID_MAX / 8 + 1];	/* jobs to read again */
	char ping_path[64];		/* top_follow's ping, while ping_out */
	bool ping_out;
	unsigned ping_seq;
	int64_t next_ping_ms;
	char *why;
	size_t why_len;
};

static int top_fail(struct top_run *r, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int top_fail(struct top_run *r, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->why, r->why_len, fmt, ap);
	va_end(ap);
	return rc;
}

/* PATH's value as a number of pages; -1 if absent or not a number. */
static int64_t top_read_pages(struct top_run *r, const char *path)
{
	unsigned len;
	char *text = xs_read(r->xs, XBT_NULL, path, &len);
	long long value = -1;
	char *end;

	if (text) {
		value = strtoll(text, &end, 10);
		if (end == text || *end || value < 0)
			value = -1;
	}
	free(text);
	return value;
}

static void top_read_header(struct top_run *r)
{
	struct top_header *head = &r->view.head;
	unsigned len;
	char *text;

	head->daemon_running = xenreaper_daemon_running(r->h) > 0;
	text = xs_read(r->xs, XBT_NULL, XENREAPER_DAEMON_DIR "/state", &len);
	snprintf(head->daemon_state, sizeof(head->daemon_state), "%s", text ? text : "");
	free(text);
	text = xs_read(r->xs, XBT_NULL, XENREAPER_DAEMON_DIR "/config-error", &len);
	head->config_error = text != NULL;
	free(text);
	head->free_pages = top_read_pages(r, XENREAPER_MEMORY_DIR "/free");
	head->releasing_pages = top_read_pages(r, XENREAPER_MEMORY_DIR "/releasing");
	head->scrub_pending_pages = top_read_pages(r, XENREAPER_MEMORY_DIR "/scrub-pending");
}

/* Read again what the events since the last turn named. */
static int top_read(struct top_run *r)
{
	struct xenreaper_status *jobs, st;
	size_t n;
	int rc;

	if (r->read_header) {
		top_read_header(r);
		r->read_header = false;
	}
	if (r->read_all) {
		rc = xenreaper_list(r->h, &jobs, &n);
		if (rc)
			return top_fail(r, rc, "%s", xenreaper_last_error(r->h));
		top_view_replace(&r->view, jobs, n);
		r->read_all = false;
		memset(r->dirty, 0, sizeof(r->dirty));
		return 0;
	}
	for (uint32_t domid = 0; domid <= XENREAPER_DOMID_MAX; domid++) {
		if (!(r->dirty[domid / 8] & (1U << (domid % 8))))
			continue;
		r->dirty[domid / 8] &= (uint8_t)~(1U << (domid % 8));
		rc = xenreaper_job_status(r->h, domid, &st);
		if (rc == -ENOENT) {
			top_view_drop(&r->view, domid);
			continue;
		}
		if (!rc)
			rc = top_view_set(&r->view, &st);
		if (rc)
			return top_fail(r, rc, "reading the job of domain %u: %s", domid,
					xenreaper_last_error(r->h));
	}
	return 0;
}

/* Take every pending watch event into what to read again. */
static int top_drain(struct top_run *r)
{
	char **event;
	uint32_t domid;

	for (;;) {
		errno = 0;
		event = xs_check_watch(r->xs);
		if (!event) {
			if (errno && errno != EAGAIN)
				return top_fail(r, -errno, "reading xenstore watch events: %s",
						strerror(errno));
			return 0;
		}
		switch (top_event_of(event[XS_WATCH_PATH], &domid)) {
		case TOP_EVENT_ALL:
			r->read_all = true;
			break;
		case TOP_EVENT_JOB:
			r->dirty[domid / 8] |= (uint8_t)(1U << (domid % 8));
			break;
		case TOP_EVENT_HEADER:
			r->read_header = true;
			break;
		case TOP_EVENT_NONE:
			break;
		}
		free(event);
	}
}

static int64_t top_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void top_ping_cancel(struct top_run *r)
{
	if (r->ping_out)
		xs_rm(r->xs, XBT_NULL, r->ping_path);
	r->ping_out = false;
	r->next_ping_ms = 0;
}

/*
 * While something is under way, ping as a waiting client does, so that
 * the daemon publishes the figures at every sample: the next ping
 * TOP_PING_MS after this one, and only once this one is answered, so a
 * daemon that does not answer (or an older one, with no ping/) gets no
 * pile of them.  Returns how long ppoll may sleep in ms, -1: no bound.
 */
static int64_t top_follow(struct top_run *r)
{
	int64_t now = top_mono_ms();
	unsigned len;
	char *text;

	if (!top_view_under_way(&r->view)) {
		top_ping_cancel(r);
		return -1;
	}
	if (now < r->next_ping_ms)
		return r->next_ping_ms - now;
	r->next_ping_ms = now + TOP_PING_MS;
	if (r->ping_out) {
		text = xs_read(r->xs, XBT_NULL, r->ping_path, &len);
		free(text);
		if (text)
			return TOP_PING_MS;	/* not answered yet */
		r->ping_out = false;
	}
	text = xs_read(r->xs, XBT_NULL, XENREAPER_PING_DIR, &len);
	free(text);
	if (!text)
		return TOP_PING_MS;
	snprintf(r->ping_path, sizeof(r->ping_path), XENREAPER_PING_DIR "/%ld-top-%u", (long)getpid(),
		 ++r->ping_seq);
	r->ping_out = xs_write(r->xs, XBT_NULL, r->ping_path, "top", 3);
	return TOP_PING_MS;
}

static void top_size(unsigned *cols, unsigned *rows)
{
	struct winsize ws;

	*cols = 80;
	*rows = 24;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col && ws.ws_row) {
		*cols = ws.ws_col;
		*rows = ws.ws_row;
	}
}

static int top_flush(struct top_run *r)
{
	if (fflush(stdout) || ferror(stdout))
		return top_fail(r, -EIO, "writing to stdout: %s", strerror(errno));
	return 0;
}

/* The screen: only the lines that changed (all after a resize). */
static int top_draw(struct top_run *r)
{
	bool changed[TOP_ROWS_MAX];
	struct top_screen *swap;

	struct top_layout layout = { .keys_hint = r->keys };

	top_size(&layout.cols, &layout.rows);
	/* A line as wide as the terminal would wrap in some terminals. */
	if (layout.cols > 1)
		layout.cols--;
	top_render(&r->view, &layout, r->next);
	if (!top_screen_diff(r->drawn ? r->shown : NULL, r->next, changed))
		return 0;
	if (!r->drawn)
		fputs("\033[H\033[2J", stdout);
	for (unsigned i = 0; i < TOP_ROWS_MAX; i++)
		if (changed[i])
			printf("\033[%u;1H%s\033[K", i + 1, i < r->next->rows ? r->next->line[i] : "");
	swap = r->shown;
	r->shown = r->next;
	r->next = swap;
	r->drawn = true;
	return top_flush(r);
}

/* LINE without its trailing blanks (the padding of its last column). */
static void top_print_plain(const char *stamp, const char *line)
{
	int len = (int)strlen(line);

	while (len > 0 && line[len - 1] == ' ')
		len--;
	printf("%s %.*s\n", stamp, len, line);
}

/* Plain output: one line for each summary or job line that changed. */
static int top_print(struct top_run *r)
{
	const struct top_screen *before = r->drawn ? r->shown : NULL;
	struct top_screen *swap;
	char stamp[16];
	time_t now = time(NULL);
	struct tm tm;

	struct top_layout layout = { .cols = TOP_COLS_MAX, .rows = TOP_ROWS_MAX,
				     .name_width = JOBLINE_NAME_MAX };

	top_render(&r->view, &layout, r->next);
	if (!localtime_r(&now, &tm) || !strftime(stamp, sizeof(stamp), "%H:%M:%S", &tm))
		snprintf(stamp, sizeof(stamp), "--:--:--");
	if (!before)
		for (unsigned i = 0; i < r->next->rows; i++)
			if (r->next->key[i] == TOP_KEY_OTHER && r->next->line[i][0])
				top_print_plain("        ", r->next->line[i]);	/* the titles */
	for (unsigned i = 0; i < r->next->rows; i++)
		if (r->next->key[i] != TOP_KEY_OTHER && top_line_changed(before, r->next, i))
			top_print_plain(stamp, r->next->line[i]);
	for (unsigned i = 0; before && i < before->rows; i++)
		if (top_line_gone(before, r->next, i))
			printf("%s %5u  (job gone)\n", stamp, before->key[i] - TOP_KEY_JOB(0));
	swap = r->shown;
	r->shown = r->next;
	r->next = swap;
	r->drawn = true;
	return top_flush(r);
}

static int top_terminal_enter(struct top_run *r)
{
	struct termios raw;

	if (r->keys) {
		if (tcgetattr(STDIN_FILENO, &r->saved))
			return top_fail(r, -errno, "reading the terminal's modes: %s", strerror(errno));
		raw = r->saved;
		/* Keys one at a time, not echoed; ^C still a signal. */
		raw.c_lflag &= ~(ICANON | ECHO);
		raw.c_cc[VMIN] = 1;
		raw.c_cc[VTIME] = 0;
		if (tcsetattr(STDIN_FILENO, TCSANOW, &raw))
			return top_fail(r, -errno, "setting the terminal's modes: %s", strerror(errno));
		r->raw = true;
	}
	fputs(TOP_ENTER, stdout);
	r->entered = true;
	return top_flush(r);
}

static void top_terminal_leave(struct top_run *r)
{
	if (r->entered) {
		fputs(TOP_LEAVE, stdout);
		fflush(stdout);
		r->entered = false;
	}
	if (r->raw) {
		tcsetattr(STDIN_FILENO, TCSANOW, &r->saved);
		r->raw = false;
	}
}

/* Read the keys pressed; 1 if one of them quits. */
static int top_keys(struct top_run *r, struct pollfd *key_fd)
{
	char keys[64];
	ssize_t n = read(STDIN_FILENO, keys, sizeof(keys));

	if (n == 0) {
		key_fd->fd = -1;	/* no keyboard any more: signals still end it */
		return 0;
	}
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 0 :
			top_fail(r, -errno, "reading the keyboard: %s", strerror(errno));
	for (ssize_t i = 0; i < n; i++)
		if (keys[i] == 'q' || keys[i] == 'Q')
			return 1;
	return 0;
}

static void top_signals(struct sigaction *old, sigset_t *blocked, sigset_t *before)
{
	static const int sigs[3] = { SIGINT, SIGTERM, SIGWINCH };
	struct sigaction sa;

	sigemptyset(blocked);
	for (unsigned i = 0; i < 3; i++)
		sigaddset(blocked, sigs[i]);
	/* Blocked but while in ppoll: a signal between the check of a flag
	 * and the sleep would otherwise wait for the next event.  Blocked
	 * before the watch starts libxenstore's reader thread, which
	 * inherits the mask, so that no signal lands there instead. */
	sigprocmask(SIG_BLOCK, blocked, before);
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	for (unsigned i = 0; i < 3; i++) {
		sa.sa_handler = sigs[i] == SIGWINCH ? top_on_resize : top_on_stop;
		sigaction(sigs[i], &sa, &old[i]);
	}
}

static void top_signals_restore(const struct sigaction *old, const sigset_t *before)
{
	static const int sigs[3] = { SIGINT, SIGTERM, SIGWINCH };

	/* Unblocked first: one that came since the last ppoll reaches our
	 * handler, not the default action (death after the terminal was put
	 * back, with the wrong exit status). */
	sigprocmask(SIG_SETMASK, before, NULL);
	for (unsigned i = 0; i < 3; i++)
		sigaction(sigs[i], &old[i], NULL);
}

int top_run(struct xenreaper *h, char *why, size_t len)
{
	struct top_run r = { .h = h, .why = why, .why_len = len };
	struct sigaction old[3];
	sigset_t blocked, before;
	struct pollfd fds[2];
	struct timespec sleep_for;
	bool watching = false;
	int64_t sleep_ms;
	int rc;

	top_view_init(&r.view);
	top_signals(old, &blocked, &before);
	r.tty = isatty(STDOUT_FILENO);
	r.keys = r.tty && isatty(STDIN_FILENO);
	r.shown = malloc(sizeof(*r.shown));
	r.next = malloc(sizeof(*r.next));
	if (!r.shown || !r.next) {
		rc = top_fail(&r, -ENOMEM, "out of memory");
		goto out;
	}
	r.xs = xs_open(0);
	if (!r.xs) {
		rc = top_fail(&r, errno ? -errno : -EIO, "cannot connect to xenstore: %s",
			      strerror(errno ? errno : EIO));
		goto out;
	}
	if (!xs_watch(r.xs, XENREAPER_ROOT, TOP_TOKEN)) {
		rc = top_fail(&r, errno ? -errno : -EIO, "cannot watch %s: %s", XENREAPER_ROOT,
			      strerror(errno ? errno : EIO));
		goto out;
	}
	watching = true;
	fds[0].fd = xs_fileno(r.xs);
	fds[0].events = POLLIN;
	fds[1].fd = r.keys ? STDIN_FILENO : -1;
	fds[1].events = POLLIN;
	if (fds[0].fd < 0) {
		rc = top_fail(&r, -EIO, "cannot poll xenstore for watch events");
		goto out;
	}
	if (r.tty) {
		rc = top_terminal_enter(&r);
		if (rc)
			goto out;
	}
	/* Set after the watch: a change in between is read, not missed. */
	r.read_all = r.read_header = true;
	for (;;) {
		rc = top_read(&r);
		if (!rc)
			rc = r.tty ? top_draw(&r) : top_print(&r);
		if (rc)
			goto out;
		if (top_stop)
			break;
		if (top_resized) {
			top_resized = 0;
			if (r.tty) {
				r.drawn = false;	/* redraw it all, at the new size */
				continue;
			}
		}
		sleep_ms = top_follow(&r);
		sleep_for.tv_sec = sleep_ms / 1000;
		sleep_for.tv_nsec = sleep_ms % 1000 * 1000000;
		if (ppoll(fds, 2, sleep_ms < 0 ? NULL : &sleep_for, &before) < 0 && errno != EINTR) {
			rc = top_fail(&r, -errno, "waiting for xenstore: %s", strerror(errno));
			goto out;
		}
		if (top_stop)
			break;
		if (fds[0].revents & (POLLIN | POLLERR | POLLHUP)) {
			rc = top_drain(&r);
			if (rc)
				goto out;
		}
		if (fds[1].fd >= 0 && fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			rc = top_keys(&r, &fds[1]);
			if (rc < 0)
				goto out;
			if (rc) {
				rc = 0;
				goto out;
			}
		}
	}
	rc = -EINTR;
out:
	top_terminal_leave(&r);
	if (r.xs)
		top_ping_cancel(&r);
	if (watching)
		xs_unwatch(r.xs, XENREAPER_ROOT, TOP_TOKEN);
	if (r.xs)
		xs_close(r.xs);
	top_view_free(&r.view);
	free(r.shown);
	free(r.next);
	top_signals_restore(old, &before);
	top_stop = top_resized = 0;
	return rc;
}
