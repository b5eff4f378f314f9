/*
 * xl-front-need: the memory an `xl create` will ask Xen for, so that the
 * front can tell whether the teardowns under way must finish first.  The
 * configuration is read with xl's own parser, libxlutil, so that its
 * syntax, its "last assignment wins" and the key=value words from the
 * command line are exactly xl's; libxlutil needs libxenlight, so it is
 * loaded with dlopen only here, for `xl create`, and never by `xl destroy
 * --async` or libxenreaper.  The arithmetic is libxl 4.17's
 * libxl_domain_need_memory(): the guest's memory, its paging pool
 * (shadow_memory, or libxl's default from maxmem and maxvcpus), IOMMU
 * tables for passthrough="sync_pt", a stub domain and its video memory,
 * and libxl's 1 MiB (PV) or 2 MiB (HVM, PVH) of extra, rounded up to
 * 2 MiB; only the few keys that enter it are read (vNUMA sizes are not).
 * This file does not talk to Xen and prints nothing.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "xl-front-need.h"

#define XL_FRONT_MEMKB_DEFAULT UINT64_MAX	/* libxl's LIBXL_MEMKB_DEFAULT */

void xl_front_guest_init(struct xl_front_guest *g)
{
	memset(g, 0, sizeof(*g));
	g->type = XL_FRONT_PV;
	g->memory_mib = g->maxmem_mib = -1;
	g->vcpus = g->maxvcpus = -1;
	g->hap = -1;
	g->shadow_mib = -1;
	g->vga = XL_FRONT_VGA_CIRRUS;
	g->videoram_mib = -1;
	g->stubdom_mib = -1;
}

/* libxl__get_required_iommu_memory(): 4-level tables of 512 entries. */
static uint64_t xl_front_iommu_kb(uint64_t maxmem_kb)
{
	uint64_t pages = 0, mem_pages = maxmem_kb / 4;

	for (int level = 0; level < 4; level++) {
		mem_pages = (mem_pages + 511) / 512;
		pages += mem_pages;
	}
	return pages * 4;
}

/* libxl's default video memory for an HVM guest's device model. */
static uint64_t xl_front_video_kb(const struct xl_front_guest *g)
{
	if (g->videoram_mib >= 0)
		return (uint64_t)g->videoram_mib * 1024;
	switch (g->vga) {
	case XL_FRONT_VGA_NONE:
		return 0;
	case XL_FRONT_VGA_STD:
		return g->dm_traditional ? 8 * 1024 : 16 * 1024;
	case XL_FRONT_VGA_QXL:
		return 128 * 1024;
	case XL_FRONT_VGA_CIRRUS:
	default:
		return g->dm_traditional ? 4 * 1024 : 8 * 1024;
	}
}

uint64_t xl_front_need_kb(const struct xl_front_guest *g)
{
	uint64_t target = XL_FRONT_MEMKB_DEFAULT, max = XL_FRONT_MEMKB_DEFAULT;
	uint64_t shadow, iommu, need, max_vcpus;
	bool hap;

	/* xl_parse.c: max defaults to memory; libxl then takes 32 MiB for
	 * both when neither is given (libxl computes the paging pool before
	 * that default and gets a nonsense figure; 32 MiB is used here). */
	if (g->memory_mib >= 0)
		target = (uint64_t)g->memory_mib * 1024;
	if (g->maxmem_mib >= 0)
		max = (uint64_t)g->maxmem_mib * 1024;
	if (max == XL_FRONT_MEMKB_DEFAULT)
		max = target;
	if (max == XL_FRONT_MEMKB_DEFAULT)
		max = 32 * 1024;
	if (target == XL_FRONT_MEMKB_DEFAULT)
		target = max;

	/* libxl__domain_config_setdefault() runs before max_vcpus gets its
	 * default of 1: a config without vcpus= counts 0 here, as there. */
	max_vcpus = g->maxvcpus >= 0 ? (uint64_t)g->maxvcpus : g->vcpus >= 0 ? (uint64_t)g->vcpus : 0;
	hap = g->type != XL_FRONT_PV && g->hap != 0;
	if (g->shadow_mib >= 0)
		shadow = (uint64_t)g->shadow_mib * 1024;
	else	/* libxl__get_required_paging_memory(), x86 */
		shadow = 4 * (256 * max_vcpus + ((g->type != XL_FRONT_PV) + !hap) * (max / 1024));
	iommu = g->sync_pt ? xl_front_iommu_kb(max) : 0;

	need = target + shadow + iommu;
	if (g->type == XL_FRONT_PV) {
		need += 1024;				/* LIBXL_PV_EXTRA_MEMORY */
	} else {
		need += 2048;				/* LIBXL_HVM_EXTRA_MEMORY */
		if (g->stubdom && g->type == XL_FRONT_HVM) {
			if (g->stubdom_mib >= 0)
				need += (uint64_t)g->stubdom_mib * 1024;
			else	/* MiniOS for qemu-traditional, else Linux */
				need += g->dm_traditional ? 28 * 1024 : 128 * 1024;
			need += xl_front_video_kb(g);
		}
	}
	if (need % 2048)
		need += 2048 - need % 2048;
	return need;
}

/* ---------------------------------------------------------------- libxlutil */

struct XLU_Config;

struct xl_front_xlu {
	void *handle;
	struct XLU_Config *(*init)(FILE *report, const char *report_filename);
	int (*readdata)(struct XLU_Config *cfg, const char *data, int length);
	void (*destroy)(struct XLU_Config *cfg);
	int (*get_string)(const struct XLU_Config *cfg, const char *n, const char **value_r,
			  int dont_warn);
	int (*get_long)(const struct XLU_Config *cfg, const char *n, long *value_r, int dont_warn);
};

static int xl_front_xlu_open(const char *const *libraries, struct xl_front_xlu *x,
			     char *why, size_t why_len)
{
	const char *last = "no library named";

	memset(x, 0, sizeof(*x));
	for (const char *const *name = libraries; *name && !x->handle; name++) {
		x->handle = dlopen(*name, RTLD_NOW | RTLD_LOCAL);
		if (!x->handle)
			last = dlerror();
	}
	if (!x->handle) {
		snprintf(why, why_len, "cannot load xl's config parser, libxlutil: %s", last);
		return -ENOENT;
	}
	/* dlsym hands back void *; POSIX makes it callable. */
	*(void **)&x->init = dlsym(x->handle, "xlu_cfg_init");
	*(void **)&x->readdata = dlsym(x->handle, "xlu_cfg_readdata");
	*(void **)&x->destroy = dlsym(x->handle, "xlu_cfg_destroy");
	*(void **)&x->get_string = dlsym(x->handle, "xlu_cfg_get_string");
	*(void **)&x->get_long = dlsym(x->handle, "xlu_cfg_get_long");
	if (!x->init || !x->readdata || !x->destroy || !x->get_string || !x->get_long) {
		snprintf(why, why_len, "libxlutil lacks the xlu_cfg_* functions xl uses");
		dlclose(x->handle);
		x->handle = NULL;
		return -ENOENT;
	}
	return 0;
}

/* The long value of KEY into *VALUE, left alone when KEY is missing or
 * not a number (xl ignores it then too). */
static void xl_front_get_long(const struct xl_front_xlu *x, const struct XLU_Config *cfg,
			      const char *key, long *value)
{
	long l;

	if (!x->get_long(cfg, key, &l, 1))
		*value = l;
}

/* xl_parse.c: type= matches any prefix of hvm, pv, pvh, in that order. */
static int xl_front_read_type(const struct xl_front_xlu *x, const struct XLU_Config *cfg,
			      struct xl_front_guest *g, char *why, size_t why_len)
{
	const char *buf;
	bool typed = false;
	size_t n;

	if (!x->get_string(cfg, "type", &buf, 1)) {
		n = strlen(buf);
		if (!strncmp(buf, "hvm", n))
			g->type = XL_FRONT_HVM;
		else if (!strncmp(buf, "pv", n))
			g->type = XL_FRONT_PV;
		else if (!strncmp(buf, "pvh", n))
			g->type = XL_FRONT_PVH;
		else
			goto bad;
		typed = true;
	}
	if (!x->get_string(cfg, "builder", &buf, 1)) {
		enum xl_front_type builder;

		n = strlen(buf);
		if (!strncmp(buf, "hvm", n))
			builder = XL_FRONT_HVM;
		else if (!strncmp(buf, "generic", n))
			builder = XL_FRONT_PV;
		else
			goto bad;
		if (typed && builder != g->type)
			goto bad;
		g->type = builder;
	}
	return 0;
bad:
	snprintf(why, why_len, "xl refuses the guest's type= or builder=");
	return -EINVAL;
}

int xl_front_guest_read(const char *const *libraries, const char *text, size_t len,
			struct xl_front_guest *g, char *why, size_t why_len)
{
	struct XLU_Config *cfg = NULL;
	struct xl_front_xlu x;
	FILE *report = NULL;
	const char *buf;
	long l;
	int rc;

	xl_front_guest_init(g);
	rc = xl_front_xlu_open(libraries, &x, why, why_len);
	if (rc)
		return rc;
	/* xl prints the config's warnings and errors itself, when it runs. */
	report = fopen("/dev/null", "we");
	cfg = report ? x.init(report, "config") : NULL;
	if (!cfg) {
		snprintf(why, why_len, "libxlutil cannot start: %s", strerror(errno ? errno : ENOMEM));
		rc = -ENOMEM;
		goto out;
	}
	if (len > 0x7fffffff || x.readdata(cfg, text, (int)len)) {
		snprintf(why, why_len, "xl cannot parse the config (it will say where)");
		rc = -EINVAL;
		goto out;
	}
	rc = xl_front_read_type(&x, cfg, g, why, why_len);
	if (rc)
		goto out;
	xl_front_get_long(&x, cfg, "memory", &g->memory_mib);
	xl_front_get_long(&x, cfg, "maxmem", &g->maxmem_mib);
	xl_front_get_long(&x, cfg, "vcpus", &g->vcpus);
	xl_front_get_long(&x, cfg, "maxvcpus", &g->maxvcpus);
	xl_front_get_long(&x, cfg, "shadow_memory", &g->shadow_mib);
	xl_front_get_long(&x, cfg, "videoram", &g->videoram_mib);
	xl_front_get_long(&x, cfg, "stubdomain_memory", &g->stubdom_mib);
	if (!x.get_long(cfg, "hap", &l, 1))
		g->hap = !!l;
	if (!x.get_long(cfg, "device_model_stubdomain_override", &l, 1))
		g->stubdom = !!l;
	if (!x.get_string(cfg, "passthrough", &buf, 1))
		g->sync_pt = !strcmp(buf, "sync_pt");
	if (!x.get_string(cfg, "device_model_version", &buf, 1))
		g->dm_traditional = !strcmp(buf, "qemu-xen-traditional");
	if (!x.get_string(cfg, "vga", &buf, 1)) {
		if (!strcmp(buf, "stdvga"))
			g->vga = XL_FRONT_VGA_STD;
		else if (!strcmp(buf, "none"))
			g->vga = XL_FRONT_VGA_NONE;
		else if (!strcmp(buf, "qxl"))
			g->vga = XL_FRONT_VGA_QXL;
	} else if (!x.get_long(cfg, "stdvga", &l, 1)) {
		g->vga = l ? XL_FRONT_VGA_STD : XL_FRONT_VGA_CIRRUS;
	}
	if (g->memory_mib == 0 || g->memory_mib < -1 || g->maxmem_mib < -1 ||
	    g->memory_mib > (long)(UINT64_MAX / 1024 / 4) || g->maxmem_mib > (long)(UINT64_MAX / 1024 / 4)) {
		snprintf(why, why_len, "memory=%ld or maxmem=%ld is not a size xl can build",
			 g->memory_mib, g->maxmem_mib);
		rc = -EINVAL;
		goto out;
	}
	rc = 0;
out:
	if (cfg)
		x.destroy(cfg);
	if (report)
		fclose(report);
	dlclose(x.handle);
	return rc;
}
