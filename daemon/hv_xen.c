/*
 * hv_xen: the hypervisor interface on Xen's own libraries.  Domain lists
 * come from one xc_domain_getinfolist hypercall; teardown is
 * libxl_domain_destroy, the same full toolstack teardown as `xl destroy`
 * (devices, device model, xenstore, then the preemptible domctl).  The
 * libxl context is created once and kept: that start-up is what `xl` pays
 * on every call.  It does not retry or interpret failures; reaper.c does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <xenctrl.h>
#include <xenstore.h>
#include <libxl.h>
#include <libxl_utils.h>

#include "hv.h"

#define HV_XEN_BATCH 256

struct hv_xen {
	struct hv base;
	xc_interface *xch;	/* main thread only */
	libxl_ctx *ctx;		/* libxl is thread-safe: shared by workers */
	xentoollog_logger_stdiostream *logger;
	uint32_t self_domid;
};

static struct hv_xen *hv_xen_of(struct hv *hv)
{
	return (struct hv_xen *)hv;
}

static int hv_xen_list(struct hv *hv, struct hv_domain **out, size_t *n_out)
{
	struct hv_xen *hx = hv_xen_of(hv);
	xc_domaininfo_t info[HV_XEN_BATCH];
	struct hv_domain *domains = NULL, *grown;
	size_t n = 0;
	uint32_t next = 0;
	int got;

	for (;;) {
		got = xc_domain_getinfolist(hx->xch, next, HV_XEN_BATCH, info);
		if (got < 0) {
			free(domains);
			return errno ? -errno : -EIO;
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

static int hv_xen_destroy(struct hv *hv, uint32_t domid)
{
	int rc = libxl_domain_destroy(hv_xen_of(hv)->ctx, domid, NULL);

	switch (rc) {
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

static void hv_xen_free(struct hv *hv)
{
	struct hv_xen *hx = hv_xen_of(hv);

	if (hx->ctx)
		libxl_ctx_free(hx->ctx);
	if (hx->xch)
		xc_interface_close(hx->xch);
	if (hx->logger)
		xtl_logger_destroy((xentoollog_logger *)hx->logger);
	free(hx);
}

static const struct hv_ops hv_xen_ops = {
	.list = hv_xen_list,
	.destroy = hv_xen_destroy,
	.self_domid = hv_xen_self_domid,
	.pool_name = hv_xen_pool_name,
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

int hv_xen_new(struct hv **out)
{
	struct hv_xen *hx;
	int rc;

	hx = calloc(1, sizeof(*hx));
	if (!hx)
		return -ENOMEM;
	hx->base.ops = &hv_xen_ops;
	/* libxl reports through this logger; errors only, the daemon logs the rest. */
	hx->logger = xtl_createlogger_stdiostream(stderr, XTL_ERROR, 0);
	hx->xch = xc_interface_open(NULL, NULL, 0);
	if (!hx->logger || !hx->xch) {
		rc = errno ? -errno : -EACCES;
		goto out;
	}
	if (libxl_ctx_alloc(&hx->ctx, LIBXL_VERSION, 0, (xentoollog_logger *)hx->logger)) {
		rc = -EACCES;
		goto out;
	}
	hx->self_domid = hv_xen_read_self_domid();
	*out = &hx->base;
	return 0;
out:
	hv_xen_free(&hx->base);
	return rc;
}
