/*
 * forkhang: an LD_PRELOAD fault for xenreaperd on real Xen.  The first
 * fork(2) after the file named by XB_FORKHANG_ARM appears (it is removed
 * then, so it fires once) gives a child that waits for ever on a mutex a
 * thread of the parent held at the fork: what libxl's destroy child does
 * when it is forked while another worker is inside libxencall's buffer
 * cache, a race too rare to wait for.  The child's pid goes into
 * XB_FORKHANG_ARM.pid.  Every other fork, and the parent's side, is the
 * real one.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t forkhang_held = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t forkhang_gate = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t forkhang_cond = PTHREAD_COND_INITIALIZER;
static int forkhang_holding, forkhang_release;

/* The other thread inside its lock at the fork. */
static void *forkhang_holder(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&forkhang_held);
	pthread_mutex_lock(&forkhang_gate);
	forkhang_holding = 1;
	pthread_cond_broadcast(&forkhang_cond);
	while (!forkhang_release)
		pthread_cond_wait(&forkhang_cond, &forkhang_gate);
	pthread_mutex_unlock(&forkhang_gate);
	pthread_mutex_unlock(&forkhang_held);
	return NULL;
}

pid_t fork(void)
{
	static pid_t (*real_fork)(void);
	const char *arm = getenv("XB_FORKHANG_ARM");
	char path[4096];
	pthread_t thread;
	FILE *f;
	pid_t pid;

	if (!real_fork)
		real_fork = (pid_t (*)(void))dlsym(RTLD_NEXT, "fork");
	if (!arm || unlink(arm) || pthread_create(&thread, NULL, forkhang_holder, NULL))
		return real_fork();
	pthread_mutex_lock(&forkhang_gate);
	while (!forkhang_holding)
		pthread_cond_wait(&forkhang_cond, &forkhang_gate);
	pthread_mutex_unlock(&forkhang_gate);
	pid = real_fork();
	if (pid == 0) {
		pthread_mutex_lock(&forkhang_held);	/* never returns */
		_exit(99);
	}
	pthread_mutex_lock(&forkhang_gate);
	forkhang_release = 1;
	pthread_cond_broadcast(&forkhang_cond);
	pthread_mutex_unlock(&forkhang_gate);
	pthread_join(thread, NULL);
	snprintf(path, sizeof(path), "%s.pid", arm);
	f = fopen(path, "we");
	if (f) {
		fprintf(f, "%ld\n", (long)pid);
		fclose(f);
	}
	return pid;
}
