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
	f = fopen(path, "r");
	ok(f && fgets(text, sizeof(text), f) && atol(text) == (long)getpid(), "  and writes its pid");
	if (f)
		fclose(f);
	/* A second daemon is another process: flock locks belong to open files. */
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
	snprintf(path, sizeof(path), "%s/no/such/dir/x.pid", dir);
	ok(instance_lock(path, &fd2, &holder) == -ENOENT, "an unusable path is an error, not a pass");
	snprintf(text, sizeof(text), "rm -rf %s", dir);
	if (system(text))
		return 1;
	return tap_done();
}
