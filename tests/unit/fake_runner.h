/* fake_runner: teardowns on in-process threads over a stand-in hv. */
#pragma once
#include <stdbool.h>

#include "runner.h"

/* A runner whose teardowns call hv_destroy on HV (borrowed). */
int fake_runner_new(struct hv *hv, struct runner **out);
/* Nothing running and nothing ended left to collect. */
bool fake_runner_idle(const struct runner *runner);
/* Teardowns started since it was made. */
unsigned fake_runner_started(const struct runner *runner);
/* Teardowns whose hv_destroy has not returned (killed ones not counted). */
unsigned fake_runner_running(const struct runner *runner);
