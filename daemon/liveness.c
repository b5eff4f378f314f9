/*
 * liveness: how a waiting client tells a xenreaperd that works from one
 * that only looks as if it did.  daemon/state = running and a pid that
 * exists are all a client can see otherwise, and a SIGSTOPped or hung
 * daemon, or a SIGKILLed one whose pid was reused, shows exactly that.  So
 * a client that waits writes /tool/xenreaper/ping/<unique> now and then,
 * and the daemon, which watches ping/, answers by removing every entry it
 * finds; an entry still there after the client's bound means nobody is
 * answering.  The daemon does nothing for this unless a client writes:
 * an idle daemon with nobody waiting never wakes.  A ping says one more
 * thing: its client follows the progress and memory figures, which the
 * daemon then publishes at every sample rather than every few seconds
 * (reaper-private.h).  This file only makes the directory and answers;
 * the bound and the pings are the client's (libxenreaper.c, top-run.c).
 */
#include <errno.h>
#include <stdio.h>

#include "layout.h"
#include "liveness.h"

int liveness_publish(struct store *s)
{
	int rc;

	rc = store_rm(s, STORE_TX_NONE, LAYOUT_PING_DIR);
	return rc ? rc : store_write(s, STORE_TX_NONE, LAYOUT_PING_DIR, "");
}

int liveness_answer(struct store *s)
{
	char **names = NULL, path[LAYOUT_PATH_LEN];
	unsigned n = 0;
	int rc;

	rc = store_list(s, STORE_TX_NONE, LAYOUT_PING_DIR, &names, &n);
	if (rc == -ENOENT)
		return 0;	/* removed by hand: clients then take us for a daemon that does not answer pings, and do not ping */
	for (unsigned i = 0; !rc && i < n; i++) {
		if (snprintf(path, sizeof(path), LAYOUT_PING_DIR "/%s", names[i]) >= (int)sizeof(path))
			continue;	/* not a name any client writes; never answered */
		rc = store_rm(s, STORE_TX_NONE, path);
	}
	store_names_free(names, n);
	return rc ? rc : (int)n;
}
