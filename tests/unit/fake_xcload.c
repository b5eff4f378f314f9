/*
 * fake_xcload: xcload_get for unit tests, handing libxenreaper the
 * libxenctrl calls fake_xs.c defines instead of loading the real library,
 * and counting how often the library asked for them, so that a test can
 * tell that a request never went to the hypervisor.
 */
#include <stdatomic.h>
#include <xenctrl.h>

#include "fake_xs.h"
#include "xcload.h"

static atomic_ulong fake_xcload_calls;

static const struct xcload_api fake_xcload_api = {
	.interface_open = xc_interface_open,
	.interface_close = xc_interface_close,
	.domain_getinfolist = xc_domain_getinfolist,
	.physinfo = xc_physinfo,
	.get_paging_mempool_size = xc_get_paging_mempool_size,
};

const struct xcload_api *xcload_get(char *why, size_t len)
{
	(void)why;
	(void)len;
	atomic_fetch_add(&fake_xcload_calls, 1);
	return &fake_xcload_api;
}

unsigned long fake_xc_loads(void)
{
	return atomic_load(&fake_xcload_calls);
}
