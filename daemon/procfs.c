/*
 * procfs: reads one small file of a process (/proc/PID/stat, syscall,
 * cmdline, comm, environ, or a thread's children) whole into the caller's
 * buffer, for the modules that look at processes (stuck.c).
 * The kernel makes such a file as it is read and may hand it over in more
 * than one read(2) (cmdline and environ a page at a time), so it reads to
 * end of file or a full buffer.  The root is the caller's, so that a unit
 * test can point it at a stand-in tree.  It does not parse, allocate or
 * keep state, and does not say when a file was longer than the buffer:
 * callers size their buffers for what they parse.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "procfs.h"

ssize_t procfs_read(const char *root, pid_t pid, const char *leaf, char *buf, size_t len)
{
	char path[PATH_MAX];
	size_t got = 0;
	ssize_t rc, n;
	int fd;

	if (!len)
		return -EINVAL;
	if ((size_t)snprintf(path, sizeof(path), "%s/%ld/%s", root, (long)pid, leaf) >= sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (got < len - 1) {
		n = read(fd, buf + got, len - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			goto out;
		}
		if (!n)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	rc = (ssize_t)got;
out:
	close(fd);
	return rc;
}
