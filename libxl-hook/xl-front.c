/*
 * xl (front): a stand-in for xl that serves `xl destroy --async [--wait]
 * DOMAIN` itself, by asking xenreaperd through libxenreaper, and hands
 * every other command line to the real xl with execv, untouched (argv[0]
 * "xl", stdio inherited, so its output and exit status are the real
 * ones).  The real xl is the configured REAL_XL, else the newest
 * /usr/lib/xen-VERSION/bin/xl, else /usr/sbin/xl; the front refuses to exec
 * itself.  It is installed outside PATH and never replaces the system xl
 * by itself.  It does not load libxl and does not tear anything down.
 */
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "progress.h"
#include "xenreaper.h"
#include "xl-front-args.h"

#define FRONT_GLOB "/usr/lib/xen-*/bin/xl"
#define FRONT_FALLBACK "/usr/sbin/xl"
#define FRONT_EXIT_NO_XL 127

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
		"DOMAIN is a domid or a domain name.  Every other xl command is run by\n"
		"the real xl.  With --wait, XENREAPER_WAIT_TIMEOUT (seconds, default 10)\n"
		"bounds the wait while xenreaperd is not running.\n"
		"exit status: 0 done or accepted; 1 failed, or could not be requested;\n"
		"  2 usage error; 3 xenreaperd not running; 130 interrupted\n");
}

/* Newest /usr/lib/xen-VERSION/bin/xl into BUF; -ENOENT if there is none. */
static int front_newest_xl(char *buf, size_t len)
{
	const char *best = NULL;
	glob_t g;
	int rc;

	memset(&g, 0, sizeof(g));
	rc = glob(FRONT_GLOB, 0, NULL, &g);
	if (rc) {
		rc = -ENOENT;
		goto out;
	}
	for (size_t i = 0; i < g.gl_pathc; i++) {
		if (access(g.gl_pathv[i], X_OK))
			continue;
		if (!best || strverscmp(g.gl_pathv[i], best) > 0)
			best = g.gl_pathv[i];
	}
	if (!best) {
		rc = -ENOENT;
		goto out;
	}
	snprintf(buf, len, "%s", best);
	rc = 0;
out:
	globfree(&g);
	return rc;
}

/* Whether PATH is this very program (same file, or the same resolved path). */
static int front_is_self(const char *path)
{
	char self[PATH_MAX], other[PATH_MAX];
	struct stat a, b;

	if (stat("/proc/self/exe", &a) == 0 && stat(path, &b) == 0 &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino)
		return 1;
	if (!realpath("/proc/self/exe", self) || !realpath(path, other))
		return 0;
	return !strcmp(self, other);
}

/* Exec the real xl with ARGV; returns only on failure, with an exit code. */
static int front_exec_real(char **argv)
{
	char path[PATH_MAX];

	if (REAL_XL[0])
		snprintf(path, sizeof(path), "%s", REAL_XL);
	else if (front_newest_xl(path, sizeof(path)))
		snprintf(path, sizeof(path), "%s", FRONT_FALLBACK);
	if (front_is_self(path)) {
		fprintf(stderr,
			"xl (xenreaper front): the real xl, %s, is this front itself; refusing to exec it "
			"(install Xen's xl, or rebuild xenreaper with --with-real-xl=PATH)\n", path);
		return FRONT_EXIT_NO_XL;
	}
	argv[0] = (char *)"xl";
	execv(path, argv);
	fprintf(stderr, "xl (xenreaper front): cannot run the real xl, %s: %s\n", path,
		strerror(errno));
	return FRONT_EXIT_NO_XL;
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
	char uuid[XENREAPER_UUID_LEN], *name = NULL;
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
		fprintf(stderr, "xl: %s\n", xenreaper_last_error(h));
		ret = PROGRESS_EXIT_FAILED;
		goto out;
	}
	running = xenreaper_daemon_running(h);
	rc = xenreaper_request(h, domid, uuid);
	if (rc) {
		fprintf(stderr, "xl: %s\n", xenreaper_last_error(h));
		ret = PROGRESS_EXIT_FAILED;
		goto out;
	}
	if (running <= 0)
		fprintf(stderr,
			"xl: xenreaperd is not running: the teardown request for domain %u%s%s%s is recorded "
			"in xenstore and will be served when xenreaperd starts (systemctl start xenreaperd)\n",
			domid, name ? " (" : "", name ? name : "", name ? ")" : "");
	else if (args->verbose && !args->wait)
		fprintf(stderr, "xl: domain %u%s%s%s: teardown requested; xenreaperd destroys it in the background\n",
			domid, name ? " (" : "", name ? name : "", name ? ")" : "");
	if (!args->wait) {
		ret = running > 0 ? PROGRESS_EXIT_OK : PROGRESS_EXIT_DAEMON;
		goto out;
	}
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

int main(int argc, char **argv)
{
	struct xl_front_args args;

	xl_front_parse(argc, argv, &args);
	switch (args.mode) {
	case XL_FRONT_ASYNC:
		return front_destroy(&args);
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
