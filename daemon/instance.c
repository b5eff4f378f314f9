/*
 * instance: makes sure only one xenreaperd runs on a host, whether it was
 * started by systemd or by hand.  A second one would resume the first
 * one's jobs and destroy the same domains twice, so it must refuse before
 * it touches xenstore.  A POSIX record lock (fcntl F_SETLK) on the pid file
 * does the deciding: it goes with the process, so a daemon killed with -9
 * leaves no stale lock, and unlike flock(2) it is not shared with children
 * forked without exec (libxl's destroy child), which may outlive the
 * daemon by the length of a hypercall.  Nothing else may open the file in
 * the daemon: closing any descriptor of it drops a POSIX lock.  The file
 * is never removed
 * (removing a locked file would let two daemons lock two different files).
 * It does not know about xenstore or systemd.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "instance.h"

int instance_lock(const char *path, int *fd_out, pid_t *holder)
{
	struct flock lock = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	char *dir = NULL, *slash, text[24];
	int fd = -1, rc, len;

	*holder = 0;
	dir = strdup(path);
	if (!dir)
		return -ENOMEM;
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
			rc = -errno;
			goto out;
		}
	}
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc = -errno;
		goto out;
	}
	if (fcntl(fd, F_SETLK, &lock) < 0) {
		rc = errno == EACCES || errno == EAGAIN ? -EEXIST : -errno;
		if (rc == -EEXIST && fcntl(fd, F_GETLK, &lock) == 0 && lock.l_type != F_UNLCK)
			*holder = lock.l_pid;
		goto out;
	}
	len = snprintf(text, sizeof(text), "%ld\n", (long)getpid());
	errno = 0;
	if (ftruncate(fd, 0) < 0 || pwrite(fd, text, len, 0) != len) {
		rc = errno ? -errno : -EIO;
		goto out;
	}
	*fd_out = fd;
	fd = -1;
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	free(dir);
	return rc;
}

void instance_unlock(int fd)
{
	if (fd >= 0)
		close(fd);
}
