/*
 * worker: a bounded pool of threads that run hv_destroy off the main loop.
 */
#pragma once
#include <stdint.h>

#include "hv.h"
#include "job.h"

struct worker_pool;

/* Start THREADS threads calling hv_destroy on HV, each past
 * hv_thread_prepare before this returns.  From then on every process the
 * daemon forks starts with no signal blocked or ignored. */
int worker_pool_new(struct hv *hv, unsigned threads, struct worker_pool **out);
/* Queue a teardown of DOMID, which must still carry UUID when a worker
 * gets to it, run at dom0 CPU PRIORITY with hv_destroy FLAGS; returns at
 * once. */
int worker_pool_submit(struct worker_pool *pool, uint32_t domid, const uint8_t uuid[HV_UUID_LEN],
		       enum job_priority priority, unsigned flags);
/* One thread more, for good (past hv_thread_prepare when this returns): a teardown that does not return keeps its
 * own, and the caller, which bounds how often it lends, may then submit
 * one more at once. */
int worker_pool_lend(struct worker_pool *pool);
/* Threads the pool has (lent ones included). */
unsigned worker_pool_threads(const struct worker_pool *pool);
/* Polls readable while finished teardowns wait to be collected. */
int worker_pool_fd(const struct worker_pool *pool);
/* Collect one finished teardown: its domid and hv_destroy's result.
 * -EAGAIN when none is waiting. */
int worker_pool_next_done(struct worker_pool *pool, uint32_t *domid, int *result);
/* Threads idle and nothing queued or uncollected. */
int worker_pool_idle(struct worker_pool *pool);
/* Teardowns running on a thread now (queued ones not counted). */
unsigned worker_pool_busy(struct worker_pool *pool);
/* Stop: drop what is queued, wait for the teardowns already running to
 * return, join every thread and free.  Blocks for as long as those take;
 * a caller that cannot wait must not call it while worker_pool_busy(),
 * and must then leave the hv the workers use alone too.  Accepts NULL. */
void worker_pool_free(struct worker_pool *pool);
