/*
 * xenreaper.h: the client library of xenreaperd, the dom0 daemon that tears
 * Xen domains down in the background.  A client names a domain, asks for its
 * teardown (a request node in xenstore carrying the domain's UUID) and can
 * then follow the daemon's job for it until it is done or has failed.
 *
 * Every function returns 0 (or the non-negative value it documents) on
 * success and a negative errno value on failure; after a failure
 * xenreaper_last_error() holds a sentence saying what went wrong.  Strings
 * handed out as char * are malloc'd and released with free().  A handle is
 * not thread-safe: use one per thread.  The library talks to xenstore and,
 * to learn a domain's UUID, to the hypervisor; it never uses libxl, so it
 * is cheap to load and call.  It must run as root in the domain that runs
 * xenreaperd (normally dom0).
 *
 * Build with: pkg-config --cflags --libs libxenreaper
 */
#ifndef XENREAPER_H
#define XENREAPER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A UUID as text: 36 lower-case characters and the NUL. */
#define XENREAPER_UUID_LEN 37

/* How long, by default, the waits give a xenreaperd that says it is
 * running to answer a liveness check (xenreaper_set_answer_timeout), and
 * the shortest time they accept. */
#define XENREAPER_ANSWER_TIMEOUT_MS 10000
#define XENREAPER_ANSWER_TIMEOUT_MIN_MS 1000

struct xenreaper;

enum xenreaper_state {
	XENREAPER_STATE_REQUESTED,	/* request written, not yet taken by xenreaperd */
	XENREAPER_STATE_QUEUED,
	XENREAPER_STATE_DESTROYING,
	XENREAPER_STATE_ZOMBIE,		/* dead, pages still referenced; retried */
	XENREAPER_STATE_SCRUBBING,	/* released pages are being scrubbed */
	XENREAPER_STATE_DONE,
	XENREAPER_STATE_FAILED,
	XENREAPER_STATE_UNKNOWN,	/* a state this library does not know */
	XENREAPER_STATE_STUCK,		/* its destroy has not returned, nothing released,
					 * for the policy's stuck-after; held_by says on
					 * what it waits (after UNKNOWN: the values above
					 * keep their numbers) */
};

/* One teardown, as xenreaperd publishes it under /tool/xenreaper/job/<domid>
 * (see xenreaper-xenstore(7)), read in one xenstore transaction so that no
 * two fields come from different moments.  Text that does not fit is
 * truncated; times are unix milliseconds, 0 when not (yet) known.  Fields
 * go: who, why and how, how far, when, what went wrong. */
struct xenreaper_status {
	uint32_t domid;
	enum xenreaper_state state;
	char state_name[16];		/* the state as xenstore spells it */
	char uuid[XENREAPER_UUID_LEN];	/* the domain incarnation torn down */
	char name[128];			/* guest name when requested, may be "" */
	char pool[64];			/* cpupool, may be "" */
	char reason[16];		/* request, poweroff, crash, or orphan (a dead
					 * domain another toolstack left behind) */
	char policy[16];		/* deferred or sync (scrubbing) */
	char priority[16];		/* idle, low or normal (dom0 CPU); "" for a request */
	uint64_t pages_total;		/* 4 KiB pages the domain had */
	uint64_t pages_left;		/* pages it still holds */
	uint64_t scrub_pages;		/* released pages still to scrub */
	unsigned progress;		/* percent of pages released, 0..100 */
	double rate_mib_s;		/* MiB/s coming back, over the last seconds (once
					 * done: the average); < 0 when not published */
	int64_t eta_s;			/* seconds until pages_left is 0; < 0 when not
					 * published, or stalled */
	int stalled;			/* 1: xenreaperd says nothing came back for a while */
	int64_t requested_ms, started_ms, finished_ms;
	char error[512];		/* why, when state is failed; else "" */
	char held_by[512];		/* a zombie: what in dom0 may hold its pages; stuck:
					 * what its destroy waits on; else "" */
	int daemon_running;		/* xenreaperd was running when this was read */
};

/* The host's memory as it concerns starting a guest, in 4 KiB pages.  The
 * teardowns are read in one transaction, then the domains they hold, then
 * Xen's free memory, in that order, so that pages on their way from a
 * dying domain to the free pool are counted once, never missed. */
struct xenreaper_memory {
	uint64_t free_pages;		/* free in Xen now: physinfo free less outstanding claims */
	uint64_t releasing_pages;	/* what the domains whose teardown is requested,
					 * queued, destroying or zombie will give back
					 * (their pages and paging pools): what those
					 * teardowns will add to free_pages; a zombie's
					 * or an orphan's only while its pages still fall */
	unsigned teardowns;		/* how many teardowns releasing_pages counts */
	unsigned requested;		/* of those, requests xenreaperd has not taken yet */
	double rate_mib_s;		/* their published rates added up; < 0 if none has one */
	int stalled;			/* 1 if each of them that publishes an eta says stalled */
	int64_t scrub_pending_pages;	/* xenreaperd's last scrub backlog figure; < 0 if none */
	int daemon_running;		/* xenreaperd was running when this was read */
	struct xenreaper_status largest; /* the teardown holding most (teardowns > 0);
					 * its pages_left is what the hypervisor says it holds */
};

/* Called by xenreaper_wait(); a non-zero return stops the wait, which then
 * returns that value (use a negative errno). */
typedef int (*xenreaper_wait_cb)(const struct xenreaper_status *st, void *arg);

/* Called by xenreaper_wait_free() with each new reading; a non-zero return
 * stops the wait, which then returns that value (use a negative errno). */
typedef int (*xenreaper_memory_cb)(const struct xenreaper_memory *mem, void *arg);

/* Connect to xenstore; *OUT is NULL on failure. */
int xenreaper_open(struct xenreaper **out);
/* Disconnect and free; accepts NULL. */
void xenreaper_close(struct xenreaper *h);
/* What the most recent call on H did wrong, as a sentence; "" if it succeeded. */
const char *xenreaper_last_error(const struct xenreaper *h);
/* A short description of a negative errno as this library uses it. */
const char *xenreaper_strerror(int err);
/* The state's name as xenstore spells it ("unknown" for UNKNOWN). */
const char *xenreaper_state_name(enum xenreaper_state state);
/* 1 for done and failed (nothing more will happen), else 0. */
int xenreaper_state_is_final(enum xenreaper_state state);

/* Find a running domain by domid (all digits) or by name (xenstore's
 * /local/domain/<id>/name).  DOMID, UUID and NAME may each be NULL; UUID
 * comes from the "vm" node libxl wrote (xenreaperd checks it against the
 * hypervisor before it destroys anything), or from the hypervisor for a
 * domain that has none; NAME gets a malloc'd copy or NULL if it has none.
 * -ESRCH if there is no such domain (or it went away meanwhile), -ENOTUNIQ
 * if the name is ambiguous, -EAGAIN if the domain changed while it was
 * being looked up (its domid was reused, or it was renamed): ask again. */
int xenreaper_resolve(struct xenreaper *h, const char *domain, uint32_t *domid,
		      char uuid[XENREAPER_UUID_LEN], char **name);
/* Ask xenreaperd to tear down DOMID, which must carry UUID (one atomic
 * write; served when the daemon runs).  Writes nothing if a job for that
 * UUID is already under way; -EBUSY if one for another UUID is; -EPERM
 * for domain 0. */
int xenreaper_request(struct xenreaper *h, uint32_t domid, const char *uuid);
/* The teardown of DOMID: a pending request if there is one (unless it
 * repeats the job under way), else its job; -ENOENT if there is neither. */
int xenreaper_job_status(struct xenreaper *h, uint32_t domid, struct xenreaper_status *st);
/* Every job and pending request, sorted by domid, in a malloc'd array
 * (*JOBS is NULL when *N is 0). */
int xenreaper_list(struct xenreaper *h, struct xenreaper_status **jobs, size_t *n);
/* 1 if xenreaperd says it is running and its pid exists, 0 if not.  A
 * stopped or hung daemon, or a pid reused after the daemon was killed,
 * passes that test: the waits below also check that it answers. */
int xenreaper_daemon_running(struct xenreaper *h);
/* How long the waits give a xenreaperd that says it is running to answer
 * a liveness check (a node under ping/, which it removes) before they
 * return -EHOSTUNREACH: TIMEOUT_MS, at least
 * XENREAPER_ANSWER_TIMEOUT_MIN_MS (-EINVAL otherwise), default
 * XENREAPER_ANSWER_TIMEOUT_MS; negative: no check.  A check goes out when
 * a wait starts and 2 s after each answer, so a daemon that stops
 * answering is reported at most TIMEOUT_MS + 2 s later.  An idle daemon is
 * never asked: only a waiting client asks. */
int xenreaper_set_answer_timeout(struct xenreaper *h, int timeout_ms);
/* Follow the teardown of DOMID/UUID, calling CB (may be NULL) on every
 * change and at least once a second, until it ends: 0 when done, -EIO when
 * failed, -ETIMEDOUT after TIMEOUT_MS (negative: no limit), -ENOENT if
 * there is neither a request nor a job for that UUID (dropped, or expired
 * after it finished), -EHOSTUNREACH if xenreaperd says it is running but
 * does not answer (see xenreaper_set_answer_timeout; the request or job
 * stays as it is). */
int xenreaper_wait(struct xenreaper *h, uint32_t domid, const char *uuid, int timeout_ms,
		   xenreaper_wait_cb cb, void *arg);

/* Read the host's memory and the teardowns that will add to it into MEM. */
int xenreaper_memory(struct xenreaper *h, struct xenreaper_memory *mem);
/* Wait until Xen has PAGES free, calling CB (may be NULL) with every new
 * reading and at least once a second: 0 at once if it already has, else
 * once it has; -ENOSPC as soon as free plus what the teardowns under way
 * will release falls short of PAGES (waiting would not help), -EHOSTDOWN
 * if it is short and xenreaperd is not running, -EHOSTUNREACH if it says
 * it is running but does not answer, -ETIMEDOUT after TIMEOUT_MS
 * (negative: no limit), kept however many finished jobs xenreaperd keeps.
 * The last error names the shortfall and the teardown waited on. */
int xenreaper_wait_free(struct xenreaper *h, uint64_t pages, int timeout_ms,
			xenreaper_memory_cb cb, void *arg);

#ifdef __cplusplus
}
#endif

#endif /* XENREAPER_H */
