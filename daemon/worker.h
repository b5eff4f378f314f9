/*
 * worker: a bounded pool of threads that run hv_destroy off the main loop.
 */
#pragma once
#include <stdint.h>

#include "hv.h"
#include "job.h"

struct worker_pool;

/* Start THREADS threads calling hv_destroy on HV. */
int worker_pool_new(struct hv *hv, unsigned threads, struct worker_pool **out);
/* Queue a teardown of DOMID, run at dom0 CPU PRIORITY; returns at once. */
int worker_pool_submit(struct worker_pool *pool, uint32_t domid, enum job_priority priority);
/* Polls readable while finished teardowns wait to be collected. */
int worker_pool_fd(const struct worker_pool *pool);
/* Collect one finished teardown: its domid and hv_destroy's result.
 * -EAGAIN when none is waiting. */
int worker_pool_next_done(struct worker_pool *pool, uint32_t *domid, int *result);
/* Threads idle and nothing queued or uncollected. */
int worker_pool_idle(struct worker_pool *pool);
/* Stop: idle threads are joined; a thread inside a teardown is left to the
 * process exit (the domain's state in xenstore lets a restart resume it).
 * Accepts NULL. */
void worker_pool_free(struct worker_pool *pool);
