/*
 * xl-front-real: the front's choice of the real xl.  Debian installs each
 * Xen version's tools in /usr/lib/xen-VERSION and makes /usr/sbin/xl a
 * wrapper (/usr/lib/xen-common/bin/xen-utils-wrapper) that runs
 * /usr/lib/xen-MAJOR.MINOR/bin/xl for the version in
 * /sys/hypervisor/version/{major,minor}: the toolstack that matches the
 * running hypervisor, not the newest one installed (during an upgrade,
 * until the reboot, both are).  The front makes the same choice itself,
 * in C and without a shell, and falls back to the wrapper, which explains
 * what is wrong (no hypervisor, or that version's tools removed) better
 * than the front could: /usr/sbin/xl, or, where the xenreaper package has
 * made /usr/sbin/xl the front, /usr/libexec/xl, the name the package
 * diverts Debian's wrapper to (debian/xenreaper.preinst; the wrapper runs
 * the tool named by its own base name, "xl" still).  Nothing else is
 * tried: /usr/local/sbin/xl, where
 * Xen's own `make install` puts xl, is where xenreaper.1 suggests linking
 * the front, and a source-built Xen is what the build-time REAL_XL, which
 * overrides all this, is for.  A candidate that is the front itself is
 * passed over, so the front never execs itself.  Paths are taken below a root so that unit tests can
 * build a fake /sys and /usr; this file execs nothing and prints nothing.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "xl-front-real.h"

#define XL_FRONT_REAL_NUMBER_LEN 16

/* The number ROOT/sys/hypervisor/version/LEAF holds ("17\n"), as text in
 * BUF; -EINVAL if it cannot be read or is not a number. */
static int xl_front_real_read_number(const char *root, const char *leaf, char *buf,
				     size_t len)
{
	char path[4096];
	bool more;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s" XL_FRONT_REAL_SYSFS "/%s", root, leaf);
	f = fopen(path, "re");
	if (!f)
		return -EINVAL;
	n = fread(buf, 1, len - 1, f);
	more = n == len - 1 && fgetc(f) != EOF;
	fclose(f);
	if (more)
		return -EINVAL;		/* no version is that long */
	buf[n] = '\0';
	if (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	if (!n)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (buf[i] < '0' || buf[i] > '9')
			return -EINVAL;
	return 0;
}

/* Add "PATH VERDICT" to the comma-separated list in WHY. */
static void xl_front_real_note(char *why, size_t len, const char *path, const char *verdict)
{
	size_t used = strlen(why);

	if (used < len)
		snprintf(why + used, len - used, "%s%s %s", used ? ", " : "", path, verdict);
}

/* Whether PATH will do; if not, why not goes into WHY. */
static bool xl_front_real_usable(const char *path, const struct stat *self, char *why,
				 size_t why_len)
{
	struct stat st;

	if (stat(path, &st)) {
		xl_front_real_note(why, why_len, path, "is missing");
		return false;
	}
	if (!S_ISREG(st.st_mode) || access(path, X_OK)) {
		xl_front_real_note(why, why_len, path, "is not an executable file");
		return false;
	}
	if (self && st.st_dev == self->st_dev && st.st_ino == self->st_ino) {
		xl_front_real_note(why, why_len, path, "is this front itself");
		return false;
	}
	return true;
}

int xl_front_real_version(const char *root, char *buf, size_t len)
{
	char major[XL_FRONT_REAL_NUMBER_LEN], minor[XL_FRONT_REAL_NUMBER_LEN];

	if (xl_front_real_read_number(root, "major", major, sizeof(major)) ||
	    xl_front_real_read_number(root, "minor", minor, sizeof(minor)))
		return -EINVAL;
	snprintf(buf, len, "%s.%s", major, minor);
	return 0;
}

int xl_front_real_choose(const char *root, const char *configured, const struct stat *self,
			 char *path, size_t len, char *why, size_t why_len)
{
	char major[XL_FRONT_REAL_NUMBER_LEN], minor[XL_FRONT_REAL_NUMBER_LEN];
	struct stat st;

	why[0] = '\0';
	if (configured && configured[0]) {
		snprintf(path, len, "%s", configured);
		if (self && !stat(path, &st) && st.st_dev == self->st_dev &&
		    st.st_ino == self->st_ino) {
			snprintf(why, why_len, "%s, the configured real xl, is this front itself", path);
			return -ELOOP;
		}
		return 0;	/* if it cannot run, execv says why */
	}
	if (!xl_front_real_read_number(root, "major", major, sizeof(major)) &&
	    !xl_front_real_read_number(root, "minor", minor, sizeof(minor))) {
		snprintf(path, len, "%s/usr/lib/xen-%s.%s/bin/xl", root, major, minor);
		if (xl_front_real_usable(path, self, why, why_len))
			return 0;
	} else {
		xl_front_real_note(why, why_len, XL_FRONT_REAL_SYSFS,
				   "gives no Xen version (not running under Xen?)");
	}
	snprintf(path, len, "%s" XL_FRONT_REAL_WRAPPER, root);
	if (xl_front_real_usable(path, self, why, why_len))
		return 0;
	snprintf(path, len, "%s" XL_FRONT_REAL_DIVERTED, root);
	if (xl_front_real_usable(path, self, why, why_len))
		return 0;
	path[0] = '\0';
	return -ENOENT;
}
