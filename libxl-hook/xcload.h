/*
 * xcload: the libxenctrl calls libxenreaper makes, loaded on first use.
 * Not exported by the library.
 */
#ifndef XENREAPER_XCLOAD_H
#define XENREAPER_XCLOAD_H

#include <stddef.h>
#include <stdint.h>
#include <xenctrl.h>

struct xcload_api {
	xc_interface *(*interface_open)(xentoollog_logger *logger,
					xentoollog_logger *dombuild_logger, unsigned open_flags);
	int (*interface_close)(xc_interface *xch);
	int (*domain_getinfolist)(xc_interface *xch, uint32_t first_domain,
				  unsigned int max_domains, xc_domaininfo_t *info);
	int (*physinfo)(xc_interface *xch, xc_physinfo_t *info);
	int (*get_paging_mempool_size)(xc_interface *xch, uint32_t domid, uint64_t *size);
};

/* The calls, from the libxenctrl these headers belong to, loaded once per
 * process and never unloaded; NULL if it cannot be loaded, with why in
 * WHY (LEN bytes).  Safe from any thread. */
const struct xcload_api *xcload_get(char *why, size_t len);

#endif
