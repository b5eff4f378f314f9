/*
 * runner_spawn: each teardown in a process of its own, as `xl destroy`
 * runs one.  The helper (xenreaper-teardown, teardown-helper.c) is
 * exec'd with posix_spawn, never a bare fork of the daemon, so it starts
 * single-threaded, with no signal blocked or ignored, holding nothing of
 * the daemon's but stderr: libxl forks its destroy child and hotplug
 * scripts from it as from xl.  The request is its command line, which
 * ps(1) then shows; the result comes back as one line on its descriptor
 * 3, read once it has exited.
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
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "runner.h"

extern char **environ;

struct runner_helper {
	struct runner_helper *next;
	uint32_t domid;
	pid_t pid;		/* 0 once reaped */
	int pidfd;		/* -1 where the kernel has none */
	int result_fd;		/* the pipe's read end */
	bool killed;		/* by runner_kill */
	struct runner_result result;
};

struct runner_spawn {
	struct runner base;
	char *helper_path;
	struct runner_helper *running;	/* started, not yet reaped */
	struct runner_helper *done, **done_tail;	/* reaped, not yet collected */
	unsigned busy;
};

static struct runner_spawn *runner_spawn_of(const struct runner *runner)
{
	return (struct runner_spawn *)runner;
}

static void runner_helper_free(struct runner_helper *helper)
{
	if (helper->pidfd >= 0)
		close(helper->pidfd);
	if (helper->result_fd >= 0)
		close(helper->result_fd);
	free(helper);
}

static struct runner_helper *runner_spawn_find(const struct runner_spawn *rs, uint32_t domid)
{
	for (struct runner_helper *h = rs->running; h; h = h->next)
		if (h->domid == domid)
			return h;
	return NULL;
}

static int runner_spawn_start(struct runner *runner, const struct runner_request *request)
{
	struct runner_spawn *rs = runner_spawn_of(runner);
	char domid[16], uuid[HV_UUID_STR_LEN], flags[16], stubdom[16], stubdom_uuid[HV_UUID_STR_LEN];
	char *argv[] = { rs->helper_path, domid, uuid, flags,
			 (char *)job_priority_name(request->priority),
			 request->stubdom ? stubdom : NULL, stubdom_uuid, NULL };
	posix_spawn_file_actions_t actions;
	struct runner_helper *helper;
	posix_spawnattr_t attr;
	int pipe_fds[2] = { -1, -1 }, write_fd = -1, rc;
	sigset_t none, all;

	if (runner_spawn_find(rs, request->domid))
		return -EALREADY;
	helper = calloc(1, sizeof(*helper));
	if (!helper)
		return -ENOMEM;
	helper->pidfd = -1;
	helper->result_fd = -1;
	helper->domid = request->domid;
	snprintf(domid, sizeof(domid), "%u", request->domid);
	hv_uuid_format(request->uuid, uuid);
	snprintf(flags, sizeof(flags), "%u", request->flags);
	snprintf(stubdom, sizeof(stubdom), "%u", request->stubdom);
	hv_uuid_format(request->stubdom_uuid, stubdom_uuid);

	if (pipe2(pipe_fds, O_CLOEXEC) < 0) {
		rc = -errno;
		goto out;
	}
	/* Above the helper's 3, so the dup2 below always clears CLOEXEC. */
	write_fd = fcntl(pipe_fds[1], F_DUPFD_CLOEXEC, RUNNER_RESULT_FD + 1);
	if (write_fd < 0) {
		rc = -errno;
		goto out;
	}
	if (fcntl(pipe_fds[0], F_SETFL, O_NONBLOCK) < 0) {
		rc = -errno;
		goto out;
	}
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawn_file_actions_init(&actions);
	posix_spawnattr_init(&attr);
	posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&actions, write_fd, RUNNER_RESULT_FD);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &all);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	rc = -posix_spawn(&helper->pid, rs->helper_path, &actions, &attr, argv, environ);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&actions);
	if (rc)
		goto out;
	helper->pidfd = syscall(SYS_pidfd_open, helper->pid, 0);
	helper->result_fd = pipe_fds[0];
	pipe_fds[0] = -1;
	helper->next = rs->running;
	rs->running = helper;
	helper = NULL;
	rs->busy++;
out:
	if (pipe_fds[0] >= 0)
		close(pipe_fds[0]);
	if (pipe_fds[1] >= 0)
		close(pipe_fds[1]);
	if (write_fd >= 0)
		close(write_fd);
	free(helper);
	return rc;
}

/* HELPER exited with STATUS: its result, from its line if it wrote one. */
static void runner_spawn_settle(struct runner_helper *helper, int status)
{
	struct runner_result *res = &helper->result;
	char line[RUNNER_TEXT_MAX + 32], *end;
	ssize_t len;
	long value;

	res->domid = helper->domid;
	len = read(helper->result_fd, line, sizeof(line) - 1);
	line[len > 0 ? len : 0] = '\0';
	line[strcspn(line, "\n")] = '\0';
	value = strtol(line, &end, 10);
	if (WIFEXITED(status) && !WEXITSTATUS(status) && end > line && value <= 0 && value > -4096 &&
	    (*end == '\0' || *end == ' ')) {
		res->result = (int)value;
		snprintf(res->text, sizeof(res->text), "%s", *end ? end + 1 : "");
		return;
	}
	res->result = helper->killed ? -EINTR : -EIO;
	if (helper->killed)
		snprintf(res->text, sizeof(res->text), "its teardown process (pid %ld) was ended to take it back",
			 (long)helper->pid);
	else if (WIFSIGNALED(status))
		snprintf(res->text, sizeof(res->text), "its teardown process (pid %ld) was killed by signal %d",
			 (long)helper->pid, WTERMSIG(status));
	else
		snprintf(res->text, sizeof(res->text), "its teardown process (pid %ld) exited with status %d and no result",
			 (long)helper->pid, WEXITSTATUS(status));
}

/* Reap every child that has exited: helpers move to the done list,
 * their orphaned children are only logged. */
static void runner_spawn_reap(struct runner_spawn *rs)
{
	struct runner_helper **link, *helper;
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (link = &rs->running; *link && (*link)->pid != pid; link = &(*link)->next)
			;
		helper = *link;
		if (!helper) {
			log_debug("reaped pid %ld, left running by a teardown process that ended before it",
				  (long)pid);
			continue;
		}
		*link = helper->next;
		runner_spawn_settle(helper, status);
		helper->pid = 0;
		helper->next = NULL;
		*rs->done_tail = helper;
		rs->done_tail = &helper->next;
	}
}

static int runner_spawn_next_done(struct runner *runner, struct runner_result *out)
{
	struct runner_spawn *rs = runner_spawn_of(runner);
	struct signalfd_siginfo si;
	struct runner_helper *helper;

	while (read(rs->base.fd, &si, sizeof(si)) == sizeof(si))
		;
	runner_spawn_reap(rs);
	helper = rs->done;
	if (!helper)
		return -EAGAIN;
	rs->done = helper->next;
	if (!rs->done)
		rs->done_tail = &rs->done;
	*out = helper->result;
	rs->busy--;
	runner_helper_free(helper);
	return 0;
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

	return helper ? runner_helper_kill(helper) : -ESRCH;
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

	/* A teardown cut off here is resumed by the next start's, as libxl
	 * resumes any destroy asked again; what it forked runs to its end. */
	while ((helper = rs->running)) {
		rs->running = helper->next;
		runner_helper_kill(helper);
		runner_helper_free(helper);
	}
	while ((helper = rs->done)) {
		rs->done = helper->next;
		runner_helper_free(helper);
	}
	if (rs->base.fd >= 0)
		close(rs->base.fd);
	free(rs->helper_path);
	free(rs);
}

static const struct runner_ops runner_spawn_ops = {
	.start = runner_spawn_start,
	.next_done = runner_spawn_next_done,
	.kill = runner_spawn_kill,
	.pid = runner_spawn_pid,
	.busy = runner_spawn_busy,
	.free = runner_spawn_free,
};

int runner_spawn_new(const char *helper_path, struct runner **out)
{
	struct runner_spawn *rs;
	sigset_t chld;
	int rc;

	rs = calloc(1, sizeof(*rs));
	if (!rs)
		return -ENOMEM;
	rs->base.ops = &runner_spawn_ops;
	rs->base.fd = -1;
	rs->done_tail = &rs->done;
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
	rs->base.fd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	if (rs->base.fd < 0) {
		rc = -errno;
		goto out;
	}
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
		rc = -errno;
		goto out;
	}
	*out = &rs->base;
	return 0;
out:
	runner_spawn_free(&rs->base);
	return rc;
}
