/*
 * xenreaper: the command-line client of xenreaperd.  `list` and `status`
 * read the jobs the daemon publishes in xenstore, `destroy` writes a
 * teardown request, `wait` follows one with a live progress display (or
 * plain lines, or --json for scripts).  Everything goes through
 * libxenreaper; cli-args reads the command line, and this file acts on it
 * and prints.  It never tears anything down itself and never edits or
 * removes jobs.
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
#include "progress.h"
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
		"DOMAIN is a domid or a domain name.\n"
		"options:\n"
		"  --json             print JSON on stdout, for scripts\n"
		"  -w, --wait         destroy: follow the teardown until it ends\n"
		"  -t, --timeout S    stop waiting after S seconds (the teardown goes on)\n"
		"  -h, --help         this text\n"
		"  -V, --version      the version\n"
		"environment:\n"
		"  XENREAPER_WAIT_TIMEOUT=S  give up waiting after S seconds (default 10)\n"
		"                            while xenreaperd is not running\n"
		"exit status: 0 done, accepted or found; 1 failed, or no such domain or job;\n"
		"  2 usage error; 3 xenreaperd not running, or timed out; 130 interrupted\n");
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
	printf(",\"pages_total\":%" PRIu64 ",\"pages_left\":%" PRIu64 ",\"scrub_pages\":%" PRIu64
	       ",\"progress\":%u", st->pages_total, st->pages_left, st->scrub_pages, st->progress);
	cli_json_time("requested", st->requested_ms);
	cli_json_time("started", st->started_ms);
	cli_json_time("finished", st->finished_ms);
	cli_json_text("error", st->error, true);
	printf(",\"daemon_running\":%s", st->daemon_running ? "true" : "false");
	if (result)
		cli_json_text("result", result, false);
	if (message && message[0])
		cli_json_text("message", message, false);
	fputs("}", stdout);
}

static const char *cli_label(char *buf, size_t len, uint32_t domid, const char *name)
{
	if (name && name[0])
		snprintf(buf, len, "domain %u (%s)", domid, name);
	else
		snprintf(buf, len, "domain %u", domid);
	return buf;
}

/* The first line `status` prints about ST. */
static void cli_status_summary(const struct xenreaper_status *st, char *buf, size_t len)
{
	switch (st->state) {
	case XENREAPER_STATE_REQUESTED:
		snprintf(buf, len, "requested, waiting for xenreaperd to take it");
		break;
	case XENREAPER_STATE_DESTROYING:
		snprintf(buf, len, "destroying, %u%% (%" PRIu64 " of %" PRIu64 " MiB left)",
			 st->progress, progress_mib(st->pages_left), progress_mib(st->pages_total));
		break;
	case XENREAPER_STATE_ZOMBIE:
		snprintf(buf, len, "zombie: dead but %" PRIu64 " MiB still referenced; xenreaperd retries",
			 progress_mib(st->pages_left));
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
		snprintf(buf, len, "%s", st->state_name);
		break;
	}
}

static void cli_print_status(const struct xenreaper_status *st)
{
	char label[192], line[256], when[64];

	cli_status_summary(st, line, sizeof(line));
	printf("%s: %s\n", cli_label(label, sizeof(label), st->domid, st->name), line);
	printf("  uuid        %s\n", st->uuid);
	if (st->pool[0])
		printf("  pool        %s\n", st->pool);
	if (st->reason[0])
		printf("  reason      %s%s%s\n", st->reason, st->policy[0] ? ", scrub policy " : "",
		       st->policy);
	if (st->pages_total)
		printf("  memory      %" PRIu64 " MiB, %" PRIu64 " MiB left\n",
		       progress_mib(st->pages_total), progress_mib(st->pages_left));
	if (st->scrub_pages)
		printf("  to scrub    %" PRIu64 " MiB\n", progress_mib(st->scrub_pages));
	cli_time(when, sizeof(when), st->requested_ms);
	printf("  requested   %s\n", when);
	cli_time(when, sizeof(when), st->started_ms);
	printf("  started     %s\n", when);
	cli_time(when, sizeof(when), st->finished_ms);
	printf("  finished    %s\n", when);
	if (st->error[0])
		printf("  error       %s\n", st->error);
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
	char when[64], *dot;
	int running, width = 4, ret;
	size_t n;
	int rc;

	rc = xenreaper_list(h, &jobs, &n);
	if (rc) {
		fprintf(stderr, "xenreaper: %s\n", xenreaper_last_error(h));
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
		for (size_t i = 0; i < n; i++) {
			int len = strlen(jobs[i].name);

			if (len > width)
				width = len > 32 ? 32 : len;
		}
		printf("%5s  %-*s  %-10s  %4s  %9s  %9s  %-19s  %s\n", "DOMID", width, "NAME",
		       "STATE", "DONE", "LEFT MiB", "TOTAL MiB", "REQUESTED", "UUID");
	}
	for (size_t i = 0; i < n; i++) {
		const struct xenreaper_status *st = &jobs[i];

		cli_time(when, sizeof(when), st->requested_ms);
		dot = strchr(when, '.');
		if (dot)
			*dot = '\0';	/* seconds are enough in a table */
		printf("%5u  %-*.*s  %-10s  %3u%%  %9" PRIu64 "  %9" PRIu64 "  %-19s  %s\n",
		       st->domid, width, width, st->name[0] ? st->name : "-", st->state_name,
		       st->progress, progress_mib(st->pages_left), progress_mib(st->pages_total),
		       when, st->uuid);
		if (st->state == XENREAPER_STATE_FAILED && st->error[0])
			printf("%5s  failed: %s\n", "", st->error);
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
	struct xenreaper_status *jobs = NULL, *best;
	char why[512];
	size_t n = 0;
	int pick, rc;

	rc = xenreaper_resolve(h, domain, domid, uuid, name);
	if (rc != -ESRCH) {
		if (rc)
			fprintf(stderr, "xenreaper: %s\n", xenreaper_last_error(h));
		return rc;
	}
	snprintf(why, sizeof(why), "%s", xenreaper_last_error(h));
	rc = xenreaper_list(h, &jobs, &n);
	if (rc) {
		fprintf(stderr, "xenreaper: %s\n", xenreaper_last_error(h));
		goto out;
	}
	pick = cli_target_pick(domain, jobs, n);
	if (pick < 0) {
		fprintf(stderr, "xenreaper: %s, and no teardown job remembers it\n", why);
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
	char label[192], *name = NULL;
	size_t n = 0, active = 0;
	uint32_t domid;
	int running, ret, rc;

	if (!c->domain) {
		running = xenreaper_daemon_running(h);
		rc = running < 0 ? running : xenreaper_list(h, &jobs, &n);
		if (rc) {
			fprintf(stderr, "xenreaper: %s\n", xenreaper_last_error(h));
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
		fprintf(stderr, "xenreaper: %s\n", xenreaper_last_error(h));
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
	default:
		return "error";
	}
}

static void cli_on_signal(int sig)
{
	cli_interrupted = 1;
}

/* Follow DOMID/UUID until it ends; returns the exit code. */
static int cli_follow(struct xenreaper *h, const struct cli_args *c, uint32_t domid, const char *uuid,
		      const char *name, int64_t limit_ms)
{
	struct xenreaper_status st;
	struct sigaction sa;
	struct progress p;
	int ret, rc;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = cli_on_signal;	/* no SA_RESTART: the wait notices at once */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

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
			memset(&st, 0, sizeof(st));
			st.domid = domid;
			snprintf(st.uuid, sizeof(st.uuid), "%s", uuid);
			snprintf(st.name, sizeof(st.name), "%s", name ? name : "");
		}
		cli_json_status(&st, cli_result(rc), rc ? xenreaper_last_error(h) : NULL);
		putchar('\n');
	}
	return ret;
}

static int cli_limit(int64_t *limit_ms)
{
	const char *env = getenv("XENREAPER_WAIT_TIMEOUT");

	if (progress_daemon_limit(env, limit_ms)) {
		fprintf(stderr, "xenreaper: XENREAPER_WAIT_TIMEOUT='%s' is not a number of seconds (e.g. 10 or 2.5)\n",
			env);
		return -EINVAL;
	}
	return 0;
}

static int cli_wait(struct xenreaper *h, const struct cli_args *c)
{
	char uuid[XENREAPER_UUID_LEN], *name = NULL;
	int64_t limit_ms;
	uint32_t domid;
	int ret;

	if (cli_limit(&limit_ms)) {
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
	char uuid[XENREAPER_UUID_LEN], label[192], *name = NULL;
	struct xenreaper_status st;
	int64_t limit_ms;
	uint32_t domid;
	int running = 0, ret, rc;

	if (cli_limit(&limit_ms)) {
		ret = PROGRESS_EXIT_USAGE;
		goto out;
	}
	rc = xenreaper_resolve(h, c->domain, &domid, uuid, &name);
	if (!rc) {
		running = xenreaper_daemon_running(h) > 0;
		rc = xenreaper_request(h, domid, uuid);
	}
	if (rc) {
		fprintf(stderr, "xenreaper: %s\n", xenreaper_last_error(h));
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
			memset(&st, 0, sizeof(st));
			st.domid = domid;
			snprintf(st.uuid, sizeof(st.uuid), "%s", uuid);
			snprintf(st.name, sizeof(st.name), "%s", name ? name : "");
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
	case CLI_DESTROY:
	default:
		ret = cli_destroy(h, &c);
		break;
	}
	xenreaper_close(h);
	return ret;
}
