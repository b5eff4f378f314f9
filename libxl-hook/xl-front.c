/*
 * xl (front): a stand-in for xl that serves `xl destroy --async [--wait]
 * DOMAIN` itself, by asking xenreaperd through libxenreaper; looks at
 * `xl create` first, and when the new guest needs more memory than Xen
 * has free and the teardowns under way will release enough, waits for
 * them (with a bound) before it goes on; and hands every command line to
 * the real xl with execv, untouched (argv[0] "xl", stdio inherited, so
 * its output and exit status are the real ones; only the front's own
 * --wait-memory-timeout is taken out).  The real xl is the configured
 * REAL_XL, else the one matching the running hypervisor,
 * /usr/lib/xen-MAJOR.MINOR/bin/xl from /sys/hypervisor/version as
 * Debian's xen-utils-wrapper picks it (not the newest installed: until
 * the reboot after an upgrade, both are), else Debian's wrapper, which
 * reports what is missing: /usr/sbin/xl, or /usr/libexec/xl where the
 * package diverted it (see xl-front-real.c); the front never execs itself.  It is installed outside PATH and never replaces
 * the system xl by itself.  Only `xl create` loads libxl's code (xl's
 * config parser, libxlutil, with dlopen); nothing here tears anything
 * down or creates anything.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "memwait.h"
#include "progress.h"
#include "xenreaper.h"
#include "xl-front-args.h"
#include "xl-front-create.h"
#include "xl-front-need.h"
#include "xl-front-real.h"

#define FRONT_EXIT_NO_XL 127
#define FRONT_CONFIG_MAX (16 << 20)	/* a guest config is a few KiB */

static volatile sig_atomic_t front_interrupted;

static void front_usage(FILE *out)
{
	fprintf(out,
		"usage: xl destroy --async [--wait] [-f] DOMAIN\n"
		"  -a, --async  ask xenreaperd to tear DOMAIN down in the background and\n"
		"               return at once\n"
		"  -w, --wait   then follow the teardown until it is done\n"
		"  -f           accepted and ignored (xenreaperd always forces; it never\n"
		"               tears down domain 0)\n"
		"DOMAIN is a domid or a domain name.  With --wait, XENREAPER_WAIT_TIMEOUT\n"
		"(seconds, default 10) bounds the wait while xenreaperd is not running,\n"
		"or says it runs but leaves a check unanswered (at least 1 s).\n"
		"exit status: 0 done or accepted; 1 failed, or could not be requested;\n"
		"  2 usage error; 3 xenreaperd not running; 4 xenreaperd not answering;\n"
		"  130 interrupted\n"
		"\n"
		"usage: xl create [--wait-memory-timeout S] ... (xl create's own arguments)\n"
		"  if the guest needs more memory than is free and the teardowns under\n"
		"  way will free enough, wait for them (at most S seconds, default 120,\n"
		"  or XENREAPER_WAIT_MEMORY_TIMEOUT; 0: never wait), then run the real\n"
		"  xl create.\n"
		"Every other xl command is run by the real xl.\n");
}

/* Exec the real xl with ARGV; returns only on failure, with an exit code. */
static int front_exec_real(char **argv)
{
	char path[PATH_MAX], why[1024];
	struct stat self;
	int rc;

	/* /proc/self/exe is how the front knows which file it is, to pass
	 * itself over; without /proc that check is skipped. */
	rc = xl_front_real_choose("", REAL_XL, stat("/proc/self/exe", &self) ? NULL : &self,
				  path, sizeof(path), why, sizeof(why));
	if (rc) {
		fprintf(stderr, "xl (xenreaper front): cannot find the real xl: %s "
			"(install Xen's xl, or rebuild xenreaper with --with-real-xl=PATH)\n", why);
		return FRONT_EXIT_NO_XL;
	}
	argv[0] = (char *)"xl";
	execv(path, argv);
	fprintf(stderr, "xl (xenreaper front): cannot run the real xl, %s: %s\n", path,
		strerror(errno));
	return FRONT_EXIT_NO_XL;
}

/* The library's last error on stderr, escaped: it quotes names, which
 * are their tenants' choice (see progress_text_escape). */
static void front_error(const struct xenreaper *h, const char *prefix)
{
	char why[PROGRESS_TEXT_LEN(512)];

	fprintf(stderr, "xl: %s%s\n", prefix, progress_text(why, sizeof(why),
							   xenreaper_last_error(h)));
}

static void front_on_signal(int sig)
{
	front_interrupted = 1;
}

static void front_catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = front_on_signal;	/* no SA_RESTART: poll returns at once */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* `xl destroy --async [--wait] DOMAIN`; returns the exit code. */
static int front_destroy(const struct xl_front_args *args)
{
	char uuid[XENREAPER_UUID_LEN], *name = NULL, shown[PROGRESS_TEXT_LEN(128)] = "";
	const char *limit_env = getenv("XENREAPER_WAIT_TIMEOUT");
	struct xenreaper *h = NULL;
	struct progress p;
	int64_t limit_ms;
	uint32_t domid;
	int running, ret, rc;

	if (progress_daemon_limit(limit_env, &limit_ms)) {
		fprintf(stderr, "xl: XENREAPER_WAIT_TIMEOUT='%s' is not a number of seconds (e.g. 10 or 2.5)\n",
			limit_env);
		ret = PROGRESS_EXIT_USAGE;
		goto out;
	}
	rc = xenreaper_open(&h);
	if (rc) {
		fprintf(stderr, "xl: cannot connect to xenstore: %s (is xenstored running? are you root in dom0?)\n",
			strerror(-rc));
		ret = PROGRESS_EXIT_FAILED;
		goto out;
	}
	rc = xenreaper_resolve(h, args->domain, &domid, uuid, &name);
	if (rc) {
		front_error(h, "");
		ret = PROGRESS_EXIT_FAILED;
		goto out;
	}
	if (name)
		progress_text(shown, sizeof(shown), name);
	running = xenreaper_daemon_running(h);
	rc = xenreaper_request(h, domid, uuid);
	if (rc) {
		front_error(h, "");
		ret = PROGRESS_EXIT_FAILED;
		goto out;
	}
	if (running <= 0)
		fprintf(stderr,
			"xl: xenreaperd is not running: the teardown request for domain %u%s%s%s is recorded "
			"in xenstore and will be served when xenreaperd starts (systemctl start xenreaperd)\n",
			domid, name ? " (" : "", shown, name ? ")" : "");
	else if (args->verbose && !args->wait)
		fprintf(stderr, "xl: domain %u%s%s%s: teardown requested; xenreaperd destroys it in the background\n",
			domid, name ? " (" : "", shown, name ? ")" : "");
	if (!args->wait) {
		ret = running > 0 ? PROGRESS_EXIT_OK : PROGRESS_EXIT_DAEMON;
		goto out;
	}
	xenreaper_set_answer_timeout(h, progress_answer_limit(limit_ms));
	front_catch_signals();
	progress_init(&p, stderr, isatty(STDERR_FILENO), domid, name);
	p.prog = "xl";
	p.daemon_limit_ms = limit_ms;
	p.interrupted = &front_interrupted;
	rc = xenreaper_wait(h, domid, uuid, -1, progress_wait_cb, &p);
	ret = progress_finish(&p, rc, xenreaper_last_error(h));
out:
	free(name);
	xenreaper_close(h);
	return ret;
}

/* The libxlutil names to try: the running hypervisor's version first, as
 * its xl is the one that will run, then whatever libxlutil.so is. */
static void front_xlutil_names(char versioned[64], const char *names[3])
{
	char version[32];

	names[0] = names[1] = names[2] = NULL;
	if (!xl_front_real_version("", version, sizeof(version))) {
		snprintf(versioned, 64, "libxlutil.so.%s", version);
		names[0] = versioned;
		names[1] = "libxlutil.so";
	} else {
		names[0] = "libxlutil.so";
	}
}

/* The config file's bytes, as xl reads them: "/dev/null" is none at all. */
static int front_read_config(const char *file, char **data, size_t *len, char *why,
			     size_t why_len)
{
	size_t got = 0, room = 0;
	char *buf = NULL, *bigger;
	FILE *f;
	int rc;

	*data = NULL;
	*len = 0;
	if (!strcmp(file, "/dev/null"))
		return 0;
	f = fopen(file, "re");
	if (!f) {
		rc = -errno;
		snprintf(why, why_len, "cannot read %s: %s (xl will say so)", file, strerror(errno));
		return rc;
	}
	for (;;) {
		if (got == room) {
			room = room ? room * 2 : 8192;
			if (room > FRONT_CONFIG_MAX) {
				snprintf(why, why_len, "%s is larger than any guest config", file);
				rc = -EFBIG;
				goto out;
			}
			bigger = realloc(buf, room);
			if (!bigger) {
				snprintf(why, why_len, "out of memory reading %s", file);
				rc = -ENOMEM;
				goto out;
			}
			buf = bigger;
		}
		size_t n = fread(buf + got, 1, room - got, f);

		got += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		snprintf(why, why_len, "cannot read %s (xl will say so)", file);
		rc = -EIO;
		goto out;
	}
	*data = buf;
	*len = got;
	buf = NULL;
	rc = 0;
out:
	free(buf);
	fclose(f);
	return rc;
}

/* Pages the guest C describes needs, reckoned as libxl does. */
static int front_create_need(const struct xl_front_create *c, uint64_t *pages, char *why,
			     size_t why_len)
{
	char *data = NULL, *text = NULL, versioned[64];
	const char *names[3];
	struct xl_front_guest g;
	size_t len, text_len;
	int rc;

	rc = front_read_config(c->config_file, &data, &len, why, why_len);
	if (rc)
		goto out;
	rc = xl_front_create_text(data, len, c->extra, &text, &text_len);
	if (rc) {
		snprintf(why, why_len, "out of memory");
		goto out;
	}
	front_xlutil_names(versioned, names);
	rc = xl_front_guest_read(names, text, text_len, &g, why, why_len);
	if (rc)
		goto out;
	*pages = (xl_front_need_kb(&g) + 3) / 4;
out:
	free(data);
	free(text);
	return rc;
}

/* Wait for NEED pages for the guest of `xl create`; 0 to go on with the
 * real xl, else the exit code. */
static int front_create_wait(const struct xl_front_create *c, uint64_t need, bool verbose)
{
	char why[PROGRESS_TEXT_LEN(512)];
	struct xenreaper *h = NULL;
	struct memwait w;
	int64_t limit_ms;
	int rc;

	rc = xenreaper_open(&h);
	if (rc) {
		if (verbose)
			fprintf(stderr, "xl (xenreaper front): not waiting for memory: cannot connect to xenstore: %s\n",
				strerror(-rc));
		return 0;
	}
	/* A malformed XENREAPER_WAIT_TIMEOUT is destroy --wait's to report:
	 * here it leaves the library's default. */
	if (!progress_daemon_limit(getenv("XENREAPER_WAIT_TIMEOUT"), &limit_ms))
		xenreaper_set_answer_timeout(h, progress_answer_limit(limit_ms));
	front_catch_signals();
	memwait_init(&w, stderr, isatty(STDERR_FILENO), need);
	w.prog = "xl";
	w.interrupted = &front_interrupted;
	rc = xenreaper_wait_free(h, need, (int)c->timeout_ms, memwait_cb, &w);
	memwait_clear(&w);
	switch (rc) {
	case 0:
		if (w.shown)
			fprintf(stderr, "xl: waited %.1f s for memory: %" PRIu64 " MiB free, %" PRIu64
				" MiB needed\n", memwait_waited_s(&w), w.last.free_pages / 256,
				(need + 255) / 256);
		else if (verbose)
			fprintf(stderr, "xl (xenreaper front): %" PRIu64 " MiB needed, %" PRIu64
				" MiB free: no wait\n", (need + 255) / 256, w.last.free_pages / 256);
		break;
	case -EINTR:
		fprintf(stderr, "xl: interrupted while waiting for memory; no guest was created\n");
		xenreaper_close(h);
		return PROGRESS_EXIT_INTERRUPTED;
	case -ETIMEDOUT:
		fprintf(stderr, "xl: %s; running xl create anyway\n",
			progress_text(why, sizeof(why), xenreaper_last_error(h)));
		break;
	default:
		/* Waiting cannot help, or xenreaperd is not there: xl reports
		 * as it always has; a wait already shown is ended in words. */
		if (w.shown || verbose)
			front_error(h, "not waiting for memory: ");
		break;
	}
	xenreaper_close(h);
	return 0;
}

/* `xl create ...`: maybe wait for memory, then the real xl; the exit code
 * if the real xl could not be run, or the wait was interrupted. */
static int front_create(int argc, char **argv, const struct xl_front_args *args)
{
	struct xl_front_create c;
	char why[512];
	uint64_t need;
	int ret, rc;

	rc = xl_front_create_parse(argc, argv, args->command, getenv(XL_FRONT_CREATE_ENV), &c);
	if (rc == -EINVAL) {
		fprintf(stderr, "xl: %s\n", c.error);
		ret = PROGRESS_EXIT_USAGE;
		goto out;
	}
	if (rc) {
		fprintf(stderr, "xl (xenreaper front): %s\n", strerror(-rc));
		ret = PROGRESS_EXIT_FAILED;
		goto out;
	}
	if (c.plan == XL_FRONT_CREATE_PASS) {
		if (args->verbose)
			fprintf(stderr, "xl (xenreaper front): not waiting for memory: %s\n", c.why);
	} else if (front_create_need(&c, &need, why, sizeof(why))) {
		if (args->verbose)
			fprintf(stderr, "xl (xenreaper front): not waiting for memory: %s\n", why);
	} else {
		ret = front_create_wait(&c, need, args->verbose);
		if (ret)
			goto out;
	}
	ret = front_exec_real(c.argv);
out:
	xl_front_create_free(&c);
	return ret;
}

int main(int argc, char **argv)
{
	struct xl_front_args args;

	xl_front_parse(argc, argv, &args);
	switch (args.mode) {
	case XL_FRONT_ASYNC:
		return front_destroy(&args);
	case XL_FRONT_CREATE:
		return front_create(argc, argv, &args);
	case XL_FRONT_HELP:
		front_usage(stdout);
		return PROGRESS_EXIT_OK;
	case XL_FRONT_USAGE:
		fprintf(stderr, "xl: %s\n", args.error);
		front_usage(stderr);
		return PROGRESS_EXIT_USAGE;
	case XL_FRONT_PASS:
		break;
	}
	return front_exec_real(argv);
}
