/*
 * leftovers: makes a teardown that leaves something behind say so.
 * libxl_domain_destroy returns success when a hotplug script's remove
 * failed (libxl only logs it and removes the backend's xenstore directory
 * all the same), and Debian's `block` script exits 0 without detaching
 * when it cannot see the image file at all (a file under a /tmp or /home
 * the daemon's unit hides), so neither libxl's result nor xenstore after
 * the destroy tells.  What does: a record, made before the destroy, of the
 * domain's backends in dom0 and of what was made for them outside xenstore
 * (the loop device a `block` script attached, read back from its `node`
 * and the loop's sysfs backing_file; a vif's network interface, by name
 * and ifindex; the device model's pid and start time), compared with what
 * is still there after it.  It only reads; it does not remove anything
 * (what libxl or a script could not do, an admin should see, not the
 * daemon guess at), and it does not watch backends in driver domains.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "leftovers.h"
#include "sentence.h"

/* The signal mask bit of SIGKILL (signal n is bit n - 1). */
#define LEFTOVERS_SIGKILL_BIT (1ULL << 8)
/* The kernel's PF_EXITING in /proc/PID/stat's flags: killed, on its way out. */
#define LEFTOVERS_PF_EXITING 0x4u

struct leftovers_dev {
	char *backend;		/* /local/domain/0/backend/TYPE/DOMID/DEV */
	char *type, *dev;
	char *loop;		/* /dev/loopN a block script attached, or NULL */
	char *image;		/* the file it backed (params) */
	char *backing;		/* the loop's sysfs backing_file before the destroy */
	char *netdev;		/* a vif's interface, or NULL */
	long ifindex;
};

struct leftovers {
	uint32_t domid;
	struct leftovers_dev *devs;
	unsigned n_devs;
	long dm_pid;		/* 0: none recorded */
	unsigned long long dm_start;
	char dm_comm[32];
};

static const char *leftovers_sys_root = LEFTOVERS_SYS_ROOT;
static const char *leftovers_proc_root = LEFTOVERS_PROC_ROOT;

void leftovers_set_roots(const char *sys_root, const char *proc_root)
{
	leftovers_sys_root = sys_root ? sys_root : LEFTOVERS_SYS_ROOT;
	leftovers_proc_root = proc_root ? proc_root : LEFTOVERS_PROC_ROOT;
}

/* The first line of file PATH, without its newline, into BUF; false if it
 * cannot be read (gone: the usual answer after a clean teardown). */
static bool leftovers_read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	bool got;

	if (!f)
		return false;
	got = fgets(buf, (int)size, f) != NULL;
	fclose(f);
	if (got)
		buf[strcspn(buf, "\n")] = '\0';
	return got;
}

/* A name that is one path component (a loop device's or an interface's
 * from xenstore must not walk sysfs elsewhere). */
static bool leftovers_plain_name(const char *name, size_t max)
{
	size_t len = strlen(name);

	return len > 0 && len < max && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..");
}

/* Loop device NODE's backing file in sysfs, or false if it has none. */
static bool leftovers_loop_backing(const char *node, char *buf, size_t size)
{
	const char *name = strrchr(node, '/');
	char path[256];

	name = name ? name + 1 : node;
	if (strncmp(name, "loop", 4) || !isdigit((unsigned char)name[4]) ||
	    !leftovers_plain_name(name, 32))
		return false;
	snprintf(path, sizeof(path), "%s/block/%s/loop/backing_file", leftovers_sys_root, name);
	return leftovers_read_line(path, buf, size) && buf[0];
}

/* Interface NAME's ifindex, or -1 if there is no such interface. */
static long leftovers_ifindex(const char *name)
{
	char path[256], line[32];

	if (!leftovers_plain_name(name, 16))
		return -1;
	snprintf(path, sizeof(path), "%s/class/net/%s/ifindex", leftovers_sys_root, name);
	return leftovers_read_line(path, line, sizeof(line)) ? strtol(line, NULL, 10) : -1;
}

/* Process PID as it is now: its start time and whether it still lives
 * (not a zombie, not exiting, and no SIGKILL pending: libxl's kill of a
 * device model does not wait for it to die).  False if there is no such
 * process. */
static bool leftovers_process(long pid, unsigned long long *start, bool *living)
{
	char path[256], line[1024], *p;
	unsigned long long pending;
	unsigned flags;
	char state;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%ld/stat", leftovers_proc_root, pid);
	if (!leftovers_read_line(path, line, sizeof(line)))
		return false;
	/* comm may hold spaces and parentheses: fields resume after the last ')'. */
	p = strrchr(line, ')');
	if (!p || sscanf(p + 1, " %c %*s %*s %*s %*s %*s %u %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu",
			 &state, &flags, start) != 3)
		return false;
	*living = state != 'Z' && state != 'X' && !(flags & LEFTOVERS_PF_EXITING);
	snprintf(path, sizeof(path), "%s/%ld/status", leftovers_proc_root, pid);
	f = fopen(path, "re");
	if (!f)
		return true;
	while (fgets(line, sizeof(line), f))
		if ((sscanf(line, "SigPnd: %llx", &pending) == 1 || sscanf(line, "ShdPnd: %llx", &pending) == 1) &&
		    (pending & LEFTOVERS_SIGKILL_BIT))
			*living = false;
	fclose(f);
	return true;
}

/* NODE below BACKEND, malloc'd into *VALUE, or NULL if it is missing. */
static int leftovers_read_opt(struct store *store, const char *backend, const char *node, char **value)
{
	char path[300];
	int rc;

	*value = NULL;
	snprintf(path, sizeof(path), "%s/%s", backend, node);
	rc = store_read(store, STORE_TX_NONE, path, value);
	return rc == -ENOENT ? 0 : rc;
}

/* Fill in what DEV's hotplug script made for it outside xenstore. */
static int leftovers_dev_extras(struct store *store, uint32_t domid, struct leftovers_dev *dev)
{
	char backing[4096];
	char *vifname;
	int rc;

	if (!strcmp(dev->type, "vbd")) {
		/* Debian's block script writes node only for a file it attached. */
		rc = leftovers_read_opt(store, dev->backend, "node", &dev->loop);
		if (!rc && dev->loop)
			rc = leftovers_read_opt(store, dev->backend, "params", &dev->image);
		if (!rc && dev->loop && leftovers_loop_backing(dev->loop, backing, sizeof(backing)))
			dev->backing = strdup(backing);
		return rc;
	}
	if (!strcmp(dev->type, "vif")) {
		rc = leftovers_read_opt(store, dev->backend, "vifname", &vifname);
		if (rc)
			return rc;
		if (vifname && vifname[0])
			dev->netdev = vifname;
		else {
			free(vifname);
			/* libxl's default name (libxl__device_nic_devname). */
			if (asprintf(&dev->netdev, "vif%" PRIu32 ".%s", domid, dev->dev) < 0)
				dev->netdev = NULL;
		}
		if (!dev->netdev)
			return -ENOMEM;
		dev->ifindex = leftovers_ifindex(dev->netdev);
	}
	return 0;
}

/* The backends of DOMID of one TYPE in dom0, appended to SNAP. */
static int leftovers_snapshot_type(struct store *store, struct leftovers *snap, const char *type)
{
	char path[256], **devs = NULL;
	struct leftovers_dev *grown, *dev;
	unsigned n_devs = 0;
	int rc;

	snprintf(path, sizeof(path), "/local/domain/0/backend/%s/%" PRIu32, type, snap->domid);
	rc = store_list(store, STORE_TX_NONE, path, &devs, &n_devs);
	if (rc)
		return rc == -ENOENT ? 0 : rc;
	grown = n_devs ? realloc(snap->devs, (snap->n_devs + n_devs) * sizeof(*grown)) : snap->devs;
	if (n_devs && !grown) {
		rc = -ENOMEM;
		goto out;
	}
	snap->devs = grown;
	for (unsigned i = 0; i < n_devs && !rc; i++) {
		dev = &snap->devs[snap->n_devs];
		memset(dev, 0, sizeof(*dev));
		dev->ifindex = -1;
		if (asprintf(&dev->backend, "%s/%s", path, devs[i]) < 0) {
			dev->backend = NULL;
			rc = -ENOMEM;
			break;
		}
		snap->n_devs++;
		dev->type = strdup(type);
		dev->dev = strdup(devs[i]);
		rc = dev->type && dev->dev ? leftovers_dev_extras(store, snap->domid, dev) : -ENOMEM;
	}
out:
	store_names_free(devs, n_devs);
	return rc;
}

/* The device model's pid from libxl's node, with its start time. */
static int leftovers_snapshot_dm(struct store *store, struct leftovers *snap)
{
	char path[128], comm_path[256];
	uint64_t pid;
	bool living;
	int rc;

	snprintf(path, sizeof(path), "/local/domain/%" PRIu32 "/image/device-model-pid", snap->domid);
	rc = store_read_u64(store, STORE_TX_NONE, path, &pid);
	if (rc == -ENOENT || rc == -EINVAL)
		return 0;	/* none, or not a pid: nothing to follow */
	if (rc)
		return rc;
	if (!pid || pid > INT32_MAX || !leftovers_process((long)pid, &snap->dm_start, &living))
		return 0;
	snap->dm_pid = (long)pid;
	snprintf(comm_path, sizeof(comm_path), "%s/%ld/comm", leftovers_proc_root, snap->dm_pid);
	if (!leftovers_read_line(comm_path, snap->dm_comm, sizeof(snap->dm_comm)))
		snprintf(snap->dm_comm, sizeof(snap->dm_comm), "?");
	return 0;
}

int leftovers_snapshot(struct store *store, uint32_t domid, struct leftovers **out)
{
	struct leftovers *snap;
	char **types = NULL;
	unsigned n_types = 0;
	int rc;

	snap = calloc(1, sizeof(*snap));
	if (!snap)
		return -ENOMEM;
	snap->domid = domid;
	*out = snap;
	rc = store_list(store, STORE_TX_NONE, "/local/domain/0/backend", &types, &n_types);
	if (rc == -ENOENT)
		rc = 0;
	for (unsigned t = 0; t < n_types && !rc; t++)
		rc = leftovers_snapshot_type(store, snap, types[t]);
	store_names_free(types, n_types);
	if (!rc)
		rc = leftovers_snapshot_dm(store, snap);
	return rc;
}

unsigned leftovers_count(const struct leftovers *snap)
{
	unsigned n;

	if (!snap)
		return 0;
	n = snap->n_devs + (snap->dm_pid != 0);
	for (unsigned i = 0; i < snap->n_devs; i++)
		n += (snap->devs[i].backing != NULL) + (snap->devs[i].ifindex >= 0);
	return n;
}

static const struct sentence_kind leftovers_thing = { "thing left", "things left" };

/* One thing left, appended to ST after "; " if it is not the first. */
static void leftovers_item(struct sentence *st, unsigned *found, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void leftovers_item(struct sentence *st, unsigned *found, const char *fmt, ...)
{
	char *part;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vasprintf(&part, fmt, ap);
	va_end(ap);
	if (rc < 0)
		part = NULL;	/* counted as left out */
	sentence_item(st, &leftovers_thing, "%s%s", (*found)++ ? "; " : "", part ? part : "");
	free(part);
}

/* DEV's backend directory, if it is still in xenstore. */
static int leftovers_check_backend(struct store *store, const struct leftovers_dev *dev,
				   struct sentence *text, unsigned *found)
{
	char *dir = NULL, *state = NULL, *status = NULL, *error = NULL;
	int rc;

	rc = store_read(store, STORE_TX_NONE, dev->backend, &dir);
	if (rc)
		return rc == -ENOENT ? 0 : rc;
	rc = leftovers_read_opt(store, dev->backend, "state", &state);
	if (!rc)
		rc = leftovers_read_opt(store, dev->backend, "hotplug-status", &status);
	if (!rc)
		rc = leftovers_read_opt(store, dev->backend, "hotplug-error", &error);
	if (!rc)
		leftovers_item(text, found, "%s backend %s still in xenstore (state %s%s%s%s%s)", dev->type,
			       dev->backend, state ? state : "absent", status ? ", hotplug-status " : "",
			       status ? status : "", error ? ": " : "", error ? error : "");
	free(dir);
	free(state);
	free(status);
	free(error);
	return rc;
}

/* DEV's loop device, if it still backs the same file. */
static void leftovers_check_loop(const struct leftovers_dev *dev, struct sentence *text, unsigned *found)
{
	char backing[4096];
	struct stat st;

	if (!dev->backing || !leftovers_loop_backing(dev->loop, backing, sizeof(backing)) ||
	    strcmp(backing, dev->backing))
		return;
	if (dev->image && stat(dev->image, &st) && errno == ENOENT)
		leftovers_item(text, found, "vbd %s: %s still attached to %s, which xenreaperd and the block "
			       "script it runs cannot see (under the unit, PrivateTmp= hides /tmp and "
			       "ProtectHome= /home and /root), so the script's remove found no file to detach",
			       dev->dev, dev->loop, dev->backing);
	else
		leftovers_item(text, found, "vbd %s: %s still attached to %s (the block script's remove did not "
			       "detach it: see /var/log/xen/xen-hotplug.log)", dev->dev, dev->loop, dev->backing);
}

int leftovers_check(struct store *store, const struct leftovers *snap, char **out)
{
	unsigned long long start;
	struct sentence st;
	unsigned found = 0;
	char *text;
	bool living;
	int rc = 0;

	*out = NULL;
	if (!leftovers_count(snap))
		return 0;
	sentence_init(&st, LEFTOVERS_TEXT_MAX);
	sentence_add(&st, "the domain is gone, but its teardown left behind: ");
	for (unsigned i = 0; i < snap->n_devs && !rc; i++) {
		const struct leftovers_dev *dev = &snap->devs[i];

		rc = leftovers_check_backend(store, dev, &st, &found);
		leftovers_check_loop(dev, &st, &found);
		if (dev->ifindex >= 0 && leftovers_ifindex(dev->netdev) == dev->ifindex)
			leftovers_item(&st, &found, "vif %s: network interface %s still exists", dev->dev,
				       dev->netdev);
	}
	if (!rc && snap->dm_pid && leftovers_process(snap->dm_pid, &start, &living) &&
	    start == snap->dm_start && living)
		leftovers_item(&st, &found, "device model pid %ld (%s) still running", snap->dm_pid,
			       snap->dm_comm);
	sentence_left(&st, "; ");
	if (sentence_finish(&st, &text))
		return rc ? rc : -ENOMEM;
	if (rc || !found) {
		free(text);
		return rc;
	}
	*out = text;
	return 0;
}

void leftovers_free(struct leftovers *snap)
{
	if (!snap)
		return;
	for (unsigned i = 0; i < snap->n_devs; i++) {
		free(snap->devs[i].backend);
		free(snap->devs[i].type);
		free(snap->devs[i].dev);
		free(snap->devs[i].loop);
		free(snap->devs[i].image);
		free(snap->devs[i].backing);
		free(snap->devs[i].netdev);
	}
	free(snap->devs);
	free(snap);
}
