/*
 * hv: the narrow hypervisor/toolstack interface the daemon uses.  The real
 * one is on libxenctrl and libxenlight (hv_xen.c); unit tests supply an
 * in-process one.  Every call returns 0 or a negative errno.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HV_UUID_LEN 16
#define HV_UUID_STR_LEN 37	/* 36 characters and the NUL */

enum hv_shutdown {
	HV_SHUTDOWN_POWEROFF = 0,
	HV_SHUTDOWN_REBOOT = 1,
	HV_SHUTDOWN_SUSPEND = 2,
	HV_SHUTDOWN_CRASH = 3,
	HV_SHUTDOWN_WATCHDOG = 4,
	HV_SHUTDOWN_SOFT_RESET = 5,
};

struct hv_domain {
	uint32_t domid;
	uint8_t uuid[HV_UUID_LEN];
	uint64_t tot_pages;
	uint32_t cpupool;
	bool dying;		/* dead, pages possibly still referenced */
	bool shutdown;		/* the guest shut itself down */
	unsigned shutdown_reason;	/* enum hv_shutdown, valid when shutdown */
};

/* Where a scrub backlog figure came from (bit flags for what to try). */
enum hv_scrub_source {
	HV_SCRUB_NONE = 0,
	HV_SCRUB_PHYSINFO = 1 << 0,	/* XEN_SYSCTL_physinfo.scrub_pages */
	HV_SCRUB_HEAP_DUMP = 1 << 1,	/* debug key 'H' via the console ring */
};

#define HV_SCRUB_MAX_NODES 64

struct hv_scrub {
	enum hv_scrub_source source;
	uint64_t pages;			/* pending scrub, 4 KiB pages */
	unsigned n_nodes;		/* 0 if the source has no per-node figure */
	uint64_t node_pages[HV_SCRUB_MAX_NODES];
};

struct hv;

struct hv_ops {
	int (*list)(struct hv *hv, struct hv_domain **domains, size_t *n);
	int (*destroy)(struct hv *hv, uint32_t domid, const uint8_t uuid[HV_UUID_LEN], unsigned flags);
	int (*self_domid)(struct hv *hv, uint32_t *domid);
	int (*pool_name)(struct hv *hv, uint32_t poolid, char **name);
	int (*scrub_probe)(struct hv *hv, unsigned sources, struct hv_scrub *out);
	bool (*scrub_exact)(struct hv *hv);
	int (*free_pages)(struct hv *hv, uint64_t *pages, uint64_t *outstanding);
	int (*paging_pool)(struct hv *hv, uint32_t domid, uint64_t *pages);
	void (*free)(struct hv *hv);
};

struct hv {
	const struct hv_ops *ops;
};

/* Every domain the hypervisor knows: malloc'd array, sorted by domid. */
int hv_list(struct hv *hv, struct hv_domain **domains, size_t *n);
/* Find DOMID in a list from hv_list (a binary search: it is sorted); NULL
 * if absent. */
const struct hv_domain *hv_find(const struct hv_domain *domains, size_t n, uint32_t domid);
/* hv_destroy FLAGS: an automatic teardown, of a guest that shut down, is
 * not for one whose own toolstack is at work on it: one whose libxl
 * configuration dumps its core on this shutdown (coredump-destroy or
 * coredump-restart, which xl carries out while the guest stays crashed),
 * or whose configuration cannot be read to tell (-EINPROGRESS). */
#define HV_DESTROY_UNLESS_TOOLSTACK_ACTS (1u << 0)

/* Full toolstack teardown of DOMID, provided it still carries UUID (checked
 * right before, so a domid reused since the caller looked is never torn
 * down: -ESTALE), and FLAGS allow it; -ESRCH if it is gone.  Blocks for as
 * long as it takes, and forks (libxl's destroy child, hotplug scripts):
 * the daemon never calls it, its teardown helper does (runner.h). */
int hv_destroy(struct hv *hv, uint32_t domid, const uint8_t uuid[HV_UUID_LEN], unsigned flags);
/* The domid the daemon itself runs in. */
int hv_self_domid(struct hv *hv, uint32_t *domid);
/* Name of cpupool POOLID, malloc'd. */
int hv_pool_name(struct hv *hv, uint32_t poolid, char **name);
/* Measure the scrub backlog with the first of SOURCES (hv_scrub_source
 * bits, physinfo tried first) that gives a figure; -ENODATA if none does. */
int hv_scrub_probe(struct hv *hv, unsigned sources, struct hv_scrub *out);
/* Whether physinfo's scrub_pages is the hypervisor's real backlog (it
 * says so with XEN_SYSCTL_PHYSCAP_scrub_pages, xen-patches/4.17): then its
 * 0 means clean, a probe is one silent sysctl, and HV_SCRUB_PHYSINFO is
 * the only source worth asking.  Every released Xen reports 0 there and
 * is not exact: its 0 means unknown. */
bool hv_scrub_exact(struct hv *hv);
/* Free pages in the hypervisor's heap (on 4.17 freed-but-unscrubbed
 * pages count as free: the allocator scrubs them when it hands them out),
 * and in *OUTSTANDING the pages claimed for domains and not yet given to
 * them (physinfo outstanding_pages), from one and the same reading. */
int hv_free_pages(struct hv *hv, uint64_t *pages, uint64_t *outstanding);
/* Pages of DOMID's paging pool (shadow or HAP, the p2m included), which
 * Xen allocates without an owner, so they are not in tot_pages and come
 * back to the free pool when it tears the domain down (before its own
 * pages); readable while the domain dies, 0 once Xen freed it.
 * -EOPNOTSUPP if Xen keeps no such pool for it (a PV guest), -ESRCH if
 * it is gone. */
int hv_paging_pool(struct hv *hv, uint32_t domid, uint64_t *pages);
/* Close; accepts NULL. */
void hv_free(struct hv *hv);

/* Format UUID as the canonical 36-character lower-case text. */
void hv_uuid_format(const uint8_t uuid[HV_UUID_LEN], char out[HV_UUID_STR_LEN]);
/* Parse canonical UUID text (either case); -EINVAL if malformed. */
int hv_uuid_parse(const char *text, uint8_t uuid[HV_UUID_LEN]);

/* The real hypervisor on libxenctrl + libxenlight (hv_xen.c), for the
 * daemon: everything but hv_destroy. */
int hv_xen_new(struct hv **out);
/* The same for the teardown helper, whose hv_destroy forks as xl's does. */
int hv_xen_new_teardown(struct hv **out);
