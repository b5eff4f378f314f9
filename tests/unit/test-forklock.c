/*
 * forklock on real processes: a child forked while another thread held a
 * mutex, which waits on it for ever, is killed; a forked child asleep
 * elsewhere, an exec'd child and a forked child with threads of its own
 * are left alone.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "forklock.h"
#include "tap.h"

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static bool holding, release_it;

/* Another thread's lock, as libxencall's cache mutex is at a bad fork. */
static void *holder(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&held);
	pthread_mutex_lock(&gate);
	holding = true;
	pthread_cond_broadcast(&gate_cond);
	while (!release_it)
		pthread_cond_wait(&gate_cond, &gate);
	pthread_mutex_unlock(&gate);
	pthread_mutex_unlock(&held);
	return NULL;
}

static void *idle_thread(void *unused)
{
	(void)unused;
	pause();
	return NULL;
}

/* Whether PID sleeps in the system call NR (waits up to 10 s for it). */
static bool wait_in_syscall(pid_t pid, long nr)
{
	char path[64];
	long got;

	snprintf(path, sizeof(path), "/proc/%ld/syscall", (long)pid);
	for (int i = 0; i < 1000; i++) {
		FILE *f = fopen(path, "re");

		if (f) {
			if (fscanf(f, "%ld", &got) != 1)
				got = -1;
			fclose(f);
			if (got == nr)
				return true;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
	}
	return false;
}

static bool alive(pid_t pid)
{
	return waitpid(pid, NULL, WNOHANG) == 0;
}

static void end_child(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

int main(void)
{
	pid_t locked, asleep, execd, threaded;
	pthread_t thread;
	unsigned killed = 99;
	int status;

	/* A forked child asleep in nanosleep: not a lock. */
	asleep = fork();
	if (asleep == 0) {
		sleep(60);
		_exit(0);
	}
	/* An exec'd child, as a hotplug script is. */
	execd = fork();
	if (execd == 0) {
		execlp("sleep", "sleep", "60", (char *)NULL);
		_exit(127);
	}
	/* A forked child with a thread of its own, its main thread waiting
	 * on a mutex that thread could release. */
	threaded = fork();
	if (threaded == 0) {
		pthread_mutex_t own = PTHREAD_MUTEX_INITIALIZER;

		pthread_create(&thread, NULL, idle_thread, NULL);
		pthread_mutex_lock(&own);
		pthread_mutex_lock(&own);	/* a futex wait, with two threads */
		_exit(0);
	}
	ok(wait_in_syscall(threaded, SYS_futex), "a threaded child sleeps in a futex wait");
	ok(wait_in_syscall(asleep, SYS_clock_nanosleep) && wait_in_syscall(execd, SYS_clock_nanosleep),
	   "a forked child and an exec'd one sleep in clock_nanosleep");
	ok(forklock_reap(&killed) == 0, "forklock_reap reads this process's children");
	is_int(killed, 0, "  and kills none: no child waits on a lock it inherited");
	ok(alive(asleep) && alive(execd) && alive(threaded), "  all three still run");

	/* The fork of libxl's destroy child while another worker is inside
	 * libxencall: the child waits for ever on the inherited mutex. */
	pthread_create(&thread, NULL, holder, NULL);
	pthread_mutex_lock(&gate);
	while (!holding)
		pthread_cond_wait(&gate_cond, &gate);
	pthread_mutex_unlock(&gate);
	locked = fork();
	if (locked == 0) {
		pthread_mutex_lock(&held);
		_exit(0);
	}
	pthread_mutex_lock(&gate);
	release_it = true;
	pthread_cond_broadcast(&gate_cond);
	pthread_mutex_unlock(&gate);
	pthread_join(thread, NULL);
	ok(wait_in_syscall(locked, SYS_futex), "a child forked while another thread held a mutex waits on it");
	nanosleep(&(struct timespec){ .tv_nsec = 200 * 1000 * 1000 }, NULL);
	ok(alive(locked), "  and still waits after the lock was released in the parent");

	ok(forklock_reap(&killed) == 0, "forklock_reap looks again");
	is_int(killed, 1, "  and kills one child");
	ok(waitpid(locked, &status, 0) == locked && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	   "  the one that waited on the inherited lock, by SIGKILL");
	ok(alive(asleep) && alive(execd) && alive(threaded), "  the other three still run");
	ok(forklock_reap(&killed) == 0 && killed == 0, "a look after that kills nothing");

	end_child(asleep);
	end_child(execd);
	end_child(threaded);
	return tap_done();
}
