/*
 * runner_spawn: teardowns in processes of their own, as `xl destroy`
 * runs one.  The helper (xenreaper-teardown, teardown-helper.c) is
 * exec'd with posix_spawn, never a bare fork of the daemon, so it starts
 * single-threaded, with no signal blocked or ignored, holding nothing of
 * the daemon's but stderr: libxl forks its destroy child and hotplug
 * scripts from it as from xl.
 *
 * A helper serves one teardown at a time and then waits for the next on
 * its standard input, its libxl context open; one idle helper is kept
 * ahead of need.  Loading libxl and opening a context in a fresh process
 * cost more than a small guest's destroy, and in a batch every slot would
 * pay it again.  A helper runs at one priority for its life (lowered, it
 * could not be raised again), so requests go to a helper of theirs; one
 * whose teardown failed is ended, its context suspect.  All helpers write
 * their results, one line each, to one pipe.
 *
 * The daemon is the subreaper of its helpers' children: a helper that
 * dies mid-teardown leaves libxl's destroy child and scripts to run to
 * their end, and they are reaped here, where a SIGCHLD signalfd wakes
 * the main loop.  A helper's pid cannot be reused before this thread
 * reaps it; it is signalled through a pidfd all the same, so a kill can
 * never reach another process.  It does not decide what a result means,
 * when to retry or when to take a teardown back (teardown.c does).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "runner.h"

extern char **environ;

/* Room in a helper's command line for what it shows while at work
 * (teardown-helper.c): "DOMID UUID FLAGS STUBDOM STUBUUID" at most. */
#define RUNNER_TITLE_SPACE 112

struct runner_helper {
	struct runner_helper *next;
	pid_t pid;
	int pidfd;		/* -1 where the kernel has none */
	int request_fd;		/* its standard input, a socket; -1 once closed
				 * to end it */
	enum job_priority priority;
	bool busy;		/* a teardown sent, its result not yet read */
	uint32_t domid;		/* the teardown's, while busy */
	bool killed;		/* by runner_kill */
};

struct runner_ended {
	struct runner_ended *next;
	struct runner_result result;
};

struct runner_spawn {
	struct runner base;	/* base.fd: an epoll set of the two below */
	char *helper_path;
	int signal_fd;		/* SIGCHLD */
	int result_fds[2];	/* every helper's descriptor 3 */
	char pending[2 * (RUNNER_TEXT_MAX + 32)];	/* a result line not yet whole */
	size_t pending_len;
	struct runner_helper *helpers;	/* started, not yet reaped */
	struct runner_ended *ended, **ended_tail;	/* not yet collected */
	unsigned busy;
	enum job_priority last_priority;	/* the spare's */
	bool spare_failed;		/* the last spare could not be started */
};

static struct runner_spawn *runner_spawn_of(const struct runner *runner)
{
	return (struct runner_spawn *)runner;
}

static void runner_helper_free(struct runner_helper *helper)
{
	if (helper->pidfd >= 0)
		close(helper->pidfd);
	if (helper->request_fd >= 0)
		close(helper->request_fd);
	free(helper);
}

static struct runner_helper *runner_spawn_find(const struct runner_spawn *rs, uint32_t domid)
{
	for (struct runner_helper *h = rs->helpers; h; h = h->next)
		if (h->busy && h->domid == domid)
			return h;
	return NULL;
}

/* No further request for HELPER: the end of its input ends it once its
 * teardown, if any, is done. */
static void runner_helper_retire(struct runner_helper *helper)
{
	if (helper->request_fd >= 0)
		close(helper->request_fd);
	helper->request_fd = -1;
}

static bool runner_helper_idle(const struct runner_helper *helper)
{
	return !helper->busy && !helper->killed && helper->request_fd >= 0;
}

/* The idle helper at PRIORITY started first: the surest to be ready. */
static struct runner_helper *runner_spawn_idle(const struct runner_spawn *rs, enum job_priority priority)
{
	struct runner_helper *found = NULL;

	for (struct runner_helper *h = rs->helpers; h; h = h->next)
		if (runner_helper_idle(h) && h->priority == priority)
			found = h;
	return found;
}

/* A new idle helper at PRIORITY. */
static int runner_spawn_helper(struct runner_spawn *rs, enum job_priority priority, struct runner_helper **out)
{
	char title[RUNNER_TITLE_SPACE + 1];
	char *argv[] = { rs->helper_path, (char *)job_priority_name(priority), title, NULL };
	posix_spawn_file_actions_t actions;
	struct runner_helper *helper;
	posix_spawnattr_t attr;
	int request_fds[2] = { -1, -1 }, rc;
	sigset_t none, all;

	memset(title, ' ', RUNNER_TITLE_SPACE);
	title[RUNNER_TITLE_SPACE] = '\0';
	helper = calloc(1, sizeof(*helper));
	if (!helper)
		return -ENOMEM;
	helper->pidfd = -1;
	helper->request_fd = -1;
	helper->priority = priority;
	/* A socket, not a pipe: a helper that died is a send's EPIPE, not
	 * the daemon's SIGPIPE. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, request_fds) < 0) {
		rc = -errno;
		goto out;
	}
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawn_file_actions_init(&actions);
	posix_spawnattr_init(&attr);
	posix_spawn_file_actions_adddup2(&actions, request_fds[0], 0);
	/* result_fds[1] is above 3 (runner_spawn_new), so dup2 clears CLOEXEC. */
	posix_spawn_file_actions_adddup2(&actions, rs->result_fds[1], RUNNER_RESULT_FD);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &all);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	rc = -posix_spawn(&helper->pid, rs->helper_path, &actions, &attr, argv, environ);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&actions);
	if (rc)
		goto out;
	helper->pidfd = syscall(SYS_pidfd_open, helper->pid, 0);
	helper->request_fd = request_fds[1];
	request_fds[1] = -1;
	helper->next = rs->helpers;
	rs->helpers = helper;
	*out = helper;
	helper = NULL;
out:
	if (request_fds[0] >= 0)
		close(request_fds[0]);
	if (request_fds[1] >= 0)
		close(request_fds[1]);
	free(helper);
	return rc;
}

/* Hand REQUEST to HELPER; a helper that cannot take it is ended. */
static int runner_helper_send(struct runner_helper *helper, const struct runner_request *request)
{
	char uuid[HV_UUID_STR_LEN], stubdom_uuid[HV_UUID_STR_LEN], line[128];
	int len;

	hv_uuid_format(request->uuid, uuid);
	hv_uuid_format(request->stubdom_uuid, stubdom_uuid);
	if (request->stubdom)
		len = snprintf(line, sizeof(line), "%u %s %u %u %s\n", request->domid, uuid, request->flags,
			       request->stubdom, stubdom_uuid);
	else
		len = snprintf(line, sizeof(line), "%u %s %u\n", request->domid, uuid, request->flags);
	/* Far below a pipe's capacity, into an empty pipe: whole or not at all. */
	if (send(helper->request_fd, line, len, MSG_NOSIGNAL) != len) {
		runner_helper_retire(helper);
		return -EPIPE;
	}
	helper->busy = true;
	helper->domid = request->domid;
	return 0;
}

static void runner_spawn_add_ended(struct runner_spawn *rs, const struct runner_result *result)
{
	struct runner_ended *ended = calloc(1, sizeof(*ended));

	/* Out of memory, the teardown is lost to the daemon's count: its job
	 * is stuck, and taken back. */
	if (!ended) {
		log_err("domain %u: its teardown's result is lost: out of memory", result->domid);
		return;
	}
	ended->result = *result;
	*rs->ended_tail = ended;
	rs->ended_tail = &ended->next;
}

/* A result line, "DOMID RESULT [WHY]", for its helper's teardown. */
static void runner_spawn_take_line(struct runner_spawn *rs, const char *line)
{
	struct runner_result res = { 0 };
	struct runner_helper *helper;
	unsigned long domid;
	char *end;
	long value;

	domid = strtoul(line, &end, 10);
	helper = end > line && *end == ' ' ? runner_spawn_find(rs, domid) : NULL;
	if (!helper) {
		log_warning("a teardown process wrote a result for no teardown it runs: '%s'", line);
		return;
	}
	line = end + 1;
	value = strtol(line, &end, 10);
	res.domid = helper->domid;
	if (end > line && value <= 0 && value > -4096 && (*end == '\0' || *end == ' ')) {
		res.result = (int)value;
		snprintf(res.text, sizeof(res.text), "%s", *end ? end + 1 : "");
	} else {
		res.result = -EIO;
		snprintf(res.text, sizeof(res.text), "its teardown process (pid %ld) wrote a result it should not: %.64s",
			 (long)helper->pid, line);
	}
	helper->busy = false;
	/* A failure may be its context's: the retry gets a new one, as a new
	 * xl would.  A domain gone, or another's now, is no failure. */
	if (res.result < 0 && res.result != -ESRCH && res.result != -ESTALE)
		runner_helper_retire(helper);
	runner_spawn_add_ended(rs, &res);
}

/* Every whole result line the helpers have written. */
static void runner_spawn_read_results(struct runner_spawn *rs)
{
	char *start, *newline;
	ssize_t len;

	for (;;) {
		len = read(rs->result_fds[0], rs->pending + rs->pending_len,
			   sizeof(rs->pending) - 1 - rs->pending_len);
		if (len <= 0)
			return;
		rs->pending_len += len;
		rs->pending[rs->pending_len] = '\0';
		start = rs->pending;
		while ((newline = strchr(start, '\n'))) {
			*newline = '\0';
			runner_spawn_take_line(rs, start);
			start = newline + 1;
		}
		rs->pending_len -= start - rs->pending;
		memmove(rs->pending, start, rs->pending_len);
		/* Lines are written whole (below PIPE_BUF): a full buffer with
		 * no newline is no line of a helper's. */
		if (rs->pending_len == sizeof(rs->pending) - 1)
			rs->pending_len = 0;
	}
}

/* HELPER exited with STATUS in the middle of its teardown. */
static void runner_spawn_settle(struct runner_spawn *rs, const struct runner_helper *helper, int status)
{
	struct runner_result res = { .domid = helper->domid };

	res.result = helper->killed ? -EINTR : -EIO;
	if (helper->killed)
		snprintf(res.text, sizeof(res.text), "its teardown process (pid %ld) was ended to take it back",
			 (long)helper->pid);
	else if (WIFSIGNALED(status))
		snprintf(res.text, sizeof(res.text), "its teardown process (pid %ld) was killed by signal %d",
			 (long)helper->pid, WTERMSIG(status));
	else
		snprintf(res.text, sizeof(res.text), "its teardown process (pid %ld) exited with status %d and no result",
			 (long)helper->pid, WEXITSTATUS(status));
	runner_spawn_add_ended(rs, &res);
}

/* Reap every child that has exited: a helper that dies busy ends its
 * teardown without a result; its orphaned children are only logged. */
static void runner_spawn_reap(struct runner_spawn *rs)
{
	struct runner_helper **link, *helper;
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (link = &rs->helpers; *link && (*link)->pid != pid; link = &(*link)->next)
			;
		helper = *link;
		if (!helper) {
			log_debug("reaped pid %ld, left running by a teardown process that ended before it",
				  (long)pid);
			continue;
		}
		*link = helper->next;
		/* What it wrote before it exited is in the pipe by now. */
		runner_spawn_read_results(rs);
		if (helper->busy)
			runner_spawn_settle(rs, helper, status);
		else if (helper->request_fd >= 0 && !helper->killed)
			log_warning("an idle teardown process (pid %ld) ended by itself (status 0x%x)",
				    (long)pid, status);
		runner_helper_free(helper);
	}
}

static int runner_spawn_next_done(struct runner *runner, struct runner_result *out)
{
	struct runner_spawn *rs = runner_spawn_of(runner);
	struct signalfd_siginfo si;
	struct runner_ended *ended;

	while (read(rs->signal_fd, &si, sizeof(si)) == sizeof(si))
		;
	runner_spawn_read_results(rs);
	runner_spawn_reap(rs);
	ended = rs->ended;
	if (!ended)
		return -EAGAIN;
	rs->ended = ended->next;
	if (!rs->ended)
		rs->ended_tail = &rs->ended;
	*out = ended->result;
	rs->busy--;
	free(ended);
	return 0;
}

static int runner_spawn_start(struct runner *runner, const struct runner_request *request)
{
	struct runner_spawn *rs = runner_spawn_of(runner);
	struct runner_helper *helper;
	int rc;

	if (runner_spawn_find(rs, request->domid))
		return -EALREADY;
	/* An idle helper may have died unseen: then another, or a new one. */
	for (int attempt = 0; attempt < 3; attempt++) {
		helper = runner_spawn_idle(rs, request->priority);
		if (!helper && (rc = runner_spawn_helper(rs, request->priority, &helper)))
			return rc;
		rs->spare_failed = false;
		rc = runner_helper_send(helper, request);
		if (rc != -EPIPE)
			break;
	}
	if (rc)
		return rc;
	rs->busy++;
	rs->last_priority = request->priority;
	return 0;
}

/* One idle helper at the latest priority, started here while a batch's
 * teardowns run (each took the one kept before it); the others ended. */
static void runner_spawn_settle_idle(struct runner *runner)
{
	struct runner_spawn *rs = runner_spawn_of(runner);
	struct runner_helper *kept = runner_spawn_idle(rs, rs->last_priority);
	int rc;

	for (struct runner_helper *h = rs->helpers; h; h = h->next)
		if (h != kept && runner_helper_idle(h))
			runner_helper_retire(h);
	/* Not again and again for a helper that cannot start: the next
	 * teardown's start tries, and says why it cannot. */
	if (kept || rs->spare_failed)
		return;
	rc = runner_spawn_helper(rs, rs->last_priority, &kept);
	if (rc)
		log_warning("cannot start a teardown process ahead of need: %s", strerror(-rc));
	rs->spare_failed = rc != 0;
}

static int runner_helper_kill(struct runner_helper *helper)
{
	int rc;

	if (helper->pidfd >= 0)
		rc = syscall(SYS_pidfd_send_signal, helper->pidfd, SIGKILL, NULL, 0);
	else
		rc = kill(helper->pid, SIGKILL);
	if (rc < 0)
		return -errno;
	helper->killed = true;
	return 0;
}

static int runner_spawn_kill(struct runner *runner, uint32_t domid)
{
	struct runner_helper *helper = runner_spawn_find(runner_spawn_of(runner), domid);

	return helper && !helper->killed ? runner_helper_kill(helper) : -ESRCH;
}

static pid_t runner_spawn_pid(const struct runner *runner, uint32_t domid)
{
	struct runner_helper *helper = runner_spawn_find(runner_spawn_of(runner), domid);

	return helper ? helper->pid : 0;
}

static unsigned runner_spawn_busy(const struct runner *runner)
{
	return runner_spawn_of(runner)->busy;
}

static void runner_spawn_free(struct runner *runner)
{
	struct runner_spawn *rs = runner_spawn_of(runner);
	struct runner_helper *helper;
	struct runner_ended *ended;

	/* A teardown cut off here is resumed by the next start's, as libxl
	 * resumes any destroy asked again; what it forked runs to its end. */
	while ((helper = rs->helpers)) {
		rs->helpers = helper->next;
		runner_helper_kill(helper);
		runner_helper_free(helper);
	}
	while ((ended = rs->ended)) {
		rs->ended = ended->next;
		free(ended);
	}
	if (rs->base.fd >= 0)
		close(rs->base.fd);
	if (rs->signal_fd >= 0)
		close(rs->signal_fd);
	if (rs->result_fds[0] >= 0)
		close(rs->result_fds[0]);
	if (rs->result_fds[1] >= 0)
		close(rs->result_fds[1]);
	free(rs->helper_path);
	free(rs);
}

static const struct runner_ops runner_spawn_ops = {
	.start = runner_spawn_start,
	.next_done = runner_spawn_next_done,
	.kill = runner_spawn_kill,
	.pid = runner_spawn_pid,
	.busy = runner_spawn_busy,
	.settle_idle = runner_spawn_settle_idle,
	.free = runner_spawn_free,
};

static int runner_spawn_watch(int epoll_fd, int fd)
{
	struct epoll_event event = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &event) < 0 ? -errno : 0;
}

int runner_spawn_new(const char *helper_path, enum job_priority priority, struct runner **out)
{
	struct runner_spawn *rs;
	struct runner_helper *spare;
	int pipe_fds[2] = { -1, -1 }, rc;
	sigset_t chld;

	rs = calloc(1, sizeof(*rs));
	if (!rs)
		return -ENOMEM;
	rs->base.ops = &runner_spawn_ops;
	rs->base.fd = -1;
	rs->signal_fd = -1;
	rs->result_fds[0] = rs->result_fds[1] = -1;
	rs->ended_tail = &rs->ended;
	rs->last_priority = priority;
	rs->helper_path = strdup(helper_path);
	if (!rs->helper_path) {
		rc = -ENOMEM;
		goto out;
	}
	/* Blocked for the signalfd; posix_spawn gives helpers an empty mask. */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &chld, NULL) < 0) {
		rc = -errno;
		goto out;
	}
	rs->signal_fd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	if (rs->signal_fd < 0) {
		rc = -errno;
		goto out;
	}
	if (pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) < 0) {
		rc = -errno;
		goto out;
	}
	rs->result_fds[0] = pipe_fds[0];
	/* Above the helpers' 3, so the dup2 that gives it them clears CLOEXEC;
	 * blocking, for them. */
	rs->result_fds[1] = fcntl(pipe_fds[1], F_DUPFD_CLOEXEC, RUNNER_RESULT_FD + 1);
	close(pipe_fds[1]);
	if (rs->result_fds[1] < 0 || fcntl(rs->result_fds[1], F_SETFL, 0) < 0) {
		rc = -errno;
		goto out;
	}
	rs->base.fd = epoll_create1(EPOLL_CLOEXEC);
	if (rs->base.fd < 0) {
		rc = -errno;
		goto out;
	}
	rc = runner_spawn_watch(rs->base.fd, rs->signal_fd);
	if (!rc)
		rc = runner_spawn_watch(rs->base.fd, rs->result_fds[0]);
	if (rc)
		goto out;
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
		rc = -errno;
		goto out;
	}
	/* The first teardown's process, ready before it is asked for. */
	rc = runner_spawn_helper(rs, priority, &spare);
	if (rc)
		goto out;
	*out = &rs->base;
	return 0;
out:
	runner_spawn_free(&rs->base);
	return rc;
}
