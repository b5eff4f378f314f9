/*
 * xenreaper: the command-line client of xenreaperd.  `list` and `status`
 * read the jobs the daemon publishes in xenstore (rate, time left, why a
 * zombie is held, why a job exists: orphans too), `destroy` writes a
 * teardown request, `wait` follows one with a live progress display (or
 * plain lines, or --json for scripts), and `wait-free` waits until Xen
 * has enough memory free, for scripts and other toolstacks.  Everything
 * goes through libxenreaper; cli-args reads the command line, and this
 * file acts on it and prints.  It never tears anything down itself and
 * never edits or removes jobs.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli-args.h"
#include "cli-target.h"
#include "freemem.h"
#include "jobline.h"
#include "lookup.h"
#include "memwait.h"
#include "progress.h"
#include "top-run.h"
#include "xenreaper-layout.h"
#include "xenreaper.h"

static volatile sig_atomic_t cli_interrupted;

static void cli_usage(FILE *out)
{
	fprintf(out,
		"usage: xenreaper [--json] COMMAND [ARGUMENTS]\n"
		"  list                        every teardown xenreaperd knows of\n"
		"  status [DOMAIN]             one domain's teardown; without DOMAIN, whether\n"
		"                              xenreaperd is running\n"
		"  wait DOMAIN [--timeout S]   follow a teardown until it is done\n"
		"  destroy DOMAIN [--wait] [--timeout S]\n"
		"                              ask xenreaperd to tear DOMAIN down in the\n"
		"                              background (and follow it)\n"
		"  top                         a live view of every teardown, full screen on a\n"
		"                              terminal (q quits), else a line per change\n"
		"  wait-free SIZE [--timeout S]\n"
		"                              wait until Xen has SIZE free (512M, 4G, 2.5G);\n"
		"                              fail at once if the teardowns under way\n"
		"                              cannot free that much\n"
		"DOMAIN is a domid or a domain name.\n"
		"options:\n"
		"  --json             print JSON on stdout, for scripts\n"
		"  -w, --wait         destroy: follow the teardown until it ends\n"
		"  -t, --timeout S    stop waiting after S seconds (the teardown goes on)\n"
		"  -h, --help         this text\n"
		"  -V, --version      the version\n"
		"environment:\n"
		"  XENREAPER_WAIT_TIMEOUT=S  give up waiting after S seconds (default 10)\n"
		"                            while xenreaperd is not running, or says it\n"
		"                            runs but leaves a check unanswered (at least 1)\n"
		"exit status: 0 done, accepted, found, or free enough; 1 failed, no such\n"
		"  domain or job, or the teardowns cannot free SIZE; 2 usage error;\n"
		"  3 xenreaperd not running, or timed out; 4 xenreaperd not answering;\n"
		"  130 interrupted\n");
}

/* ---------------------------------------------------------------- output */

static void cli_time(char *buf, size_t len, int64_t ms)
{
	time_t s = ms / 1000;
	struct tm tm;
	size_t used;

	if (!ms || !localtime_r(&s, &tm)) {
		snprintf(buf, len, "-");
		return;
	}
	used = strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(buf + used, len - used, ".%03d", (int)(ms % 1000));
}

static void cli_json_time(const char *key, int64_t ms)
{
	if (ms)
		printf(",\"%s\":%" PRId64 ".%03d", key, ms / 1000, (int)(ms % 1000));
	else
		printf(",\"%s\":null", key);
}

static void cli_json_text(const char *key, const char *value, bool empty_is_null)
{
	printf(",\"%s\":", key);
	if (empty_is_null && !value[0])
		fputs("null", stdout);
	else
		progress_json_string(stdout, value);
}

/* A rate in MiB/s as "rate_mib_s", null when not published. */
static void cli_json_rate(double rate_mib_s)
{
	if (rate_mib_s >= 0)
		printf(",\"rate_mib_s\":%.1f", rate_mib_s);
	else
		printf(",\"rate_mib_s\":null");
}

/* ST as one JSON object, with RESULT and MESSAGE members when not NULL. */
static void cli_json_status(const struct xenreaper_status *st, const char *result,
			    const char *message)
{
	printf("{\"domid\":%u", st->domid);
	cli_json_text("name", st->name, false);
	cli_json_text("uuid", st->uuid, false);
	cli_json_text("state", st->state_name, false);
	cli_json_text("pool", st->pool, false);
	cli_json_text("reason", st->reason, false);
	cli_json_text("policy", st->policy, false);
	cli_json_text("priority", st->priority, true);
	printf(",\"pages_total\":%" PRIu64 ",\"pages_left\":%" PRIu64 ",\"scrub_pages\":%" PRIu64
	       ",\"progress\":%u", st->pages_total, st->pages_left, st->scrub_pages, st->progress);
	cli_json_rate(st->rate_mib_s);
	if (st->eta_s >= 0)
		printf(",\"eta_s\":%" PRId64, st->eta_s);
	else
		printf(",\"eta_s\":null");
	printf(",\"stalled\":%s", st->stalled ? "true" : "false");
	cli_json_time("requested", st->requested_ms);
	cli_json_time("started", st->started_ms);
	cli_json_time("finished", st->finished_ms);
	cli_json_text("error", st->error, true);
	cli_json_text("held_by", st->held_by, true);
	printf(",\"daemon_running\":%s", st->daemon_running ? "true" : "false");
	if (result)
		cli_json_text("result", result, false);
	if (message && message[0])
		cli_json_text("message", message, false);
	fputs("}", stdout);
}

/* Room for a label: a guest name escaped, and the words around it. */
#define CLI_LABEL_LEN (PROGRESS_TEXT_LEN(128) + 32)

/* Text from xenstore or the library, escaped for a person (see
 * progress_text_escape): a guest's name is its tenant's choice, and a
 * name with a newline must not forge a line of output. */
#define CLI_TEXT(buf, text) progress_text(buf, sizeof(buf), text)

/* The library's last error on stderr, escaped (it quotes names). */
static void cli_error(const struct xenreaper *h)
{
	char why[PROGRESS_TEXT_LEN(512)];

	fprintf(stderr, "xenreaper: %s\n", CLI_TEXT(why, xenreaper_last_error(h)));
}

static const char *cli_label(char *buf, size_t len, uint32_t domid, const char *name)
{
	char shown[PROGRESS_TEXT_LEN(128)];

	if (name && name[0])
		snprintf(buf, len, "domain %u (%s)", domid, CLI_TEXT(shown, name));
	else
		snprintf(buf, len, "domain %u", domid);
	return buf;
}

/* ", 812 MiB/s, 3s left" / ", stalled" / "" from what ST publishes. */
static void cli_pace(const struct xenreaper_status *st, char *buf, size_t len)
{
	char rate[32] = "", eta[32];

	if (st->rate_mib_s >= 0)
		progress_format_rate(rate, sizeof(rate), st->rate_mib_s * 256);
	if (st->stalled) {
		snprintf(buf, len, "%s%s, stalled", rate[0] ? ", " : "", rate);
	} else if (st->eta_s >= 0) {
		progress_format_eta(eta, sizeof(eta), (double)st->eta_s);
		snprintf(buf, len, "%s%s, %s left", rate[0] ? ", " : "", rate, eta);
	} else {
		snprintf(buf, len, "%s%s", rate[0] ? ", " : "", rate);
	}
}

/* The first line `status` prints about ST. */
static void cli_status_summary(const struct xenreaper_status *st, char *buf, size_t len)
{
	char pace[80];

	switch (st->state) {
	case XENREAPER_STATE_REQUESTED:
		snprintf(buf, len, "requested, waiting for xenreaperd to take it");
		break;
	case XENREAPER_STATE_DESTROYING:
		cli_pace(st, pace, sizeof(pace));
		snprintf(buf, len, "destroying, %u%% (%" PRIu64 " of %" PRIu64 " MiB left%s)",
			 st->progress, progress_mib(st->pages_left), progress_mib(st->pages_total),
			 pace);
		break;
	case XENREAPER_STATE_ZOMBIE:
		snprintf(buf, len, "zombie: dead but %" PRIu64 " MiB still referenced; xenreaperd retries",
			 progress_mib(st->pages_left));
		break;
	case XENREAPER_STATE_STUCK:
		snprintf(buf, len, "stuck: its teardown has not returned and nothing came back for a while "
			 "(%" PRIu64 " of %" PRIu64 " MiB left); it goes on if what it waits on lets go",
			 progress_mib(st->pages_left), progress_mib(st->pages_total));
		break;
	case XENREAPER_STATE_SCRUBBING:
		snprintf(buf, len, "scrubbing, %" PRIu64 " MiB left to scrub",
			 progress_mib(st->scrub_pages));
		break;
	case XENREAPER_STATE_DONE:
		if (st->pages_total && st->started_ms && st->finished_ms >= st->started_ms)
			snprintf(buf, len, "done, %" PRIu64 " MiB released in %.1f s",
				 progress_mib(st->pages_total),
				 (st->finished_ms - st->started_ms) / 1000.0);
		else
			snprintf(buf, len, "done");
		break;
	default:
		progress_text_escape(buf, len, st->state_name);
		break;
	}
}

static void cli_print_status(const struct xenreaper_status *st)
{
	char label[CLI_LABEL_LEN], line[256], when[64], rate[32];
	char text[PROGRESS_TEXT_LEN(512)], text2[PROGRESS_TEXT_LEN(16)];

	cli_status_summary(st, line, sizeof(line));
	printf("%s: %s\n", cli_label(label, sizeof(label), st->domid, st->name), line);
	printf("  uuid        %s\n", CLI_TEXT(text, st->uuid));
	if (st->pool[0])
		printf("  pool        %s\n", CLI_TEXT(text, st->pool));
	if (st->reason[0])
		printf("  reason      %s%s%s%s\n", CLI_TEXT(text, st->reason),
		       !strcmp(st->reason, XENREAPER_REASON_ORPHAN) ?
		       " (a dead domain another toolstack left behind)" : "",
		       st->policy[0] ? ", scrub policy " : "", CLI_TEXT(text2, st->policy));
	if (st->priority[0])
		printf("  priority    %s\n", CLI_TEXT(text, st->priority));
	if (st->pages_total)
		printf("  memory      %" PRIu64 " MiB, %" PRIu64 " MiB left\n",
		       progress_mib(st->pages_total), progress_mib(st->pages_left));
	if (st->rate_mib_s >= 0) {
		progress_format_rate(rate, sizeof(rate), st->rate_mib_s * 256);
		printf("  rate        %s%s\n", rate,
		       st->state == XENREAPER_STATE_DONE ? " on average" : "");
	}
	if (st->stalled) {
		printf("  time left   stalled (nothing came back for a while)\n");
	} else if (st->eta_s >= 0) {
		progress_format_eta(rate, sizeof(rate), (double)st->eta_s);
		printf("  time left   %s\n", rate);
	}
	if (st->held_by[0])
		printf("  %s  %s\n", st->state == XENREAPER_STATE_STUCK ? "waiting on" : "held by   ",
		       CLI_TEXT(text, st->held_by));
	if (st->scrub_pages)
		printf("  to scrub    %" PRIu64 " MiB\n", progress_mib(st->scrub_pages));
	cli_time(when, sizeof(when), st->requested_ms);
	printf("  requested   %s\n", when);
	cli_time(when, sizeof(when), st->started_ms);
	printf("  started     %s\n", when);
	cli_time(when, sizeof(when), st->finished_ms);
	printf("  finished    %s\n", when);
	if (st->error[0])
		printf("  error       %s\n", CLI_TEXT(text, st->error));
	printf("  xenreaperd  %s\n", st->daemon_running ? "running" : "not running");
}

static void cli_note_daemon_down(void)
{
	fprintf(stderr, "xenreaper: note: xenreaperd is not running, so nothing moves "
		"(start it with: systemctl start xenreaperd)\n");
}

/* ---------------------------------------------------------------- commands */

static int cli_list(struct xenreaper *h, const struct cli_args *c)
{
	struct xenreaper_status *jobs = NULL;
	char when[64], *dot, name[PROGRESS_TEXT_LEN(128)];
	char uuid[PROGRESS_TEXT_LEN(XENREAPER_UUID_LEN)];
	struct jobline_cells cells;
	int running, width = 4, ret;
	size_t n;
	int rc;

	rc = xenreaper_list(h, &jobs, &n);
	if (rc) {
		cli_error(h);
		ret = PROGRESS_EXIT_FAILED;
		goto out;
	}
	running = n ? jobs[0].daemon_running : xenreaper_daemon_running(h) > 0;
	if (c->json) {
		printf("{\"daemon_running\":%s,\"jobs\":[", running ? "true" : "false");
		for (size_t i = 0; i < n; i++) {
			fputs(i ? "," : "", stdout);
			cli_json_status(&jobs[i], NULL, NULL);
		}
		printf("]}\n");
		ret = PROGRESS_EXIT_OK;
		goto out;
	}
	if (!n) {
		printf("no teardown jobs\n");
	} else {
		width = jobline_name_width(jobs, n);
		printf("%5s  %-*s  %-10s  %4s  %9s  %9s  %10s  %7s  %-8s  %-19s  %s\n", "DOMID",
		       width, "NAME", "STATE", "DONE", "LEFT MiB", "TOTAL MiB", "RATE", "ETA",
		       "REASON", "REQUESTED", "UUID");
	}
	for (size_t i = 0; i < n; i++) {
		const struct xenreaper_status *st = &jobs[i];

		cli_time(when, sizeof(when), st->requested_ms);
		dot = strchr(when, '.');
		if (dot)
			*dot = '\0';	/* seconds are enough in a table */
		jobline_cells(st, &cells);
		jobline_name(name, sizeof(name), st, width);
		printf("%5u  %s  %-10s  %3u%%  %9" PRIu64 "  %9" PRIu64 "  %10s  %7s  %-8s  %-19s  %s\n",
		       st->domid, name, cells.state, st->progress, progress_mib(st->pages_left),
		       progress_mib(st->pages_total), cells.rate, cells.eta, cells.reason, when,
		       CLI_TEXT(uuid, st->uuid));
		if (cells.failed[0])
			printf("%5s  failed: %s\n", "", cells.failed);
		if (cells.holder[0])
			printf("%5s  %s: %s\n", "", cells.holder_word, cells.holder);
	}
	if (!running)
		cli_note_daemon_down();
	ret = PROGRESS_EXIT_OK;
out:
	free(jobs);
	return ret;
}

/* The teardown DOMAIN names: a running domain (its UUID, when UUID is not
 * NULL, from the hypervisor), else the newest job or request that
 * remembers that domid or guest name.  Messages go to stderr. */
static int cli_target(struct xenreaper *h, const char *domain, uint32_t *domid,
		      char uuid[XENREAPER_UUID_LEN], char **name)
{
	struct xenreaper_status *jobs = NULL, *best, found;
	char why[512], shown[PROGRESS_TEXT_LEN(512)];
	size_t n = 0;
	int pick, rc;

	rc = xenreaper_resolve(h, domain, domid, uuid, name);
	if (rc != -ESRCH) {
		if (rc)
			cli_error(h);
		return rc;
	}
	snprintf(why, sizeof(why), "%s", xenreaper_last_error(h));
	if (lookup_is_domid(domain)) {
		/* A domid names one job at most: read that one, not every job
		 * xenreaperd keeps (up to 512, each some 19 requests), which
		 * made a --timeout overshoot by as long as they took. */
		rc = lookup_parse_domid(domain, domid) ? -ESRCH :
			xenreaper_job_status(h, *domid, &found);
		if (rc == -ESRCH || rc == -ENOENT) {
			fprintf(stderr, "xenreaper: %s, and no teardown job remembers it\n",
				CLI_TEXT(shown, why));
			return -ESRCH;
		}
		if (rc) {
			cli_error(h);
			return rc;
		}
		if (uuid)
			snprintf(uuid, XENREAPER_UUID_LEN, "%s", found.uuid);
		if (name)
			*name = found.name[0] ? strdup(found.name) : NULL;
		return 0;
	}
	rc = xenreaper_list(h, &jobs, &n);
	if (rc) {
		cli_error(h);
		goto out;
	}
	pick = cli_target_pick(domain, jobs, n);
	if (pick < 0) {
		fprintf(stderr, "xenreaper: %s, and no teardown job remembers it\n",
			CLI_TEXT(shown, why));
		rc = -ESRCH;
		goto out;
	}
	best = &jobs[pick];
	*domid = best->domid;
	if (uuid)
		snprintf(uuid, XENREAPER_UUID_LEN, "%s", best->uuid);
	if (name)
		*name = best->name[0] ? strdup(best->name) : NULL;
	rc = 0;
out:
	free(jobs);
	return rc;
}

static int cli_status(struct xenreaper *h, const struct cli_args *c)
{
	struct xenreaper_status *jobs = NULL, st;
	char label[CLI_LABEL_LEN], *name = NULL;
	size_t n = 0, active = 0;
	uint32_t domid;
	int running, ret, rc;

	if (!c->domain) {
		running = xenreaper_daemon_running(h);
		rc = running < 0 ? running : xenreaper_list(h, &jobs, &n);
		if (rc) {
			cli_error(h);
			ret = PROGRESS_EXIT_FAILED;
			goto out;
		}
		for (size_t i = 0; i < n; i++)
			active += !xenreaper_state_is_final(jobs[i].state);
		if (c->json)
			printf("{\"daemon_running\":%s,\"active_jobs\":%zu,\"jobs\":%zu}\n",
			       running ? "true" : "false", active, n);
		else if (running)
			printf("xenreaperd: running, %zu teardown%s under way, %zu job%s in all\n",
			       active, active == 1 ? "" : "s", n, n == 1 ? "" : "s");
		else
			printf("xenreaperd: not running (start it with: systemctl start xenreaperd); "
			       "%zu teardown%s waiting\n", active, active == 1 ? "" : "s");
		ret = running ? PROGRESS_EXIT_OK : PROGRESS_EXIT_DAEMON;
		goto out;
	}
	rc = cli_target(h, c->domain, &domid, NULL, &name);
	if (rc) {
		ret = PROGRESS_EXIT_FAILED;
		goto out;
	}
	rc = xenreaper_job_status(h, domid, &st);
	if (rc == -ENOENT) {
		fprintf(stderr, "xenreaper: %s is running and no teardown of it was requested "
			"(ask for one with: xenreaper destroy %u)\n",
			cli_label(label, sizeof(label), domid, name), domid);
		ret = PROGRESS_EXIT_FAILED;
		goto out;
	}
	if (rc) {
		cli_error(h);
		ret = PROGRESS_EXIT_FAILED;
		goto out;
	}
	if (c->json) {
		cli_json_status(&st, NULL, NULL);
		putchar('\n');
	} else {
		cli_print_status(&st);
		if (!st.daemon_running && !xenreaper_state_is_final(st.state))
			cli_note_daemon_down();
	}
	ret = st.state == XENREAPER_STATE_FAILED ? PROGRESS_EXIT_FAILED : PROGRESS_EXIT_OK;
out:
	free(jobs);
	free(name);
	return ret;
}

/* A status that says nothing yet about DOMID/UUID (NAME may be NULL). */
static void cli_status_blank(struct xenreaper_status *st, uint32_t domid, const char *uuid,
			     const char *name)
{
	memset(st, 0, sizeof(*st));
	st->domid = domid;
	st->rate_mib_s = -1;
	st->eta_s = -1;
	snprintf(st->uuid, sizeof(st->uuid), "%s", uuid);
	snprintf(st->name, sizeof(st->name), "%s", name ? name : "");
}

static const char *cli_result(int rc)
{
	switch (rc) {
	case 0:
		return "done";
	case -EIO:
		return "failed";
	case -ETIMEDOUT:
		return "timeout";
	case -EHOSTDOWN:
		return "daemon-not-running";
	case -EINTR:
		return "interrupted";
	case -EHOSTUNREACH:
		return "daemon-not-answering";
	default:
		return "error";
	}
}

static void cli_on_signal(int sig)
{
	cli_interrupted = 1;
}

/* SIGINT and SIGTERM end a wait cleanly (its exit code says interrupted). */
static void cli_catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = cli_on_signal;	/* no SA_RESTART: the wait notices at once */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* Follow DOMID/UUID until it ends; returns the exit code. */
static int cli_follow(struct xenreaper *h, const struct cli_args *c, uint32_t domid, const char *uuid,
		      const char *name, int64_t limit_ms)
{
	struct xenreaper_status st;
	struct progress p;
	int ret, rc;

	cli_catch_signals();

	progress_init(&p, stdout, isatty(STDOUT_FILENO), domid, name);
	p.prog = "xenreaper";
	p.quiet = c->json;
	p.daemon_limit_ms = limit_ms;
	p.interrupted = &cli_interrupted;
	rc = xenreaper_wait(h, domid, uuid, c->timeout_ms < 0 ? -1 : (int)c->timeout_ms,
			    progress_wait_cb, &p);
	ret = progress_finish(&p, rc, xenreaper_last_error(h));
	if (c->json) {
		if (p.have_last) {
			st = p.last;
		} else {
			cli_status_blank(&st, domid, uuid, name);
		}
		cli_json_status(&st, cli_result(rc), rc ? xenreaper_last_error(h) : NULL);
		putchar('\n');
	}
	return ret;
}

/* XENREAPER_WAIT_TIMEOUT: how long to wait for a daemon that is not
 * running, and for one that says it runs but does not answer (H's bound
 * for that, at least 1 s). */
static int cli_limit(struct xenreaper *h, int64_t *limit_ms)
{
	const char *env = getenv("XENREAPER_WAIT_TIMEOUT");

	if (progress_daemon_limit(env, limit_ms)) {
		fprintf(stderr, "xenreaper: XENREAPER_WAIT_TIMEOUT='%s' is not a number of seconds (e.g. 10 or 2.5)\n",
			env);
		return -EINVAL;
	}
	return xenreaper_set_answer_timeout(h, progress_answer_limit(*limit_ms));
}

static int cli_wait(struct xenreaper *h, const struct cli_args *c)
{
	char uuid[XENREAPER_UUID_LEN], *name = NULL;
	int64_t limit_ms;
	uint32_t domid;
	int ret;

	if (cli_limit(h, &limit_ms)) {
		ret = PROGRESS_EXIT_USAGE;
		goto out;
	}
	if (cli_target(h, c->domain, &domid, uuid, &name)) {
		ret = PROGRESS_EXIT_FAILED;
		goto out;
	}
	ret = cli_follow(h, c, domid, uuid, name, limit_ms);
out:
	free(name);
	return ret;
}

static int cli_destroy(struct xenreaper *h, const struct cli_args *c)
{
	char uuid[XENREAPER_UUID_LEN], label[CLI_LABEL_LEN], *name = NULL;
	struct xenreaper_status st;
	int64_t limit_ms;
	uint32_t domid;
	int running = 0, ret, rc;

	if (cli_limit(h, &limit_ms)) {
		ret = PROGRESS_EXIT_USAGE;
		goto out;
	}
	rc = xenreaper_resolve(h, c->domain, &domid, uuid, &name);
	/* A teardown stuck on libxl's domain lock has removed the domain's
	 * xenstore directory already: its job still names it, and asking
	 * again takes it back (the daemon checks the UUID with Xen). */
	if (rc == -ESRCH && lookup_is_domid(c->domain) && !lookup_parse_domid(c->domain, &domid) &&
	    !xenreaper_job_status(h, domid, &st) && st.state == XENREAPER_STATE_STUCK) {
		snprintf(uuid, sizeof(uuid), "%s", st.uuid);
		name = st.name[0] ? strdup(st.name) : NULL;
		rc = 0;
	}
	if (!rc) {
		running = xenreaper_daemon_running(h) > 0;
		rc = xenreaper_request(h, domid, uuid);
	}
	if (rc) {
		cli_error(h);
		ret = PROGRESS_EXIT_FAILED;
		goto out;
	}
	cli_label(label, sizeof(label), domid, name);
	if (!running)
		fprintf(stderr, "xenreaper: xenreaperd is not running: the teardown request for %s is "
			"recorded in xenstore and will be served when xenreaperd starts "
			"(systemctl start xenreaperd)\n", label);
	if (c->wait) {
		ret = cli_follow(h, c, domid, uuid, name, limit_ms);
		goto out;
	}
	ret = running ? PROGRESS_EXIT_OK : PROGRESS_EXIT_DAEMON;
	if (c->json) {
		if (xenreaper_job_status(h, domid, &st)) {
			cli_status_blank(&st, domid, uuid, name);
			snprintf(st.state_name, sizeof(st.state_name), "requested");
			st.daemon_running = running;
		}
		cli_json_status(&st, "requested", NULL);
		putchar('\n');
	} else if (running) {
		printf("%s: teardown requested; xenreaperd destroys it in the background "
		       "(follow it with: xenreaper wait %u)\n", label, domid);
	}
out:
	free(name);
	return ret;
}

/* The wait-free outcome RC as JSON's "result". */
static const char *cli_free_result(int rc)
{
	switch (rc) {
	case 0:
		return "free";
	case -ENOSPC:
		return "cannot";
	case -EHOSTDOWN:
		return "daemon-not-running";
	case -ETIMEDOUT:
		return "timeout";
	case -EINTR:
		return "interrupted";
	case -EHOSTUNREACH:
		return "daemon-not-answering";
	default:
		return "error";
	}
}

static void cli_json_memory(const struct memwait *w, int rc, const char *message)
{
	const struct xenreaper_memory *m = &w->last;

	printf("{\"result\":\"%s\",\"need_pages\":%" PRIu64, cli_free_result(rc), w->need);
	if (w->have_last) {
		printf(",\"free_pages\":%" PRIu64 ",\"releasing_pages\":%" PRIu64
		       ",\"teardowns\":%u,\"requested\":%u", m->free_pages, m->releasing_pages,
		       m->teardowns, m->requested);
		cli_json_rate(m->rate_mib_s);
		printf(",\"stalled\":%s", m->stalled ? "true" : "false");
		if (m->scrub_pending_pages >= 0)
			printf(",\"scrub_pending_pages\":%" PRId64, m->scrub_pending_pages);
		else
			printf(",\"scrub_pending_pages\":null");
		printf(",\"daemon_running\":%s,\"waited_s\":%.3f", m->daemon_running ? "true" : "false",
		       memwait_waited_s(w));
		fputs(",\"waiting_on\":", stdout);
		if (m->teardowns && rc)
			cli_json_status(&m->largest, NULL, NULL);
		else
			fputs("null", stdout);
	}
	if (message && message[0])
		cli_json_text("message", message, false);
	fputs("}\n", stdout);
}

static int cli_wait_free(struct xenreaper *h, const struct cli_args *c)
{
	struct memwait w;
	int64_t limit_ms;
	int ret, rc;

	if (cli_limit(h, &limit_ms))
		return PROGRESS_EXIT_USAGE;
	cli_catch_signals();

	memwait_init(&w, stdout, isatty(STDOUT_FILENO), c->size_pages);
	w.quiet = c->json;
	w.interrupted = &cli_interrupted;
	rc = xenreaper_wait_free(h, c->size_pages, c->timeout_ms < 0 ? -1 : (int)c->timeout_ms,
				 memwait_cb, &w);
	memwait_clear(&w);
	switch (rc) {
	case 0:
		ret = PROGRESS_EXIT_OK;
		break;
	case -ENOSPC:
		ret = PROGRESS_EXIT_FAILED;
		break;
	case -EHOSTDOWN:
	case -ETIMEDOUT:
		ret = PROGRESS_EXIT_DAEMON;
		break;
	case -EINTR:
		ret = PROGRESS_EXIT_INTERRUPTED;
		break;
	case -EHOSTUNREACH:
		ret = PROGRESS_EXIT_HUNG;
		break;
	default:
		ret = PROGRESS_EXIT_FAILED;
		break;
	}
	if (c->json) {
		cli_json_memory(&w, rc, rc ? xenreaper_last_error(h) : NULL);
	} else if (!rc) {
		printf("%" PRIu64 " MiB free, %" PRIu64 " MiB asked for", w.last.free_pages / 256,
		       freemem_mib_up(c->size_pages));
		if (w.shown)
			printf(" (waited %.1f s)", memwait_waited_s(&w));
		putchar('\n');
	} else if (rc == -EINTR) {
		fprintf(stderr, "xenreaper: interrupted while waiting for memory\n");
	} else {
		cli_error(h);
	}
	return ret;
}

/* The live view, until q (exit 0) or SIGINT/SIGTERM (130). */
static int cli_top(struct xenreaper *h)
{
	char why[512], shown[PROGRESS_TEXT_LEN(512)];
	int rc;

	rc = top_run(h, why, sizeof(why));
	switch (rc) {
	case 0:
		return PROGRESS_EXIT_OK;
	case -EINTR:
		return PROGRESS_EXIT_INTERRUPTED;
	default:
		fprintf(stderr, "xenreaper: top: %s\n", CLI_TEXT(shown, why));
		return PROGRESS_EXIT_FAILED;
	}
}

int main(int argc, char **argv)
{
	struct xenreaper *h = NULL;
	struct cli_args c;
	int ret, rc;

	if (cli_args_parse(argc, argv, &c)) {
		fprintf(stderr, "xenreaper: %s\nTry 'xenreaper --help'.\n", c.error);
		return PROGRESS_EXIT_USAGE;
	}
	if (c.help) {
		cli_usage(stdout);
		return PROGRESS_EXIT_OK;
	}
	if (c.version) {
		printf("xenreaper %s\n", PACKAGE_VERSION);
		return PROGRESS_EXIT_OK;
	}
	rc = xenreaper_open(&h);
	if (rc) {
		fprintf(stderr, "xenreaper: cannot connect to xenstore: %s (is xenstored running? are you root in dom0?)\n",
			strerror(-rc));
		return PROGRESS_EXIT_FAILED;
	}
	switch (c.command) {
	case CLI_LIST:
		ret = cli_list(h, &c);
		break;
	case CLI_STATUS:
		ret = cli_status(h, &c);
		break;
	case CLI_WAIT:
		ret = cli_wait(h, &c);
		break;
	case CLI_WAIT_FREE:
		ret = cli_wait_free(h, &c);
		break;
	case CLI_TOP:
		ret = cli_top(h);
		break;
	case CLI_DESTROY:
	default:
		ret = cli_destroy(h, &c);
		break;
	}
	xenreaper_close(h);
	return ret;
}
