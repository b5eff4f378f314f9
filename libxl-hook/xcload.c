/*
 * xcload: libxenctrl, loaded when libxenreaper first asks the hypervisor
 * something rather than when a program linked with it starts.  A request
 * (`xl destroy --async`) names its domain from xenstore alone (lookup.c),
 * and libxenctrl with the six libraries it pulls in was much of what such
 * a caller paid above one xenstore-write (issue 18).  The soname is the
 * one configure found for the headers the library was compiled with,
 * because xc_domaininfo_t and xc_physinfo_t are passed as that version
 * lays them out; another version is not tried.  It loads only the calls
 * the library makes, once per process, and never unloads them.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

#include "xcload.h"

static pthread_once_t xcload_once = PTHREAD_ONCE_INIT;
static struct xcload_api xcload_api;
static bool xcload_ok;
static char xcload_why[256];

/* dlsym hands back void *; POSIX makes it callable. */
static bool xcload_sym(void *handle, void *slot, const char *name)
{
	*(void **)slot = dlsym(handle, name);
	if (*(void **)slot)
		return true;
	snprintf(xcload_why, sizeof(xcload_why), "%s has no %s", XENCTRL_SONAME, name);
	return false;
}

static void xcload_load(void)
{
	void *handle;
	const char *err;

	handle = dlopen(XENCTRL_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!handle) {
		err = dlerror();
		snprintf(xcload_why, sizeof(xcload_why),
			 "cannot load libxenctrl (%s), which xenreaper was built against: %s",
			 XENCTRL_SONAME, err ? err : "no reason given");
		return;
	}
	xcload_ok = xcload_sym(handle, &xcload_api.interface_open, "xc_interface_open") &&
		    xcload_sym(handle, &xcload_api.interface_close, "xc_interface_close") &&
		    xcload_sym(handle, &xcload_api.domain_getinfolist, "xc_domain_getinfolist") &&
		    xcload_sym(handle, &xcload_api.physinfo, "xc_physinfo") &&
		    xcload_sym(handle, &xcload_api.get_paging_mempool_size,
			       "xc_get_paging_mempool_size");
	if (!xcload_ok)
		dlclose(handle);
}

const struct xcload_api *xcload_get(char *why, size_t len)
{
	pthread_once(&xcload_once, xcload_load);
	if (xcload_ok)
		return &xcload_api;
	snprintf(why, len, "%s", xcload_why);
	return NULL;
}
