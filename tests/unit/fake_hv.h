/* fake_hv: an in-process hypervisor for unit tests (never a product mode). */
#pragma once
#include "hv.h"

struct hv *fake_hv_new(uint32_t self_domid);
/* Add a domain with UUID byte pattern SEED, TOT_PAGES, in cpupool POOL. */
void fake_hv_add(struct hv *hv, uint32_t domid, uint8_t seed, uint64_t tot_pages, uint32_t pool);
/* The UUID fake_hv_add gives SEED, as text. */
void fake_hv_uuid_text(uint8_t seed, char out[HV_UUID_STR_LEN]);
/* Destroy of DOMID leaves it dead with PAGES for the next ROUNDS calls. */
void fake_hv_make_zombie(struct hv *hv, uint32_t domid, unsigned rounds, uint64_t pages);
/* Destroy of DOMID fails with -EIO and leaves it running. */
void fake_hv_make_failing(struct hv *hv, uint32_t domid);
/* Destroy calls block until fake_hv_release (to look at a job mid-flight). */
void fake_hv_hold(struct hv *hv);
void fake_hv_release(struct hv *hv);
/* Set tot_pages of DOMID (a teardown in progress). */
void fake_hv_set_pages(struct hv *hv, uint32_t domid, uint64_t pages);
/* Remove DOMID outright (a zombie finally released). */
void fake_hv_remove(struct hv *hv, uint32_t domid);
/* Mark DOMID shut down with REASON (enum hv_shutdown). */
void fake_hv_shutdown(struct hv *hv, uint32_t domid, unsigned reason);
/* How many times hv_destroy was called for DOMID. */
unsigned fake_hv_destroy_calls(struct hv *hv, uint32_t domid);
/* Whether DOMID exists. */
int fake_hv_exists(struct hv *hv, uint32_t domid);
/* The scrub backlog the next probes report: SOURCE (an hv_scrub_source
 * bit, 0 for no figure) and PAGES. */
void fake_hv_set_scrub(struct hv *hv, int source, uint64_t pages);
/* How many scrub probes were made. */
unsigned fake_hv_scrub_probes(struct hv *hv);
