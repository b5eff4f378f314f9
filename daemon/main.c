/*
 * xenreaperd: main() and the one poll loop.  Signals arrive on a signalfd,
 * time on a timerfd armed only when something is due, so an idle daemon
 * never wakes.  Everything else is reaper.c's.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>

#include "clock.h"
#include "hv.h"
#include "log.h"
#include "reaper.h"
#include "store.h"
#include "worker.h"

enum { POLL_STORE, POLL_WORKERS, POLL_SIGNALS, POLL_TIMER, POLL_COUNT };

struct options {
	struct reaper_config reaper;
	int log_level;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: xenreaperd [-v] [-j JOBS] [--retention SECONDS] [--sample-interval MS]\n"
		"  -j, --jobs N              teardowns at once (1..64, default 1)\n"
		"      --retention SECONDS   keep finished jobs readable (default 600)\n"
		"      --sample-interval MS  progress sampling (10..60000, default 250)\n"
		"  -v, --verbose             debug messages\n"
		"  -h, --help, -V, --version\n");
}

static int parse_number(const char *option, const char *text, long min, long max, long *value)
{
	char *end;

	errno = 0;
	*value = strtol(text, &end, 10);
	if (errno || end == text || *end || *value < min || *value > max) {
		fprintf(stderr, "xenreaperd: %s '%s' is not a whole number from %ld to %ld\n",
			option, text, min, max);
		return -EINVAL;
	}
	return 0;
}

static int parse_options(int argc, char **argv, struct options *opts)
{
	static const struct option longopts[] = {
		{ "jobs", required_argument, NULL, 'j' },
		{ "retention", required_argument, NULL, 'r' },
		{ "sample-interval", required_argument, NULL, 's' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	long value;
	int c;

	reaper_config_default(&opts->reaper);
	opts->log_level = LOG_INFO;
	while ((c = getopt_long(argc, argv, "j:vhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			if (parse_number("--jobs", optarg, 1, 64, &value))
				return -EINVAL;
			opts->reaper.max_jobs = value;
			break;
		case 'r':
			if (parse_number("--retention", optarg, 0, 7 * 24 * 3600, &value))
				return -EINVAL;
			opts->reaper.retention_ms = value * 1000;
			break;
		case 's':
			if (parse_number("--sample-interval", optarg, 10, 60000, &value))
				return -EINVAL;
			opts->reaper.sample_ms = value;
			break;
		case 'v':
			opts->log_level = LOG_DEBUG;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case 'V':
			printf("xenreaperd %s\n", PACKAGE_VERSION);
			return 1;
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "xenreaperd: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return -EINVAL;
	}
	return 0;
}

static int signals_open(void)
{
	sigset_t set;
	int rc;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -errno;
	rc = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return rc < 0 ? -errno : rc;
}

/* Arm TIMER_FD for monotonic DEADLINE (ms), or disarm it for -1. */
static int timer_arm(int timer_fd, int64_t deadline)
{
	struct itimerspec its = { 0 };

	if (deadline >= 0) {
		if (deadline == 0)
			deadline = 1;	/* zero would disarm */
		its.it_value.tv_sec = deadline / 1000;
		its.it_value.tv_nsec = (deadline % 1000) * 1000000;
	}
	return timerfd_settime(timer_fd, TFD_TIMER_ABSTIME, &its, NULL) < 0 ? -errno : 0;
}

static void notify_status(struct reaper *r)
{
	sd_notifyf(0, "STATUS=%u active job(s)", reaper_active_jobs(r));
}

/* One signal: returns true when the daemon should stop. */
static bool signal_handle(int signal_fd)
{
	struct signalfd_siginfo si;
	bool stop = false;

	while (read(signal_fd, &si, sizeof(si)) == sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGTERM:
		case SIGINT:
			log_notice("signal %u: stopping; running teardowns resume on restart",
				   si.ssi_signo);
			stop = true;
			break;
		case SIGHUP:
			log_notice("SIGHUP: nothing to reload without a policy file");
			break;
		}
	}
	return stop;
}

static int run(struct reaper *r, struct store *store, struct worker_pool *pool,
	       int signal_fd, int timer_fd)
{
	struct pollfd fds[POLL_COUNT] = {
		[POLL_STORE] = { .fd = store_fd(store), .events = POLLIN },
		[POLL_WORKERS] = { .fd = worker_pool_fd(pool), .events = POLLIN },
		[POLL_SIGNALS] = { .fd = signal_fd, .events = POLLIN },
		[POLL_TIMER] = { .fd = timer_fd, .events = POLLIN },
	};
	uint64_t expirations;
	int rc;

	for (;;) {
		rc = reaper_tick(r);
		if (rc)
			log_err("tick: %s", strerror(-rc));
		rc = timer_arm(timer_fd, reaper_next_deadline(r));
		if (rc)
			return rc;
		notify_status(r);
		if (poll(fds, POLL_COUNT, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (fds[POLL_SIGNALS].revents && signal_handle(signal_fd))
			return 0;
		if (fds[POLL_TIMER].revents &&
		    read(timer_fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
			return -errno;
		if (fds[POLL_WORKERS].revents)
			reaper_handle_workers(r);
		if (fds[POLL_STORE].revents) {
			rc = reaper_handle_store_events(r);
			if (rc)
				log_err("xenstore events: %s", strerror(-rc));
		}
	}
}

int main(int argc, char **argv)
{
	struct worker_pool *pool = NULL;
	struct reaper *r = NULL;
	struct store *store = NULL;
	struct hv *hv = NULL;
	struct options opts;
	int signal_fd = -1, timer_fd = -1;
	int rc;

	rc = parse_options(argc, argv, &opts);
	if (rc)
		return rc > 0 ? EXIT_SUCCESS : 2;
	log_set_level(opts.log_level);

	signal_fd = signals_open();
	if (signal_fd < 0) {
		rc = signal_fd;
		log_err("signalfd: %s", strerror(-rc));
		goto out;
	}
	timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (timer_fd < 0) {
		rc = -errno;
		log_err("timerfd: %s", strerror(-rc));
		goto out;
	}
	rc = store_xs_new(&store);
	if (rc) {
		log_err("cannot connect to xenstored: %s (is xenstored running, and are we root in dom0?)",
			strerror(-rc));
		goto out;
	}
	rc = hv_xen_new(&hv);
	if (rc) {
		log_err("cannot open the hypervisor interface: %s (needs root in dom0 with /dev/xen/privcmd)",
			strerror(-rc));
		goto out;
	}
	rc = worker_pool_new(hv, opts.reaper.max_jobs, &pool);
	if (!rc)
		rc = reaper_new(store, hv, pool, &opts.reaper, &r);
	if (!rc)
		rc = reaper_start(r);
	if (rc) {
		log_err("start-up failed: %s", strerror(-rc));
		goto out;
	}
	log_notice("xenreaperd %s running, %u teardown(s) at once", PACKAGE_VERSION,
		   opts.reaper.max_jobs);
	sd_notify(0, "READY=1");

	rc = run(r, store, pool, signal_fd, timer_fd);
	if (rc)
		log_err("main loop: %s", strerror(-rc));
	sd_notify(0, "STOPPING=1");
	reaper_set_daemon_state(r, "stopped");
out:
	reaper_free(r);
	worker_pool_free(pool);
	hv_free(hv);
	store_free(store);
	if (timer_fd >= 0)
		close(timer_fd);
	if (signal_fd >= 0)
		close(signal_fd);
	return rc ? EXIT_FAILURE : EXIT_SUCCESS;
}
