/*
 * runner: the calls every runner answers, and where the daemon finds its
 * teardown helper.  It starts nothing itself (runner_spawn.c does).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"

#define RUNNER_HELPER_NAME "xenreaper-teardown"

int runner_start(struct runner *runner, const struct runner_request *request)
{
	return runner->ops->start(runner, request);
}

int runner_next_done(struct runner *runner, struct runner_result *out)
{
	return runner->ops->next_done(runner, out);
}

int runner_kill(struct runner *runner, uint32_t domid)
{
	return runner->ops->kill(runner, domid);
}

pid_t runner_pid(const struct runner *runner, uint32_t domid)
{
	return runner->ops->pid(runner, domid);
}

unsigned runner_busy(const struct runner *runner)
{
	return runner->ops->busy(runner);
}

void runner_settle_idle(struct runner *runner)
{
	if (runner->ops->settle_idle)
		runner->ops->settle_idle(runner);
}

int runner_fd(const struct runner *runner)
{
	return runner->fd;
}

void runner_free(struct runner *runner)
{
	if (runner)
		runner->ops->free(runner);
}

/* A build tree keeps the helper beside the daemon, an installed one in
 * PKGLIBEXECDIR, off PATH: whoever may replace the daemon's own directory
 * may replace the daemon, so looking there first trusts no one new. */
int runner_helper_path(char **out)
{
	char exe[PATH_MAX], *slash, *path;
	ssize_t len;

	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len > 0) {
		exe[len] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			slash[1] = '\0';
			if (asprintf(&path, "%s%s", exe, RUNNER_HELPER_NAME) < 0)
				return -ENOMEM;
			if (!access(path, X_OK)) {
				*out = path;
				return 0;
			}
			free(path);
		}
	}
	path = strdup(PKGLIBEXECDIR "/" RUNNER_HELPER_NAME);
	if (!path)
		return -ENOMEM;
	*out = path;
	return 0;
}
