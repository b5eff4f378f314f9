/*
 * stuck: turns a teardown that does not return into a diagnosis.  From
 * libxl's source (4.17), a destroy waits, with nothing to bound it, in
 * flock(2) on the domain's userdata lock (devices_destroy_cb, after the
 * devices and before the domain's destroy child), and for bounded times
 * on its hotplug scripts (40 s, then SIGKILL), on backends closing (10 s)
 * and on QMP (10 s).  Dom0 shows each: /proc/locks names a flock's holder
 * and its waiters by pid and device:inode, which stat(2) of the lock file
 * matches; the scripts are the children of the teardown's process (or
 * the daemon's, once that process is gone: it is their subreaper), with
 * their command line, start time and XENBUS_PATH in /proc; a backend's
 * state is in xenstore.  It only reads, and says so when it sees
 * nothing: a wait inside the kernel or on another host (an iSCSI logout)
 * is not claimed.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "holders.h"
#include "procfs.h"
#include "sentence.h"
#include "stuck.h"

#define STUCK_CMDLINE_MAX 160	/* of a command line quoted in the sentence */

static const struct sentence_kind stuck_lock = { "lock holder", "lock holders" };
static const struct sentence_kind stuck_script = { "hotplug script", "hotplug scripts" };
static const struct sentence_kind stuck_child = { "child of the teardown", "children of the teardown" };
static const struct sentence_kind stuck_open = { "backend", "backends" };

static const char *stuck_proc_root = "/proc";
static const char *stuck_libxl_dir = STUCK_LIBXL_DIR;
static pid_t stuck_self;

void stuck_set_roots(const char *proc_root, const char *libxl_dir, pid_t self)
{
	stuck_proc_root = proc_root ? proc_root : "/proc";
	stuck_libxl_dir = libxl_dir ? libxl_dir : STUCK_LIBXL_DIR;
	stuck_self = self;
}

static pid_t stuck_self_pid(void)
{
	return stuck_self ? stuck_self : getpid();
}

/* PID's command line with its arguments joined by spaces, or its comm in
 * brackets (a kernel thread, or an unreadable one) into BUF. */
static void stuck_cmdline(pid_t pid, char *buf, size_t len)
{
	ssize_t got = procfs_read(stuck_proc_root, pid, "cmdline", buf, len);

	if (got > 0) {
		for (ssize_t i = 0; i < got; i++)
			if (buf[i] == '\0' || buf[i] == '\n')
				buf[i] = ' ';
		while (got > 0 && buf[got - 1] == ' ')
			buf[--got] = '\0';
		return;
	}
	if (len < 3 || procfs_read(stuck_proc_root, pid, "comm", buf + 1, len - 2) <= 0) {
		snprintf(buf, len, "?");
		return;
	}
	buf[0] = '[';
	buf[strcspn(buf, "\n")] = '\0';
	strcat(buf, "]");
}

/* The holder of libxl's domain lock for DOMID/UUID_TEXT, appended to TEXT;
 * nothing if the file is not there or nobody holds it. */
static void stuck_domain_lock(uint32_t domid, const char *uuid_text, pid_t ours, struct sentence *text,
			      unsigned *found)
{
	char lockfile[300], path[300], line[256], who[STUCK_CMDLINE_MAX];
	unsigned maj, min;
	unsigned long long ino;
	bool we_wait = false;
	long holder = 0, pid;
	struct stat st;
	FILE *locks;
	char *p;

	snprintf(lockfile, sizeof(lockfile), "%s/userdata-l.%u.%s.domain-userdata-lock",
		 stuck_libxl_dir, domid, uuid_text);
	if (stat(lockfile, &st))
		return;
	snprintf(path, sizeof(path), "%s/locks", stuck_proc_root);
	locks = fopen(path, "re");
	if (!locks)
		return;
	/* "1: FLOCK  ADVISORY  WRITE 1234 00:1a:5678 0 EOF", a waiter's
	 * with "-> " after the number. */
	while (fgets(line, sizeof(line), locks)) {
		bool waiter = strstr(line, "-> ") != NULL;

		p = strstr(line, "FLOCK");
		if (!p || sscanf(p, "FLOCK %*s %*s %ld %x:%x:%llu", &pid, &maj, &min, &ino) != 4)
			continue;
		if (maj != major(st.st_dev) || min != minor(st.st_dev) || ino != st.st_ino)
			continue;
		if (!waiter)
			holder = pid;
		else if (pid == ours)
			we_wait = true;
	}
	fclose(locks);
	if (!holder)
		return;
	if (holder == ours) {
		sentence_item(text, &stuck_lock, "%slibxl's domain lock %s is held by the teardown itself",
			      (*found)++ ? "; " : "", lockfile);
		return;
	}
	stuck_cmdline(holder, who, sizeof(who));
	sentence_item(text, &stuck_lock, "%slibxl's domain lock %s is held by pid %ld (%s)%s",
		      (*found)++ ? "; " : "", lockfile, holder, who, we_wait ? ", and the teardown waits for it" : "");
}

/* Seconds since boot, from /proc/uptime; -1 if unknown. */
static double stuck_uptime(void)
{
	char path[300];
	double up = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/uptime", stuck_proc_root);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (fscanf(f, "%lf", &up) != 1)
		up = -1;
	fclose(f);
	return up;
}

/* PID's parent and start (seconds since boot), from /proc/PID/stat. */
static int stuck_stat(pid_t pid, long *ppid, double *start_s)
{
	char buf[1024], *p;
	unsigned long long start;
	long ticks = sysconf(_SC_CLK_TCK);

	if (procfs_read(stuck_proc_root, pid, "stat", buf, sizeof(buf)) <= 0)
		return -ENOENT;
	/* comm may hold spaces and parentheses: the fields follow the last. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %ld %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu",
			 ppid, &start) != 2)
		return -EINVAL;
	*start_s = (double)start / (ticks > 0 ? ticks : 100);
	return 0;
}

/* The domid a hotplug script works for, from its XENBUS_PATH
 * (backend/<type>/<domid>/<devid>); -1 if it has none or it cannot be read. */
static long stuck_script_domid(pid_t pid)
{
	char env[8192], *p, *end;
	ssize_t got = procfs_read(stuck_proc_root, pid, "environ", env, sizeof(env));
	long domid;

	for (p = env; got > 0 && p < env + got; p += strlen(p) + 1) {
		if (strncmp(p, "XENBUS_PATH=", strlen("XENBUS_PATH=")))
			continue;
		p = strstr(p, "backend/");
		if (!p || !(p = strchr(p + strlen("backend/"), '/')))
			return -1;
		domid = strtol(p + 1, &end, 10);
		return end > p + 1 ? domid : -1;
	}
	return -1;
}

/* The children of the teardown (OURS) that work for DOMID or name no
 * domain, and the daemon's that work for DOMID (a dead teardown process's
 * scripts, reparented to it), appended to ST with their age. */
static int stuck_children(uint32_t domid, pid_t ours, struct sentence *st, unsigned *found)
{
	char cmd[STUCK_CMDLINE_MAX], age[48];
	double up = stuck_uptime(), start;
	struct dirent *entry;
	long ppid, for_domid;
	pid_t pid;
	DIR *dir;

	dir = opendir(stuck_proc_root);
	if (!dir)
		return -errno;
	while ((entry = readdir(dir))) {
		if (!isdigit((unsigned char)entry->d_name[0]))
			continue;
		pid = (pid_t)strtol(entry->d_name, NULL, 10);
		if (stuck_stat(pid, &ppid, &start) || (ppid != ours && ppid != stuck_self_pid()))
			continue;
		for_domid = stuck_script_domid(pid);
		if (for_domid >= 0 && for_domid != (long)domid)
			continue;	/* another teardown's script */
		if (for_domid < 0 && ppid != ours)
			continue;	/* the daemon's other teardown processes */
		stuck_cmdline(pid, cmd, sizeof(cmd));
		age[0] = '\0';
		if (up >= 0 && up >= start)
			snprintf(age, sizeof(age), " running for %.0f s", up - start);
		sentence_item(st, for_domid >= 0 ? &stuck_script : &stuck_child, "%s%s pid %ld (%s)%s",
			      (*found)++ ? "; " : "", for_domid >= 0 ? "hotplug script" : "child of the teardown",
			      (long)pid, cmd, age);
	}
	closedir(dir);
	return 0;
}

struct stuck_backends {
	struct store *store;
	struct sentence *st;
	unsigned *found;
};

/* The devices of backend directory PATH that are not Closed, appended
 * to the sentence with their state. */
static int stuck_backend(const char *backdom, const char *type, const char *path, void *opaque)
{
	struct stuck_backends *b = opaque;
	char **devs = NULL, *leaf = NULL, *value;
	unsigned n_devs = 0;
	unsigned long state;
	int rc = 0;

	(void)backdom;
	(void)type;
	if (store_list(b->store, STORE_TX_NONE, path, &devs, &n_devs))
		return 0;	/* it just went */
	for (unsigned d = 0; d < n_devs; d++) {
		free(leaf);
		if (asprintf(&leaf, "%s/%s/state", path, devs[d]) < 0) {
			leaf = NULL;
			rc = -ENOMEM;
			break;
		}
		if (store_read(b->store, STORE_TX_NONE, leaf, &value))
			continue;
		state = strtoul(value, NULL, 10);
		free(value);
		if (state == 6)
			continue;	/* Closed: libxl waits for it no more */
		sentence_item(b->st, &stuck_open, "%sbackend %s/%s in state %lu (%s)", (*b->found)++ ? "; " : "",
			      path, devs[d], state, holders_xenbus_state(state));
	}
	free(leaf);
	store_names_free(devs, n_devs);
	return rc;
}

/* DOMID's backends in every domain's xenstore tree that are not Closed,
 * appended to ST with their state. */
static int stuck_backends(struct store *store, uint32_t domid, struct sentence *st, unsigned *found)
{
	struct stuck_backends b = { .store = store, .st = st, .found = found };

	return holders_foreach_backend(store, domid, stuck_backend, &b);
}

int stuck_describe(struct store *store, uint32_t domid, const char *uuid_text, pid_t teardown,
		   int64_t still_ms, bool released, char **out)
{
	pid_t ours = teardown ? teardown : stuck_self_pid();
	struct sentence st;
	unsigned found = 0;
	char *text;
	int rc;

	sentence_init(&st, SENTENCE_MAX);
	/* Released: the domain's memory is back and libxl's clean-up after
	 * it (xenstore, /var/lib/xen) is what has not run; a libxl that
	 * missed its destroy child's exit leaves exactly that. */
	if (released)
		sentence_add(&st, "libxl_domain_destroy has not returned %.0f s after the domain's last page came back: ",
			     still_ms / 1000.0);
	else
		sentence_add(&st, "libxl_domain_destroy has not returned, nothing released for %.0f s: ",
			     still_ms / 1000.0);
	stuck_domain_lock(domid, uuid_text, ours, &st, &found);
	rc = stuck_children(domid, ours, &st, &found);
	if (!rc)
		rc = stuck_backends(store, domid, &st, &found);
	if (!rc && !found)
		sentence_add(&st, "no lock holder, hotplug script or open backend dom0 can see "
			     "(a wait in the kernel or on another host is not visible here)");
	sentence_left(&st, "; ");
	if (sentence_finish(&st, &text))
		return rc ? rc : -ENOMEM;
	if (rc) {
		free(text);
		return rc;
	}
	*out = text;
	return 0;
}
