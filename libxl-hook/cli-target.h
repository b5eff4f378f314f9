/*
 * cli-target: which teardown job a `xenreaper status|wait DOMAIN` means
 * once DOMAIN no longer names a running domain.
 */
#pragma once
#include <stddef.h>

#include "xenreaper.h"

/* Index in JOBS of the job DOMAIN names (all digits: a domid, as xl reads
 * it; anything else: a guest name): an unfinished one before a finished
 * one, then the most recently requested; -ESRCH if none matches. */
int cli_target_pick(const char *domain, const struct xenreaper_status *jobs, size_t n);
