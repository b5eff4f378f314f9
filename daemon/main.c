/*
 * xenreaperd: main() and the one poll loop.  Signals arrive on a signalfd,
 * time on a timerfd armed only when something is due, so an idle daemon
 * never wakes (unless systemd's watchdog asks it to, and then it checks
 * that xenstored still answers).  Policy loading and reloading, the
 * single-instance lock and stopping happen here; everything else is
 * reaper.c's.
 *
 * Stopping: the first SIGTERM or SIGINT takes nothing new and waits for
 * the teardowns already running to end, so libxl's hotplug scripts and
 * destroy child are not cut off; a second one exits at once.  The wait
 * is bounded: a teardown that stands still for REAPER_STOP_STUCK_MS is
 * stuck and not waited for, and none is waited for past
 * DAEMON_STOP_MAX_MS.  The teardown processes still running then end
 * with the daemon, their jobs are left `destroying` in xenstore, and the
 * next start resumes them (libxl continues a destroy asked again).  A lost xenstored
 * connection exits non-zero, for systemd to restart the daemon.
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
#include <systemd/sd-journal.h>

#include "clock.h"
#include "config.h"
#include "hv.h"
#include "instance.h"
#include "log.h"
#include "reaper.h"
#include "store.h"
#include "runner.h"

enum { POLL_STORE, POLL_RUNNER, POLL_SIGNALS, POLL_TIMER, POLL_COUNT };

/* A stop waits this long at most for the teardowns running, then ends
 * their processes (their jobs resume on the next start, which libxl
 * continues): inside the unit's TimeoutStopSec=, which then never has
 * to SIGKILL what libxl forked. */
#define DAEMON_STOP_MAX_MS 60000

/* Exit status when another xenreaperd already runs (the unit does not
 * restart on it: RestartPreventExitStatus=). */
#define EXIT_ALREADY_RUNNING 3

struct options {
	const char *config_path;
	const char *pid_path;
	bool config_named;	/* -c given: a missing file is an error */
	bool check_config;
	bool verbose;
};

struct daemon {
	struct options opts;
	struct config *policy;
	struct store *store;
	struct hv *hv;
	struct runner *runner;
	struct reaper *reaper;
	int signal_fd;
	int timer_fd;
	int lock_fd;
	bool stopping;		/* first SIGTERM seen: waiting for teardowns */
	int64_t stop_by;	/* when the wait for them ends */
	int64_t watchdog_ms;	/* ping interval, 0 = no watchdog */
	int64_t watchdog_next;
	char status[96];	/* the STATUS= systemd last got */
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: xenreaperd [-c FILE] [-p FILE] [-v]\n"
		"       xenreaperd --check-config [FILE]\n"
		"  -c, --config FILE   policy file (default " CONFIG_DEFAULT_PATH ")\n"
		"  -p, --pidfile FILE  lock file that keeps a second xenreaperd from starting\n"
		"                      (default " INSTANCE_DEFAULT_PATH ")\n"
		"      --check-config  check the policy file, print it, and exit\n"
		"  -v, --verbose       debug messages (overrides log-level)\n"
		"  -h, --help          this text\n"
		"  -V, --version       the version\n");
}

/* 0 to run, 1 to exit successfully at once, -EINVAL for bad usage. */
static int parse_options(int argc, char **argv, struct options *opts)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "pidfile", required_argument, NULL, 'p' },
		{ "check-config", no_argument, NULL, 'C' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opts->config_path = CONFIG_DEFAULT_PATH;
	opts->pid_path = INSTANCE_DEFAULT_PATH;
	while ((c = getopt_long(argc, argv, "c:p:vhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			opts->config_path = optarg;
			opts->config_named = true;
			break;
		case 'p':
			opts->pid_path = optarg;
			break;
		case 'C':
			opts->check_config = true;
			break;
		case 'v':
			opts->verbose = true;
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
	/* --check-config FILE reads naturally too. */
	if (opts->check_config && optind == argc - 1 && !opts->config_named) {
		opts->config_path = argv[optind++];
		opts->config_named = true;
	}
	if (optind < argc) {
		fprintf(stderr, "xenreaperd: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return -EINVAL;
	}
	return 0;
}

/* Load the policy; a missing default file means the built-in defaults.
 * On failure ERRS holds every message. */
static int policy_load(const struct options *opts, struct config **out,
		       struct config_errors *errs)
{
	int rc = config_load(opts->config_path, out, errs);

	if (rc == -ENOENT && !opts->config_named) {
		config_errors_clear(errs);
		return config_new(out);
	}
	return rc;
}

static int check_config(const struct options *opts)
{
	struct config_errors errs = { 0 };
	struct config *policy = NULL;
	char *text = NULL;
	int rc;

	rc = policy_load(opts, &policy, &errs);
	for (size_t i = 0; i < errs.n; i++)
		fprintf(stderr, "%s\n", errs.v[i].text);
	if (rc) {
		if (!errs.n)
			fprintf(stderr, "%s: %s\n", opts->config_path, strerror(-rc));
		goto out;
	}
	rc = config_format(policy, &text);
	if (!rc)
		printf("# %s is valid; in effect:\n%s", policy->path ? policy->path :
		       "no policy file, built-in defaults", text);
out:
	free(text);
	config_free(policy);
	config_errors_clear(&errs);
	return rc;
}

static int signals_open(void)
{
	static const int taken[] = { SIGTERM, SIGINT, SIGHUP };
	sigset_t set;
	int rc;

	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(taken) / sizeof(taken[0]); i++) {
		/* An ignored signal is dropped before a signalfd sees it: a
		 * start from `nohup` or a shell's `&` must still stop and
		 * reload. */
		if (signal(taken[i], SIG_DFL) == SIG_ERR)
			return -errno;
		sigaddset(&set, taken[i]);
	}
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

/* Tell systemd the status line when it changed: the loop wakes 4 times a
 * second during a teardown, the line moves less often. */
static void daemon_notify_status(struct daemon *d)
{
	unsigned active = reaper_active_jobs(d->reaper);
	char status[sizeof(d->status)];

	if (d->stopping)
		snprintf(status, sizeof(status), "STATUS=stopping: waiting for %u running teardown(s)",
			 reaper_running(d->reaper));
	else if (active)
		snprintf(status, sizeof(status), "STATUS=%u active job(s), %u%% of their pages released",
			 active, reaper_progress(d->reaper));
	else
		snprintf(status, sizeof(status), "STATUS=idle, waiting for teardown requests");
	if (!strcmp(status, d->status))
		return;
	strcpy(d->status, status);
	sd_notify(0, status);
}

/* SIGHUP: a good file replaces the policy; a bad one changes nothing but
 * the config-error node, which says why. */
static void daemon_reload(struct daemon *d)
{
	struct config_errors errs = { 0 };
	struct config *fresh = NULL;
	char *joined = NULL;
	int rc;

	sd_notify(0, "RELOADING=1");
	rc = policy_load(&d->opts, &fresh, &errs);
	if (rc) {
		if (!errs.n || config_errors_join(&errs, &joined))
			joined = NULL;
		if (!joined && asprintf(&joined, "%s: %s", d->opts.config_path, strerror(-rc)) < 0)
			joined = NULL;
		config_log_reload_failed(d->opts.config_path, rc, &errs, joined);
		rc = reaper_set_config_error(d->reaper, joined ? joined : "reload failed");
	} else {
		reaper_set_policy(d->reaper, fresh);
		config_free(d->policy);
		d->policy = fresh;
		log_set_level(d->opts.verbose ? LOG_DEBUG : fresh->log_level);
		rc = reaper_set_config_error(d->reaper, NULL);
		config_log_reloaded(fresh);
	}
	if (rc)
		log_err("daemon/config-error not updated: %s", strerror(-rc));
	free(joined);
	config_errors_clear(&errs);
	sd_notify(0, "READY=1");
}

/* SIGTERM or SIGINT: true when the loop should end now. */
static bool daemon_stop_signal(struct daemon *d, unsigned signo)
{
	unsigned busy = reaper_running(d->reaper);

	if (d->stopping) {
		log_notice("signal %u again: stopping now; %u running teardown(s) resume on restart",
			   signo, busy);
		return true;
	}
	if (!busy) {
		if (reaper_stuck(d->reaper))
			log_notice("signal %u: stopping; %u stuck teardown(s) resume on restart", signo,
				   reaper_stuck(d->reaper));
		else
			log_notice("signal %u: stopping", signo);
		return true;
	}
	log_notice("signal %u: stopping once %u running teardown(s) end, stand still for %d s, "
		   "or in %d s at most (the same signal again stops at once; they resume on restart)",
		   signo, busy, REAPER_STOP_STUCK_MS / 1000, DAEMON_STOP_MAX_MS / 1000);
	d->stopping = true;
	d->stop_by = clock_mono_ms() + DAEMON_STOP_MAX_MS;
	sd_notify(0, "STOPPING=1");
	reaper_stop(d->reaper);
	return false;
}

/* Drain the signalfd: returns true when the daemon should stop now. */
static bool daemon_handle_signals(struct daemon *d)
{
	struct signalfd_siginfo si;
	bool stop = false;

	while (!stop && read(d->signal_fd, &si, sizeof(si)) == sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGTERM:
		case SIGINT:
			stop = daemon_stop_signal(d, si.ssi_signo);
			break;
		case SIGHUP:
			if (d->stopping)
				log_notice("SIGHUP while stopping: not reloading");
			else
				daemon_reload(d);
			break;
		}
	}
	return stop;
}

static int64_t daemon_next_deadline(struct daemon *d)
{
	int64_t next = reaper_next_deadline(d->reaper);

	if (d->watchdog_ms && (next < 0 || d->watchdog_next < next))
		next = d->watchdog_next;
	if (d->stopping && (next < 0 || d->stop_by < next))
		next = d->stop_by;
	return next;
}

/* systemd's watchdog asks whether we work: only if xenstored answers. */
static void daemon_watchdog(struct daemon *d)
{
	if (!d->watchdog_ms || clock_mono_ms() < d->watchdog_next)
		return;
	d->watchdog_next = clock_mono_ms() + d->watchdog_ms;
	if (store_ping(d->store) && store_lost(d->store))
		return;	/* the loop ends on it */
	sd_notify(0, "WATCHDOG=1");
}

static int daemon_run(struct daemon *d)
{
	struct pollfd fds[POLL_COUNT] = {
		[POLL_STORE] = { .fd = store_fd(d->store), .events = POLLIN },
		[POLL_RUNNER] = { .fd = runner_fd(d->runner), .events = POLLIN },
		[POLL_SIGNALS] = { .fd = d->signal_fd, .events = POLLIN },
		[POLL_TIMER] = { .fd = d->timer_fd, .events = POLLIN },
	};
	uint64_t expirations;
	int64_t deadline;
	int rc;

	for (;;) {
		reaper_tick(d->reaper);
		daemon_watchdog(d);
		if (store_lost(d->store))
			return -ENOTCONN;
		if (d->stopping && reaper_running(d->reaper) && clock_mono_ms() >= d->stop_by) {
			log_notice("stopping now, %d s after the signal: %u running teardown(s) end with the daemon "
				   "and resume on restart", DAEMON_STOP_MAX_MS / 1000, reaper_running(d->reaper));
			return 0;
		}
		if (d->stopping && !reaper_running(d->reaper)) {
			if (reaper_stuck(d->reaper))
				log_notice("stopping with %u stuck teardown(s) left to resume on restart",
					   reaper_stuck(d->reaper));
			return 0;
		}
		deadline = daemon_next_deadline(d);
		rc = timer_arm(d->timer_fd, deadline);
		if (rc)
			return rc;
		daemon_notify_status(d);
		if (poll(fds, POLL_COUNT, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (fds[POLL_SIGNALS].revents && daemon_handle_signals(d))
			return 0;
		if (fds[POLL_TIMER].revents) {
			if (read(d->timer_fd, &expirations, sizeof(expirations)) > 0)
				clock_mono_reached(deadline);	/* it fired: due now */
			else if (errno != EAGAIN)
				return -errno;
		}
		if (fds[POLL_RUNNER].revents)
			reaper_handle_runner(d->reaper);
		if (fds[POLL_STORE].revents)
			reaper_handle_store_events(d->reaper);
	}
}

/* Everything up to READY=1; each failure is logged here. */
static int daemon_start(struct daemon *d)
{
	struct config_errors errs = { 0 };
	const char *socket_path;
	uint64_t watchdog_usec;
	char *helper;
	pid_t holder;
	int rc;

	/* Before anything touches xenstore: a second daemon would resume the
	 * first one's jobs and destroy the same domains twice. */
	rc = instance_lock(d->opts.pid_path, &d->lock_fd, &holder);
	if (rc == -EEXIST && holder) {
		log_err("xenreaperd is already running as pid %ld (it holds %s); not starting a second one",
			(long)holder, d->opts.pid_path);
		return rc;
	}
	if (rc == -EEXIST) {
		log_err("another xenreaperd holds %s; not starting a second one", d->opts.pid_path);
		return rc;
	}
	if (rc) {
		log_err("cannot lock %s: %s (it keeps a second xenreaperd from starting; "
			"choose another with --pidfile)", d->opts.pid_path, strerror(-rc));
		return rc;
	}
	rc = policy_load(&d->opts, &d->policy, &errs);
	if (rc) {
		config_errors_log(&errs);
		config_errors_clear(&errs);
		if (rc != -EINVAL)
			log_err("%s: %s", d->opts.config_path, strerror(-rc));
		return rc;
	}
	log_set_level(d->opts.verbose ? LOG_DEBUG : d->policy->log_level);
	d->signal_fd = signals_open();
	if (d->signal_fd < 0) {
		log_err("signalfd: %s", strerror(-d->signal_fd));
		return d->signal_fd;
	}
	d->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (d->timer_fd < 0) {
		rc = -errno;
		log_err("timerfd: %s", strerror(-rc));
		return rc;
	}
	/* Before xenstored (a boot that starts us first), libxenstore falls
	 * back to /dev/xen/xenbus, where the first request waits, silently,
	 * until xenstored runs: say so once.  A stub-domain xenstore has no
	 * socket either, and answers at once. */
	if (!store_xs_socket_ready(&socket_path))
		log_notice("xenstored's socket %s is not there (yet): connecting through /dev/xen/xenbus, "
			   "which waits for xenstored if it is not running", socket_path);
	rc = store_xs_new(&d->store);
	if (rc) {
		log_err("cannot connect to xenstored: %s (is xenstored running, and are we root in dom0?)",
			strerror(-rc));
		return rc;
	}
	rc = hv_xen_new(&d->hv);
	if (rc) {
		log_err("cannot open the hypervisor interface: %s (needs root in dom0 with /dev/xen/privcmd)",
			strerror(-rc));
		return rc;
	}
	if (hv_scrub_exact(d->hv))
		log_info("the hypervisor reports its scrub backlog (physinfo scrub_pages): "
			 "read with every sample, no heap dumps");
	rc = runner_helper_path(&helper);
	if (!rc) {
		rc = runner_spawn_new(helper, (enum job_priority)d->policy->defaults.priority, &d->runner);
		free(helper);
	}
	if (!rc)
		rc = reaper_new(d->store, d->hv, d->runner, d->policy, &d->reaper);
	if (!rc)
		rc = reaper_start(d->reaper);
	if (rc) {
		log_err("start-up failed: %s", strerror(-rc));
		return rc;
	}
	if (sd_watchdog_enabled(0, &watchdog_usec) > 0) {
		d->watchdog_ms = watchdog_usec / 2000;	/* ping twice per period */
		d->watchdog_next = clock_mono_ms();
	}
	log_notice("xenreaperd %s running: %u teardown(s) at once, policy %s", PACKAGE_VERSION,
		   d->policy->jobs, d->policy->path ? d->policy->path : "built-in defaults");
	sd_notify(0, "READY=1");
	return 0;
}

static void daemon_dispose(struct daemon *d)
{
	reaper_free(d->reaper);
	if (d->runner && runner_busy(d->runner))
		log_info("ending %u teardown process(es): their jobs resume on the next start",
			 runner_busy(d->runner));
	runner_free(d->runner);
	hv_free(d->hv);
	store_free(d->store);
	config_free(d->policy);
	if (d->timer_fd >= 0)
		close(d->timer_fd);
	if (d->signal_fd >= 0)
		close(d->signal_fd);
	instance_unlock(d->lock_fd);
}

int main(int argc, char **argv)
{
	struct daemon d = { .signal_fd = -1, .timer_fd = -1, .lock_fd = -1 };
	int rc;

	/* Descriptors a hand start leaves us must not reach libxl's hotplug
	 * scripts (everything we open ourselves is close-on-exec). */
	close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
	/* Under systemd, entries a log pipeline can filter (log.h). */
	if (log_stderr_is_journal())
		log_set_journal_sink(sd_journal_sendv);

	rc = parse_options(argc, argv, &d.opts);
	if (rc)
		return rc > 0 ? EXIT_SUCCESS : 2;
	if (d.opts.check_config)
		return check_config(&d.opts) ? EXIT_FAILURE : EXIT_SUCCESS;

	rc = daemon_start(&d);
	if (!rc) {
		rc = daemon_run(&d);
		if (rc == -ENOTCONN)
			log_err("lost the connection to xenstored: exiting so that it can be restarted "
				"(systemd does); jobs resume from xenstore");
		else if (rc)
			log_err("main loop: %s", strerror(-rc));
		sd_notify(0, "STOPPING=1");
		if (rc != -ENOTCONN && reaper_set_daemon_state(d.reaper, "stopped"))
			log_warning("could not publish daemon/state = stopped");
	}
	daemon_dispose(&d);
	if (rc == -EEXIST)
		return EXIT_ALREADY_RUNNING;
	return rc ? EXIT_FAILURE : EXIT_SUCCESS;
}
