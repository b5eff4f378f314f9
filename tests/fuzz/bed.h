/*
 * bed: the daemon's real reaper on the unit tests' in-process store and
 * hypervisor, driven by a small script, for fuzz-intake and fuzz-resume.
 *
 * Script lines (one per line; at most BED_MAX_LINES are run):
 *   NAME=VALUE     write the request /tool/xenreaper/request/NAME = VALUE;
 *                  a VALUE of "%S" is the UUID the fake gives seed S
 *   @settle        run the main loop's steps until no teardown is in flight
 *   @tick          one round of them, without waiting for the workers
 *   @advance MS    move the clocks on (at most an hour)
 *   @hold, @release  hold destroys mid-flight, let them go
 *   @pages D N     set domain D's tot_pages (a teardown in progress)
 *   @add D S P     wait for the destroys in flight (starting no new one),
 *                  then create domain D with UUID seed S in pool P
 *   @remove D      the same wait, then make domain D vanish
 *   @shutdown D R  domain D shut itself down, reason R (enum hv_shutdown)
 *   @zombie D N    D's next N destroys leave it dead with pages
 *   @fail D        D's destroys fail and leave it running
 *   @scrub N       the scrub backlog the probes report
 *   @fire          an @releaseDomain watch event
 * Anything else, or a number out of range, is skipped.
 */
#pragma once
#include <stddef.h>
#include <stdint.h>

#define BED_MAX_LINES 256

struct bed;

/* A fake host with a fixed set of domains (dom0, ordinary guests, the
 * daemon's own, a zombie, a failing one, protected and dead ones), a
 * policy, and a reaper bound to them, not yet started. */
struct bed *bed_new(void);
/* Write NODE = VALUE under /tool/xenreaper/job/ as a killed daemon would
 * have left it (before bed_start). */
void bed_plant_job_node(struct bed *b, const char *node, const char *value);
/* reaper_start(); aborts if it fails. */
void bed_start(struct bed *b);
/* Run one script line (LEN bytes, no newline). */
void bed_run_line(struct bed *b, const char *line, size_t len);
/* Settle, let zombie retries and grace periods run out, then check the
 * safety invariants; aborts (keeping the input) on the first one broken. */
void bed_finish(struct bed *b);
/* Tear everything down. */
void bed_free(struct bed *b);
