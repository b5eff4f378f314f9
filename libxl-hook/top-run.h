/*
 * top-run: `xenreaper top`'s loop: xenstore watches, the terminal, keys
 * and signals around top.c's view.
 */
#pragma once
#include <stddef.h>

#include "xenreaper.h"

/* Show the live view on stdout (full screen on a terminal, else plain
 * lines, one per change) until `q` or SIGINT/SIGTERM: 0 after `q`, -EINTR
 * after a signal, else a negative errno with the sentence in WHY (LEN).
 * The terminal is as it was whenever this returns. */
int top_run(struct xenreaper *h, char *why, size_t len);
