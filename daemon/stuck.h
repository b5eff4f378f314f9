/*
 * stuck: what a destroy that does not return waits on, as far as dom0
 * shows it, for a stuck job's held-by node.
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "store.h"

/* Where libxl keeps each domain's userdata and its lock file
 * (libxl__userdata_path: userdata-l.<domid>.<uuid>.domain-userdata-lock). */
#define STUCK_LIBXL_DIR "/var/lib/xen"

/* Tests only: read processes and /proc/locks from PROC_ROOT, libxl's lock
 * files from LIBXL_DIR, and take SELF as the daemon's pid (NULL, NULL, 0:
 * the real ones). */
void stuck_set_roots(const char *proc_root, const char *libxl_dir, pid_t self);
/* A sentence saying what the destroy of DOMID (UUID_TEXT), standing still
 * in process TEARDOWN (0: in the daemon itself), standing still for
 * STILL_MS (since its last page came back if RELEASED), waits on: the
 * holder of libxl's domain lock (pid and command line, from /proc/locks),
 * the teardown's children running (pid, command line, for how long; a
 * hotplug script's XENBUS_PATH names the domain), and the domain's backends in xenstore not yet closed (path and
 * state).  Says so when none of that is seen.  Malloc'd into *OUT. */
int stuck_describe(struct store *store, uint32_t domid, const char *uuid_text, pid_t teardown,
		   int64_t still_ms, bool released, char **out);
