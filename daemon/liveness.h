/*
 * liveness: xenreaperd's answer to the clients that wait on it (see
 * liveness.c).
 */
#pragma once
#include "store.h"

/* Make ping/ afresh, empty: entries a previous run left are dropped, and
 * its existence tells clients that this daemon answers pings. */
int liveness_publish(struct store *s);
/* Answer every ping waiting under ping/ by removing it; how many there
 * were (a ping also says its client follows the figures), or -errno. */
int liveness_answer(struct store *s);
