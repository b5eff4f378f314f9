/* fake_xs: libxenstore, and the libxenctrl calls libxenreaper makes, in
 * process, so that the client library and the programs on it run in unit
 * tests without Xen (never a product mode). */
#pragma once
#include <stdbool.h>
#include <stdint.h>

/* Forget every node, handle count, domain and setting. */
void fake_xs_reset(void);
/* Write PATH (parents made) as another client would: watches fire, and it
 * is not counted as a request of any handle. */
void fake_xs_write(const char *path, const char *value);
/* Remove PATH and below likewise. */
void fake_xs_rm(const char *path);
/* PATH's value, malloc'd, or NULL if there is no such node. */
char *fake_xs_read(const char *path);
/* Nodes at or below PATH. */
unsigned fake_xs_count(const char *path);
/* Requests made through xs_* (reads, writes, removals, directories,
 * transaction starts and ends, watches) by every handle so far. */
unsigned long fake_xs_requests(void);
/* The same, by the calling thread only: a client's, with a daemon thread
 * making its own meanwhile. */
unsigned long fake_xs_requests_here(void);
/* Each request through xs_* takes US microseconds more, as a loaded
 * xenstored under emulation does (0: none). */
void fake_xs_set_latency_us(unsigned us);

/* The hypervisor: add DOMID with UUID bytes all SEED and TOT_PAGES, flags
 * FLAGS (XEN_DOMINF_*); replaces one with that domid. */
void fake_xc_add(uint32_t domid, uint8_t seed, uint64_t tot_pages, uint32_t flags);
void fake_xc_remove(uint32_t domid);
/* Xen's free pages (physinfo). */
void fake_xc_set_free(uint64_t pages);
/* How many times libxenreaper asked for libxenctrl (fake_xcload.c). */
unsigned long fake_xc_loads(void);
/* The UUID fake_xc_add gives SEED, as text (37 bytes). */
void fake_xc_uuid_text(uint8_t seed, char out[37]);
