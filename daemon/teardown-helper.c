/*
 * xenreaper-teardown: teardowns, one at a time, in a process of their own,
 * for xenreaperd (runner_spawn.c starts it; it is not meant to be run by
 * hand).  It is what `xl destroy` is without its front: single-threaded,
 * one libxl context in libxl's default child mode, so libxl forks its
 * destroy child and hotplug scripts from a process that has no other
 * thread to leave a lock held in them.  Unlike xl it serves one teardown
 * after another on the same context, opened before the first request
 * comes: loading libxl and opening a context cost more than a small
 * guest's whole destroy (see docs/benchmarks.md).  The daemon's UUID
 * guard is made once more right before each destroy (hv_destroy), since
 * the domid may have been freed and reused since the daemon looked.
 *
 * Usage: xenreaper-teardown PRIORITY [TITLE-SPACE].  It runs at PRIORITY
 * (idle, low, normal), which its children inherit, and which it could not
 * raise again without CAP_SYS_NICE: the daemon keeps one process per
 * priority in use.  Requests come one line each on standard input,
 * "DOMID UUID FLAGS [STUBDOM STUBUUID]"; given the guest's stub domain,
 * it destroys that too once the guest is gone, since libxl finds a stub
 * domain only through the guest's xenstore directory, which a teardown
 * killed halfway may have removed.  For each it writes one line to
 * descriptor 3: "DOMID RESULT [WHY]", hv_destroy's result (0 or a
 * negative errno) and, when it failed, a few words on why.  While at work
 * its command line (TITLE-SPACE, blanks the daemon passes) shows the
 * request, for ps(1).  It exits 0 at the end of its input, 2 for a bad
 * command line or request.  It dies with the daemon (PR_SET_PDEATHSIG):
 * the daemon's next start resumes the job, and libxl the destroy.
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

/* The blanks the daemon passed after PRIORITY, overwritten with what the
 * process is doing so that ps shows it (the kernel shows the argument
 * area as it is while its last byte stays NUL). */
static char *title;
static size_t title_size;

static void teardown_set_title(const char *text)
{
	if (!title_size)
		return;
	memset(title, 0, title_size);
	snprintf(title, title_size, "%s", text);
}

/* REQUEST's line "DOMID UUID FLAGS [STUBDOM STUBUUID]" into its parts. */
static int teardown_parse_request(char *line, uint32_t *domid, uint8_t uuid[HV_UUID_LEN], uint32_t *flags,
				  uint32_t *stubdom, uint8_t stubdom_uuid[HV_UUID_LEN])
{
	char *word[6], *save = NULL;
	int n = 0;

	line[strcspn(line, "\n")] = '\0';
	for (char *w = strtok_r(line, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		if (n == 6)
			return -EINVAL;
		word[n++] = w;
	}
	*stubdom = 0;
	if ((n != 3 && n != 5) || teardown_parse_u32(word[0], domid) || hv_uuid_parse(word[1], uuid) ||
	    teardown_parse_u32(word[2], flags))
		return -EINVAL;
	if (n == 5 && (teardown_parse_u32(word[3], stubdom) || !*stubdom ||
		       hv_uuid_parse(word[4], stubdom_uuid)))
		return -EINVAL;
	return 0;
}

/* One teardown, its result line written. */
static void teardown_serve(struct hv **hv, uint32_t domid, const uint8_t uuid[HV_UUID_LEN], uint32_t flags,
			   uint32_t stubdom, const uint8_t stubdom_uuid[HV_UUID_LEN])
{
	int rc, stubdom_rc;

	/* Opened again for each request until it opens. */
	rc = *hv ? 0 : hv_xen_new_teardown(hv);
	if (rc) {
		dprintf(RUNNER_RESULT_FD, "%u %d libxl could not be opened (%s)\n", domid, rc, strerror(-rc));
		return;
	}
	rc = hv_destroy(*hv, domid, uuid, flags);
	stubdom_rc = (!rc || rc == -ESRCH) && stubdom ?
		     teardown_destroy_stubdom(*hv, stubdom, stubdom_uuid) : 0;
	if (stubdom_rc)
		dprintf(RUNNER_RESULT_FD, "%u %d libxl_domain_destroy of its stub domain %u failed (%s)\n",
			domid, stubdom_rc, stubdom, strerror(-stubdom_rc));
	else
		dprintf(RUNNER_RESULT_FD, "%u %d\n", domid, rc);
}

int main(int argc, char **argv)
{
	uint8_t uuid[HV_UUID_LEN], stubdom_uuid[HV_UUID_LEN];
	char line[256], shown[256];
	enum job_priority priority;
	uint32_t domid, flags, stubdom;
	struct hv *hv = NULL;

	teardown_default_signals();
	if (log_stderr_is_journal())
		log_set_journal_sink(sd_journal_sendv);
	if ((argc != 2 && argc != 3) || job_priority_parse(argv[1], &priority)) {
		fprintf(stderr, "usage: %s idle|low|normal, requests \"DOMID UUID FLAGS [STUBDOM STUBUUID]\" "
			"on standard input (xenreaperd runs this; `xenreaper destroy` is the command for people)\n",
			argv[0]);
		return 2;
	}
	if (fcntl(RUNNER_RESULT_FD, F_SETFD, FD_CLOEXEC) < 0) {
		fprintf(stderr, "%s: descriptor %d is not open: xenreaperd runs this\n", argv[0],
			RUNNER_RESULT_FD);
		return 2;
	}
	if (argc == 3 && strlen(argv[2]) > 1) {
		title = argv[2];
		title_size = strlen(argv[2]);
		teardown_set_title("idle");
	}
	/* Not outliving the daemon: a teardown nobody waits for would run
	 * beside the one its next start resumes. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	teardown_apply_priority(priority);
	/* Ahead of the first request: a failure is reported with it. */
	hv_xen_new_teardown(&hv);
	while (fgets(line, sizeof(line), stdin)) {
		snprintf(shown, sizeof(shown), "%s", line);
		shown[strcspn(shown, "\n")] = '\0';
		if (teardown_parse_request(line, &domid, uuid, &flags, &stubdom, stubdom_uuid)) {
			fprintf(stderr, "%s: bad request '%s': expected \"DOMID UUID FLAGS [STUBDOM STUBUUID]\"\n",
				argv[0], shown);
			hv_free(hv);
			return 2;
		}
		teardown_set_title(shown);
		teardown_serve(&hv, domid, uuid, flags, stubdom, stubdom_uuid);
		teardown_set_title("idle");
	}
	hv_free(hv);
	return 0;
}
