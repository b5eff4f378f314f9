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
};

/* One teardown, as xenreaperd publishes it under /tool/xenreaper/job/<domid>.
 * Text that does not fit is truncated; times are unix milliseconds, 0 when
 * not (yet) known. */
struct xenreaper_status {
	uint32_t domid;
	enum xenreaper_state state;
	char state_name[16];		/* the state as xenstore spells it */
	char uuid[XENREAPER_UUID_LEN];	/* the domain incarnation torn down */
	char name[128];			/* guest name when requested, may be "" */
	char pool[64];			/* cpupool, may be "" */
	char reason[16];		/* request, poweroff or crash */
	char policy[16];		/* deferred or sync (scrubbing) */
	uint64_t pages_total;		/* 4 KiB pages the domain had */
	uint64_t pages_left;		/* pages it still holds */
	uint64_t scrub_pages;		/* released pages still to scrub */
	unsigned progress;		/* percent of pages released, 0..100 */
	int64_t requested_ms, started_ms, finished_ms;
	char error[512];		/* why, when state is failed; else "" */
	int daemon_running;		/* xenreaperd was running when this was read */
};

/* Called by xenreaper_wait(); a non-zero return stops the wait, which then
 * returns that value (use a negative errno). */
typedef int (*xenreaper_wait_cb)(const struct xenreaper_status *st, void *arg);

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
 * asks the hypervisor, NAME gets a malloc'd copy or NULL if it has none.
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
/* 1 if xenreaperd says it is running and its pid exists, 0 if not. */
int xenreaper_daemon_running(struct xenreaper *h);
/* Follow the teardown of DOMID/UUID, calling CB (may be NULL) on every
 * change and at least once a second, until it ends: 0 when done, -EIO when
 * failed, -ETIMEDOUT after TIMEOUT_MS (negative: no limit), -ENOENT if
 * there is neither a request nor a job for that UUID (dropped, or expired
 * after it finished). */
int xenreaper_wait(struct xenreaper *h, uint32_t domid, const char *uuid, int timeout_ms,
		   xenreaper_wait_cb cb, void *arg);

#ifdef __cplusplus
}
#endif

#endif /* XENREAPER_H */
