/*
 * xl-front-need: how much memory a guest's xl configuration needs, as
 * libxl 4.17 reckons it, and the reading of that configuration through
 * xl's own parser, libxlutil, loaded only when asked.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum xl_front_type { XL_FRONT_PV, XL_FRONT_PVH, XL_FRONT_HVM };
enum xl_front_vga { XL_FRONT_VGA_CIRRUS, XL_FRONT_VGA_STD, XL_FRONT_VGA_NONE, XL_FRONT_VGA_QXL };

/* What of a guest's configuration bears on its memory; -1: not given. */
struct xl_front_guest {
	enum xl_front_type type;	/* type= (or the old builder=); PV by default */
	long memory_mib, maxmem_mib;	/* memory=, maxmem= */
	long vcpus, maxvcpus;		/* vcpus=, maxvcpus= */
	int hap;			/* hap= as 0/1; -1: the default (on) */
	long shadow_mib;		/* shadow_memory= */
	bool sync_pt;			/* passthrough="sync_pt" */
	bool stubdom;			/* device_model_stubdomain_override=1 */
	bool dm_traditional;		/* device_model_version="qemu-xen-traditional" */
	enum xl_front_vga vga;		/* vga=, stdvga= */
	long videoram_mib;		/* videoram= */
	long stubdom_mib;		/* stubdomain_memory= */
};

/* G with nothing given (a PV guest of libxl's defaults). */
void xl_front_guest_init(struct xl_front_guest *g);
/* KiB G needs, as libxl_domain_need_memory() computes it for xl create
 * (see xenreaper(1), CREATING GUESTS, for what is counted). */
uint64_t xl_front_need_kb(const struct xl_front_guest *g);
/* Parse TEXT (LEN bytes, xl config syntax) with the libxlutil loaded from
 * LIBRARIES (a NULL-terminated list of names tried with dlopen in turn)
 * and read G from it.  -ENOENT if no libxlutil loads, -EINVAL if xl
 * would refuse the text or a value that decides the memory (xl then says
 * why), -ENOMEM; WHY (LEN) says what went wrong. */
int xl_front_guest_read(const char *const *libraries, const char *text, size_t len,
			struct xl_front_guest *g, char *why, size_t why_len);
