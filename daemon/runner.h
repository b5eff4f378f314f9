/*
 * runner: where teardowns run, out of the daemon's one thread.  The
 * daemon's runner is runner_spawn.c, one helper process per teardown;
 * unit tests supply an in-process one on their stand-in hypervisor.
 */
#pragma once
#include <stdint.h>
#include <sys/types.h>

#include "hv.h"
#include "job.h"

#define RUNNER_TEXT_MAX 256
/* The descriptor a teardown process writes its one result line to
 * (teardown-helper.c): "<0 or -errno> <why>". */
#define RUNNER_RESULT_FD 3

struct runner_request {
	uint32_t domid;
	uint8_t uuid[HV_UUID_LEN];	/* the domain must still carry it */
	enum job_priority priority;	/* dom0 CPU priority of the whole teardown */
	unsigned flags;			/* hv_destroy's */
	/* Its stub domain, 0 if none: libxl finds it through the guest's
	 * xenstore directory, which a teardown that was cut short may have
	 * removed already, so the runner destroys it too. */
	uint32_t stubdom;
	uint8_t stubdom_uuid[HV_UUID_LEN];
};

struct runner_result {
	uint32_t domid;
	int result;			/* hv_destroy's: 0 or a negative errno */
	char text[RUNNER_TEXT_MAX];	/* why, when the teardown could not end as hv_destroy: or "" */
};

struct runner;

struct runner_ops {
	int (*start)(struct runner *runner, const struct runner_request *request);
	int (*next_done)(struct runner *runner, struct runner_result *out);
	int (*kill)(struct runner *runner, uint32_t domid);
	pid_t (*pid)(const struct runner *runner, uint32_t domid);
	unsigned (*busy)(const struct runner *runner);
	void (*settle_idle)(struct runner *runner);	/* may be NULL */
	void (*free)(struct runner *runner);
};

struct runner {
	const struct runner_ops *ops;
	int fd;		/* polls readable when runner_next_done has news */
};

/* Start the teardown REQUEST describes; returns at once.  One per domid. */
int runner_start(struct runner *runner, const struct runner_request *request);
/* Collect one ended teardown into *OUT; -EAGAIN when none has ended. */
int runner_next_done(struct runner *runner, struct runner_result *out);
/* End DOMID's running teardown now (it is collected as ended, -EINTR);
 * -ESRCH if none runs. */
int runner_kill(struct runner *runner, uint32_t domid);
/* The process running DOMID's teardown, 0 if none runs or it runs in
 * this process. */
pid_t runner_pid(const struct runner *runner, uint32_t domid);
/* Teardowns started and not yet collected. */
unsigned runner_busy(const struct runner *runner);
/* The daemon has started what it could: the runner ends what it keeps
 * idle beyond its need (runner_spawn: all idle helpers but one). */
void runner_settle_idle(struct runner *runner);
/* What runner_next_done polls on. */
int runner_fd(const struct runner *runner);
/* Free, ending every teardown still running (they resume when started
 * again: libxl continues a destroy where the last one stopped); accepts
 * NULL. */
void runner_free(struct runner *runner);

/* The daemon's runner: teardowns in processes of their own, HELPER_PATH
 * (xenreaper-teardown), one at a time each, whose children are reaped
 * here once it is gone; one is started at once at PRIORITY, the
 * likeliest for the first teardown. */
int runner_spawn_new(const char *helper_path, enum job_priority priority, struct runner **out);
/* The teardown helper the daemon runs: beside the daemon's own executable
 * if one is there (a build tree), else the installed one.  Malloc'd. */
int runner_helper_path(char **out);
