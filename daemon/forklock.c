/*
 * forklock: ends the daemon's children that fork(2) left waiting for ever
 * on a lock.  A child of a threaded process starts with every mutex as it
 * was at the fork, and one that another thread held then is never
 * released in the child.  libxl forks a domain's destroy child from the
 * worker that calls libxl_domain_destroy, while other workers run libxl in
 * contexts of their own; libxencall keeps its buffer cache under one
 * process-wide mutex with no fork handler (cache_mutex in
 * tools/libs/call/buffer.c; libxentoolcore's handle list is the same), so
 * a child forked while another worker was inside it waits on it before
 * its first hypercall, and that teardown with it, with nothing released.
 * hv_xen.c keeps the daemon's own hypercalls out of the way of a fork;
 * the ones libxl makes inside another worker's teardown it cannot reach.
 *
 * Such a child is told apart exactly: it runs the daemon's own program
 * (forked, never exec'd), has one thread, and sleeps in a futex wait,
 * which in a single-threaded process nothing can end.  It is killed, the
 * libxl call that forked it fails, and reaper.c tries that teardown again.
 * Hotplug scripts (exec'd), busy children and children with threads are
 * never touched.  Only the children of the daemon's own threads are read
 * (/proc/self/task/T/children), so a look costs a few reads and a pidfd
 * per child.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/futex.h>

#include "forklock.h"
#include "log.h"
#include "procfs.h"

/* Whether PID, a child of SELF running SELF_EXE, is single-threaded and
 * asleep in a futex wait. */
static bool forklock_is_deadlocked(pid_t pid, pid_t self, const char *self_exe)
{
	char buf[512], exe[PATH_MAX], *p;
	unsigned long nr, op;
	long ppid, threads;
	char state;
	ssize_t n;

	if (procfs_read("/proc", pid, "stat", buf, sizeof(buf)) <= 0)
		return false;
	/* comm may hold spaces and parentheses: the fields follow the last. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %c %ld %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %ld",
			 &state, &ppid, &threads) != 3)
		return false;
	if (ppid != self || threads != 1 || state != 'S')
		return false;
	snprintf(buf, sizeof(buf), "/proc/%ld/exe", (long)pid);
	n = readlink(buf, exe, sizeof(exe) - 1);
	if (n < 0)
		return false;
	exe[n] = '\0';
	if (strcmp(exe, self_exe))
		return false;	/* exec'd: a hotplug script, not a fork of ours */
	/* "202 0x7f.. 0x80 0x2 ...": the call and its arguments while asleep. */
	if (procfs_read("/proc", pid, "syscall", buf, sizeof(buf)) <= 0 ||
	    sscanf(buf, "%lu %*s %lx", &nr, &op) != 2 || nr != SYS_futex)
		return false;
	switch (op & FUTEX_CMD_MASK) {
	case FUTEX_WAIT:
	case FUTEX_WAIT_BITSET:
	case FUTEX_LOCK_PI:
		return true;
	default:
		return false;
	}
}

/* Kill PID if it is deadlocked; true if it was killed. */
static bool forklock_kill(pid_t pid, pid_t self, const char *self_exe)
{
	bool killed = false;
	int fd;

	/* The one look that decides, made with the process pinned: the signal
	 * goes through the pidfd, so it reaches the process that was looked at
	 * or nothing (ESRCH), never one that took a reaped child's pid. */
	fd = pidfd_open(pid, 0);
	if (fd < 0)
		return false;
	if (forklock_is_deadlocked(pid, self, self_exe))
		killed = pidfd_send_signal(fd, SIGKILL, NULL, 0) == 0;
	close(fd);
	return killed;
}

/* The children of thread TID, killed where deadlocked; how many. */
static unsigned forklock_reap_thread(pid_t self, pid_t tid, const char *self_exe)
{
	char list[4096], *word, *save = NULL;
	unsigned killed = 0;
	pid_t pid;

	if (procfs_read("/proc/self/task", tid, "children", list, sizeof(list)) <= 0)
		return 0;
	for (word = strtok_r(list, " \n", &save); word; word = strtok_r(NULL, " \n", &save)) {
		pid = (pid_t)strtol(word, NULL, 10);
		if (pid <= 0 || !forklock_kill(pid, self, self_exe))
			continue;
		killed++;
		log_warning("killed pid %ld, a child libxl forked from xenreaperd and left waiting for "
			    "ever on a lock another thread held at the fork (libxencall's, before any "
			    "hypercall): the teardown it was for fails and is tried again",
			    (long)pid);
	}
	return killed;
}

int forklock_reap(unsigned *killed)
{
	char self_exe[PATH_MAX];
	struct dirent *entry;
	pid_t self = getpid();
	ssize_t n;
	DIR *tasks;

	*killed = 0;
	n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	if (n < 0)
		return -errno;
	self_exe[n] = '\0';
	tasks = opendir("/proc/self/task");
	if (!tasks)
		return -errno;
	while ((entry = readdir(tasks)))
		if (entry->d_name[0] != '.')
			*killed += forklock_reap_thread(self, (pid_t)strtol(entry->d_name, NULL, 10),
							self_exe);
	closedir(tasks);
	return 0;
}
