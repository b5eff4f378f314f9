/*
 * fake_runner: the runner seam in-process, for unit tests: each teardown
 * on a thread of its own calling hv_destroy on the stand-in hypervisor,
 * whose state the test holds in this process.  A killed teardown is
 * reported ended at once (-EINTR), as the daemon's runner reports a
 * killed process; its thread runs on in the fake and its result is
 * dropped.  Test tooling only: the daemon is single-threaded.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "fake_runner.h"

struct fake_teardown {
	struct fake_teardown *next;
	struct fake_runner *owner;
	pthread_t thread;
	struct runner_request request;
	struct runner_result result;
	bool ended;		/* its hv_destroy returned */
	bool collected;		/* reported, by return or by kill */
	bool killed;
};

struct fake_runner {
	struct runner base;
	struct hv *hv;
	pthread_mutex_t lock;
	struct fake_teardown *all;	/* started, until reported and returned */
	unsigned busy;
	unsigned started;
};

static struct fake_runner *fake_runner_of(const struct runner *runner)
{
	return (struct fake_runner *)runner;
}

static void fake_runner_wake(struct fake_runner *fr)
{
	uint64_t one = 1;

	if (write(fr->base.fd, &one, sizeof(one)) < 0) {
		/* the counter cannot overflow at a test's rates */
	}
}

static void *fake_runner_main(void *arg)
{
	struct fake_teardown *t = arg;
	struct fake_runner *fr = t->owner;
	int result, stubdom_result = 0;

	result = hv_destroy(fr->hv, t->request.domid, t->request.uuid, t->request.flags);
	/* As xenreaper-teardown: the stub domain after the guest. */
	if ((!result || result == -ESRCH) && t->request.stubdom)
		stubdom_result = hv_destroy(fr->hv, t->request.stubdom, t->request.stubdom_uuid, 0);
	if (stubdom_result == -ESRCH || stubdom_result == -ESTALE)
		stubdom_result = 0;
	pthread_mutex_lock(&fr->lock);
	t->ended = true;
	if (!t->killed && stubdom_result) {
		t->result.result = stubdom_result;
		snprintf(t->result.text, sizeof(t->result.text),
			 "libxl_domain_destroy of its stub domain %u failed (%s)", t->request.stubdom,
			 strerror(-stubdom_result));
	} else if (!t->killed) {
		t->result.result = result;
	}
	pthread_mutex_unlock(&fr->lock);
	fake_runner_wake(fr);
	return NULL;
}

/* Not yet collected and still running for DOMID. */
static struct fake_teardown *fake_runner_find(const struct fake_runner *fr, uint32_t domid)
{
	for (struct fake_teardown *t = fr->all; t; t = t->next)
		if (t->request.domid == domid && !t->collected && !t->ended && !t->killed)
			return t;
	return NULL;
}

static int fake_runner_start(struct runner *runner, const struct runner_request *request)
{
	struct fake_runner *fr = fake_runner_of(runner);
	struct fake_teardown *t = calloc(1, sizeof(*t));
	int rc;

	if (!t)
		return -ENOMEM;
	t->owner = fr;
	t->request = *request;
	t->result.domid = request->domid;
	pthread_mutex_lock(&fr->lock);
	rc = -pthread_create(&t->thread, NULL, fake_runner_main, t);
	if (!rc) {
		t->next = fr->all;
		fr->all = t;
		fr->busy++;
		fr->started++;
	}
	pthread_mutex_unlock(&fr->lock);
	if (rc)
		free(t);
	return rc;
}

/* Join and free the teardowns reported whose thread has returned: an
 * unjoined thread keeps its stack mapped, and runs of many thousand
 * teardowns (bench-scale) would run out of mappings, and slow every walk
 * of the list.  Called with the lock held; a returned thread no longer
 * takes it. */
static void fake_runner_prune(struct fake_runner *fr)
{
	struct fake_teardown **link = &fr->all, *t;

	while ((t = *link)) {
		if (t->collected && t->ended) {
			*link = t->next;
			pthread_join(t->thread, NULL);
			free(t);
		} else {
			link = &t->next;
		}
	}
}

static int fake_runner_next_done(struct runner *runner, struct runner_result *out)
{
	struct fake_runner *fr = fake_runner_of(runner);
	struct fake_teardown *found = NULL;
	uint64_t count;

	pthread_mutex_lock(&fr->lock);
	fake_runner_prune(fr);
	for (struct fake_teardown *t = fr->all; t; t = t->next)
		if (!t->collected && (t->ended || t->killed))
			found = t;	/* the oldest: the list is newest first */
	if (found) {
		found->collected = true;
		*out = found->result;
		fr->busy--;
	} else if (read(fr->base.fd, &count, sizeof(count)) < 0) {
		/* drained already */
	}
	pthread_mutex_unlock(&fr->lock);
	return found ? 0 : -EAGAIN;
}

static int fake_runner_kill(struct runner *runner, uint32_t domid)
{
	struct fake_runner *fr = fake_runner_of(runner);
	struct fake_teardown *t;

	pthread_mutex_lock(&fr->lock);
	t = fake_runner_find(fr, domid);
	if (t) {
		t->killed = true;
		t->result.result = -EINTR;
		snprintf(t->result.text, sizeof(t->result.text), "its teardown was ended to take it back");
	}
	pthread_mutex_unlock(&fr->lock);
	if (!t)
		return -ESRCH;
	fake_runner_wake(fr);
	return 0;
}

static pid_t fake_runner_pid(const struct runner *runner, uint32_t domid)
{
	(void)runner;
	(void)domid;
	return 0;
}

static unsigned fake_runner_busy(const struct runner *runner)
{
	struct fake_runner *fr = fake_runner_of(runner);
	unsigned busy;

	pthread_mutex_lock(&fr->lock);
	busy = fr->busy;
	pthread_mutex_unlock(&fr->lock);
	return busy;
}

static void fake_runner_free(struct runner *runner)
{
	struct fake_runner *fr = fake_runner_of(runner);
	struct fake_teardown *t;

	/* A thread inside the fake uses the hv until it returns: the test
	 * releases what it holds before this. */
	while ((t = fr->all)) {
		fr->all = t->next;
		pthread_join(t->thread, NULL);
		free(t);
	}
	if (fr->base.fd >= 0)
		close(fr->base.fd);
	pthread_mutex_destroy(&fr->lock);
	free(fr);
}

static const struct runner_ops fake_runner_ops = {
	.start = fake_runner_start,
	.next_done = fake_runner_next_done,
	.kill = fake_runner_kill,
	.pid = fake_runner_pid,
	.busy = fake_runner_busy,
	.free = fake_runner_free,
};

int fake_runner_new(struct hv *hv, struct runner **out)
{
	struct fake_runner *fr = calloc(1, sizeof(*fr));

	if (!fr)
		return -ENOMEM;
	fr->base.ops = &fake_runner_ops;
	fr->hv = hv;
	pthread_mutex_init(&fr->lock, NULL);
	fr->base.fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (fr->base.fd < 0) {
		free(fr);
		return -errno;
	}
	*out = &fr->base;
	return 0;
}

bool fake_runner_idle(const struct runner *runner)
{
	struct fake_runner *fr = fake_runner_of(runner);
	bool idle = true;

	pthread_mutex_lock(&fr->lock);
	for (struct fake_teardown *t = fr->all; t; t = t->next)
		if (!t->collected)
			idle = false;
	pthread_mutex_unlock(&fr->lock);
	return idle;
}

unsigned fake_runner_started(const struct runner *runner)
{
	struct fake_runner *fr = fake_runner_of(runner);
	unsigned n;

	pthread_mutex_lock(&fr->lock);
	n = fr->started;
	pthread_mutex_unlock(&fr->lock);
	return n;
}

unsigned fake_runner_running(const struct runner *runner)
{
	struct fake_runner *fr = fake_runner_of(runner);
	unsigned n = 0;

	pthread_mutex_lock(&fr->lock);
	for (struct fake_teardown *t = fr->all; t; t = t->next)
		n += !t->ended && !t->killed;
	pthread_mutex_unlock(&fr->lock);
	return n;
}
