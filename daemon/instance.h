/* instance: one xenreaperd per host, by a POSIX lock on its pid file. */
#pragma once
#include <sys/types.h>

#define INSTANCE_DEFAULT_PATH "/run/xenreaperd/xenreaperd.pid"

/* Lock PATH (creating it, and its directory) and write our pid into it;
 * *FD keeps the lock until the process ends.  -EEXIST, with *HOLDER the
 * process holding the lock (as the kernel reports it), when another
 * process holds it.  Children forked later do not hold it. */
int instance_lock(const char *path, int *fd, pid_t *holder);
/* Release the lock; accepts -1.  The file stays: the lock, not its
 * existence, says whether a daemon runs. */
void instance_unlock(int fd);
