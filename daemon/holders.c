/*
 * holders: turns a zombie from a state into a diagnosis.  A dead domain
 * lingers while something still references its pages; from dom0 two kinds
 * of holder can be seen: a backend that has not let go (its directory
 * /local/domain/<backend>/backend/<type>/<domid> is still in xenstore) and
 * a dom0 process that maps guest memory through /dev/xen/privcmd (foreign
 * mappings) or /dev/xen/gntdev (grants), found in /proc/<pid>/maps.  Each
 * backend is named with its devices' states.  Linux does not say which
 * domain a mapping belongs to, so what can be told from elsewhere is:
 * a QEMU's command line names its domain (-xen-domid N): the device model
 * of this domain is named with its command line, another guest's is not a
 * suspect, and dom0's own (-xen-domid 0, the qdisk backend) is one only
 * while a qdisk backend of this domain is left.  xenstored and xenconsoled
 * map every guest's rings and unmap a domain's when they see it die (on
 * real Xen a dead domain lingers only while one of them is stopped: see
 * 57-holders), so they are named only when stopped; any other process
 * with a mapping is named by pid and command name, as a suspect.  What dom0
 * cannot see (a backend in a driver domain whose xenstore entries are
 * gone, a kernel thread) is not claimed; the sentence says when nothing was
 * found.  It only reads.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "holders.h"
#include "sentence.h"

/* Of a device model's command line quoted in held-by. */
#define HOLDERS_CMDLINE_MAX 240
/* Of one backend's list of devices: a domain with hundreds of disks
 * still leaves room for the other backends and the processes. */
#define HOLDERS_DEVICES_MAX 1024

static const struct sentence_kind holders_device = { "device", "devices" };
static const struct sentence_kind holders_backend_kind = { "backend", "backends" };
static const struct sentence_kind holders_process = { "process", "processes" };

static const char *holders_proc_root = HOLDERS_PROC_ROOT;

void holders_set_proc_root(const char *root)
{
	holders_proc_root = root ? root : HOLDERS_PROC_ROOT;
}

const char *holders_xenbus_state(unsigned long state)
{
	static const char *const names[] = {
		"Unknown", "Initialising", "InitWait", "Initialised", "Connected",
		"Closing", "Closed", "Reconfiguring", "Reconfigured",
	};

	return state < sizeof(names) / sizeof(*names) ? names[state] : "?";
}

/* The devices under backend directory PATH, as ": 51712 Connected, ...",
 * malloc'd into *OUT; whether one of them is qdisk's is the caller's. */
static int holders_devices(struct store *store, const char *path, char **out)
{
	char **devs = NULL, *leaf = NULL, *value;
	struct sentence st;
	unsigned n_devs = 0;
	int rc = 0;

	sentence_init(&st, HOLDERS_DEVICES_MAX);
	if (store_list(store, STORE_TX_NONE, path, &devs, &n_devs))
		n_devs = 0;	/* it just went */
	for (unsigned d = 0; d < n_devs; d++) {
		free(leaf);
		if (asprintf(&leaf, "%s/%s/state", path, devs[d]) < 0) {
			leaf = NULL;
			rc = -ENOMEM;
			break;
		}
		if (store_read(store, STORE_TX_NONE, leaf, &value)) {
			sentence_item(&st, &holders_device, "%s%s state unknown", d ? ", " : ": ", devs[d]);
			continue;
		}
		sentence_item(&st, &holders_device, "%s%s %s", d ? ", " : ": ", devs[d],
			      holders_xenbus_state(strtoul(value, NULL, 10)));
		free(value);
	}
	sentence_left(&st, ", ");
	free(leaf);
	store_names_free(devs, n_devs);
	if (sentence_finish(&st, out))
		return rc ? rc : -ENOMEM;
	if (rc)
		free(*out);
	return rc;
}

int holders_foreach_backend(struct store *store, uint32_t domid, holders_backend_fn *fn, void *opaque)
{
	char **doms = NULL, **types = NULL, *path = NULL, *value;
	unsigned n_doms = 0, n_types = 0;
	int rc;

	rc = store_list(store, STORE_TX_NONE, "/local/domain", &doms, &n_doms);
	if (rc)
		return rc == -ENOENT ? 0 : rc;
	for (unsigned i = 0; !rc && i < n_doms; i++) {
		free(path);
		if (asprintf(&path, "/local/domain/%s/backend", doms[i]) < 0) {
			path = NULL;
			rc = -ENOMEM;
			break;
		}
		store_names_free(types, n_types);
		types = NULL;
		n_types = 0;
		if (store_list(store, STORE_TX_NONE, path, &types, &n_types))
			continue;	/* no backends there, or they just went */
		for (unsigned t = 0; !rc && t < n_types; t++) {
			free(path);
			if (asprintf(&path, "/local/domain/%s/backend/%s/%" PRIu32, doms[i], types[t], domid) < 0) {
				path = NULL;
				rc = -ENOMEM;
				break;
			}
			if (store_read(store, STORE_TX_NONE, path, &value))
				continue;	/* none of this type for DOMID */
			free(value);
			rc = fn(doms[i], types[t], path, opaque);
		}
	}
	free(path);
	store_names_free(types, n_types);
	store_names_free(doms, n_doms);
	return rc;
}

struct holders_backends {
	struct store *store;
	struct sentence *st;
	unsigned *found;
	bool *qdisk;
};

/* One backend directory left, as "vif backend in domain 0 (PATH: DEVID
 * STATE, ...)"; *QDISK set if it is qdisk's. */
static int holders_backend(const char *backdom, const char *type, const char *path, void *opaque)
{
	struct holders_backends *b = opaque;
	char *devices;
	int rc;

	*b->qdisk = *b->qdisk || !strcmp(type, "qdisk");
	rc = holders_devices(b->store, path, &devices);
	if (rc)
		return rc;
	sentence_item(b->st, &holders_backend_kind, "%s%s backend in domain %s (%s%s)", (*b->found)++ ? ", " : "",
		      type, backdom, path, devices);
	free(devices);
	return 0;
}

/* Backends left for DOMID, appended to ST; *QDISK set if one is qdisk's. */
static int holders_backends(struct store *store, uint32_t domid, struct sentence *st, unsigned *found,
			    bool *qdisk)
{
	struct holders_backends b = { .store = store, .st = st, .found = found, .qdisk = qdisk };

	return holders_foreach_backend(store, domid, holders_backend, &b);
}

/* Whether process PID's maps name a Xen mapping device. */
static bool holders_maps_xen(const char *pid)
{
	char path[300], line[512];
	bool found = false;
	FILE *maps;

	snprintf(path, sizeof(path), "%s/%s/maps", holders_proc_root, pid);
	maps = fopen(path, "re");
	if (!maps)
		return false;	/* gone, or not ours to read */
	while (!found && fgets(line, sizeof(line), maps))
		found = strstr(line, "/dev/xen/privcmd") || strstr(line, "/dev/xen/gntdev");
	fclose(maps);
	return found;
}

/* Read /proc/PID/LEAF (at most LEN - 1 bytes) into BUF, NULs in it
 * turned to spaces unless RAW; "" if it cannot be read. */
static void holders_read(const char *pid, const char *leaf, char *buf, size_t len)
{
	char path[300];
	size_t got = 0;
	FILE *file;

	snprintf(path, sizeof(path), "%s/%s/%s", holders_proc_root, pid, leaf);
	file = fopen(path, "re");
	if (file) {
		got = fread(buf, 1, len - 1, file);
		fclose(file);
	}
	buf[got] = '\0';
	for (size_t i = 0; i < got; i++)
		if (buf[i] == '\0' || buf[i] == '\n')
			buf[i] = ' ';
	while (got && buf[got - 1] == ' ')
		buf[--got] = '\0';
}

/* Whether PID is stopped (SIGSTOP, a debugger): the state after its comm. */
static bool holders_stopped(const char *pid)
{
	char stat[512], *p;

	holders_read(pid, "stat", stat, sizeof(stat));
	p = strrchr(stat, ')');
	return p && (p[2] == 'T' || p[2] == 't');
}

/* The domain a QEMU's command line names (-xen-domid N); -1 if none. */
static long holders_qemu_domid(const char *cmdline)
{
	const char *p = strstr(cmdline, "-xen-domid ");
	char *end;
	long domid;

	if (!p)
		return -1;
	p += strlen("-xen-domid ");
	domid = strtol(p, &end, 10);
	return end > p ? domid : -1;
}

/* Processes other than us mapping Xen memory that may hold DOMID,
 * appended to ST; *RUNNING counts xenstored and xenconsoled left out. */
static int holders_processes(uint32_t domid, bool qdisk, struct sentence *st, unsigned *found,
			     unsigned *running)
{
	char comm[64], self[16], cmdline[HOLDERS_CMDLINE_MAX], role[HOLDERS_CMDLINE_MAX + 32];
	struct dirent *entry;
	bool stopped, infra;
	long qemu_domid;
	DIR *dir;

	dir = opendir(holders_proc_root);
	if (!dir)
		return -errno;
	snprintf(self, sizeof(self), "%d", (int)getpid());
	while ((entry = readdir(dir))) {
		if (!isdigit((unsigned char)entry->d_name[0]) || !strcmp(entry->d_name, self) ||
		    !holders_maps_xen(entry->d_name))
			continue;
		holders_read(entry->d_name, "comm", comm, sizeof(comm));
		holders_read(entry->d_name, "cmdline", cmdline, sizeof(cmdline));
		stopped = holders_stopped(entry->d_name);
		qemu_domid = holders_qemu_domid(cmdline);
		if (qemu_domid >= 0 && qemu_domid != (long)domid && (qemu_domid != 0 || !qdisk))
			continue;	/* another guest's device model, or an idle qdisk QEMU */
		infra = !strcmp(comm, "xenstored") || !strcmp(comm, "oxenstored") ||
			!strcmp(comm, "xenconsoled");
		if (infra && !stopped) {
			(*running)++;
			continue;
		}
		role[0] = '\0';
		if (qemu_domid == (long)domid)
			snprintf(role, sizeof(role), " (its device model: %s)", cmdline);
		else if (qemu_domid == 0)
			snprintf(role, sizeof(role), " (dom0's qdisk backend: %s)", cmdline);
		sentence_item(st, &holders_process, "%s%s %s%s%s%s%s", (*found)++ ? ", " : "", entry->d_name,
			      comm[0] ? comm : "?", role, stopped ? " (stopped" : "",
			      stopped && infra ? ": it lets go of a dead domain only when it runs" : "",
			      stopped ? ")" : "");
	}
	closedir(dir);
	return 0;
}

int holders_describe(struct store *store, uint32_t domid, uint64_t pages, char **out)
{
	unsigned backends = 0, processes = 0, running = 0;
	struct sentence st;
	bool qdisk = false;
	char *text;
	int rc;

	sentence_init(&st, SENTENCE_MAX);
	sentence_add(&st, "%" PRIu64 " page%s held; backends: ", pages, pages == 1 ? "" : "s");
	rc = holders_backends(store, domid, &st, &backends, &qdisk);
	if (!rc) {
		sentence_left(&st, ", ");
		sentence_add(&st, "%s; dom0 processes with Xen mappings: ", backends ? "" : "none");
		rc = holders_processes(domid, qdisk, &st, &processes, &running);
	}
	if (!rc) {
		sentence_left(&st, ", ");
		if (!processes)
			sentence_add(&st, "none");
	}
	if (!rc && running)
		sentence_add(&st, " (xenstored and xenconsoled run, and let go of a dead domain when they see it die: not suspects)");
	if (!rc && !backends && !processes)
		sentence_add(&st, " (nothing dom0 can see: a driver domain's backend or a kernel thread may hold it)");
	if (sentence_finish(&st, &text))
		return rc ? rc : -ENOMEM;
	if (rc) {
		free(text);
		return rc;
	}
	*out = text;
	return 0;
}
