/*
 * fake_store: a flat path -> value map with just enough xenstore semantics
 * (parents created on write, recursive rm, watches on prefixes, whole-map
 * transactions, libxenstore's E2BIG for a request over its payload limit)
 * to drive reaper.c deterministically.  Single-threaded: only
 * the main thread touches the store in the daemon too.  Nodes are sorted by
 * path (a lookup is a binary search) and a transaction keeps an undo log of
 * what it changed, not a copy of the map: the scale bench drives 10,000
 * jobs over thousands of nodes, and its own cost is not what it measures.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fake_store.h"
#include "inject.h"

struct node {
	char *path, *value;
	bool priv;		/* dom0 only (n0); new nodes inherit their parent's */
};

struct event {
	char *path, *token;
};

/* What a node was before a transaction changed it; value NULL: absent. */
struct undo {
	char *path, *value;
	bool priv;
};

struct fake_store {
	struct store base;
	struct node *nodes;
	unsigned n_nodes;
	struct undo *undo;	/* changes of the open transaction, oldest first */
	unsigned n_undo;
	store_tx open_tx;
	int fail_commits;
	struct event *watches;
	unsigned n_watches;
	struct event *events;
	unsigned n_events;
	struct inject inject;
	char *fail_path;	/* reads of this path fail with fail_err */
	int fail_err;
	char *fail_write_path;	/* writes of this path fail with fail_write_err */
	int fail_write_err;
};

static struct fake_store *fs_of(struct store *s)
{
	return (struct fake_store *)s;
}

/* Nodes are kept sorted by path: the first at or after PATH. */
static unsigned fs_lower_bound(struct fake_store *fs, const char *path)
{
	unsigned lo = 0, hi = fs->n_nodes;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (strcmp(fs->nodes[mid].path, path) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int fs_find(struct fake_store *fs, const char *path)
{
	unsigned i = fs_lower_bound(fs, path);

	return i < fs->n_nodes && !strcmp(fs->nodes[i].path, path) ? (int)i : -1;
}

/* A new node PATH (taken, not copied) in its sorted place. */
static void fs_insert(struct fake_store *fs, char *path, char *value, bool priv)
{
	unsigned i = fs_lower_bound(fs, path);

	fs->nodes = realloc(fs->nodes, (fs->n_nodes + 1) * sizeof(*fs->nodes));
	memmove(&fs->nodes[i + 1], &fs->nodes[i], (fs->n_nodes - i) * sizeof(*fs->nodes));
	fs->nodes[i].path = path;
	fs->nodes[i].value = value;
	fs->nodes[i].priv = priv;
	fs->n_nodes++;
}

static int is_under(const char *path, const char *dir)
{
	size_t len = strlen(dir);

	return !strncmp(path, dir, len) && (path[len] == '\0' || path[len] == '/');
}

static void fs_queue_one(struct fake_store *fs, const char *path, const char *token)
{
	fs->events = realloc(fs->events, (fs->n_events + 1) * sizeof(*fs->events));
	fs->events[fs->n_events].path = strdup(path);
	fs->events[fs->n_events].token = strdup(token);
	fs->n_events++;
}

static void fs_queue(struct fake_store *fs, const char *path)
{
	for (unsigned i = 0; i < fs->n_watches; i++)
		if (is_under(path, fs->watches[i].path))
			fs_queue_one(fs, path, fs->watches[i].token);
}

/* Whether PATH's parent is dom0 only (what a new node inherits). */
static bool fs_parent_private(struct fake_store *fs, const char *path)
{
	char *parent = strdup(path), *slash = strrchr(parent, '/');
	bool priv = false;
	int i;

	if (slash && slash != parent) {
		*slash = '\0';
		i = fs_find(fs, parent);
		priv = i >= 0 && fs->nodes[i].priv;
	}
	free(parent);
	return priv;
}

/* Before the open transaction (if any) changes PATH, remember what it was:
 * NODE, or absent when NODE is NULL. */
static void fs_remember_node(struct fake_store *fs, const char *path, const struct node *node)
{
	struct undo *u;

	if (!fs->open_tx)
		return;
	fs->undo = realloc(fs->undo, (fs->n_undo + 1) * sizeof(*fs->undo));
	u = &fs->undo[fs->n_undo++];
	u->path = strdup(path);
	u->value = node ? strdup(node->value) : NULL;
	u->priv = node && node->priv;
}

static void fs_set(struct fake_store *fs, const char *path, const char *value)
{
	int i = fs_find(fs, path);

	fs_remember_node(fs, path, i >= 0 ? &fs->nodes[i] : NULL);
	if (i >= 0) {
		free(fs->nodes[i].value);
		fs->nodes[i].value = strdup(value);
		return;
	}
	fs_insert(fs, strdup(path), strdup(value), fs_parent_private(fs, path));
}

static int fs_read(struct store *s, store_tx tx, const char *path, char **value)
{
	int i = fs_find(fs_of(s), path), rc = inject_call(&fs_of(s)->inject, FAKE_STORE_READ);

	if (rc)
		return rc;
	if (fs_of(s)->fail_path && !strcmp(path, fs_of(s)->fail_path))
		return fs_of(s)->fail_err;
	if (i < 0)
		return -ENOENT;
	*value = strdup(fs_of(s)->nodes[i].value);
	return 0;
}

static int fs_write(struct store *s, store_tx tx, const char *path, const char *value)
{
	struct fake_store *fs = fs_of(s);
	char *parent, *slash;
	int rc = inject_call(&fs->inject, FAKE_STORE_WRITE);

	if (rc)
		return rc;
	if (fs->fail_write_path && !strcmp(path, fs->fail_write_path))
		return fs->fail_write_err;
	/* libxenstore's check, before anything is sent (xs_talkv). */
	if (strlen(path) + 1 + strlen(value) > STORE_PAYLOAD_MAX)
		return -E2BIG;
	parent = strdup(path);
	/* Create missing parents, top down, as xenstored does. */
	for (slash = strchr(parent + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (fs_find(fs, parent) < 0)
			fs_set(fs, parent, "");
		*slash = '/';
	}
	free(parent);
	fs_set(fs, path, value);
	fs_queue(fs, path);
	return 0;
}

static int fs_rm(struct store *s, store_tx tx, const char *path)
{
	struct fake_store *fs = fs_of(s);
	unsigned kept = 0;
	int found = 0, rc = inject_call(&fs->inject, FAKE_STORE_RM);

	if (rc)
		return rc;
	for (unsigned i = 0; i < fs->n_nodes; i++) {
		if (is_under(fs->nodes[i].path, path)) {
			fs_remember_node(fs, fs->nodes[i].path, &fs->nodes[i]);
			/* xenstored fires watches on each removed node too. */
			for (unsigned w = 0; w < fs->n_watches; w++)
				if (strcmp(fs->nodes[i].path, path) &&
				    !strcmp(fs->nodes[i].path, fs->watches[w].path))
					fs_queue_one(fs, fs->nodes[i].path, fs->watches[w].token);
			free(fs->nodes[i].path);
			free(fs->nodes[i].value);
			found = 1;
		} else {
			fs->nodes[kept++] = fs->nodes[i];
		}
	}
	fs->n_nodes = kept;
	if (found)
		fs_queue(fs, path);
	return found ? 0 : -ENOENT;
}

static int fs_list(struct store *s, store_tx tx, const char *path, char ***names, unsigned *n)
{
	struct fake_store *fs = fs_of(s);
	size_t len = strlen(path);
	char **out;
	unsigned count = 0;
	int rc = inject_call(&fs->inject, FAKE_STORE_LIST);

	if (rc)
		return rc;
	out = calloc(fs->n_nodes + 1, sizeof(*out));
	if (fs_find(fs, path) < 0) {
		free(out);
		return -ENOENT;
	}
	for (unsigned i = 0; i < fs->n_nodes; i++) {
		const char *p = fs->nodes[i].path;

		if (strncmp(p, path, len) || p[len] != '/' || strchr(p + len + 1, '/'))
			continue;
		out[count++] = strdup(p + len + 1);
	}
	*names = out;
	*n = count;
	return 0;
}

static int fs_make_private(struct store *s, store_tx tx, const char *path)
{
	struct fake_store *fs = fs_of(s);
	int i, rc = inject_call(&fs->inject, FAKE_STORE_MAKE_PRIVATE);

	if (rc)
		return rc;
	i = fs_find(fs, path);
	if (i < 0)
		return -ENOENT;
	fs_remember_node(fs, path, &fs->nodes[i]);
	fs->nodes[i].priv = true;
	return 0;
}

static void nodes_free(struct node *nodes, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		free(nodes[i].path);
		free(nodes[i].value);
	}
	free(nodes);
}

static int fs_tx_start(struct store *s, store_tx *tx)
{
	struct fake_store *fs = fs_of(s);
	int rc = inject_call(&fs->inject, FAKE_STORE_TX_START);

	if (rc)
		return rc;
	if (fs->open_tx)
		return -EBUSY;	/* the daemon never nests transactions */
	fs->open_tx = *tx = 42;
	return 0;
}

/* Put back, newest change first, what the transaction changed. */
static void fs_roll_back(struct fake_store *fs)
{
	while (fs->n_undo) {
		struct undo *u = &fs->undo[--fs->n_undo];
		int i = fs_find(fs, u->path);

		if (!u->value && i >= 0) {	/* the transaction made it */
			free(fs->nodes[i].path);
			free(fs->nodes[i].value);
			memmove(&fs->nodes[i], &fs->nodes[i + 1], (fs->n_nodes - i - 1) * sizeof(*fs->nodes));
			fs->n_nodes--;
		} else if (u->value) {
			if (i < 0) {		/* the transaction removed it */
				fs_insert(fs, u->path, u->value, u->priv);
				u->path = NULL;
			} else {
				free(fs->nodes[i].value);
				fs->nodes[i].value = u->value;
				fs->nodes[i].priv = u->priv;
			}
			u->value = NULL;
		}
		free(u->path);
		free(u->value);
	}
}

static void fs_forget(struct fake_store *fs)
{
	for (unsigned i = 0; i < fs->n_undo; i++) {
		free(fs->undo[i].path);
		free(fs->undo[i].value);
	}
	fs->n_undo = 0;
}

static int fs_tx_end(struct store *s, store_tx tx, bool abort)
{
	struct fake_store *fs = fs_of(s);
	int rc = 0;

	if (tx != fs->open_tx)
		return -EINVAL;
	if (!abort && fs->fail_commits > 0) {
		fs->fail_commits--;
		abort = true;
		rc = -EAGAIN;
	}
	if (!abort) {
		rc = inject_call(&fs->inject, FAKE_STORE_TX_END);
		abort = rc != 0;
	}
	if (abort)
		fs_roll_back(fs);
	else
		fs_forget(fs);
	fs->open_tx = 0;
	return rc;
}

static int fs_watch(struct store *s, const char *path, const char *token)
{
	struct fake_store *fs = fs_of(s);
	struct event *grown;
	int rc = inject_call(&fs->inject, FAKE_STORE_WATCH);

	if (rc)
		return rc;
	grown = realloc(fs->watches, (fs->n_watches + 1) * sizeof(*fs->watches));
	if (!grown)
		return -ENOMEM;
	fs->watches = grown;
	fs->watches[fs->n_watches].path = strdup(path);
	fs->watches[fs->n_watches].token = strdup(token);
	fs->n_watches++;
	fs_queue(fs, path);	/* xenstored fires every new watch once */
	return 0;
}

static int fs_unwatch(struct store *s, const char *path, const char *token)
{
	struct fake_store *fs = fs_of(s);
	int rc = inject_call(&fs->inject, FAKE_STORE_UNWATCH);

	if (rc)
		return rc;
	for (unsigned i = 0; i < fs->n_watches; i++) {
		if (strcmp(fs->watches[i].path, path) || strcmp(fs->watches[i].token, token))
			continue;
		free(fs->watches[i].path);
		free(fs->watches[i].token);
		fs->watches[i] = fs->watches[--fs->n_watches];
		return 0;
	}
	return -ENOENT;
}

unsigned fake_store_count_watches(struct store *s, const char *token)
{
	struct fake_store *fs = fs_of(s);
	unsigned n = 0;

	for (unsigned i = 0; i < fs->n_watches; i++)
		n += !strcmp(fs->watches[i].token, token);
	return n;
}

static int fs_next_event(struct store *s, char **path, char **token)
{
	struct fake_store *fs = fs_of(s);

	if (!fs->n_events)
		return -EAGAIN;
	*path = fs->events[0].path;
	*token = fs->events[0].token;
	memmove(fs->events, fs->events + 1, (fs->n_events - 1) * sizeof(*fs->events));
	fs->n_events--;
	return 0;
}

static int fs_fd(struct store *s)
{
	return -1;
}

static int fs_ping(struct store *s)
{
	return inject_call(&fs_of(s)->inject, FAKE_STORE_PING);
}

static void fs_free(struct store *s)
{
	struct fake_store *fs = fs_of(s);

	nodes_free(fs->nodes, fs->n_nodes);
	fs_forget(fs);
	free(fs->undo);
	for (unsigned i = 0; i < fs->n_watches; i++) {
		free(fs->watches[i].path);
		free(fs->watches[i].token);
	}
	free(fs->watches);
	for (unsigned i = 0; i < fs->n_events; i++) {
		free(fs->events[i].path);
		free(fs->events[i].token);
	}
	free(fs->events);
	free(fs->fail_path);
	free(fs->fail_write_path);
	free(fs);
}

static const struct store_ops fake_store_ops = {
	.read = fs_read, .write = fs_write, .rm = fs_rm, .list = fs_list,
	.make_private = fs_make_private, .tx_start = fs_tx_start, .tx_end = fs_tx_end,
	.watch = fs_watch, .unwatch = fs_unwatch, .next_event = fs_next_event, .fd = fs_fd, .ping = fs_ping,
	.free = fs_free,
};

struct store *fake_store_new(void)
{
	struct fake_store *fs = calloc(1, sizeof(*fs));

	fs->base.ops = &fake_store_ops;
	return &fs->base;
}

void fake_store_fire(struct store *s, const char *path)
{
	fs_queue(fs_of(s), path);
}

void fake_store_fail_commits(struct store *s, int n)
{
	fs_of(s)->fail_commits = n;
}

int fake_store_is_private(struct store *s, const char *path)
{
	int i = fs_find(fs_of(s), path);

	return i >= 0 && fs_of(s)->nodes[i].priv;
}

void fake_store_set_open(struct store *s, const char *path)
{
	int i = fs_find(fs_of(s), path);

	if (i >= 0)
		fs_of(s)->nodes[i].priv = false;
}

unsigned fake_store_count_open(struct store *s, const char *path)
{
	struct fake_store *fs = fs_of(s);
	unsigned n = 0;

	for (unsigned i = 0; i < fs->n_nodes; i++)
		n += is_under(fs->nodes[i].path, path) && !fs->nodes[i].priv;
	return n;
}

const char *fake_store_get(struct store *s, const char *path)
{
	int i = fs_find(fs_of(s), path);

	return i < 0 ? NULL : fs_of(s)->nodes[i].value;
}

unsigned fake_store_count(struct store *s, const char *path)
{
	struct fake_store *fs = fs_of(s);
	unsigned n = 0;

	for (unsigned i = 0; i < fs->n_nodes; i++)
		n += is_under(fs->nodes[i].path, path);
	return n;
}

void fake_store_inject(struct store *s, enum fake_store_op op, unsigned nth, int err, bool sticky)
{
	inject_set(&fs_of(s)->inject, op, nth, err, sticky);
}

unsigned fake_store_calls(struct store *s, enum fake_store_op op)
{
	return fs_of(s)->inject.calls[op];
}

unsigned fake_store_injected(struct store *s)
{
	return fs_of(s)->inject.fired;
}

const char *fake_store_op_name(enum fake_store_op op)
{
	static const char *const names[FAKE_STORE_N_OPS] = {
		"read", "write", "rm", "list", "make_private", "tx_start", "tx_end", "watch", "unwatch", "ping",
	};

	return names[op];
}

void fake_store_fail_reads(struct store *s, const char *path, int err)
{
	free(fs_of(s)->fail_path);
	fs_of(s)->fail_path = path ? strdup(path) : NULL;
	fs_of(s)->fail_err = err;
}

void fake_store_fail_writes(struct store *s, const char *path, int err)
{
	free(fs_of(s)->fail_write_path);
	fs_of(s)->fail_write_path = path ? strdup(path) : NULL;
	fs_of(s)->fail_write_err = err;
}

void fake_store_set(struct store *s, const char *path, const char *value)
{
	struct inject saved = fs_of(s)->inject;
	char *fail_write_path = fs_of(s)->fail_write_path;

	memset(&fs_of(s)->inject, 0, sizeof(fs_of(s)->inject));
	fs_of(s)->fail_write_path = NULL;
	fs_write(s, STORE_TX_NONE, path, value);
	fs_of(s)->inject = saved;
	fs_of(s)->fail_write_path = fail_write_path;
}
