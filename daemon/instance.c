/*
 * instance: makes sure only one xenreaperd runs on a host, whether it was
 * started by systemd or by hand.  A second one would resume the first
 * one's jobs and destroy the same domains twice, so it must refuse before
 * it touches xenstore.  The kernel's flock(2) on a pid file does the
 * deciding: it goes with the process, so a daemon killed with -9 leaves no
 * stale lock.  The file is never removed (removing a locked file would let
 * two daemons lock two different files).  It does not know about xenstore
 * or systemd.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "instance.h"

/* The pid written in the file FD, 0 if none is readable. */
static pid_t instance_read_holder(int fd)
{
	char text[24];
	ssize_t len;
	long pid;

	len = pread(fd, text, sizeof(text) - 1, 0);
	if (len <= 0)
		return 0;
	text[len] = '\0';
	pid = strtol(text, NULL, 10);
	return pid > 0 ? (pid_t)pid : 0;
}

int instance_lock(const char *path, int *fd_out, pid_t *holder)
{
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
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		rc = errno == EWOULDBLOCK ? -EEXIST : -errno;
		if (rc == -EEXIST)
			*holder = instance_read_holder(fd);
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
