/*
 * preserved: dead guests their toolstack left behind (on_poweroff or
 * on_crash = "preserve") that a pool's policy says to tear down after a
 * grace period.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "hv.h"
#include "job.h"

struct preserved;

struct preserved_due {
	uint32_t domid;
	uint8_t uuid[HV_UUID_LEN];
	enum job_reason reason;
	char *pool;		/* malloc'd */
};

/* Whether DOMID/UUID is to be left alone: a job already covers it, or the
 * policy protects it. */
typedef bool (*preserved_leave_alone)(void *ctx, uint32_t domid, const uint8_t uuid[HV_UUID_LEN]);

int preserved_new(struct preserved **out);
/* Accepts NULL. */
void preserved_free(struct preserved *p);
/* Start the grace period of every dead guest in DOMAINS that POLICY's pool
 * tears down and LEAVE_ALONE does not exclude; forget those that are gone,
 * revived or excluded.  Never considers domain 0 or SELF, nor a guest
 * whose cpupool cannot be named (its pool's policy is unknown). */
int preserved_scan(struct preserved *p, struct hv *hv, const struct config *policy,
		   const struct hv_domain *domains, size_t n, uint32_t self,
		   preserved_leave_alone leave_alone, void *ctx);
/* POLICY replaced the one in force: forget guests it no longer tears down
 * (or that LEAVE_ALONE now excludes), and end the others' grace periods
 * after its grace, counted from when each was noticed. */
void preserved_reconsider(struct preserved *p, const struct config *policy,
			  preserved_leave_alone leave_alone, void *ctx);
/* Take one guest whose grace period ended by NOW; -EAGAIN if none.
 * Free OUT->pool. */
int preserved_take_due(struct preserved *p, int64_t now, struct preserved_due *out);
/* Monotonic ms when the next grace period ends, or -1. */
int64_t preserved_next_deadline(const struct preserved *p);
