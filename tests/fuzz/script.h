/*
 * script: the daemon's real core on the unit tests' bed (tests/unit/bed.h:
 * fake store and hypervisor, real reaper and in-process runner), driven by a
 * small script, for fuzz-intake and fuzz-resume.
 *
 * Script lines (one per line; at most SCRIPT_MAX_LINES are run):
 *   NAME=VALUE     a client writes the request
 *                  /tool/xenreaper/request/NAME = VALUE; a VALUE of "%S"
 *                  is the UUID the fake gives seed S
 *   @settle        run the main loop's steps until no teardown is in flight
 *   @tick          one round of them, without waiting for the teardowns
 *   @advance MS    move the clocks on (at most an hour)
 *   @hold, @release  hold destroys mid-flight, let them go
 *   @pages D N     set domain D's tot_pages (a teardown in progress)
 *   @add D S P     wait for the destroys in flight (starting no new one),
 *                  then create domain D with UUID seed S in cpupool P
 *   @remove D      the same wait, then make domain D vanish
 *   @shutdown D R  domain D shut itself down, reason R (enum hv_shutdown)
 *   @kill D N      domain D killed by another toolstack, N pages still held
 *   @zombie D N    D's next N destroys leave it dead with pages
 *   @fail D        D's destroys fail and leave it running
 *   @scrub N       the scrub backlog the probes report
 *   @fire          an @releaseDomain watch event
 * Anything else, or a number out of range, is skipped.
 */
#pragma once
#include <stddef.h>
#include <stdint.h>

#define SCRIPT_MAX_LINES 256

struct script;

/* A fake host with a fixed set of domains (dom0, ordinary guests, the
 * daemon's own, a zombie, a failing one, protected and dead ones), a
 * policy, and the daemon's core bound to them, not yet started. */
struct script *script_new(void);
/* Write NODE = VALUE under /tool/xenreaper/job/ as a killed daemon would
 * have left it (before script_start). */
void script_plant_job_node(struct script *s, const char *node, const char *value);
/* Start the daemon's core; aborts if it fails. */
void script_start(struct script *s);
/* Run one script line (LEN bytes, no newline). */
void script_run_line(struct script *s, const char *line, size_t len);
/* Settle, let retries, grace periods and orphan settling run out, then
 * check the safety invariants; aborts (keeping the input) on the first one
 * broken. */
void script_finish(struct script *s);
/* Tear everything down. */
void script_free(struct script *s);
