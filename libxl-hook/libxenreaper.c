/*
 * libxenreaper: the client side of the xenstore protocol xenreaperd serves
 * (layout.h): resolve a domain to its domid and UUID, write a teardown
 * request, read jobs back (each in one transaction) and follow one with a
 * watch until it ends; and read the host's free memory against what the
 * teardowns under way will release, and wait for enough of it
 * (freemem.c decides).  xenstore is read through libxenstore; the UUID
 * comes from the "vm" node libxl wrote, read in one transaction with the
 * name, or, for a domain libxl did not make, from one
 * xc_domain_getinfolist call checked against xenstore read before and
 * after it (lookup.c says why either is safe).  libxenctrl is loaded and
 * its handle opened on first use (xcload.c), so that a request never
 * loads it; free memory and what dying domains hold come from that
 * handle, live, not from the daemon's memory/ nodes, which are only kept
 * current while the daemon has something in flight.  It deliberately does
 * not use libxl (whose start-up is what the daemon exists to avoid
 * paying), never destroys anything itself, and never removes nodes: the
 * daemon owns the jobs.
 */
#include <ctype.h>
#include <inttypes.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <xenctrl.h>
#include <xenstore.h>

#include "freemem.h"
#include "layout.h"
#include "lookup.h"
#include "xcload.h"
#include "xenreaper.h"

#define XR_TX_RETRIES 16
#define XR_TICK_MS 1000		/* the callback's heartbeat while waiting */
#define XR_DOMAIN_DIR "/local/domain"
#define XR_PING_INTERVAL_MS 2000	/* from an answer to the next ping */

struct xenreaper {
	struct xs_handle *xsh;
	const struct xcload_api *xc;	/* libxenctrl, loaded by xr_xc() on first use */
	xc_interface *xch;		/* opened by xr_xc() on first use */
	xentoollog_logger logger;	/* libxenctrl's messages end up in xc_msg */
	char xc_msg[256];
	unsigned wait_seq;		/* makes each wait's watch token unique */
	unsigned id;			/* tells this handle's pings from others' in the process */
	int answer_ms;			/* xenreaper_set_answer_timeout */
	char errmsg[512];
};

/* One wait's liveness check of xenreaperd (see daemon/liveness.c): a node
 * ping/<pid>-<handle>-<n> the daemon removes when it sees it. */
struct xr_ping {
	char path[LAYOUT_PATH_LEN];
	bool outstanding;
	int64_t sent_ms, next_ms;	/* monotonic */
	long pid;			/* the daemon's, when it was sent */
	unsigned seq;
};

/* What one transaction saw of a domid: its pending request and its job. */
struct xr_snap {
	bool has_request, has_job;
	char request_uuid[XENREAPER_UUID_LEN];
	struct xenreaper_status job;
};

/*
 * What a memory reading knows of job/.  xenreaperd keeps up to 512
 * finished jobs, and reading each of them in full on every turn (some 19
 * requests a job, in one transaction, a turn a second or more often) made
 * a wait's time bound grow with that history: 25 s for a 3 s bound with
 * 200 kept, and one such reading took 30 s with 512 under emulation.  But
 * a job counts towards the memory coming back only while its domain
 * exists, so a job whose domid no domain has (LIVE, from the hypervisor's
 * list, read first) is not read at all, whatever it holds; and a finished
 * job does not change unless a write touches job/<domid> (a new job
 * there, or its expiry), which a wait's watch reports, so one whose domid
 * was reused by a live domain is read once, by its state leaf alone, and
 * not again until an event names it.
 */
struct xr_jobs {
	uint8_t live[LAYOUT_DOMID_MAX / 8 + 1];		/* some domain has this domid */
	uint8_t finished[LAYOUT_DOMID_MAX / 8 + 1];	/* done or failed, unchanged since */
	uint8_t touched[LAYOUT_DOMID_MAX / 8 + 1];	/* an event named job/<domid> */
	bool all_touched;				/* one named job/ itself, or above */
};

#define XR_BIT(map, domid) ((map)[(domid) / 8] & (1U << ((domid) % 8)))
#define XR_SET(map, domid) ((map)[(domid) / 8] |= (uint8_t)(1U << ((domid) % 8)))

static const char *const xr_state_names[] = {
	[XENREAPER_STATE_REQUESTED] = "requested",
	[XENREAPER_STATE_QUEUED] = "queued",
	[XENREAPER_STATE_DESTROYING] = "destroying",
	[XENREAPER_STATE_ZOMBIE] = "zombie",
	[XENREAPER_STATE_SCRUBBING] = "scrubbing",
	[XENREAPER_STATE_DONE] = "done",
	[XENREAPER_STATE_FAILED] = "failed",
	[XENREAPER_STATE_UNKNOWN] = "unknown",
	[XENREAPER_STATE_STUCK] = "stuck",
};

static void xr_clear(struct xenreaper *h)
{
	h->errmsg[0] = '\0';
}

static int xr_fail(struct xenreaper *h, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int xr_fail(struct xenreaper *h, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(h->errmsg, sizeof(h->errmsg), fmt, ap);
	va_end(ap);
	return rc;
}

/* The entry points that take a domid refuse one past the last. */
static int xr_fail_domid(struct xenreaper *h, uint32_t domid)
{
	return xr_fail(h, -EINVAL, "%u is not a domid (domids go from 0 to %u)",
		       domid, LAYOUT_DOMID_MAX);
}

/* The current errno as a negative value, FALLBACK if errno is not set. */
static int xr_errno(int fallback)
{
	return errno > 0 ? -errno : -fallback;
}

static int64_t xr_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void xr_copy(char *buf, size_t len, const char *text)
{
	snprintf(buf, len, "%s", text);
}

/* ---------------------------------------------------------------- xenstore */

/* PATH's value, malloc'd and NUL-terminated; -ENOENT if there is no node. */
static int xr_read(struct xenreaper *h, xs_transaction_t t, const char *path, char **out)
{
	unsigned len;
	char *value;

	errno = 0;
	value = xs_read(h->xsh, t, path, &len);
	if (!value)
		return xr_errno(EIO);
	*out = value;
	return 0;
}

/* PATH's value into BUF (truncated); "" and -ENOENT if there is no node. */
static int xr_read_text(struct xenreaper *h, xs_transaction_t t, const char *path,
			char *buf, size_t len)
{
	char *value;
	int rc;

	buf[0] = '\0';
	rc = xr_read(h, t, path, &value);
	if (rc)
		return rc;
	xr_copy(buf, len, value);
	free(value);
	return 0;
}

/* Names under PATH; an absent directory is an empty one. */
static int xr_directory(struct xenreaper *h, xs_transaction_t t, const char *path,
			char ***names, unsigned *n)
{
	errno = 0;
	*names = xs_directory(h->xsh, t, path, n);
	if (*names)
		return 0;
	*n = 0;
	return errno == ENOENT ? 0 : xr_errno(EIO);
}

static int xr_tx_start(struct xenreaper *h, xs_transaction_t *t)
{
	errno = 0;
	*t = xs_transaction_start(h->xsh);
	if (*t == XBT_NULL)
		return xr_fail(h, xr_errno(EIO), "cannot start a xenstore transaction: %s",
			       strerror(errno ? errno : EIO));
	return 0;
}

/* Job leaf LEAF of DOMID into BUF; "" if missing. */
static int xr_job_text(struct xenreaper *h, xs_transaction_t t, uint32_t domid,
		       const char *leaf, char *buf, size_t len)
{
	char path[LAYOUT_PATH_LEN];
	int rc;

	layout_job_path(path, domid, leaf);
	rc = xr_read_text(h, t, path, buf, len);
	return rc == -ENOENT ? 0 : rc;
}

/* A number leaf; missing or malformed reads as 0 (a status is still useful). */
static int xr_job_u64(struct xenreaper *h, xs_transaction_t t, uint32_t domid,
		      const char *leaf, uint64_t *value)
{
	char text[32], *end;
	int rc;

	*value = 0;
	rc = xr_job_text(h, t, domid, leaf, text, sizeof(text));
	if (rc || !text[0] || !isdigit((unsigned char)text[0]))
		return rc;
	errno = 0;
	*value = strtoull(text, &end, 10);
	if (errno || *end)
		*value = 0;
	return 0;
}

static int xr_job_time(struct xenreaper *h, xs_transaction_t t, uint32_t domid,
		       const char *leaf, int64_t *wall_ms)
{
	char text[32];
	int rc;

	*wall_ms = 0;
	rc = xr_job_text(h, t, domid, leaf, text, sizeof(text));
	if (rc || !text[0])
		return rc;
	if (layout_parse_time(text, wall_ms))
		*wall_ms = 0;
	return 0;
}

/* The rate leaf: MiB/s with at most one decimal ("812.4"); -1 if absent
 * or malformed. */
static int xr_job_rate(struct xenreaper *h, xs_transaction_t t, uint32_t domid, double *rate)
{
	char text[32], *end;
	unsigned dots = 0;
	int rc;

	*rate = -1;
	rc = xr_job_text(h, t, domid, "rate", text, sizeof(text));
	if (rc || !text[0] || text[0] == '.')
		return rc;
	for (const char *c = text; *c; c++) {
		if (*c == '.')
			dots++;
		else if (!isdigit((unsigned char)*c))
			return 0;
	}
	if (dots > 1)
		return 0;
	errno = 0;
	*rate = strtod(text, &end);
	if (errno || *end)
		*rate = -1;
	return 0;
}

/* The eta leaf: whole seconds, or XENREAPER_ETA_STALLED. */
static int xr_job_eta(struct xenreaper *h, xs_transaction_t t, uint32_t domid,
		      struct xenreaper_status *st)
{
	char text[32], *end;
	int rc;

	st->eta_s = -1;
	st->stalled = 0;
	rc = xr_job_text(h, t, domid, "eta", text, sizeof(text));
	if (rc || !text[0])
		return rc;
	if (!strcmp(text, XENREAPER_ETA_STALLED)) {
		st->stalled = 1;
		return 0;
	}
	if (!isdigit((unsigned char)text[0]))
		return 0;
	errno = 0;
	st->eta_s = strtoll(text, &end, 10);
	if (errno || *end)
		st->eta_s = -1;
	return 0;
}

static enum xenreaper_state xr_state_parse(const char *name)
{
	for (unsigned i = XENREAPER_STATE_QUEUED; i <= XENREAPER_STATE_STUCK; i++)
		if (i != XENREAPER_STATE_UNKNOWN && !strcmp(xr_state_names[i], name))
			return i;
	return XENREAPER_STATE_UNKNOWN;
}

/* Job DOMID as published under LAYOUT_JOB_DIR; -ENOENT if there is none. */
static int xr_read_job(struct xenreaper *h, xs_transaction_t t, uint32_t domid,
		       struct xenreaper_status *st)
{
	char path[LAYOUT_PATH_LEN];
	uint64_t progress;
	int rc;

	memset(st, 0, sizeof(*st));
	st->domid = domid;
	layout_job_path(path, domid, "state");
	rc = xr_read_text(h, t, path, st->state_name, sizeof(st->state_name));
	if (rc)
		return rc;
	st->state = xr_state_parse(st->state_name);
	rc = xr_job_text(h, t, domid, "uuid", st->uuid, sizeof(st->uuid));
	if (!rc) rc = xr_job_text(h, t, domid, "name", st->name, sizeof(st->name));
	if (!rc) rc = xr_job_text(h, t, domid, "pool", st->pool, sizeof(st->pool));
	if (!rc) rc = xr_job_text(h, t, domid, "reason", st->reason, sizeof(st->reason));
	if (!rc) rc = xr_job_text(h, t, domid, "policy", st->policy, sizeof(st->policy));
	if (!rc) rc = xr_job_text(h, t, domid, "priority", st->priority, sizeof(st->priority));
	if (!rc) rc = xr_job_text(h, t, domid, "error", st->error, sizeof(st->error));
	if (!rc) rc = xr_job_text(h, t, domid, "held-by", st->held_by, sizeof(st->held_by));
	if (!rc) rc = xr_job_rate(h, t, domid, &st->rate_mib_s);
	if (!rc) rc = xr_job_eta(h, t, domid, st);
	if (!rc) rc = xr_job_u64(h, t, domid, "pages-total", &st->pages_total);
	if (!rc) rc = xr_job_u64(h, t, domid, "pages-left", &st->pages_left);
	if (!rc) rc = xr_job_u64(h, t, domid, "scrub-pages", &st->scrub_pages);
	if (!rc) rc = xr_job_u64(h, t, domid, "progress", &progress);
	if (!rc) rc = xr_job_time(h, t, domid, "requested", &st->requested_ms);
	if (!rc) rc = xr_job_time(h, t, domid, "started", &st->started_ms);
	if (!rc) rc = xr_job_time(h, t, domid, "finished", &st->finished_ms);
	if (rc)
		return rc;
	st->progress = progress > 100 ? 100 : progress;
	return 0;
}

/* A pending request, as a status: the guest name comes from its domain. */
static int xr_request_status(struct xenreaper *h, xs_transaction_t t, uint32_t domid,
			     const char *uuid, struct xenreaper_status *st)
{
	char path[LAYOUT_PATH_LEN];
	int rc;

	memset(st, 0, sizeof(*st));
	st->domid = domid;
	st->rate_mib_s = -1;
	st->eta_s = -1;
	st->state = XENREAPER_STATE_REQUESTED;
	xr_copy(st->state_name, sizeof(st->state_name), xr_state_names[st->state]);
	xr_copy(st->uuid, sizeof(st->uuid), uuid);
	xr_copy(st->reason, sizeof(st->reason), "request");
	snprintf(path, sizeof(path), XR_DOMAIN_DIR "/%u/name", domid);
	rc = xr_read_text(h, t, path, st->name, sizeof(st->name));
	return rc == -ENOENT ? 0 : rc;
}

static int xr_snap_read_tx(struct xenreaper *h, xs_transaction_t t, uint32_t domid,
			   struct xr_snap *snap)
{
	char path[LAYOUT_PATH_LEN];
	int rc;

	memset(snap, 0, sizeof(*snap));
	layout_request_path(path, domid);
	rc = xr_read_text(h, t, path, snap->request_uuid, sizeof(snap->request_uuid));
	if (rc && rc != -ENOENT)
		return rc;
	snap->has_request = !rc;
	rc = xr_read_job(h, t, domid, &snap->job);
	if (rc && rc != -ENOENT)
		return rc;
	snap->has_job = !rc;
	return 0;
}

/* DOMID's request and job, read in one transaction so that the daemon's
 * taking of a request (which removes it and creates the job atomically)
 * is never seen half done. */
static int xr_snap_read(struct xenreaper *h, uint32_t domid, struct xr_snap *snap)
{
	xs_transaction_t t;
	int rc;

	rc = xr_tx_start(h, &t);
	if (rc)
		return rc;
	rc = xr_snap_read_tx(h, t, domid, snap);
	xs_transaction_end(h->xsh, t, true);	/* read-only: abort */
	if (rc)
		return xr_fail(h, rc, "reading the teardown of domain %u from xenstore: %s",
			       domid, strerror(-rc));
	return 0;
}

/* Whether the request, not the job, is the current word on the domid:
 * a job still under way for the same UUID makes the request a duplicate. */
static bool xr_request_wins(const struct xr_snap *snap)
{
	if (!snap->has_request)
		return false;
	return !(snap->has_job && !xenreaper_state_is_final(snap->job.state) &&
		 !strcasecmp(snap->job.uuid, snap->request_uuid));
}

/* 1 if xenreaperd runs (its pid into *PID_OUT, may be NULL), 0 if not,
 * negative errno (no message) on failure. */
static int xr_daemon_pid(struct xenreaper *h, long *pid_out)
{
	char path[LAYOUT_PATH_LEN], text[32], *end;
	long pid;
	int rc;

	if (pid_out)
		*pid_out = 0;
	layout_daemon_path(path, "state");
	rc = xr_read_text(h, XBT_NULL, path, text, sizeof(text));
	if (rc)
		return rc == -ENOENT ? 0 : rc;
	if (strcmp(text, "running"))
		return 0;
	layout_daemon_path(path, "pid");
	rc = xr_read_text(h, XBT_NULL, path, text, sizeof(text));
	if (rc)
		return rc == -ENOENT ? 0 : rc;
	errno = 0;
	pid = strtol(text, &end, 10);
	if (errno || end == text || *end || pid <= 0)
		return 0;
	if (kill((pid_t)pid, 0) && errno != EPERM)
		return 0;
	if (pid_out)
		*pid_out = pid;
	return 1;
}

static int xr_daemon_running(struct xenreaper *h)
{
	return xr_daemon_pid(h, NULL);
}

/* Take back PING if it is out (the daemon may be gone for good). */
static void xr_ping_cancel(struct xenreaper *h, struct xr_ping *ping)
{
	if (ping->outstanding)
		xs_rm(h->xsh, XBT_NULL, ping->path);
	ping->outstanding = false;
}

/*
 * The liveness check of one wait turn at NOW, for a daemon that says it
 * runs with PID (0: it does not say so; then nothing is asked).  The
 * waits make it both before and right after they sleep: the reading in
 * between, some 20 requests, can take a second on a loaded host under
 * emulation, and must delay neither an answer being seen nor the verdict
 * on a ping whose time is up.  While the
 * daemon answers, a ping goes out XR_PING_INTERVAL_MS after the last was
 * answered; one left for h->answer_ms makes this -EHOSTUNREACH, with a
 * sentence naming the pid and WHAT the caller waits for.  A daemon that
 * made no ping/ does not answer pings (an older one): none is sent.
 * *WAKE is when the next turn is due for this check (-1: never).
 */
static int xr_ping_turn(struct xenreaper *h, struct xr_ping *ping, long pid, const char *what,
			int64_t now, int64_t *wake)
{
	char *value;
	int rc;

	*wake = -1;
	if (h->answer_ms < 0 || pid <= 0 || (ping->outstanding && pid != ping->pid)) {
		/* Not running, or restarted: ask the daemon there is now afresh. */
		xr_ping_cancel(h, ping);
		ping->next_ms = now;
		if (h->answer_ms < 0 || pid <= 0)
			return 0;
	}
	if (ping->outstanding) {
		rc = xr_read(h, XBT_NULL, ping->path, &value);
		if (!rc)
			free(value);
		if (rc == -ENOENT) {
			ping->outstanding = false;
			ping->next_ms = now + XR_PING_INTERVAL_MS;
		} else if (now - ping->sent_ms >= h->answer_ms) {
			xr_ping_cancel(h, ping);
			return xr_fail(h, -EHOSTUNREACH,
				       "xenreaperd (pid %ld) has not answered for %.1f s although "
				       "daemon/state says running: it is stopped (SIGSTOP), hung, or dead "
				       "and pid %ld is another process now; stopped waiting for %s",
				       pid, (now - ping->sent_ms) / 1000.0, pid, what);
		} else {
			*wake = ping->sent_ms + h->answer_ms;
			return 0;
		}
	}
	if (now < ping->next_ms) {
		*wake = ping->next_ms;
		return 0;
	}
	rc = xr_read(h, XBT_NULL, LAYOUT_PING_DIR, &value);
	if (rc) {
		ping->next_ms = now + XR_PING_INTERVAL_MS;	/* an older daemon: look again later */
		*wake = ping->next_ms;
		return 0;
	}
	free(value);
	snprintf(ping->path, sizeof(ping->path), LAYOUT_PING_DIR "/%ld-%u-%u", (long)getpid(),
		 h->id, ++ping->seq);
	errno = 0;
	if (!xs_write(h->xsh, XBT_NULL, ping->path, what, strlen(what))) {
		rc = xr_errno(EIO);
		return xr_fail(h, rc, "cannot write %s: %s", ping->path, strerror(-rc));
	}
	ping->outstanding = true;
	ping->sent_ms = now;
	ping->pid = pid;
	*wake = now + h->answer_ms;
	return 0;
}

/* ---------------------------------------------------------------- hypervisor */

static void xr_log_vmessage(xentoollog_logger *logger, xentoollog_level level, int errnoval,
			    const char *context, const char *format, va_list al)
	__attribute__((format(printf, 5, 0)));
static void xr_log_vmessage(xentoollog_logger *logger, xentoollog_level level, int errnoval,
			    const char *context, const char *format, va_list al)
{
	struct xenreaper *h = (struct xenreaper *)((char *)logger - offsetof(struct xenreaper, logger));
	size_t used;

	if (level < XTL_ERROR)
		return;
	vsnprintf(h->xc_msg, sizeof(h->xc_msg), format, al);
	used = strlen(h->xc_msg);
	if (errnoval >= 0 && used < sizeof(h->xc_msg))
		snprintf(h->xc_msg + used, sizeof(h->xc_msg) - used, ": %s", strerror(errnoval));
}

static void xr_log_progress(xentoollog_logger *logger, const char *context,
			    const char *doing_what, int percent, unsigned long done,
			    unsigned long total)
{
}

static void xr_log_destroy(xentoollog_logger *logger)
{
}

/* The libxenctrl handle, loaded and opened on first use. */
static int xr_xc(struct xenreaper *h)
{
	int rc;

	if (h->xch)
		return 0;
	h->xc_msg[0] = '\0';
	if (!h->xc) {
		h->xc = xcload_get(h->xc_msg, sizeof(h->xc_msg));
		if (!h->xc)
			return xr_fail(h, -ENOENT, "cannot ask the hypervisor: %s", h->xc_msg);
	}
	errno = 0;
	h->xch = h->xc->interface_open(&h->logger, &h->logger, 0);
	if (h->xch)
		return 0;
	rc = xr_errno(EACCES);
	return xr_fail(h, rc, "cannot open the hypervisor interface (%s): run this as root in dom0, under Xen",
		       h->xc_msg[0] ? h->xc_msg : strerror(-rc));
}

/* The UUID the hypervisor has for DOMID, and whether it has shut down;
 * -ESRCH if it has no such domain. */
static int xr_domain_uuid(struct xenreaper *h, uint32_t domid, char uuid[XENREAPER_UUID_LEN],
			  bool *shut_down)
{
	xc_domaininfo_t info;
	const uint8_t *u;
	int got, rc;

	rc = xr_xc(h);
	if (rc)
		return rc;
	h->xc_msg[0] = '\0';
	errno = 0;
	got = h->xc->domain_getinfolist(h->xch, domid, 1, &info);
	if (got < 0) {
		rc = xr_errno(EIO);
		return xr_fail(h, rc, "cannot list domains: %s",
			       h->xc_msg[0] ? h->xc_msg : strerror(-rc));
	}
	if (got == 0 || info.domain != domid)
		return xr_fail(h, -ESRCH, "no domain %u is running", domid);
	*shut_down = info.flags & XEN_DOMINF_shutdown;
	u = info.handle;
	snprintf(uuid, XENREAPER_UUID_LEN,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7],
		 u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
	return 0;
}

/* The domid whose xenstore name is NAME. */
static int xr_find_name(struct xenreaper *h, const char *name, uint32_t *domid)
{
	char path[LAYOUT_PATH_LEN + 64], **ids = NULL, *value;
	uint32_t found = 0, id;
	unsigned n = 0, matches = 0;
	int rc;

	*domid = UINT32_MAX;
	rc = xr_directory(h, XBT_NULL, XR_DOMAIN_DIR, &ids, &n);
	if (rc) {
		rc = xr_fail(h, rc, "cannot list " XR_DOMAIN_DIR " in xenstore: %s", strerror(-rc));
		goto out;
	}
	for (unsigned i = 0; i < n; i++) {
		if (lookup_parse_domid(ids[i], &id))
			continue;
		snprintf(path, sizeof(path), XR_DOMAIN_DIR "/%s/name", ids[i]);
		if (xr_read(h, XBT_NULL, path, &value))
			continue;	/* no name, or the domain just went away */
		if (!strcmp(value, name)) {
			if (matches++)
				rc = xr_fail(h, -ENOTUNIQ,
					     "more than one domain is named '%s' (domains %u and %u); name it by domid",
					     name, found, id);
			found = id;
		}
		free(value);
	}
	if (rc)
		goto out;
	if (!matches) {
		rc = xr_fail(h, -ESRCH,
			     "no domain is named '%s' (a domain is named by its domid or by its name in `xl list`)",
			     name);
		goto out;
	}
	*domid = found;
out:
	free(ids);
	return rc;
}

/* What xenstore shows of /local/domain/DOMID, read in one transaction so
 * that its name, its vm node and the name in that vm's directory are
 * those of one domain.  A name proves the directory is there; only a
 * domain without one costs a read of it. */
static void xr_seen_free(struct lookup_seen *seen)
{
	free(seen->name);
	free(seen->vm);
	free(seen->vm_name);
	memset(seen, 0, sizeof(*seen));
}

static int xr_seen_read(struct xenreaper *h, uint32_t domid, struct lookup_seen *seen)
{
	char path[LAYOUT_PATH_LEN], vm_uuid[XENREAPER_UUID_LEN], *home = NULL;
	xs_transaction_t t;
	int rc;

	memset(seen, 0, sizeof(*seen));
	rc = xr_tx_start(h, &t);
	if (rc)
		return rc;
	snprintf(path, sizeof(path), XR_DOMAIN_DIR "/%u/name", domid);
	rc = xr_read(h, t, path, &seen->name);
	seen->home = !rc;
	if (rc == -ENOENT) {
		snprintf(path, sizeof(path), XR_DOMAIN_DIR "/%u", domid);
		rc = xr_read(h, t, path, &home);
		seen->home = !rc;
	}
	if (!rc || rc == -ENOENT) {
		snprintf(path, sizeof(path), XR_DOMAIN_DIR "/%u/vm", domid);
		rc = xr_read(h, t, path, &seen->vm);
	}
	if (!rc && !lookup_vm_uuid(seen->vm, vm_uuid)) {
		snprintf(path, sizeof(path), "/vm/%s/name", vm_uuid);
		rc = xr_read(h, t, path, &seen->vm_name);
	}
	xs_transaction_end(h->xsh, t, true);	/* read-only: abort */
	free(home);
	if (rc && rc != -ENOENT) {
		xr_seen_free(seen);
		return xr_fail(h, rc, "reading %s: %s", path, strerror(-rc));
	}
	return 0;
}

/* ---------------------------------------------------------------- API */

static unsigned xr_handles;	/* handles opened so far, for their ids */

int xenreaper_open(struct xenreaper **out)
{
	struct xenreaper *h;
	int rc;

	*out = NULL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->logger.vmessage = xr_log_vmessage;
	h->logger.progress = xr_log_progress;
	h->logger.destroy = xr_log_destroy;
	h->id = __atomic_add_fetch(&xr_handles, 1, __ATOMIC_RELAXED);
	h->answer_ms = XENREAPER_ANSWER_TIMEOUT_MS;
	errno = 0;
	h->xsh = xs_open(0);
	if (!h->xsh) {
		rc = xr_errno(ECONNREFUSED);
		free(h);
		return rc;
	}
	*out = h;
	return 0;
}

void xenreaper_close(struct xenreaper *h)
{
	if (!h)
		return;
	if (h->xch)
		h->xc->interface_close(h->xch);
	xs_close(h->xsh);
	free(h);
}

int xenreaper_set_answer_timeout(struct xenreaper *h, int timeout_ms)
{
	xr_clear(h);
	if (timeout_ms >= 0 && timeout_ms < XENREAPER_ANSWER_TIMEOUT_MIN_MS)
		return xr_fail(h, -EINVAL,
			       "%d ms is too short to tell a busy xenreaperd from a hung one "
			       "(at least %d ms, or negative for no check)",
			       timeout_ms, XENREAPER_ANSWER_TIMEOUT_MIN_MS);
	h->answer_ms = timeout_ms;
	return 0;
}

const char *xenreaper_last_error(const struct xenreaper *h)
{
	return h ? h->errmsg : "";
}

const char *xenreaper_strerror(int err)
{
	switch (err) {
	case 0:
		return "success";
	case -EIO:
		return "the teardown failed";
	case -ETIMEDOUT:
		return "timed out waiting for the teardown";
	case -ESRCH:
		return "no such domain";
	case -ENOTUNIQ:
		return "more than one domain has that name";
	case -EAGAIN:
		return "the domain or xenstore changed meanwhile; ask again";
	case -EBUSY:
		return "a teardown of an earlier domain with that domid is still under way";
	case -EHOSTDOWN:
		return "xenreaperd is not running";
	case -ENOSPC:
		return "the teardowns under way cannot free that much memory";
	case -EHOSTUNREACH:
		return "xenreaperd says it is running but does not answer";
	default:
		return strerror(err < 0 ? -err : err);
	}
}

const char *xenreaper_state_name(enum xenreaper_state state)
{
	if ((unsigned)state > XENREAPER_STATE_STUCK)
		state = XENREAPER_STATE_UNKNOWN;
	return xr_state_names[state];
}

int xenreaper_state_is_final(enum xenreaper_state state)
{
	return state == XENREAPER_STATE_DONE || state == XENREAPER_STATE_FAILED;
}

/*
 * A domain libxl made names its UUID in xenstore, and one reading is
 * enough (lookup_from_xenstore() says why that is safe); a guest xl
 * preserved does not (lookup.c).  Otherwise
 * xenstore is read before and after the hypervisor is asked for the UUID,
 * and lookup_check() compares the three readings, so that a domid reused
 * in between is reported instead of handing out the new guest's UUID.
 */
int xenreaper_resolve(struct xenreaper *h, const char *domain, uint32_t *domid_out,
		      char uuid[XENREAPER_UUID_LEN], char **name_out)
{
	struct lookup_seen before = { 0 }, after = { 0 };
	char hv_uuid[XENREAPER_UUID_LEN], why[512], *name = NULL;
	struct lookup_hv hv = { .uuid = hv_uuid };
	const char *want_name = NULL;
	uint32_t domid;
	int rc;

	xr_clear(h);
	if (!domain || !domain[0])
		return xr_fail(h, -EINVAL, "no domain given (name one by domid or by name)");
	if (lookup_is_domid(domain)) {
		if (lookup_parse_domid(domain, &domid))
			return xr_fail(h, -EINVAL, "'%s' is not a domid (domids go from 0 to %u)",
				       domain, LAYOUT_DOMID_MAX);
	} else {
		rc = xr_find_name(h, domain, &domid);
		if (rc)
			return rc;
		want_name = domain;
	}
	rc = xr_seen_read(h, domid, &before);
	if (rc)
		goto out;
	if (uuid) {
		rc = lookup_from_xenstore(domid, want_name, &before, hv_uuid, why, sizeof(why));
		if (rc != -ENODATA) {
			if (rc) {
				rc = xr_fail(h, rc, "%s", why);
				goto out;
			}
			name = before.name;
			before.name = NULL;
			goto found;
		}
		rc = xr_domain_uuid(h, domid, hv_uuid, &hv.shut_down);
		if (rc)
			goto out;
		rc = xr_seen_read(h, domid, &after);
		if (rc)
			goto out;
		rc = lookup_check(domid, want_name, &before, &hv, &after, why, sizeof(why));
		if (rc) {
			rc = xr_fail(h, rc, "%s", why);
			goto out;
		}
		name = after.name;
		after.name = NULL;
	} else if (!before.home || (want_name && (!before.name || strcmp(before.name, want_name)))) {
		/* No hypervisor asked: xenstore alone must still show the domain. */
		if (want_name)
			rc = xr_fail(h, -ESRCH, "domain %u ('%s') went away while it was being looked up",
				     domid, want_name);
		else
			rc = xr_fail(h, -ESRCH, "no domain %u is running", domid);
		goto out;
	} else {
		name = before.name;
		before.name = NULL;
	}
found:
	if (uuid)
		memcpy(uuid, hv_uuid, XENREAPER_UUID_LEN);
	if (domid_out)
		*domid_out = domid;
	if (name_out) {
		*name_out = name;
		name = NULL;
	}
	rc = 0;
out:
	xr_seen_free(&before);
	xr_seen_free(&after);
	free(name);
	return rc;
}

int xenreaper_request(struct xenreaper *h, uint32_t domid, const char *uuid)
{
	char norm[XENREAPER_UUID_LEN], path[LAYOUT_PATH_LEN];
	struct xr_snap snap;
	xs_transaction_t t;
	int rc;

	xr_clear(h);
	if (domid > LAYOUT_DOMID_MAX)
		return xr_fail_domid(h, domid);
	if (lookup_uuid_normalise(uuid, norm))
		return xr_fail(h, -EINVAL, "'%s' is not a UUID (36 characters, as `xl list -v` shows)",
			       uuid ? uuid : "(null)");
	if (domid == 0)
		return xr_fail(h, -EPERM, "domain 0 is the control domain and is never torn down");
	layout_request_path(path, domid);
	for (int attempt = 0; attempt < XR_TX_RETRIES; attempt++) {
		rc = xr_tx_start(h, &t);
		if (rc)
			return rc;
		rc = xr_snap_read_tx(h, t, domid, &snap);
		if (rc) {
			xs_transaction_end(h->xsh, t, true);
			return xr_fail(h, rc, "reading the teardown of domain %u from xenstore: %s",
				       domid, strerror(-rc));
		}
		/* Asked again, a stuck teardown is written as a request,
		 * which the daemon takes as "take it back and start again"
		 * (xenreaper(1)); any other under way is left as it is. */
		if (snap.has_job && !xenreaper_state_is_final(snap.job.state) &&
		    (strcasecmp(snap.job.uuid, norm) || snap.job.state != XENREAPER_STATE_STUCK)) {
			xs_transaction_end(h->xsh, t, true);
			if (!strcasecmp(snap.job.uuid, norm))
				return 0;	/* already under way */
			return xr_fail(h, -EBUSY,
				       "domain %u: the teardown of an earlier domain with this domid (UUID %s) is still %s; ask again when it has finished",
				       domid, snap.job.uuid, snap.job.state_name);
		}
		errno = 0;
		if (!xs_write(h->xsh, t, path, norm, strlen(norm))) {
			rc = xr_errno(EIO);
			xs_transaction_end(h->xsh, t, true);
			return xr_fail(h, rc, "cannot write %s: %s%s", path, strerror(-rc),
				       rc == -EACCES ? " (run as root in dom0)" : "");
		}
		errno = 0;
		if (xs_transaction_end(h->xsh, t, false))
			return 0;
		if (errno != EAGAIN) {
			rc = xr_errno(EIO);
			return xr_fail(h, rc, "cannot write %s: %s", path, strerror(-rc));
		}
	}
	return xr_fail(h, -EAGAIN, "cannot write %s: xenstore kept reporting conflicts", path);
}

int xenreaper_job_status(struct xenreaper *h, uint32_t domid, struct xenreaper_status *st)
{
	struct xr_snap snap;
	xs_transaction_t t;
	int rc;

	xr_clear(h);
	if (domid > LAYOUT_DOMID_MAX)
		return xr_fail_domid(h, domid);
	rc = xr_tx_start(h, &t);
	if (rc)
		return rc;
	rc = xr_snap_read_tx(h, t, domid, &snap);
	if (!rc && xr_request_wins(&snap))
		rc = xr_request_status(h, t, domid, snap.request_uuid, st);
	else if (!rc && snap.has_job)
		*st = snap.job;
	xs_transaction_end(h->xsh, t, true);
	if (rc)
		return xr_fail(h, rc, "reading the teardown of domain %u from xenstore: %s",
			       domid, strerror(-rc));
	if (!snap.has_request && !snap.has_job)
		return xr_fail(h, -ENOENT,
			       "no teardown of domain %u was requested (finished ones are forgotten after the retention period, 10 minutes by default)",
			       domid);
	rc = xr_daemon_running(h);
	st->daemon_running = rc > 0;
	return 0;
}

static int xr_status_cmp(const void *a, const void *b)
{
	const struct xenreaper_status *x = a, *y = b;

	return x->domid < y->domid ? -1 : x->domid > y->domid;
}

/* Every job and pending request, in one transaction. */
static int xr_list_tx(struct xenreaper *h, xs_transaction_t t, struct xenreaper_status **out,
		      size_t *n_out)
{
	char **jobs = NULL, **requests = NULL;
	struct xenreaper_status *list = NULL;
	unsigned n_jobs = 0, n_requests = 0;
	struct xr_snap snap;
	uint32_t domid;
	size_t n = 0;
	int rc;

	rc = xr_directory(h, t, LAYOUT_JOB_DIR, &jobs, &n_jobs);
	if (!rc)
		rc = xr_directory(h, t, LAYOUT_REQUEST_DIR, &requests, &n_requests);
	if (rc)
		goto out;
	list = calloc(n_jobs + n_requests + 1, sizeof(*list));
	if (!list) {
		rc = -ENOMEM;
		goto out;
	}
	/* A domid with both a job and a request appears once. */
	for (unsigned i = 0; i < n_jobs + n_requests; i++) {
		const char *id = i < n_jobs ? jobs[i] : requests[i - n_jobs];
		bool seen = false;

		if (layout_parse_domid(id, &domid))
			continue;	/* not ours to interpret */
		for (size_t j = 0; j < n && !seen; j++)
			seen = list[j].domid == domid;
		if (seen)
			continue;
		rc = xr_snap_read_tx(h, t, domid, &snap);
		if (rc)
			goto out;
		if (xr_request_wins(&snap)) {
			rc = xr_request_status(h, t, domid, snap.request_uuid, &list[n]);
			if (rc)
				goto out;
			n++;
		} else if (snap.has_job) {
			list[n++] = snap.job;
		}
	}
	qsort(list, n, sizeof(*list), xr_status_cmp);
	if (!n) {
		free(list);
		list = NULL;
	}
	*out = list;
	list = NULL;
	*n_out = n;
out:
	free(list);
	free(jobs);
	free(requests);
	return rc;
}

int xenreaper_list(struct xenreaper *h, struct xenreaper_status **jobs, size_t *n)
{
	xs_transaction_t t;
	int running, rc;

	xr_clear(h);
	*jobs = NULL;
	*n = 0;
	rc = xr_tx_start(h, &t);
	if (rc)
		return rc;
	rc = xr_list_tx(h, t, jobs, n);
	xs_transaction_end(h->xsh, t, true);
	if (rc)
		return xr_fail(h, rc, "reading the teardown jobs from xenstore: %s", strerror(-rc));
	running = xr_daemon_running(h) > 0;
	for (size_t i = 0; i < *n; i++)
		(*jobs)[i].daemon_running = running;
	return 0;
}

int xenreaper_daemon_running(struct xenreaper *h)
{
	int rc;

	xr_clear(h);
	rc = xr_daemon_running(h);
	if (rc < 0)
		return xr_fail(h, rc, "reading " LAYOUT_DAEMON_DIR " from xenstore: %s",
			       strerror(-rc));
	return rc;
}

/*
 * Where the teardown of DOMID/UUID stands in SNAP: 1 while it goes on
 * (ST filled), 0 done and -EIO failed (ST filled), -ENOENT if neither the
 * request nor the job is ours any more.
 */
static int xr_follow(struct xenreaper *h, const struct xr_snap *snap, uint32_t domid,
		     const char *uuid, struct xenreaper_status *st)
{
	bool request_ours = snap->has_request && !strcasecmp(snap->request_uuid, uuid);
	bool job_ours = snap->has_job && !strcasecmp(snap->job.uuid, uuid);

	int rc;

	if (request_ours && !(job_ours && !xenreaper_state_is_final(snap->job.state))) {
		rc = xr_request_status(h, XBT_NULL, domid, uuid, st);
		if (rc)
			return xr_fail(h, rc, "reading the name of domain %u: %s", domid,
				       strerror(-rc));
		return 1;
	}
	if (job_ours) {
		*st = snap->job;
		if (st->state == XENREAPER_STATE_DONE)
			return 0;
		if (st->state == XENREAPER_STATE_FAILED)
			return xr_fail(h, -EIO, "domain %u: the teardown failed: %s", domid,
				       st->error[0] ? st->error : "(xenreaperd gave no reason)");
		return 1;
	}
	if (snap->has_request)
		return xr_fail(h, -ENOENT,
			       "domain %u: the request for UUID %s was replaced by one for UUID %s",
			       domid, uuid, snap->request_uuid);
	if (snap->has_job)
		return xr_fail(h, -ENOENT,
			       "domain %u: the job there is for UUID %s, not %s: the request was dropped (see xenreaperd's log) or its job has expired",
			       domid, snap->job.uuid, uuid);
	return xr_fail(h, -ENOENT,
		       "domain %u: there is no teardown request or job for UUID %s (never requested, or finished longer ago than the retention period)",
		       domid, uuid);
}

/* Mark in JOBS what a change of PATH may have changed. */
static void xr_jobs_note(struct xr_jobs *jobs, const char *path)
{
	static const char dir[] = LAYOUT_JOB_DIR;
	size_t len = sizeof(dir) - 1;
	char id[8];
	uint32_t domid;
	size_t n;

	if (!strncmp(path, dir, len) && path[len] == '/') {
		n = strcspn(path + len + 1, "/");
		if (n < sizeof(id)) {
			memcpy(id, path + len + 1, n);
			id[n] = '\0';
			if (!layout_parse_domid(id, &domid))
				XR_SET(jobs->touched, domid);
		}
		return;
	}
	/* job/ itself or a node above it: anything below may have gone. */
	if (!strncmp(dir, path, strlen(path)) && (dir[strlen(path)] == '/' || !dir[strlen(path)]))
		jobs->all_touched = true;
}

/* Read every pending watch event; JOBS (may be NULL) learns what they
 * touched, and the next snapshot sees the rest. */
static int xr_drain_events(struct xenreaper *h, struct xr_jobs *jobs)
{
	char **event;

	for (;;) {
		errno = 0;
		event = xs_check_watch(h->xsh);
		if (!event)
			return errno == EAGAIN || errno == 0 ? 0 : -errno;
		if (jobs)
			xr_jobs_note(jobs, event[XS_WATCH_PATH]);
		free(event);
	}
}

/* Watch the N PATHS with TOKEN, counting in *WATCHED those set (for the
 * caller to unwatch), and ready PFD for their events; 0 or a negative
 * errno set in H. */
static int xr_watch_all(struct xenreaper *h, const char *const *paths, unsigned n,
			const char *token, unsigned *watched, struct pollfd *pfd)
{
	int rc;

	for (; *watched < n; (*watched)++) {
		errno = 0;
		if (!xs_watch(h->xsh, paths[*watched], token)) {
			rc = xr_errno(EIO);
			return xr_fail(h, rc, "cannot watch %s: %s", paths[*watched], strerror(-rc));
		}
	}
	pfd->fd = xs_fileno(h->xsh);
	pfd->events = POLLIN;
	if (pfd->fd < 0)
		return xr_fail(h, xr_errno(EIO), "cannot poll xenstore for watch events");
	return 0;
}

/* The earlier of two times, -1 being never. */
static int64_t xr_earliest(int64_t a, int64_t b)
{
	return a < 0 ? b : b < 0 ? a : a < b ? a : b;
}

/* Sleep until a watch fires on PFD, TICK_MS pass or DEADLINE (-1: none)
 * comes, then read the pending events (into JOBS, may be NULL); 0, or a
 * negative errno set in H. */
static int xr_wait_turn(struct xenreaper *h, struct pollfd *pfd, int64_t deadline, int64_t now,
			int tick_ms, struct xr_jobs *jobs)
{
	int slice = tick_ms, rc;

	if (deadline >= 0 && deadline - now < slice)
		slice = deadline - now;
	if (poll(pfd, 1, slice) < 0 && errno != EINTR)
		return xr_fail(h, xr_errno(EIO), "waiting for xenstore: %s", strerror(errno));
	rc = xr_drain_events(h, jobs);
	if (rc)
		return xr_fail(h, rc, "reading xenstore watch events: %s", strerror(-rc));
	return 0;
}

int xenreaper_wait(struct xenreaper *h, uint32_t domid, const char *uuid, int timeout_ms,
		   xenreaper_wait_cb cb, void *arg)
{
	char norm[XENREAPER_UUID_LEN], token[64], paths[4][LAYOUT_PATH_LEN], what[128];
	const char *watch_paths[4] = { paths[0], paths[1], paths[2], paths[3] };
	struct xr_ping ping = { 0 };
	struct xenreaper_status st;
	struct pollfd pfd;
	struct xr_snap snap;
	int64_t deadline = -1, now, wake;
	unsigned watched = 0;
	long pid;
	int verdict, rc;

	xr_clear(h);
	if (domid > LAYOUT_DOMID_MAX)
		return xr_fail_domid(h, domid);
	if (lookup_uuid_normalise(uuid, norm))
		return xr_fail(h, -EINVAL, "'%s' is not a UUID (36 characters, as `xl list -v` shows)",
			       uuid ? uuid : "(null)");
	layout_job_path(paths[0], domid, NULL);
	layout_request_path(paths[1], domid);
	xr_copy(paths[2], sizeof(paths[2]), LAYOUT_DAEMON_DIR);
	xr_copy(paths[3], sizeof(paths[3]), LAYOUT_PING_DIR);	/* answers wake us at once */
	snprintf(what, sizeof(what), "the teardown of domain %u, which goes on if xenreaperd recovers",
		 domid);
	snprintf(token, sizeof(token), "xenreaper-wait-%u-%u", domid, ++h->wait_seq);
	rc = xr_watch_all(h, watch_paths, 4, token, &watched, &pfd);
	if (rc)
		goto out;
	if (timeout_ms >= 0)
		deadline = xr_mono_ms() + timeout_ms;
	for (;;) {
		rc = xr_snap_read(h, domid, &snap);
		if (rc)
			goto out;
		verdict = xr_follow(h, &snap, domid, norm, &st);
		if (verdict < 0 && verdict != -EIO) {
			rc = verdict;
			goto out;
		}
		st.daemon_running = xr_daemon_pid(h, &pid) > 0;
		if (cb) {
			rc = cb(&st, arg);
			if (rc) {
				xr_fail(h, rc, "domain %u: stopped waiting: %s", domid,
					xenreaper_strerror(rc));
				goto out;
			}
		}
		if (verdict <= 0) {
			rc = verdict;
			goto out;
		}
		now = xr_mono_ms();
		if (deadline >= 0 && now >= deadline)
			break;
		rc = xr_ping_turn(h, &ping, pid, what, now, &wake);
		if (rc)
			goto out;
		rc = xr_wait_turn(h, &pfd, xr_earliest(deadline, wake), now, XR_TICK_MS, NULL);
		if (!rc)
			rc = xr_ping_turn(h, &ping, pid, what, xr_mono_ms(), &wake);
		if (rc)
			goto out;
		if (deadline >= 0 && xr_mono_ms() >= deadline)
			break;	/* the last reading stands: another would overshoot */
	}
	rc = xr_fail(h, -ETIMEDOUT, "domain %u: still %s after %d ms", domid, st.state_name,
		     timeout_ms);
out:
	xr_ping_cancel(h, &ping);
	while (watched-- > 0)
		xs_unwatch(h->xsh, paths[watched], token);
	return rc;
}

/* ---------------------------------------------------------------- memory */

#define XR_DOMAIN_CHUNK 256
#define XR_MEMORY_TICK_MS 1000

/* Every domain the hypervisor has, with what it holds, in a malloc'd array. */
static int xr_domains(struct xenreaper *h, struct freemem_domain **out, size_t *n_out)
{
	xc_domaininfo_t info[XR_DOMAIN_CHUNK];
	struct freemem_domain *list = NULL, *bigger;
	uint32_t next = 0;
	size_t n = 0;
	int got, rc;

	rc = xr_xc(h);
	if (rc)
		return rc;
	for (;;) {
		h->xc_msg[0] = '\0';
		errno = 0;
		got = h->xc->domain_getinfolist(h->xch, next, XR_DOMAIN_CHUNK, info);
		if (got < 0) {
			rc = xr_errno(EIO);
			rc = xr_fail(h, rc, "cannot list domains: %s",
				     h->xc_msg[0] ? h->xc_msg : strerror(-rc));
			goto out;
		}
		if (got == 0)
			break;
		bigger = realloc(list, (n + got) * sizeof(*list));
		if (!bigger) {
			rc = xr_fail(h, -ENOMEM, "out of memory listing domains");
			goto out;
		}
		list = bigger;
		for (int i = 0; i < got; i++) {
			const uint8_t *u = info[i].handle;

			list[n].domid = info[i].domain;
			list[n].pages = info[i].tot_pages;
			list[n].pool_pages = 0;	/* xr_paging_pools */
			snprintf(list[n].uuid, sizeof(list[n].uuid),
				 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
				 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7],
				 u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
			n++;
		}
		next = info[got - 1].domain + 1;
		if (got < XR_DOMAIN_CHUNK || next > LAYOUT_DOMID_MAX)
			break;
	}
	*out = list;
	list = NULL;
	*n_out = n;
	rc = 0;
out:
	free(list);
	return rc;
}

/* Xen's free pages, less those promised to domains by claims. */
static int xr_free_pages(struct xenreaper *h, uint64_t *pages)
{
	xc_physinfo_t info = { 0 };
	uint64_t free_pages;
	int rc;

	rc = xr_xc(h);
	if (rc)
		return rc;
	h->xc_msg[0] = '\0';
	errno = 0;
	if (h->xc->physinfo(h->xch, &info)) {
		rc = xr_errno(EIO);
		return xr_fail(h, rc, "cannot read the hypervisor's free memory: %s",
			       h->xc_msg[0] ? h->xc_msg : strerror(-rc));
	}
	/* libxl counts scrub_pages as free too (always 0 on 4.17). */
	free_pages = info.free_pages + info.scrub_pages;
	*pages = free_pages > info.outstanding_pages ? free_pages - info.outstanding_pages : 0;
	return 0;
}

/* A zombie's or an orphan's pages may never come back: mark each one in
 * JOBS whose pages last fell (last-release, read in T) longer ago than
 * XENREAPER_FALLING_MS stalled, whatever its eta said when xenreaperd
 * last sampled it, so that freemem_tally does not count them. */
static int xr_mark_stuck(struct xenreaper *h, xs_transaction_t t, struct xenreaper_status *jobs,
			 size_t n)
{
	struct timespec ts;
	int64_t now, last;
	int rc;

	clock_gettime(CLOCK_REALTIME, &ts);
	now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	for (size_t i = 0; i < n; i++) {
		/* Not for finished jobs: hundreds may be kept. */
		if ((jobs[i].state != XENREAPER_STATE_QUEUED && jobs[i].state != XENREAPER_STATE_DESTROYING &&
		     jobs[i].state != XENREAPER_STATE_ZOMBIE && jobs[i].state != XENREAPER_STATE_STUCK) ||
		    !freemem_may_keep_pages(&jobs[i]))
			continue;
		rc = xr_job_time(h, t, jobs[i].domid, "last-release", &last);
		if (rc)
			return rc;
		jobs[i].stalled = !freemem_still_falling(last, now);
	}
	return 0;
}

/* The paging pool (shadow or HAP, the p2m in it) of each domain that a
 * counted teardown in JOBS names, into its pool_pages: Xen frees it with
 * the domain, and it is not in tot_pages.  The domctl answers while the
 * domain dies, 0 once the pool is freed; a PV guest has none. */
static int xr_paging_pools(struct xenreaper *h, const struct xenreaper_status *jobs, size_t n_jobs,
			   struct freemem_domain *domains, size_t n_domains)
{
	struct freemem_domain *d;
	uint64_t bytes;
	int rc;

	for (size_t i = 0; i < n_jobs; i++) {
		if (!freemem_counts(&jobs[i]))
			continue;
		d = NULL;
		for (size_t k = 0; k < n_domains && !d; k++)
			if (domains[k].domid == jobs[i].domid && !strcasecmp(domains[k].uuid, jobs[i].uuid))
				d = &domains[k];
		if (!d)
			continue;
		h->xc_msg[0] = '\0';
		errno = 0;
		bytes = 0;
		if (h->xc->get_paging_mempool_size(h->xch, d->domid, &bytes)) {
			if (errno == EOPNOTSUPP || errno == ESRCH)
				continue;	/* PV, or gone since the list */
			rc = xr_errno(EIO);
			return xr_fail(h, rc, "cannot read the paging pool of domain %u: %s", d->domid,
				       h->xc_msg[0] ? h->xc_msg : strerror(-rc));
		}
		d->pool_pages = bytes >> XC_PAGE_SHIFT;
	}
	return 0;
}

/* xenreaperd's last scrub backlog figure; -1 if it publishes none. */
static int xr_scrub_pending(struct xenreaper *h, xs_transaction_t t, int64_t *pages)
{
	char text[32], *end;
	unsigned long long value;
	int rc;

	*pages = -1;
	rc = xr_read_text(h, t, LAYOUT_MEMORY_DIR "/scrub-pending", text, sizeof(text));
	if (rc)
		return rc == -ENOENT ? 0 : rc;
	if (!isdigit((unsigned char)text[0]))
		return 0;
	errno = 0;
	value = strtoull(text, &end, 10);
	if (!errno && !*end && value <= INT64_MAX)
		*pages = (int64_t)value;
	return 0;
}

/* Whether job DOMID is done or failed, by its state leaf alone. */
static int xr_job_finished(struct xenreaper *h, xs_transaction_t t, uint32_t domid,
			   bool *finished)
{
	char state[16];
	int rc;

	rc = xr_job_text(h, t, domid, "state", state, sizeof(state));
	*finished = !rc && state[0] && xenreaper_state_is_final(xr_state_parse(state));
	return rc;
}

/* Add ST to the N statuses of *LIST (grown by doubling into *ROOM). */
static int xr_push(struct xenreaper_status **list, size_t *n, size_t *room,
		   const struct xenreaper_status *st)
{
	struct xenreaper_status *bigger;

	if (*n == *room) {
		*room = *room ? *room * 2 : 8;
		bigger = realloc(*list, *room * sizeof(**list));
		if (!bigger)
			return -ENOMEM;
		*list = bigger;
	}
	(*list)[(*n)++] = *st;
	return 0;
}

/*
 * In transaction T, every pending request and every job that is not done
 * or failed (what may still give memory back), into a malloc'd *OUT; the
 * finished jobs JOBS knows unchanged are not read again, the others by
 * their state leaf alone, and JOBS is brought up to date.  The events are
 * read after the listing: xenstored sends a client its watch events and
 * replies in order, so by then every change made before the listing has
 * been noted.  -ETIMEDOUT once DEADLINE (-1: none) passes, checked every
 * few jobs, so that even a first reading of a long history keeps a bound.
 */
static int xr_in_flight_tx(struct xenreaper *h, xs_transaction_t t, struct xr_jobs *jobs,
			   int64_t deadline, struct xenreaper_status **out, size_t *n_out)
{
	char **job_ids = NULL, **request_ids = NULL;
	struct xenreaper_status *list = NULL;
	uint8_t finished[sizeof(jobs->finished)] = { 0 };
	unsigned n_job_ids = 0, n_request_ids = 0, probed = 0;
	size_t n = 0, room = 0;
	struct xr_snap snap;
	uint32_t domid;
	bool done;
	int rc;

	rc = xr_directory(h, t, LAYOUT_JOB_DIR, &job_ids, &n_job_ids);
	if (!rc)
		rc = xr_directory(h, t, LAYOUT_REQUEST_DIR, &request_ids, &n_request_ids);
	if (!rc)
		rc = xr_drain_events(h, jobs);
	if (rc)
		goto out;
	/* A request is read with its domid's job: xr_request_wins decides. */
	for (unsigned i = 0; i < n_request_ids; i++) {
		if (layout_parse_domid(request_ids[i], &domid))
			continue;
		rc = xr_snap_read_tx(h, t, domid, &snap);
		if (rc)
			goto out;
		if (xr_request_wins(&snap))
			rc = xr_request_status(h, t, domid, snap.request_uuid, &snap.job);
		else if (!snap.has_job || xenreaper_state_is_final(snap.job.state))
			continue;
		if (!rc)
			rc = xr_push(&list, &n, &room, &snap.job);
		if (rc)
			goto out;
		XR_SET(finished, domid);	/* read: not again below */
	}
	for (unsigned i = 0; i < n_job_ids; i++) {
		if (layout_parse_domid(job_ids[i], &domid) || XR_BIT(finished, domid) ||
		    !XR_BIT(jobs->live, domid))
			continue;
		if (!jobs->all_touched && XR_BIT(jobs->finished, domid) &&
		    !XR_BIT(jobs->touched, domid)) {
			XR_SET(finished, domid);
			continue;
		}
		if (deadline >= 0 && ++probed % 32 == 0 && xr_mono_ms() >= deadline) {
			rc = -ETIMEDOUT;
			goto out;
		}
		rc = xr_job_finished(h, t, domid, &done);
		if (rc == -ENOENT)
			continue;	/* expired meanwhile */
		if (rc)
			goto out;
		if (done) {
			XR_SET(finished, domid);
			continue;
		}
		rc = xr_read_job(h, t, domid, &snap.job);
		if (rc == -ENOENT)
			continue;
		if (!rc)
			rc = xr_push(&list, &n, &room, &snap.job);
		if (rc)
			goto out;
	}
	/* What was read above is known; only finished jobs stay so. */
	for (unsigned i = 0; i < n; i++)
		if (list[i].domid <= LAYOUT_DOMID_MAX)
			finished[list[i].domid / 8] &= (uint8_t)~(1U << (list[i].domid % 8));
	memcpy(jobs->finished, finished, sizeof(finished));
	memset(jobs->touched, 0, sizeof(jobs->touched));
	jobs->all_touched = false;
	*out = list;
	list = NULL;
	*n_out = n;
out:
	free(list);
	free(job_ids);
	free(request_ids);
	return rc;
}

/* xenreaper_memory, with what JOBS knows of the finished jobs and a
 * DEADLINE (-1: none) for reading them; the daemon's pid into *PID (0
 * unless it says it runs). */
static int xr_memory(struct xenreaper *h, struct xenreaper_memory *mem, struct xr_jobs *jobs,
		     int64_t deadline, long *pid)
{
	struct xenreaper_status *in_flight = NULL;
	struct freemem_domain *domains = NULL;
	size_t n_jobs = 0, n_domains = 0;
	xs_transaction_t t;
	int rc;

	memset(mem, 0, sizeof(*mem));
	/* Which domids have a domain, to pass over the jobs of those gone. */
	rc = xr_domains(h, &domains, &n_domains);
	if (rc)
		return rc;
	memset(jobs->live, 0, sizeof(jobs->live));
	for (size_t i = 0; i < n_domains; i++)
		if (domains[i].domid <= LAYOUT_DOMID_MAX)
			XR_SET(jobs->live, domains[i].domid);
	free(domains);
	domains = NULL;
	/* Teardowns first, then the domains they hold and their paging
	 * pools, then free memory: pages only ever move from a dying domain
	 * to the free pool, so reading in this order may count a page twice,
	 * but never not at all, and a wait is never given up for pages in
	 * transit.  (A domain made since the list above, whose teardown is
	 * already a job, is seen on the next reading: its job's nodes are
	 * new, an event.) */
	rc = xr_tx_start(h, &t);
	if (rc)
		return rc;
	rc = xr_in_flight_tx(h, t, jobs, deadline, &in_flight, &n_jobs);
	if (!rc)
		rc = xr_mark_stuck(h, t, in_flight, n_jobs);
	if (!rc)
		rc = xr_scrub_pending(h, t, &mem->scrub_pending_pages);
	xs_transaction_end(h->xsh, t, true);
	if (rc == -ETIMEDOUT) {
		rc = xr_fail(h, rc, "the time ran out while reading the teardown jobs xenreaperd keeps in xenstore");
		goto out;
	}
	if (rc) {
		rc = xr_fail(h, rc, "reading the teardown jobs from xenstore: %s", strerror(-rc));
		goto out;
	}
	rc = xr_domains(h, &domains, &n_domains);
	if (!rc)
		rc = xr_paging_pools(h, in_flight, n_jobs, domains, n_domains);
	if (rc)
		goto out;
	rc = xr_free_pages(h, &mem->free_pages);
	if (rc)
		goto out;
	freemem_tally(in_flight, n_jobs, domains, n_domains, mem);
	rc = xr_daemon_pid(h, pid);
	mem->daemon_running = rc > 0;
	mem->largest.daemon_running = mem->daemon_running;
	rc = 0;
out:
	free(in_flight);
	free(domains);
	return rc;
}

int xenreaper_memory(struct xenreaper *h, struct xenreaper_memory *mem)
{
	struct xr_jobs *jobs = calloc(1, sizeof(*jobs));
	int rc;

	xr_clear(h);
	if (!jobs)
		return xr_fail(h, -ENOMEM, "out of memory");
	jobs->all_touched = true;
	rc = xr_memory(h, mem, jobs, -1, NULL);
	free(jobs);
	return rc;
}

int xenreaper_wait_free(struct xenreaper *h, uint64_t pages, int timeout_ms,
			xenreaper_memory_cb cb, void *arg)
{
	static const char *const paths[] = { LAYOUT_ROOT, "@releaseDomain" };
	char token[64], why[512], job[256], what[64];
	struct xenreaper_memory mem;
	enum freemem_verdict verdict;
	struct xr_ping ping = { 0 };
	struct xr_jobs *jobs = NULL;
	struct pollfd pfd;
	int64_t deadline = -1, start, now, wake;
	unsigned watched = 0;
	long pid;
	int rc;

	xr_clear(h);
	jobs = calloc(1, sizeof(*jobs));
	if (!jobs)
		return xr_fail(h, -ENOMEM, "out of memory");
	start = xr_mono_ms();
	if (timeout_ms >= 0)
		deadline = start + timeout_ms;
	snprintf(token, sizeof(token), "xenreaper-wait-free-%u", ++h->wait_seq);
	snprintf(what, sizeof(what), "%" PRIu64 " MiB to be free", freemem_mib_up(pages));
	/* Every job, request and daemon node, and domains dying: the free
	 * pool grows only when one of those moves. */
	rc = xr_watch_all(h, paths, 2, token, &watched, &pfd);
	if (rc)
		goto out;
	for (;;) {
		rc = xr_memory(h, &mem, jobs, deadline, &pid);
		if (rc)
			goto out;
		verdict = freemem_decide(pages, mem.free_pages, mem.releasing_pages,
					 mem.daemon_running);
		if (cb) {
			rc = cb(&mem, arg);
			if (rc) {
				xr_fail(h, rc, "stopped waiting for memory: %s", xenreaper_strerror(rc));
				goto out;
			}
		}
		switch (verdict) {
		case FREEMEM_NOW:
			rc = 0;
			goto out;
		case FREEMEM_CANNOT:
			freemem_explain(verdict, pages, &mem, why, sizeof(why));
			rc = xr_fail(h, -ENOSPC, "%s", why);
			goto out;
		case FREEMEM_NO_DAEMON:
			freemem_explain(verdict, pages, &mem, why, sizeof(why));
			rc = xr_fail(h, -EHOSTDOWN, "%s", why);
			goto out;
		case FREEMEM_WAIT:
			break;
		}
		now = xr_mono_ms();
		if (deadline >= 0 && now >= deadline)
			break;
		rc = xr_ping_turn(h, &ping, pid, what, now, &wake);
		if (rc)
			goto out;
		rc = xr_wait_turn(h, &pfd, xr_earliest(deadline, wake), now, XR_MEMORY_TICK_MS,
				  jobs);
		if (!rc)
			rc = xr_ping_turn(h, &ping, pid, what, xr_mono_ms(), &wake);
		if (rc)
			goto out;
		/* Woken at the deadline: the last reading is the verdict; one
		 * more, which can take a second on a loaded host, would
		 * overshoot the bound. */
		now = xr_mono_ms();
		if (deadline >= 0 && now >= deadline)
			break;
	}
	freemem_describe(&mem.largest, job, sizeof(job));
	rc = xr_fail(h, -ETIMEDOUT, "still %" PRIu64 " MiB short after %.1f s, waiting on %s%s",
		     freemem_mib_up(pages - mem.free_pages), (now - start) / 1000.0, job,
		     mem.teardowns > 1 ? " (and more)" : "");
out:
	xr_ping_cancel(h, &ping);
	while (watched-- > 0)
		xs_unwatch(h->xsh, paths[watched], token);
	free(jobs);
	return rc;
}
