/*
 * forklock: ends the children fork(2) left waiting for ever on a lock
 * another thread held (libxl's destroy child on libxencall's cache mutex).
 */
#pragma once

/* Kill every child of this process's threads that runs this program
 * (never exec'd), has one thread and sleeps in a futex wait, logging
 * each; *KILLED says how many.  0, or -errno if /proc cannot be read. */
int forklock_reap(unsigned *killed);
