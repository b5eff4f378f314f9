/*
 * worker: the only threads in the daemon.  Each takes a domid from the
 * queue, calls hv_destroy (one long, preemptible hypercall behind libxl)
 * and posts the result to a done-queue, waking the main loop through an
 * eventfd.  Workers touch nothing else: all xenstore writes and state
 * changes happen on the main thread.  The pool size bounds parallel
 * teardowns; it does not schedule or prioritise them (reaper.c does).
 * A destroy that does not return keeps its thread (nothing can take a
 * thread back out of libxl); the reaper may have the pool lend another in
 * its place (worker_pool_lend), and those threads then stay, idle, until
 * the pool is freed: their number is the reaper's bound.
 *
 * Workers block every signal but SIGCHLD; the processes they fork (libxl's
 * destroy child, the hotplug scripts) do not inherit that: every child of
 * the daemon starts with an empty mask and no signal ignored, as under xl.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "log.h"
#include "worker.h"

static pthread_once_t worker_atfork_once = PTHREAD_ONCE_INIT;
static int worker_atfork_rc;

struct worker_item {
	struct worker_item *next;
	uint32_t domid;
	uint8_t uuid[HV_UUID_LEN];
	enum job_priority priority;
	unsigned flags;		/* hv_destroy's */
	int result;
};

struct worker_pool {
	struct hv *hv;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct worker_item *todo, **todo_tail;
	struct worker_item *done, **done_tail;
	unsigned busy;
	bool stopping;
	int event_fd;
	unsigned n_threads;
	pthread_t *threads;	/* grown by the main thread only */
	unsigned n_prepared;	/* threads past hv_thread_prepare */
	pthread_cond_t prepared;
};

static void worker_item_append(struct worker_item ***tail, struct worker_item *item)
{
	item->next = NULL;
	**tail = item;
	*tail = &item->next;
}

static struct worker_item *worker_item_pop(struct worker_item **head, struct worker_item ***tail)
{
	struct worker_item *item = *head;

	if (item) {
		*head = item->next;
		if (!*head)
			*tail = head;
	}
	return item;
}

/* The hypercall runs on this thread (and libxl's child, which inherits its
 * scheduling): keep dom0 responsive by running it below ordinary work. */
static void worker_apply_priority(enum job_priority priority)
{
	struct sched_param param = { 0 };
	int policy = priority == JOB_PRIORITY_IDLE ? SCHED_IDLE : SCHED_OTHER;
	int nice_value = priority == JOB_PRIORITY_LOW ? 10 : 0;
	int rc;

	rc = pthread_setschedparam(pthread_self(), policy, &param);
	if (rc)
		log_warning("worker: cannot set scheduling policy: %s", strerror(rc));
	if (policy == SCHED_OTHER && setpriority(PRIO_PROCESS, gettid(), nice_value) < 0)
		log_warning("worker: cannot set nice %d: %s", nice_value, strerror(errno));
}

/*
 * A pthread_atfork child handler: it runs in every child of fork(2) before
 * fork returns there, so before libxl's code in the child or its exec.
 * libxl forks its destroy child and each hotplug script (vif-bridge
 * offline, block remove, a disk's own script=) with fork() on the thread
 * that called libxl_domain_destroy, a worker, and never resets the mask:
 * libxl__exec resets SIGPIPE's disposition and nothing else.  Debian's
 * scripts are bash, which keeps the mask it is given, so with the worker's
 * mask their timeout(1), alarm() time-outs and SIGTERM clean-up did
 * nothing.  The workers cannot block less instead: the main thread's
 * signalfd sees SIGTERM, SIGINT and SIGHUP only while every thread blocks
 * them, or the kernel delivers them to a worker, where the default action
 * ends the daemon in mid-teardown.  libxl's fork_replacement hook would
 * reach only the forks of the one libxl context it is set on; a child
 * handler reaches every fork.
 *
 * Ignored signals go back to their default too, since SIG_IGN survives
 * exec: systemd starts services with SIGPIPE ignored, a shell's `&`
 * ignores SIGINT and SIGQUIT, and libxenstore (4.17) ignores SIGPIPE for
 * the whole process during each request the main thread makes.  Which
 * ones were ignored is read once, when the pool starts
 * (worker_child_ignored): asking the kernel about every signal in each
 * child was 64 system calls per fork, more than the rest of a destroy
 * child's.  The daemon ignores nothing itself after that; SIGPIPE, which
 * libxenstore comes and goes on, is always reset.  Handlers are left
 * alone: exec resets them, and in the destroy child, which does not exec,
 * SIGCHLD's is libxl's own, as under xl.  Only async-signal-safe calls
 * here: this is the child of a threaded process.
 */
static uint64_t worker_child_ignored;	/* bit signo - 1 */

static void worker_child_reset_signals(void)
{
	struct sigaction action;
	sigset_t none;

	memset(&action, 0, sizeof(action));
	action.sa_handler = SIG_DFL;
	sigemptyset(&action.sa_mask);
	for (int signo = 1; signo < NSIG && signo <= 64; signo++)
		if (worker_child_ignored & (UINT64_C(1) << (signo - 1)))
			sigaction(signo, &action, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/* The signals the daemon ignores now, and SIGPIPE: what every child resets. */
static void worker_read_ignored(void)
{
	struct sigaction action;
	uint64_t ignored = UINT64_C(1) << (SIGPIPE - 1);

	for (int signo = 1; signo < NSIG && signo <= 64; signo++)
		/* The query fails for libc's own signals (thread
		 * cancellation, setxid), which are never ignored. */
		if (sigaction(signo, NULL, &action) == 0 && !(action.sa_flags & SA_SIGINFO) &&
		    action.sa_handler == SIG_IGN)
			ignored |= UINT64_C(1) << (signo - 1);
	worker_child_ignored = ignored;
}

static void worker_atfork_register(void)
{
	worker_atfork_rc = -pthread_atfork(NULL, NULL, worker_child_reset_signals);
}

static void *worker_main(void *arg)
{
	struct worker_pool *pool = arg;
	struct worker_item *item;
	uint64_t one = 1;
	int rc;

	rc = hv_thread_prepare(pool->hv);
	if (rc)
		log_warning("worker: cannot prepare for teardowns (%s); "
			    "the first teardown on this thread tries again", strerror(-rc));
	pthread_mutex_lock(&pool->lock);
	pool->n_prepared++;
	pthread_cond_broadcast(&pool->prepared);
	for (;;) {
		while (!pool->stopping && !pool->todo)
			pthread_cond_wait(&pool->wake, &pool->lock);
		if (pool->stopping)
			break;
		item = worker_item_pop(&pool->todo, &pool->todo_tail);
		pool->busy++;
		pthread_mutex_unlock(&pool->lock);

		worker_apply_priority(item->priority);
		item->result = hv_destroy(pool->hv, item->domid, item->uuid, item->flags);

		pthread_mutex_lock(&pool->lock);
		pool->busy--;
		worker_item_append(&pool->done_tail, item);
		if (write(pool->event_fd, &one, sizeof(one)) < 0) {
			/* eventfd counter cannot overflow at our rates */
		}
	}
	pthread_mutex_unlock(&pool->lock);
	return NULL;
}

/* One more thread.  Workers take no signals but SIGCHLD, which libxl needs
 * for its destroy child; the main thread's signalfd handles the rest.
 * Their children do not keep this mask (worker_child_reset_signals). */
static int worker_pool_grow(struct worker_pool *pool)
{
	pthread_t *threads;
	sigset_t all, old;
	int rc;

	threads = realloc(pool->threads, (pool->n_threads + 1) * sizeof(*threads));
	if (!threads)
		return -ENOMEM;
	pool->threads = threads;
	sigfillset(&all);
	sigdelset(&all, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = -pthread_create(&pool->threads[pool->n_threads], NULL, worker_main, pool);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		return rc;
	/* So that top -H and /proc/PID/task/N/comm tell them apart. */
	pthread_setname_np(pool->threads[pool->n_threads], "xr-teardown");
	pool->n_threads++;
	/* No teardown is handed out (and none forks) before each thread has
	 * what it needs: see hv_thread_prepare. */
	pthread_mutex_lock(&pool->lock);
	while (pool->n_prepared < pool->n_threads)
		pthread_cond_wait(&pool->prepared, &pool->lock);
	pthread_mutex_unlock(&pool->lock);
	return 0;
}

int worker_pool_new(struct hv *hv, unsigned threads, struct worker_pool **out)
{
	struct worker_pool *pool;
	int rc;

	if (threads == 0)
		return -EINVAL;
	pthread_once(&worker_atfork_once, worker_atfork_register);
	if (worker_atfork_rc)
		return worker_atfork_rc;
	/* Before any thread of the pool runs: none forks before it is read. */
	worker_read_ignored();
	pool = calloc(1, sizeof(*pool));
	if (!pool)
		return -ENOMEM;
	pool->hv = hv;
	pool->todo_tail = &pool->todo;
	pool->done_tail = &pool->done;
	pthread_mutex_init(&pool->lock, NULL);
	pthread_cond_init(&pool->wake, NULL);
	pthread_cond_init(&pool->prepared, NULL);
	pool->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (pool->event_fd < 0) {
		rc = -errno;
		worker_pool_free(pool);
		return rc;
	}
	for (unsigned i = 0; i < threads; i++) {
		rc = worker_pool_grow(pool);
		if (rc) {
			worker_pool_free(pool);
			return rc;
		}
	}
	*out = pool;
	return 0;
}

int worker_pool_lend(struct worker_pool *pool)
{
	return worker_pool_grow(pool);
}

unsigned worker_pool_threads(const struct worker_pool *pool)
{
	return pool->n_threads;
}

int worker_pool_submit(struct worker_pool *pool, uint32_t domid, const uint8_t uuid[HV_UUID_LEN],
		       enum job_priority priority, unsigned flags)
{
	struct worker_item *item;

	item = calloc(1, sizeof(*item));
	if (!item)
		return -ENOMEM;
	item->domid = domid;
	memcpy(item->uuid, uuid, HV_UUID_LEN);
	item->priority = priority;
	item->flags = flags;
	pthread_mutex_lock(&pool->lock);
	worker_item_append(&pool->todo_tail, item);
	pthread_cond_signal(&pool->wake);
	pthread_mutex_unlock(&pool->lock);
	return 0;
}

int worker_pool_fd(const struct worker_pool *pool)
{
	return pool->event_fd;
}

int worker_pool_next_done(struct worker_pool *pool, uint32_t *domid, int *result)
{
	struct worker_item *item;
	uint64_t count;

	pthread_mutex_lock(&pool->lock);
	item = worker_item_pop(&pool->done, &pool->done_tail);
	if (!pool->done && read(pool->event_fd, &count, sizeof(count)) < 0) {
		/* already drained: EAGAIN */
	}
	pthread_mutex_unlock(&pool->lock);
	if (!item)
		return -EAGAIN;
	*domid = item->domid;
	*result = item->result;
	free(item);
	return 0;
}

int worker_pool_idle(struct worker_pool *pool)
{
	int idle;

	pthread_mutex_lock(&pool->lock);
	idle = !pool->busy && !pool->todo && !pool->done;
	pthread_mutex_unlock(&pool->lock);
	return idle;
}

unsigned worker_pool_busy(struct worker_pool *pool)
{
	unsigned busy;

	pthread_mutex_lock(&pool->lock);
	busy = pool->busy;
	pthread_mutex_unlock(&pool->lock);
	return busy;
}

void worker_pool_free(struct worker_pool *pool)
{
	struct worker_item *item;

	if (!pool)
		return;
	pthread_mutex_lock(&pool->lock);
	pool->stopping = true;
	/* Queued teardowns never start: their jobs stay queued in xenstore. */
	while ((item = worker_item_pop(&pool->todo, &pool->todo_tail)))
		free(item);
	pthread_cond_broadcast(&pool->wake);
	pthread_mutex_unlock(&pool->lock);
	/* A thread inside a teardown uses the hv until it returns: wait for
	 * it, so that nothing it touches is freed under it. */
	for (unsigned i = 0; i < pool->n_threads; i++)
		pthread_join(pool->threads[i], NULL);
	while ((item = worker_item_pop(&pool->done, &pool->done_tail)))
		free(item);
	if (pool->event_fd >= 0)
		close(pool->event_fd);
	pthread_mutex_destroy(&pool->lock);
	pthread_cond_destroy(&pool->wake);
	pthread_cond_destroy(&pool->prepared);
	free(pool->threads);
	free(pool);
}
