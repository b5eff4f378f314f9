/*
 * hv_xen: the hypervisor interface on Xen's own libraries.  Domain lists
 * come from one xc_domain_getinfolist hypercall; teardown is
 * libxl_domain_destroy, the same full toolstack teardown as `xl destroy`
 * (devices, device model, xenstore, then the preemptible domctl).  It
 * does not retry or interpret failures; reaper.c does.
 *
 * Two kinds of instance, for two processes.  The daemon's (hv_xen_new)
 * never destroys: libxl forks from inside a destroy, and the daemon keeps
 * no call that forks.  Its libxl context, for pool names, is in libxl's
 * mainloop child mode, so libxl never takes SIGCHLD, which the daemon
 * reaps its helpers with (runner_spawn.c).  The teardown helper's
 * (hv_xen_new_teardown) is in libxl's default mode, as xl's is: libxl
 * owns SIGCHLD while it has children, in a process with one thread.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xenctrl.h>
#include <xenstore.h>
#include <libxl.h>
#include <libxl_utils.h>

#include "heapdump.h"
#include "hv.h"
#include "log.h"

#define HV_XEN_BATCH 256

/* physinfo's scrub_pages is the real backlog: the capability the series in
 * xen-patches/4.17 adds (0003).  Not in any released Xen's headers, and
 * its bit is this series' proposal until xen-devel takes it. */
#ifndef XEN_SYSCTL_PHYSCAP_scrub_pages
#define XEN_SYSCTL_PHYSCAP_scrub_pages (1u << 10)
#endif

struct hv_xen {
	struct hv base;
	xc_interface *xch;
	libxl_ctx *ctx;
	xentoollog_logger logger;	/* libxl's and libxc's reports, into log.c */
	uint32_t self_domid;
	uint32_t console_index;	/* how far the console ring has been read */
	bool scrub_exact;	/* XEN_SYSCTL_PHYSCAP_scrub_pages, read at start */
};

/* A report of libxl or libxc as one of the daemon's messages (log.c): a
 * priority, one line, escaped, as xenreaperd(8) promises; a stdio logger
 * wrote it to stderr raw, without one.  Errors only: the daemon says the
 * rest in its own words. */
static void hv_xen_log_vmessage(xentoollog_logger *logger, xentoollog_level level, int errnoval,
				const char *context, const char *format, va_list ap)
	__attribute__((format(printf, 5, 0)));
static void hv_xen_log_vmessage(xentoollog_logger *logger, xentoollog_level level, int errnoval,
				const char *context, const char *format, va_list ap)
{
	char text[1024];

	(void)logger;
	if (level < XTL_ERROR)
		return;
	vsnprintf(text, sizeof(text), format, ap);
	log_msg(level >= XTL_CRITICAL ? LOG_CRIT : LOG_ERR, "%s%s%s: %s%s%s", context ? context : "",
		context ? ": " : "", xtl_level_to_string(level), text, errnoval >= 0 ? ": " : "",
		errnoval >= 0 ? strerror(errnoval) : "");
}

static struct hv_xen *hv_xen_of(struct hv *hv)
{
	return (struct hv_xen *)hv;
}

/* The daemon's context never forks: libxl leaves SIGCHLD alone. */
static const libxl_childproc_hooks hv_xen_daemon_hooks = {
	.chldowner = libxl_sigchld_owner_mainloop,
};

static int hv_xen_list(struct hv *hv, struct hv_domain **out, size_t *n_out)
{
	struct hv_xen *hx = hv_xen_of(hv);
	xc_domaininfo_t info[HV_XEN_BATCH];
	struct hv_domain *domains = NULL, *grown;
	size_t n = 0;
	uint32_t next = 0;
	int got, rc;

	for (;;) {
		got = xc_domain_getinfolist(hx->xch, next, HV_XEN_BATCH, info);
		if (got < 0)
			rc = errno ? -errno : -EIO;
		if (got < 0) {
			free(domains);
			return rc;
		}
		if (got == 0)
			break;
		grown = realloc(domains, (n + got) * sizeof(*domains));
		if (!grown) {
			free(domains);
			return -ENOMEM;
		}
		domains = grown;
		for (int i = 0; i < got; i++) {
			struct hv_domain *d = &domains[n++];

			memset(d, 0, sizeof(*d));
			d->domid = info[i].domain;
			memcpy(d->uuid, info[i].handle, HV_UUID_LEN);
			d->tot_pages = info[i].tot_pages;
			d->cpupool = info[i].cpupool;
			d->dying = info[i].flags & XEN_DOMINF_dying;
			d->shutdown = info[i].flags & XEN_DOMINF_shutdown;
			d->shutdown_reason = (info[i].flags >> XEN_DOMINF_shutdownshift) &
					     XEN_DOMINF_shutdownmask;
		}
		if (got < HV_XEN_BATCH)
			break;
		next = info[got - 1].domain + 1;
	}
	*out = domains;
	*n_out = n;
	return 0;
}

/* libxl's error codes as the errno values hv.h promises. */
static int hv_xen_errno(int libxl_rc)
{
	switch (libxl_rc) {
	case 0:
		return 0;
	case ERROR_DOMAIN_NOTFOUND:
		return -ESRCH;
	case ERROR_INVAL:
		return -EINVAL;
	case ERROR_NOMEM:
		return -ENOMEM;
	case ERROR_LOCK_FAIL:
		return -EBUSY;
	default:
		return -EIO;
	}
}

/* Whether the guest's own libxl configuration dumps its core on the
 * shutdown REASON (XEN_DOMINF shutdown code): xl's domain-death handler
 * then dumps it while it stays crashed, and destroys or restarts it
 * after.  A domain libxl keeps no configuration for is not one (another
 * toolstack's; its death is ours to handle).  -errno if it cannot be told.
 * libxl takes the domain's userdata lock, which a teardown of it by xl may
 * hold for long. */
static int hv_xen_dumps_core(libxl_ctx *ctx, uint32_t domid, unsigned reason, bool *dumps)
{
	libxl_domain_config config;
	libxl_action_on_shutdown action;
	uint8_t *json = NULL;
	int len = 0, rc;

	*dumps = false;
	libxl_domain_config_init(&config);
	rc = libxl_userdata_retrieve(ctx, domid, "libxl-json", &json, &len);
	if (rc || !len) {
		rc = rc ? hv_xen_errno(rc) : 0;
		goto out;
	}
	rc = libxl_domain_config_from_json(ctx, &config, (const char *)json) ? -EINVAL : 0;
	if (rc)
		goto out;
	switch (reason) {
	case SHUTDOWN_poweroff:
		action = config.on_poweroff;
		break;
	case SHUTDOWN_crash:
		action = config.on_crash;
		break;
	case SHUTDOWN_watchdog:
		action = config.on_watchdog;
		break;
	default:
		goto out;
	}
	*dumps = action == LIBXL_ACTION_ON_SHUTDOWN_COREDUMP_DESTROY ||
		 action == LIBXL_ACTION_ON_SHUTDOWN_COREDUMP_RESTART;
out:
	libxl_domain_config_dispose(&config);
	free(json);
	return rc;
}

/* The UUID guard once more, right before the teardown: the daemon
 * checked it when it started the job, but the domid may have been freed
 * and reused since. */
static int hv_xen_destroy(struct hv *hv, uint32_t domid, const uint8_t uuid[HV_UUID_LEN],
			  unsigned flags)
{
	bool dumps;
	struct hv_xen *hx = hv_xen_of(hv);
	xc_domaininfo_t info;
	libxl_ctx *ctx = hx->ctx;
	int got, rc;

	got = xc_domain_getinfolist(hx->xch, domid, 1, &info);
	rc = got < 0 ? (errno ? -errno : -EIO) : 0;
	if (rc)
		return rc;
	if (got == 0 || info.domain != domid)
		return -ESRCH;
	if (memcmp(info.handle, uuid, HV_UUID_LEN))
		return -ESTALE;
	if ((flags & HV_DESTROY_UNLESS_TOOLSTACK_ACTS) && (info.flags & XEN_DOMINF_shutdown) &&
	    !(info.flags & XEN_DOMINF_dying)) {
		rc = hv_xen_dumps_core(ctx, domid, (info.flags >> XEN_DOMINF_shutdownshift) &
				       XEN_DOMINF_shutdownmask, &dumps);
		if (rc || dumps)
			return -EINPROGRESS;
	}
	return hv_xen_errno(libxl_domain_destroy(ctx, domid, NULL));
}

static int hv_xen_self_domid(struct hv *hv, uint32_t *domid)
{
	*domid = hv_xen_of(hv)->self_domid;
	return 0;
}

static int hv_xen_pool_name(struct hv *hv, uint32_t poolid, char **name)
{
	char *found = libxl_cpupoolid_to_name(hv_xen_of(hv)->ctx, poolid);

	if (!found)
		return -ENOENT;
	*name = found;
	return 0;
}

/* Read the console ring from where we left off to its end, appending the
 * text to *TEXT (malloc'd, *LEN bytes) unless TEXT is NULL. */
static int hv_xen_console_read(struct hv_xen *hx, char **text, size_t *len)
{
	char chunk[16384];
	unsigned n;
	char *grown;
	int rc;

	for (;;) {
		n = sizeof(chunk);
		rc = xc_readconsolering(hx->xch, chunk, &n, 0, 1, &hx->console_index) ?
		     (errno ? -errno : -EIO) : 0;
		if (rc)
			return rc;
		if (n == 0)
			return 0;
		if (text) {
			grown = realloc(*text, *len + n);
			if (!grown)
				return -ENOMEM;
			memcpy(grown + *len, chunk, n);
			*text = grown;
			*len += n;
		}
	}
}

/* Debug key 'H' prints the heap, with "Node N has M unscrubbed pages",
 * synchronously into the console ring: read back just what it added. */
static int hv_xen_probe_heap_dump(struct hv_xen *hx, struct hv_scrub *out)
{
	struct heapdump dump;
	char *text = NULL;
	size_t len = 0;
	int rc;

	rc = hv_xen_console_read(hx, NULL, NULL);	/* skip what came before */
	if (rc)
		return rc;
	rc = xc_send_debug_keys(hx->xch, "H") ? (errno ? -errno : -EIO) : 0;
	if (rc)
		return rc;
	rc = hv_xen_console_read(hx, &text, &len);
	if (!rc) {
		heapdump_parse(text ? text : "", len, &dump);
		rc = dump.seen_dump ? 0 : -ENODATA;
	}
	free(text);
	if (rc)
		return rc;
	out->source = HV_SCRUB_HEAP_DUMP;
	out->pages = dump.total;
	out->n_nodes = dump.n_nodes < HV_SCRUB_MAX_NODES ? dump.n_nodes : HV_SCRUB_MAX_NODES;
	memcpy(out->node_pages, dump.node_pages, out->n_nodes * sizeof(*out->node_pages));
	return 0;
}

static int hv_xen_scrub_probe(struct hv *hv, unsigned sources, struct hv_scrub *out)
{
	struct hv_xen *hx = hv_xen_of(hv);
	xc_physinfo_t info = { 0 };
	int rc;

	memset(out, 0, sizeof(*out));
	/* physinfo is cheap and silent.  A released Xen always reports 0
	 * there, which is indistinguishable from "nothing pending", so unless
	 * the hypervisor says its figure is real, only a non-zero figure
	 * counts when the heap dump is also allowed. */
	if (sources & HV_SCRUB_PHYSINFO) {
		rc = xc_physinfo(hx->xch, &info) ? (errno ? -errno : -EIO) : 0;
		if (rc)
			return rc;
		if (hx->scrub_exact || info.scrub_pages || !(sources & HV_SCRUB_HEAP_DUMP)) {
			out->source = HV_SCRUB_PHYSINFO;
			out->pages = info.scrub_pages;
			return 0;
		}
	}
	if (sources & HV_SCRUB_HEAP_DUMP)
		return hv_xen_probe_heap_dump(hx, out);
	return -ENODATA;
}

static bool hv_xen_scrub_exact(struct hv *hv)
{
	return hv_xen_of(hv)->scrub_exact;
}

static int hv_xen_free_pages(struct hv *hv, uint64_t *pages, uint64_t *outstanding)
{
	xc_physinfo_t info = { 0 };
	int rc;

	rc = xc_physinfo(hv_xen_of(hv)->xch, &info) ? (errno ? -errno : -EIO) : 0;
	if (rc)
		return rc;
	*pages = info.free_pages;
	*outstanding = info.outstanding_pages;
	return 0;
}

/* XEN_DOMCTL_get_paging_mempool_size: in bytes, the p2m pages included
 * (hap/shadow_get_allocation_bytes), with no check that the domain is
 * alive, unlike the older XEN_DOMCTL_SHADOW_OP_GET_ALLOCATION, which
 * ignores dying domains; x86 answers -EOPNOTSUPP for PV guests. */
static int hv_xen_paging_pool(struct hv *hv, uint32_t domid, uint64_t *pages)
{
	uint64_t bytes = 0;
	int rc;

	rc = xc_get_paging_mempool_size(hv_xen_of(hv)->xch, domid, &bytes) ?
	     (errno ? -errno : -EIO) : 0;
	if (rc)
		return rc;
	*pages = bytes >> XC_PAGE_SHIFT;
	return 0;
}

static void hv_xen_free(struct hv *hv)
{
	struct hv_xen *hx = hv_xen_of(hv);

	if (hx->ctx)
		libxl_ctx_free(hx->ctx);
	if (hx->xch)
		xc_interface_close(hx->xch);
	free(hx);
}

static const struct hv_ops hv_xen_ops = {
	.list = hv_xen_list,
	.destroy = hv_xen_destroy,
	.self_domid = hv_xen_self_domid,
	.pool_name = hv_xen_pool_name,
	.scrub_probe = hv_xen_scrub_probe,
	.scrub_exact = hv_xen_scrub_exact,
	.free_pages = hv_xen_free_pages,
	.paging_pool = hv_xen_paging_pool,
	.free = hv_xen_free,
};

/* The domain we run in: xenstore's relative "domid" node; dom0 without one. */
static uint32_t hv_xen_read_self_domid(void)
{
	struct xs_handle *xsh = xs_open(XS_OPEN_READONLY);
	uint32_t domid = 0;
	unsigned len;
	char *text;

	if (!xsh)
		return 0;
	text = xs_read(xsh, XBT_NULL, "domid", &len);
	if (text)
		domid = strtoul(text, NULL, 10);
	free(text);
	xs_close(xsh);
	return domid;
}

static int hv_xen_open(bool teardown, struct hv **out)
{
	xc_physinfo_t info = { 0 };
	struct hv_xen *hx;
	int rc;

	hx = calloc(1, sizeof(*hx));
	if (!hx)
		return -ENOMEM;
	hx->base.ops = &hv_xen_ops;
	hx->logger.vmessage = hv_xen_log_vmessage;
	hx->xch = xc_interface_open(&hx->logger, NULL, 0);
	if (!hx->xch) {
		rc = errno ? -errno : -EACCES;
		goto out;
	}
	if (libxl_ctx_alloc(&hx->ctx, LIBXL_VERSION, 0, &hx->logger)) {
		rc = -EACCES;
		goto out;
	}
	if (!teardown)
		libxl_childproc_setmode(hx->ctx, &hv_xen_daemon_hooks, NULL);
	hx->self_domid = hv_xen_read_self_domid();
	/* The capability cannot change while the hypervisor runs. */
	if (!xc_physinfo(hx->xch, &info))
		hx->scrub_exact = info.capabilities & XEN_SYSCTL_PHYSCAP_scrub_pages;
	*out = &hx->base;
	return 0;
out:
	hv_xen_free(&hx->base);
	return rc;
}

int hv_xen_new(struct hv **out)
{
	return hv_xen_open(false, out);
}

int hv_xen_new_teardown(struct hv **out)
{
	return hv_xen_open(true, out);
}
