/*
 * xl-front-real: which real xl the front hands a command line to.
 */
#pragma once
#include <stddef.h>
#include <sys/stat.h>

/* Where the candidates live, below the root (the root is "" in use). */
#define XL_FRONT_REAL_SYSFS "/sys/hypervisor/version"
#define XL_FRONT_REAL_WRAPPER "/usr/sbin/xl"
/* Debian's wrapper where the xenreaper package diverts it. */
#define XL_FRONT_REAL_DIVERTED "/usr/libexec/xl"

/* The running hypervisor's version, "MAJOR.MINOR", from
 * ROOT/sys/hypervisor/version into BUF; -EINVAL if it gives none. */
int xl_front_real_version(const char *root, char *buf, size_t len);
/* The real xl into PATH (LEN): CONFIGURED if not empty (-ELOOP if it is
 * SELF), else ROOT/usr/lib/xen-MAJOR.MINOR/bin/xl for the version in
 * ROOT/sys/hypervisor/version/{major,minor}, else ROOT/usr/sbin/xl, else
 * ROOT/usr/libexec/xl (Debian's wrapper, diverted there by the package),
 * passing over one that is not an executable file or is SELF (same device
 * and inode; NULL: no check).  -ENOENT if none
 * will do; WHY (WHY_LEN) then says what was tried. */
int xl_front_real_choose(const char *root, const char *configured, const struct stat *self,
			 char *path, size_t len, char *why, size_t why_len);
