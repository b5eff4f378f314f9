/*
 * xenreaper-teardown: one teardown, in a process of its own, for
 * xenreaperd (runner_spawn.c starts it; it is not meant to be run by
 * hand).  It is what `xl destroy` is without its front: single-threaded,
 * one libxl context in libxl's default child mode, so libxl forks its
 * destroy child and hotplug scripts from a process that has no other
 * thread to leave a lock held in them.  The daemon's UUID guard is made
 * once more right before the destroy (hv_destroy), since the domid may
 * have been freed and reused since the daemon looked.
 *
 * Usage: xenreaper-teardown DOMID UUID FLAGS PRIORITY [STUBDOM STUBUUID].
 * It runs at PRIORITY (idle, low, normal), which its children inherit.
 * Given the guest's stub domain, it destroys that too once the guest is
 * gone: libxl finds a stub domain only through the guest's xenstore
 * directory, which a teardown killed halfway may have removed.  It writes
 * one line to descriptor 3: hv_destroy's result (0 or a negative errno)
 * and, when it failed, a few words on why.  Exit status 0 whenever that
 * line was written; 2 for a bad command line.  It dies with the daemon
 * (PR_SET_PDEATHSIG): the daemon's next start resumes the job, and libxl
 * the destroy.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <systemd/sd-journal.h>

#include "hv.h"
#include "job.h"
#include "log.h"
#include "runner.h"

static int teardown_parse_u32(const char *text, uint32_t *out)
{
	unsigned long value;
	char *end;

	errno = 0;
	value = strtoul(text, &end, 10);
	if (errno || end == text || *end || value > UINT32_MAX || text[0] == '-')
		return -EINVAL;
	*out = value;
	return 0;
}

/* Every signal at its default, as under xl, for libxl's children to
 * inherit (SIG_IGN survives exec).  glibc's posix_spawn leaves its own
 * two, 32 and 33, ignored in the child it execs, and glibc's sigaction
 * refuses to touch them: the kernel is asked directly. */
static void teardown_default_signals(void)
{
	struct {
		void *handler;
		unsigned long flags;
		void *restorer;
		uint64_t mask;
	} dfl = { SIG_DFL, 0, NULL, 0 };

	for (int signo = 1; signo <= 64; signo++)
		if (signo != SIGKILL && signo != SIGSTOP)
			syscall(SYS_rt_sigaction, signo, &dfl, NULL, sizeof(dfl.mask));
}

/* The whole teardown, libxl's children with it, below ordinary work. */
static void teardown_apply_priority(enum job_priority priority)
{
	struct sched_param param = { 0 };

	if (priority == JOB_PRIORITY_IDLE) {
		if (sched_setscheduler(0, SCHED_IDLE, &param) < 0)
			log_warning("cannot run at priority idle (SCHED_IDLE): %s", strerror(errno));
	} else if (setpriority(PRIO_PROCESS, 0, priority == JOB_PRIORITY_LOW ? 10 : 0) < 0) {
		log_warning("cannot run at priority %s: %s", job_priority_name(priority), strerror(errno));
	}
}

static const char *teardown_why(int rc)
{
	switch (rc) {
	case -EACCES:
		return "libxl could not be opened";
	default:
		return "";
	}
}

/* After the guest: its stub domain, if libxl did not destroy it with the
 * guest.  Gone (-ESRCH), or its domid taken by another domain since
 * (-ESTALE), is what it should be. */
static int teardown_destroy_stubdom(struct hv *hv, uint32_t stubdom, const uint8_t uuid[HV_UUID_LEN])
{
	int rc;

	rc = hv_destroy(hv, stubdom, uuid, 0);
	if (rc == -ESRCH || rc == -ESTALE)
		return 0;
	return rc;
}

int main(int argc, char **argv)
{
	uint8_t uuid[HV_UUID_LEN], stubdom_uuid[HV_UUID_LEN];
	enum job_priority priority;
	uint32_t domid, flags, stubdom = 0;
	struct hv *hv = NULL;
	int rc, stubdom_rc;

	teardown_default_signals();
	if (log_stderr_is_journal())
		log_set_journal_sink(sd_journal_sendv);
	if ((argc != 5 && argc != 7) || teardown_parse_u32(argv[1], &domid) ||
	    hv_uuid_parse(argv[2], uuid) || teardown_parse_u32(argv[3], &flags) ||
	    job_priority_parse(argv[4], &priority) ||
	    (argc == 7 && (teardown_parse_u32(argv[5], &stubdom) || !stubdom ||
			   hv_uuid_parse(argv[6], stubdom_uuid)))) {
		fprintf(stderr, "usage: %s DOMID UUID FLAGS idle|low|normal [STUBDOM STUBUUID] "
			"(xenreaperd runs this; `xenreaper destroy` is the command for people)\n", argv[0]);
		return 2;
	}
	if (fcntl(RUNNER_RESULT_FD, F_SETFD, FD_CLOEXEC) < 0) {
		fprintf(stderr, "%s: descriptor %d is not open: xenreaperd runs this\n", argv[0],
			RUNNER_RESULT_FD);
		return 2;
	}
	/* Not outliving the daemon: a teardown nobody waits for would run
	 * beside the one its next start resumes. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	teardown_apply_priority(priority);
	rc = hv_xen_new_teardown(&hv);
	if (!rc)
		rc = hv_destroy(hv, domid, uuid, flags);
	stubdom_rc = (!rc || rc == -ESRCH) && stubdom ?
		     teardown_destroy_stubdom(hv, stubdom, stubdom_uuid) : 0;
	if (stubdom_rc)
		dprintf(RUNNER_RESULT_FD, "%d libxl_domain_destroy of its stub domain %u failed (%s)\n",
			stubdom_rc, stubdom, strerror(-stubdom_rc));
	else
		dprintf(RUNNER_RESULT_FD, "%d %s\n", rc, teardown_why(rc));
	hv_free(hv);
	return 0;
}
