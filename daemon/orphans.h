/*
 * orphans: dead domains that no job covers (left behind by plain
 * `xl destroy`, libvirt or a crashed toolstack), and when one has been dead
 * long enough, its page count still, to be adopted.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hv.h"
#include "store.h"

/* A dead domain normally goes within about a second; one whose page count
 * has not moved for this long is left behind. */
#define ORPHANS_SETTLE_MS 3000

struct orphans;

struct orphan_due {
	uint32_t domid;
	uint8_t uuid[HV_UUID_LEN];
	uint32_t cpupool;
	uint64_t pages;
	char *name;		/* malloc'd; NULL if it was never seen alive with one */
	bool name_uncertain;	/* it may have died under a name never seen */
};

/* Whether DOMID/UUID is covered by a job already. */
typedef bool (*orphans_covered)(void *ctx, uint32_t domid, const uint8_t uuid[HV_UUID_LEN]);

/* Names of live domains are read from STORE (borrowed) to remember them. */
int orphans_new(struct store *store, struct orphans **out);
/* Accepts NULL. */
void orphans_free(struct orphans *o);
/* Look at DOMAINS: follow the names of live domains first seen, start
 * the settle clock of each dead one not COVERED (never domain 0 or SELF),
 * start it again if its page count moved, and forget domains that went. */
int orphans_scan(struct orphans *o, const struct hv_domain *domains, size_t n, uint32_t self,
		 orphans_covered covered, void *ctx);
/* Take one dead domain whose pages stayed put for ORPHANS_SETTLE_MS by
 * NOW; -EAGAIN if none.  Free OUT->name.  It is not offered again. */
int orphans_take_due(struct orphans *o, int64_t now, struct orphan_due *out);
/* DOMID/UUID, taken as due, could not be judged now (a transient error):
 * offer it again after another settle time. */
void orphans_defer(struct orphans *o, uint32_t domid, const uint8_t uuid[HV_UUID_LEN]);
/* A watch event with token LAYOUT_TOKEN_NAME on PATH: that domain's name
 * changed (or went); counted until orphans_refresh_names. */
void orphans_name_event(struct orphans *o, const char *path);
/* Read the names that changed; true if the events queued meanwhile must
 * be handed over (orphans_name_event) and this called again, to tell a
 * removal from a rename just before it. */
bool orphans_refresh_names(struct orphans *o);
/* The policy changed: offer every dead domain again, refused or not. */
void orphans_reconsider(struct orphans *o);
/* Monotonic ms when the next settle time ends, or -1. */
int64_t orphans_next_deadline(const struct orphans *o);
