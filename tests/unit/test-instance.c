/* Unit tests for daemon/instance.c: the lock that keeps a second
 * xenreaperd from starting, in a temporary directory. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "instance.h"
#include "tap.h"

int main(void)
{
	char dir[] = "/tmp/test-instance.XXXXXX", path[128], text[32] = "";
	pid_t holder = -1, child;
	int fd = -1, fd2 = -1, status;
	FILE *f;

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/run/xenreaperd.pid", dir);
	is_int(instance_lock(path, &fd, &holder), 0, "the first daemon takes the lock (directory created)");
	/* Read it from another process: closing any descriptor of the file in
	 * this one would drop our POSIX lock. */
	child = fork();
	if (child == 0) {
		f = fopen(path, "r");
		_exit(f && fgets(text, sizeof(text), f) && atol(text) == (long)getppid() ? 0 : 1);
	}
	waitpid(child, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "  and writes its pid");
	/* A second daemon is another process. */
	child = fork();
	if (child == 0) {
		int rc = instance_lock(path, &fd2, &holder);

		_exit(rc == -EEXIST && holder == getppid() ? 0 : 1);
	}
	waitpid(child, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "a second one is refused with -EEXIST and the first one's pid");
	instance_unlock(fd);
	child = fork();
	if (child == 0)
		_exit(instance_lock(path, &fd2, &holder) == 0 ? 0 : 1);
	waitpid(child, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "once the first is gone the lock is free");

	/* A daemon whose child (libxl's destroy child: fork, no exec) outlives
	 * it must not leave the lock behind: a restart would be refused. */
	{
		int pipe_fds[2], child_fd = -1;
		pid_t daemon_pid, grandchild;
		char c;

		if (pipe(pipe_fds))
			return 1;
		daemon_pid = fork();
		if (daemon_pid == 0) {
			if (instance_lock(path, &child_fd, &holder))
				_exit(1);
			grandchild = fork();
			if (grandchild == 0) {
				/* The destroy child: keeps every inherited fd, waits. */
				close(pipe_fds[1]);
				if (read(pipe_fds[0], &c, 1) < 0)
					_exit(1);
				_exit(0);
			}
			_exit(0);	/* the daemon dies; its child lives on */
		}
		close(pipe_fds[0]);
		waitpid(daemon_pid, &status, 0);
		fd2 = -1;
		ok(instance_lock(path, &fd2, &holder) == 0,
		   "a daemon's forked child that outlives it does not hold the lock");
		instance_unlock(fd2);
		close(pipe_fds[1]);	/* lets the grandchild go */
	}
	snprintf(path, sizeof(path), "%s/no/such/dir/x.pid", dir);
	ok(instance_lock(path, &fd2, &holder) == -ENOENT, "an unusable path is an error, not a pass");
	snprintf(text, sizeof(text), "rm -rf %s", dir);
	if (system(text))
		return 1;
	return tap_done();
}
