/*
 * holders: turns a zombie from a state into a diagnosis.  A dead domain
 * lingers while something still references its pages; from dom0 two kinds
 * of holder can be seen: a backend that has not let go (its directory
 * /local/domain/<backend>/backend/<type>/<domid> is still in xenstore) and
 * a dom0 process that maps guest memory through /dev/xen/privcmd (foreign
 * mappings) or /dev/xen/gntdev (grants), found in /proc/<pid>/maps.  Linux
 * does not say which domain a mapping belongs to, so every such process is
 * named: xenstored and xenconsoled map every guest's rings, a leftover
 * helper maps just the one.  What dom0 cannot see (a backend in a driver
 * domain whose xenstore entries are gone, a kernel thread) is not claimed;
 * the sentence says when nothing was found.  It only reads.
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

static const char *holders_proc_root = HOLDERS_PROC_ROOT;

void holders_set_proc_root(const char *root)
{
	holders_proc_root = root ? root : HOLDERS_PROC_ROOT;
}

/* Backends left for DOMID, appended to F as "vif in domain 0, ...". */
static int holders_backends(struct store *store, uint32_t domid, FILE *f, unsigned *found)
{
	char **doms = NULL, **types = NULL, *path = NULL, *value;
	unsigned n_doms = 0, n_types = 0;
	int rc;

	rc = store_list(store, STORE_TX_NONE, "/local/domain", &doms, &n_doms);
	if (rc)
		return rc == -ENOENT ? 0 : rc;
	for (unsigned i = 0; i < n_doms; i++) {
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
			continue;	/* no backends there, or it just went */
		for (unsigned t = 0; t < n_types; t++) {
			free(path);
			if (asprintf(&path, "/local/domain/%s/backend/%s/%u", doms[i], types[t], domid) < 0) {
				path = NULL;
				rc = -ENOMEM;
				goto out;
			}
			if (store_read(store, STORE_TX_NONE, path, &value))
				continue;
			free(value);
			fprintf(f, "%s%s backend in domain %s (%s)", (*found)++ ? ", " : "",
				types[t], doms[i], path);
		}
	}
out:
	free(path);
	store_names_free(types, n_types);
	store_names_free(doms, n_doms);
	return rc;
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

/* Processes other than us mapping Xen memory, appended to F. */
static int holders_processes(FILE *f, unsigned *found)
{
	char path[300], comm[64], self[16];
	struct dirent *entry;
	FILE *file;
	DIR *dir;
	size_t len;

	dir = opendir(holders_proc_root);
	if (!dir)
		return -errno;
	snprintf(self, sizeof(self), "%d", (int)getpid());
	while ((entry = readdir(dir))) {
		if (!isdigit((unsigned char)entry->d_name[0]) || !strcmp(entry->d_name, self) ||
		    !holders_maps_xen(entry->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s/comm", holders_proc_root, entry->d_name);
		comm[0] = '\0';
		file = fopen(path, "re");
		if (file) {
			if (!fgets(comm, sizeof(comm), file))
				comm[0] = '\0';
			fclose(file);
		}
		len = strcspn(comm, "\n");
		comm[len] = '\0';
		fprintf(f, "%s%s %s", (*found)++ ? ", " : "", entry->d_name, comm[0] ? comm : "?");
	}
	closedir(dir);
	return 0;
}

int holders_describe(struct store *store, uint32_t domid, uint64_t pages, char **out)
{
	unsigned backends = 0, processes = 0;
	char *text = NULL;
	size_t size;
	FILE *f;
	int rc;

	f = open_memstream(&text, &size);
	if (!f)
		return -ENOMEM;
	fprintf(f, "%" PRIu64 " page%s held; backends: ", pages, pages == 1 ? "" : "s");
	rc = holders_backends(store, domid, f, &backends);
	if (!rc) {
		fprintf(f, "%s; dom0 processes with Xen mappings: ", backends ? "" : "none");
		rc = holders_processes(f, &processes);
	}
	if (!rc && !processes)
		fputs("none", f);
	if (!rc && !backends && !processes)
		fputs(" (nothing dom0 can see: a driver domain's backend or a kernel thread may hold it)", f);
	if (fclose(f)) {
		free(text);
		return -ENOMEM;
	}
	if (rc) {
		free(text);
		return rc;
	}
	*out = text;
	return 0;
}
