/*
 * config-private: what config.c and config-parse.c share and nobody else
 * sees: the spellings of enumerated values.
 */
#pragma once
#include "config.h"

#define CONFIG_N_PROBES (CONFIG_PROBE_NONE + 1)
#define CONFIG_N_PRIORITIES (CONFIG_PRIORITY_NORMAL + 1)
#define CONFIG_N_LOG_LEVELS 5

#define N_ELEMS(a) (sizeof(a) / sizeof(*(a)))

extern const char *const config_scrub_probe_names[CONFIG_N_PROBES];
extern const char *const config_priority_names[CONFIG_N_PRIORITIES];
extern const char *const config_log_level_names[CONFIG_N_LOG_LEVELS];
