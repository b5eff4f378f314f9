/* fake_hv: an in-process hypervisor for unit tests (never a product mode). */
#pragma once
#include <stdbool.h>

#include "hv.h"

/* The operations error injection can fail (hv_ops' names). */
enum fake_hv_op {
	FAKE_HV_LIST, FAKE_HV_DESTROY, FAKE_HV_POOL_NAME, FAKE_HV_SCRUB_PROBE, FAKE_HV_FREE_PAGES,
	FAKE_HV_PAGING_POOL, FAKE_HV_N_OPS
};

/* The host's memory: free pages are this less what the domains hold
 * (their pages and their paging pools), unless fake_hv_set_total says
 * otherwise. */
#define FAKE_HV_TOTAL_PAGES (4ULL << 20)
/* Domains a fake holds at once; bench-scale builds its own copy with
 * more (its teardowns in flight). */
#ifndef FAKE_HV_MAX_DOMAINS
#define FAKE_HV_MAX_DOMAINS 256
#endif

struct hv *fake_hv_new(uint32_t self_domid);
/* A host of PAGES in all (a big host's guests do not fit the default). */
void fake_hv_set_total(struct hv *hv, uint64_t pages);
/* Add a domain with UUID byte pattern SEED, TOT_PAGES, in cpupool POOL. */
void fake_hv_add(struct hv *hv, uint32_t domid, uint8_t seed, uint64_t tot_pages, uint32_t pool);
/* The UUID fake_hv_add gives SEED, as text. */
void fake_hv_uuid_text(uint8_t seed, char out[HV_UUID_STR_LEN]);
/* Destroy of DOMID leaves it dead with PAGES for the next ROUNDS calls. */
void fake_hv_make_zombie(struct hv *hv, uint32_t domid, unsigned rounds, uint64_t pages);
/* DOMID dies outside the daemon (another toolstack's destroy) with PAGES
 * still held: destroys leave it so until fake_hv_remove. */
void fake_hv_kill(struct hv *hv, uint32_t domid, uint64_t pages);
/* Destroy of DOMID fails with -EIO and leaves it running. */
void fake_hv_make_failing(struct hv *hv, uint32_t domid);
/* DOMID's toolstack dumps its core on its shutdown: an automatic destroy
 * (HV_DESTROY_UNLESS_TOOLSTACK_ACTS) of it shut down gives -EINPROGRESS. */
void fake_hv_dumps_core(struct hv *hv, uint32_t domid);
/* Destroy calls block until fake_hv_release (to look at a job mid-flight),
 * which also ends every fake_hv_hold_domain. */
void fake_hv_hold(struct hv *hv);
void fake_hv_release(struct hv *hv);
/* With HELD, destroys of DOMID alone block (a teardown that does not
 * return) until called again without. */
void fake_hv_hold_domain(struct hv *hv, uint32_t domid, bool held);
/* Like fake_hv_hold, but each held destroy goes on by itself after MS of
 * real time (a teardown that takes a while, with nobody to release it). */
void fake_hv_hold_for(struct hv *hv, int ms);
/* Block until N worker threads are inside a (held) destroy. */
void fake_hv_wait_inside(struct hv *hv, unsigned n);
/* How many fakes were freed while a destroy was still running on one. */
unsigned fake_hv_freed_while_busy(void);
/* Give DOMID a paging pool of PAGES, as Xen keeps for HVM and PVH guests
 * (a domain without one answers -EOPNOTSUPP, as a PV guest does); its
 * destroy frees it, as Xen does before the domain's own pages. */
void fake_hv_set_pool(struct hv *hv, uint32_t domid, uint64_t pages);
/* Set tot_pages of DOMID (a teardown in progress). */
void fake_hv_set_pages(struct hv *hv, uint32_t domid, uint64_t pages);
/* Remove DOMID outright (a zombie finally released). */
void fake_hv_remove(struct hv *hv, uint32_t domid);
/* Mark DOMID shut down with REASON (enum hv_shutdown). */
void fake_hv_shutdown(struct hv *hv, uint32_t domid, unsigned reason);
/* How many times hv_destroy was called for DOMID. */
unsigned fake_hv_destroy_calls(struct hv *hv, uint32_t domid);
/* Forget the removed domains (the record behind fake_hv_destroy_calls),
 * for runs that remove more than the fake keeps; returns how many of them
 * were not destroyed exactly once. */
unsigned fake_hv_forget_gone(struct hv *hv);
/* Whether DOMID exists. */
int fake_hv_exists(struct hv *hv, uint32_t domid);
/* The scrub backlog the next probes report: SOURCE (an hv_scrub_source
 * bit, 0 for no figure) and PAGES. */
void fake_hv_set_scrub(struct hv *hv, int source, uint64_t pages);
/* The same with a figure per NUMA node: N nodes holding PAGES[0..N-1]; N 0
 * for a source without per-node figures, whose total is then PAGES[0]. */
void fake_hv_set_scrub_nodes(struct hv *hv, int source, unsigned n, const uint64_t *pages);
/* Pages physinfo reports as claimed and not yet allocated (outstanding). */
void fake_hv_set_outstanding(struct hv *hv, uint64_t pages);
/* Whether physinfo's figure is the real backlog (a patched hypervisor's
 * XEN_SYSCTL_PHYSCAP_scrub_pages); false at first, as on every release. */
void fake_hv_set_scrub_exact(struct hv *hv, bool exact);
/* Whether a destroy of DOMID is inside the fake now (held, or running). */
bool fake_hv_destroying(struct hv *hv, uint32_t domid);
/* Every hv_scrub_source bit any probe asked for since the start. */
unsigned fake_hv_scrub_sources_asked(struct hv *hv);
/* How many scrub probes were made. */
unsigned fake_hv_scrub_probes(struct hv *hv);
/* Fail call NTH (from now) of OP with ERR (negative errno), or every one
 * from then on if STICKY; NTH 0 clears.  A failed destroy changes nothing. */
void fake_hv_inject(struct hv *hv, enum fake_hv_op op, unsigned nth, int err, bool sticky);
/* Destroys refused because the domid no longer carried the UUID asked
 * for (the worker's last check caught what the daemon's guard did not). */
unsigned fake_hv_stale_destroys(struct hv *hv);
/* Destroys of a domid that started while another for it still ran. */
unsigned fake_hv_concurrent_destroys(struct hv *hv);
/* Calls of OP made so far. */
unsigned fake_hv_calls(struct hv *hv, enum fake_hv_op op);
/* Injected failures returned so far. */
unsigned fake_hv_injected(struct hv *hv);
/* The name of OP, for test output. */
const char *fake_hv_op_name(enum fake_hv_op op);
