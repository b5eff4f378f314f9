/* instance: one xenreaperd per host, by an flock(2) on its pid file. */
#pragma once
#include <sys/types.h>

#define INSTANCE_DEFAULT_PATH "/run/xenreaperd/xenreaperd.pid"

/* Lock PATH (creating it, and its directory) and write our pid into it;
 * *FD keeps the lock until the process ends.  -EEXIST, with *HOLDER the
 * running daemon's pid (0 if it has not written it yet), when another
 * process holds it. */
int instance_lock(const char *path, int *fd, pid_t *holder);
/* Release the lock; accepts -1.  The file stays: the lock, not its
 * existence, says whether a daemon runs. */
void instance_unlock(int fd);
