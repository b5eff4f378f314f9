/*
 * progress: what the xl front and the xenreaper CLI show while they follow
 * a teardown, the exit codes both document, and the small text helpers
 * (rate, ETA, seconds, JSON strings) they share.  Not part of libxenreaper.
 */
#pragma once
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "xenreaper.h"

/* Exit codes of both programs. */
#define PROGRESS_EXIT_OK 0		/* done, or request accepted */
#define PROGRESS_EXIT_FAILED 1		/* teardown failed, or could not be requested */
#define PROGRESS_EXIT_USAGE 2		/* bad command line or environment */
#define PROGRESS_EXIT_DAEMON 3		/* xenreaperd not running, or timed out */
#define PROGRESS_EXIT_HUNG 4		/* xenreaperd says it runs but does not answer */
#define PROGRESS_EXIT_INTERRUPTED 130	/* SIGINT/SIGTERM while waiting */

#define PROGRESS_DAEMON_LIMIT_MS 10000	/* default of XENREAPER_WAIT_TIMEOUT */
#define PROGRESS_SAMPLES 16
#define PROGRESS_BAR_WIDTH 16		/* characters inside a bar's brackets */
#define PROGRESS_WINDOW_MS 5000		/* the scrub rate is measured over this */
/* Room for IN_SIZE bytes escaped by progress_text_escape (4 bytes each at most). */
#define PROGRESS_TEXT_LEN(in_size) (4 * (in_size) + 1)

struct progress {
	FILE *out;
	bool tty;			/* redraw one line with \r */
	bool quiet;			/* show nothing (--json) */
	uint32_t domid;
	char label[PROGRESS_TEXT_LEN(128) + 32];	/* "domain 5 (guest)", escaped, for the final line */
	const char *prog;		/* prefix of error lines ("xl"), may be NULL */
	unsigned columns;		/* tty: width lines are cut to */
	int64_t daemon_limit_ms;	/* give up when xenreaperd is down this long; <0 never */
	bool daemon_down;		/* xenreaperd was down at the last update */
	int64_t down_since_ms;		/* since when */
	volatile sig_atomic_t *interrupted;	/* stop waiting when it becomes non-zero */
	int64_t last_print_ms;		/* plain output: when the last line was printed */
	char last_line[256];		/* plain output: that line */
	size_t drawn;			/* tty: width of the line on screen */
	uint64_t scrub_total;		/* most scrub pages seen */
	enum xenreaper_state phase;	/* what the samples measure */
	struct { int64_t ms; uint64_t pages; } samples[PROGRESS_SAMPLES];
	unsigned n_samples;
	struct xenreaper_status last;	/* the newest status seen */
	bool have_last;
};

/* Columns for a bar on OUT: the terminal's width if TTY and known, else 80. */
unsigned progress_columns(FILE *out, bool tty);
/* Start following DOMID (NAME may be NULL) on OUT; TTY selects the bar. */
void progress_init(struct progress *p, FILE *out, bool tty, uint32_t domid, const char *name);
/* Take status ST seen at NOW_MS (monotonic) and show it; -EHOSTDOWN once
 * xenreaperd has been down for daemon_limit_ms, -EINTR once interrupted. */
int progress_update(struct progress *p, const struct xenreaper_status *st, int64_t now_ms);
/* progress_update at the current time; a xenreaper_wait_cb, ARG is the progress. */
int progress_wait_cb(const struct xenreaper_status *st, void *arg);
/* Print the final line for xenreaper_wait's result RC (WHY: the library's
 * message) and return the exit code. */
int progress_finish(struct progress *p, int rc, const char *why);
/* Monotonic milliseconds. */
int64_t progress_now_ms(void);

/* Scrub rate in pages per second over the last samples; <0 if unknown. */
double progress_rate(const struct progress *p);
/* The current line (bar on a tty, else the plain form) for ST at NOW_MS. */
void progress_format_line(const struct progress *p, const struct xenreaper_status *st,
			  int64_t now_ms, char *buf, size_t len);
/* "812 MiB/s", "1.5 GiB/s", "0.4 MiB/s"; "-- MiB/s" for a negative rate. */
void progress_format_rate(char *buf, size_t len, double pages_per_s);
/* "42s", "3m05s", "2h07m"; "--" for a negative or absurd estimate. */
void progress_format_eta(char *buf, size_t len, double seconds);
/* A bar PERCENT full ("=====>     "), WIDTH characters, into BUF (WIDTH + 1
 * bytes); the clients' bars are PROGRESS_BAR_WIDTH wide. */
void progress_format_bar(char *buf, unsigned width, unsigned percent);
/* Whole MiB in PAGES 4 KiB pages, rounded to nearest. */
uint64_t progress_mib(uint64_t pages);

/* Parse "10" or "2.5" seconds (0 .. 7 days) into milliseconds; -EINVAL. */
int progress_parse_seconds(const char *text, int64_t *ms);
/* Parse a memory SIZE: a number (a decimal point allowed) and a binary
 * unit, B, K, M, G or T (either case, "iB" may follow K to T), into 4 KiB
 * pages rounded up: "512M" is 131072, "2.5G" 655360.  A bare number is
 * refused (bytes, KiB and MiB are all in use); -EINVAL if malformed,
 * -ERANGE beyond 1 PiB. */
int progress_parse_size(const char *text, uint64_t *pages);
/* The give-up delay for a stopped daemon: ENV_VALUE (XENREAPER_WAIT_TIMEOUT,
 * may be NULL) in seconds, else the default; -EINVAL if malformed. */
int progress_daemon_limit(const char *env_value, int64_t *ms);
/* The same delay as the bound for a daemon that does not answer
 * (xenreaper_set_answer_timeout): LIMIT_MS, but at least
 * XENREAPER_ANSWER_TIMEOUT_MIN_MS, the time a busy daemon may take. */
int progress_answer_limit(int64_t limit_ms);

/* IN made safe to print for a person, the way ls -b and systemctl show
 * names: a backslash as \\, \a \b \t \n \v \f \r as such, every other
 * byte of a control character (C0, DEL, C1, and the Unicode controls that
 * reorder or hide text: bidi marks and isolates, zero-width and line
 * separators) and every byte that is not UTF-8 as \xNN; printable text as
 * it is.  Into OUT (LEN), cut only between whole characters and escapes,
 * always NUL-terminated if LEN > 0.  Returns the full length. */
size_t progress_text_escape(char *out, size_t len, const char *in);
/* progress_text_escape into BUF; returns BUF, for printf arguments. */
const char *progress_text(char *buf, size_t len, const char *in);

/* Escape IN as the inside of a JSON string into OUT (always NUL-terminated
 * if LEN > 0); invalid UTF-8 becomes U+FFFD.  Returns the full length. */
size_t progress_json_escape(char *out, size_t len, const char *in);
/* Print IN as a quoted JSON string; -ENOMEM. */
int progress_json_string(FILE *f, const char *in);
