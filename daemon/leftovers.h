/*
 * leftovers: what a domain's teardown left behind in dom0.  Before the
 * destroy the daemon records the domain's backends in dom0 and what their
 * hotplug scripts and libxl made for them (a loop device a `block` script
 * attached, a vif's network interface, the device model's process); after
 * it, whatever of that is still there is named in one sentence, for the
 * job's error node and the log.
 */
#pragma once
#include <stdint.h>

#include "store.h"

#define LEFTOVERS_SYS_ROOT "/sys"
#define LEFTOVERS_PROC_ROOT "/proc"
/* Longest sentence leftovers_check gives (past it, the things left are
 * counted: "and 3 more things left"). */
#define LEFTOVERS_TEXT_MAX 480

struct leftovers;

/* Tests only: read sysfs and procfs from these roots (NULL: the real ones). */
void leftovers_set_roots(const char *sys_root, const char *proc_root);
/* Record what DOMID has in dom0 (backends under /local/domain/0/backend,
 * each one's loop device or network interface, the device model's pid)
 * into malloc'd *OUT; on error *OUT holds what was read before it. */
int leftovers_snapshot(struct store *store, uint32_t domid, struct leftovers **out);
/* After the destroy: a malloc'd sentence in *OUT naming what SNAP recorded
 * that is still there, or NULL when nothing is. */
int leftovers_check(struct store *store, const struct leftovers *snap, char **out);
/* How many things SNAP recorded (backends, loop devices, interfaces, device model). */
unsigned leftovers_count(const struct leftovers *snap);
/* Accepts NULL. */
void leftovers_free(struct leftovers *snap);
