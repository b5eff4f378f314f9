/* Unit tests for what the processes a worker forks inherit from the
 * daemon (issue 21, defects 2 and 5).  libxl forks its destroy child and
 * every hotplug script from the thread that calls libxl_domain_destroy, a
 * worker, with fork(2); the hv here does the same from hv_destroy: one
 * child execs this program again, which reports what an exec'd hotplug
 * script starts with (signal mask, ignored signals, open descriptors), and
 * one child does not exec and reads its own /proc/self/status, as libxl's
 * destroy child would.  The process is set up as the daemon is when it
 * runs: SIGTERM, SIGINT and SIGHUP blocked for the signalfd, SIGPIPE
 * ignored (systemd's IgnoreSIGPIPE=yes; libxenstore also ignores it
 * process-wide during each request), SIGINT and SIGQUIT ignored (a
 * shell's `&`), the single-instance lock held, and the metrics file being
 * written at the moment of the fork (caught by the fchmod below, which
 * metrics_write calls while its temporary file is open). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "instance.h"
#include "metrics.h"
#include "tap.h"
#include "worker.h"

#define REPORT_FLAG "--report-child"
#define REPORT_MAX 4096
#define WAIT_MS 10000

/* A hypervisor whose destroy forks the way libxl's does. */
struct forking_hv {
	struct hv base;
	const char *exe;		/* this program, re-exec'd as the "hotplug script" */
	pthread_mutex_t lock;
	pthread_cond_t changed;
	bool wait_for_write;		/* fork only once the metrics write is caught */
	bool inside;			/* the worker is in destroy, waiting */
	bool fork_now;			/* the main thread is inside metrics_write */
	bool forked;			/* both children have reported */
	char exec_report[REPORT_MAX];	/* what the exec'd child printed */
	char noexec_report[REPORT_MAX];	/* the non-exec child's /proc/self/status */
	sigset_t worker_mask;		/* the worker's own mask, after its children ran */
};

static struct forking_hv *the_hv;
static bool catch_metrics_write;
static unsigned writes_caught;

/* The child's half: what an exec'd program starts with, on stdout. */
static int report_self(void)
{
	char line[256], path[64], target[256];
	int fds[256], n = 0;
	struct dirent *e;
	ssize_t len;
	FILE *f;
	DIR *d;

	f = fopen("/proc/self/status", "re");
	if (!f)
		return 1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "SigBlk:", 7) || !strncmp(line, "SigIgn:", 7))
			fputs(line, stdout);
	fclose(f);
	d = opendir("/proc/self/fd");
	if (!d)
		return 1;
	while ((e = readdir(d)) && n < 256) {
		if (e->d_name[0] == '.' || atoi(e->d_name) == dirfd(d))
			continue;
		fds[n++] = atoi(e->d_name);
	}
	closedir(d);
	/* readdir's order is the kernel's; sort for a stable line. */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && fds[j - 1] > fds[j]; j--) {
			int t = fds[j];

			fds[j] = fds[j - 1];
			fds[j - 1] = t;
		}
	fputs("fds:", stdout);
	for (int i = 0; i < n; i++)
		printf(" %d", fds[i]);
	putchar('\n');
	for (int i = 0; i < n; i++) {
		if (fds[i] <= 2)
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[i]);
		len = readlink(path, target, sizeof(target) - 1);
		target[len < 0 ? 0 : len] = '\0';
		printf("fd %d: %s\n", fds[i], target);
	}
	return 0;
}

/* Read FD to its end into BUF (NUL-terminated). */
static void read_all(int fd, char *buf, size_t size)
{
	size_t used = 0;
	ssize_t got;

	while (used < size - 1 && ((got = read(fd, buf + used, size - 1 - used)) > 0 ||
				   (got < 0 && errno == EINTR)))
		used += got > 0 ? got : 0;
	buf[used] = '\0';
}

/* fork and exec this program as a hotplug script would be: its stdout is
 * a pipe to us (libxl gives scripts the daemon's own), nothing else is
 * passed on purpose. */
static void run_exec_child(struct forking_hv *fh)
{
	int out[2], status;
	pid_t pid;

	strcpy(fh->exec_report, "(no report)");
	if (pipe2(out, O_CLOEXEC))
		return;
	pid = fork();
	if (pid == 0) {
		dup2(out[1], STDOUT_FILENO);
		execl(fh->exe, fh->exe, REPORT_FLAG, (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	if (pid > 0)
		read_all(out[0], fh->exec_report, sizeof(fh->exec_report));
	close(out[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
}

/* fork without exec, as libxl's destroy child: only async-signal-safe
 * calls in the child of a threaded process. */
static void run_noexec_child(struct forking_hv *fh)
{
	int out[2], status;
	pid_t pid;

	strcpy(fh->noexec_report, "(no report)");
	if (pipe2(out, O_CLOEXEC))
		return;
	pid = fork();
	if (pid == 0) {
		char buf[REPORT_MAX];
		int fd = open("/proc/self/status", O_RDONLY);
		ssize_t got = fd < 0 ? -1 : read(fd, buf, sizeof(buf));

		if (got > 0 && write(out[1], buf, got) != got)
			_exit(1);
		_exit(0);
	}
	close(out[1]);
	if (pid > 0)
		read_all(out[0], fh->noexec_report, sizeof(fh->noexec_report));
	close(out[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
}

static void deadline_in(struct timespec *until, int ms)
{
	clock_gettime(CLOCK_REALTIME, until);
	until->tv_sec += ms / 1000;
	until->tv_nsec += (long)(ms % 1000) * 1000000;
	if (until->tv_nsec >= 1000000000) {
		until->tv_sec++;
		until->tv_nsec -= 1000000000;
	}
}

static int fh_destroy(struct hv *hv, uint32_t domid, const uint8_t uuid[HV_UUID_LEN], unsigned flags)
{
	struct forking_hv *fh = (struct forking_hv *)hv;
	struct timespec until;

	(void)domid;
	(void)uuid;
	(void)flags;
	pthread_mutex_lock(&fh->lock);
	fh->inside = true;
	pthread_cond_broadcast(&fh->changed);
	deadline_in(&until, WAIT_MS);
	while (fh->wait_for_write && !fh->fork_now &&
	       pthread_cond_timedwait(&fh->changed, &fh->lock, &until) == 0)
		continue;
	pthread_mutex_unlock(&fh->lock);
	run_exec_child(fh);
	run_noexec_child(fh);
	pthread_sigmask(SIG_BLOCK, NULL, &fh->worker_mask);
	pthread_mutex_lock(&fh->lock);
	fh->forked = true;
	pthread_cond_broadcast(&fh->changed);
	pthread_mutex_unlock(&fh->lock);
	return 0;
}

static void fh_free(struct hv *hv)
{
	(void)hv;
}

static const struct hv_ops forking_ops = { .destroy = fh_destroy, .free = fh_free };

/* metrics_write calls fchmod with its temporary file open: when armed,
 * let the waiting worker fork right then, and go on once its children
 * have reported. */
int fchmod(int fd, mode_t mode)
{
	struct forking_hv *fh = the_hv;
	struct timespec until;

	if (catch_metrics_write && fh) {
		pthread_mutex_lock(&fh->lock);
		deadline_in(&until, WAIT_MS);
		while (!fh->inside && pthread_cond_timedwait(&fh->changed, &fh->lock, &until) == 0)
			continue;
		if (fh->inside) {
			writes_caught++;
			fh->fork_now = true;
			pthread_cond_broadcast(&fh->changed);
			while (!fh->forked &&
			       pthread_cond_timedwait(&fh->changed, &fh->lock, &until) == 0)
				continue;
		}
		pthread_mutex_unlock(&fh->lock);
	}
	return syscall(SYS_fchmod, fd, mode);
}

static void forking_hv_init(struct forking_hv *fh, const char *exe, bool wait_for_write)
{
	memset(fh, 0, sizeof(*fh));
	fh->base.ops = &forking_ops;
	fh->exe = exe;
	fh->wait_for_write = wait_for_write;
	pthread_mutex_init(&fh->lock, NULL);
	pthread_cond_init(&fh->changed, NULL);
	the_hv = fh;
}

/* Submit one teardown and collect it (real time: the worker forks). */
static int run_one_teardown(struct worker_pool *pool)
{
	static const uint8_t uuid[HV_UUID_LEN] = { 1 };
	struct pollfd pfd = { .fd = worker_pool_fd(pool), .events = POLLIN };
	uint32_t domid;
	int result, rc;

	rc = worker_pool_submit(pool, 7, uuid, JOB_PRIORITY_NORMAL, 0);
	if (rc)
		return rc;
	if (poll(&pfd, 1, 3 * WAIT_MS) <= 0)
		return -ETIMEDOUT;
	rc = worker_pool_next_done(pool, &domid, &result);
	return rc ? rc : result;
}

/* The value of FIELD ("SigBlk:") in a /proc status text, or "(none)". */
static const char *status_field(const char *text, const char *field, char out[32])
{
	const char *at = strstr(text, field);

	strcpy(out, "(none)");
	if (at && sscanf(at + strlen(field), " %31s", out) != 1)
		strcpy(out, "(none)");
	return out;
}

/* The SigIgn field, less the signals the C library keeps for itself (32
 * and 33 in glibc, below SIGRTMIN) and refuses to let any program change:
 * what the test's parent left there (GNU make's posix_spawn leaves them
 * ignored) reaches xl's children as well, and never a script's trap. */
static const char *settable_ignored(const char *text, char out[32])
{
	unsigned long long bits;
	char field[32];

	if (sscanf(status_field(text, "SigIgn:", field), "%llx", &bits) != 1) {
		strcpy(out, "(none)");
		return out;
	}
	for (int signo = 32; signo < SIGRTMIN; signo++)
		bits &= ~(1ULL << (signo - 1));
	snprintf(out, 32, "%016llx", bits);
	return out;
}

static void diag_report(const char *what, const char *text)
{
	printf("# %s:\n", what);
	for (const char *line = text; *line;) {
		const char *end = strchr(line, '\n');
		int len = end ? (int)(end - line) : (int)strlen(line);

		if (!strncmp(line, "Sig", 3) || !strncmp(line, "fd", 2))
			printf("#   %.*s\n", len, line);
		line += len + (end != NULL);
	}
}

/* Descriptors this test inherited (from make, a terminal, a CI runner) are
 * the harness's, not the daemon's, which systemd starts with 0, 1 and 2
 * only: keep them out of the children, so that what the test sees is what
 * the daemon opens. */
static void inherited_fds_cloexec(void)
{
	struct dirent *e;
	DIR *d = opendir("/proc/self/fd");
	int fd;

	if (!d)
		return;
	while ((e = readdir(d))) {
		fd = atoi(e->d_name);
		if (e->d_name[0] != '.' && fd > 2 && fd != dirfd(d))
			fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC);
	}
	closedir(d);
}

/* What the daemon's process is like when its workers run (see the top). */
static void act_as_daemon(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
}

static void test_signals(const char *exe)
{
	struct worker_pool *pool = NULL;
	struct forking_hv fh;
	char got[32];
	struct sigaction pipe_action;

	forking_hv_init(&fh, exe, false);
	is_int(worker_pool_new(&fh.base, 1, &pool), 0, "a pool of one worker");
	is_int(run_one_teardown(pool), 0, "  whose teardown forks two children and collects them");
	is_str(status_field(fh.exec_report, "SigBlk:", got), "0000000000000000",
	       "an exec'd child of a worker (a hotplug script) blocks no signal");
	is_str(settable_ignored(fh.exec_report, got), "0000000000000000",
	       "  and ignores none (SIGPIPE, SIGINT, SIGQUIT are ignored in the daemon)");
	is_str(status_field(fh.noexec_report, "SigBlk:", got), "0000000000000000",
	       "a child that does not exec (libxl's destroy child) blocks no signal");
	is_str(settable_ignored(fh.noexec_report, got), "0000000000000000",
	       "  and ignores none");
	ok(sigismember(&fh.worker_mask, SIGTERM) && sigismember(&fh.worker_mask, SIGINT) &&
	   sigismember(&fh.worker_mask, SIGHUP),
	   "the worker itself still blocks SIGTERM, SIGINT and SIGHUP (they are the signalfd's)");
	ok(!sigismember(&fh.worker_mask, SIGCHLD), "  but not SIGCHLD (libxl reaps its children)");
	sigaction(SIGPIPE, NULL, &pipe_action);
	ok(pipe_action.sa_handler == SIG_IGN, "the daemon's own SIGPIPE is still ignored");
	if (tap_failed) {
		diag_report("the exec'd child reported", fh.exec_report);
		diag_report("the non-exec child reported", fh.noexec_report);
	}
	worker_pool_free(pool);
}

/* libxenstore (4.17) ignores SIGPIPE process-wide during each request,
 * so a worker may fork while it is ignored though it was not when the
 * pool started: the children must not keep it. */
static void test_sigpipe_ignored_later(const char *exe)
{
	struct worker_pool *pool = NULL;
	struct forking_hv fh;
	char got[32];

	signal(SIGPIPE, SIG_DFL);
	forking_hv_init(&fh, exe, false);
	is_int(worker_pool_new(&fh.base, 1, &pool), 0, "a pool started with SIGPIPE not ignored");
	signal(SIGPIPE, SIG_IGN);
	is_int(run_one_teardown(pool), 0, "  a teardown while SIGPIPE is ignored, as during a request");
	is_str(settable_ignored(fh.exec_report, got), "0000000000000000",
	       "  its exec'd child ignores no signal");
	is_str(settable_ignored(fh.noexec_report, got), "0000000000000000",
	       "  nor does its child that does not exec");
	worker_pool_free(pool);
}

static void test_descriptors(const char *exe)
{
	char dir[] = "/tmp/test-children.XXXXXX", lock_path[128], prom_path[128];
	struct scrub_snapshot scrub = { .source = "none" };
	struct worker_pool *pool = NULL;
	struct metrics *m = NULL;
	struct forking_hv fh;
	int lock_fd = -1, failed_before = tap_failed;
	pid_t holder;
	char cmd[160];

	if (!mkdtemp(dir)) {
		ok(0, "a temporary directory: %s", strerror(errno));
		return;
	}
	snprintf(lock_path, sizeof(lock_path), "%s/run/xenreaperd.pid", dir);
	snprintf(prom_path, sizeof(prom_path), "%s/xenreaper.prom", dir);
	is_int(instance_lock(lock_path, &lock_fd, &holder), 0, "the daemon's single-instance lock is held");
	forking_hv_init(&fh, exe, true);
	is_int(worker_pool_new(&fh.base, 1, &pool), 0, "a pool of one worker (its eventfd open)");
	metrics_new(1700000000000, &m);
	metrics_configure(m, prom_path, "test.conf");
	worker_pool_submit(pool, 7, (const uint8_t[HV_UUID_LEN]){ 1 }, JOB_PRIORITY_NORMAL, 0);
	/* The main thread renders the metrics while the worker is in libxl. */
	catch_metrics_write = true;
	metrics_update(m, NULL, &scrub, NULL, 1000);
	catch_metrics_write = false;
	{
		struct pollfd pfd = { .fd = worker_pool_fd(pool), .events = POLLIN };
		uint32_t domid;
		int result = -1;

		if (poll(&pfd, 1, 3 * WAIT_MS) > 0)
			worker_pool_next_done(pool, &domid, &result);
		is_int(result, 0, "  the worker forked while the metrics file was being written");
	}
	is_int(writes_caught, 1, "  (metrics_write was caught with its temporary file open)");
	ok(access(prom_path, R_OK) == 0, "  and the metrics file was written all the same");
	ok(strstr(fh.exec_report, "\nfds: 0 1 2\n") != NULL,
	   "an exec'd child of a worker inherits descriptors 0, 1 and 2 only");
	if (tap_failed > failed_before)
		diag_report("the exec'd child reported", fh.exec_report);
	worker_pool_free(pool);
	metrics_free(m);
	instance_unlock(lock_fd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		printf("# could not remove %s\n", dir);
}

int main(int argc, char **argv)
{
	static char exe[4096];
	ssize_t len;

	if (argc == 2 && !strcmp(argv[1], REPORT_FLAG))
		return report_self();
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0)
		return 1;
	exe[len] = '\0';
	inherited_fds_cloexec();
	act_as_daemon();
	test_signals(exe);
	test_sigpipe_ignored_later(exe);
	test_descriptors(exe);
	return tap_done();
}
