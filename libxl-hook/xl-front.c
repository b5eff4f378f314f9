/*
 * xl (front): a stand-in for xl that serves `xl destroy --async [--wait]
 * DOMAIN` itself, by asking xenreaperd through libxenreaper, and hands
 * every other command line to the real xl with execv, untouched (argv[0]
 * "xl", stdio inherited, so its output and exit status are the real
 * ones).  The real xl is the configured REAL_XL, else the one matching
 * the running hypervisor, /usr/lib/xen-MAJOR.MINOR/bin/xl from
 * /sys/hypervisor/version as Debian's xen-utils-wrapper picks it (not the
 * newest installed: until the reboot after an upgrade, both are), else
 * /usr/sbin/xl (that wrapper, which reports what is missing; see
 * xl-front-real.c); the front never execs itself.  It is installed outside
 * PATH and never replaces the system xl by itself.  It does not load libxl
 * and does not tear anything down.
 */
#include <errno.h>
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
#include "xl-front-real.h"

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
