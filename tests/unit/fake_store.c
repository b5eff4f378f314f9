/*
 * fake_store: a flat path -> value map with just enough xenstore semantics
 * (parents created on write, recursive rm, watches on prefixes, whole-map
 * transactions) to drive reaper.c deterministically.  Single-threaded: only
 * the main thread touches the store in the daemon too.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fake_store.h"

struct node {
	char *path, *value;
};

struct event {
	char *path, *token;
};

struct fake_store {
	struct store base;
	struct node *nodes;
	unsigned n_nodes;
	struct node *saved;	/* snapshot taken at tx start */
	unsigned n_saved;
	store_tx open_tx;
	int fail_commits;
	char *private_paths[16];
	unsigned n_private;
	struct event watches[16];
	unsigned n_watches;
	struct event *events;
	unsigned n_events;
};

static struct fake_store *fs_of(struct store *s)
{
	return (struct fake_store *)s;
}

static int fs_find(struct fake_store *fs, const char *path)
{
	for (unsigned i = 0; i < fs->n_nodes; i++)
		if (!strcmp(fs->nodes[i].path, path))
			return i;
	return -1;
}

static int is_under(const char *path, const char *dir)
{
	size_t len = strlen(dir);

	return !strncmp(path, dir, len) && (path[len] == '\0' || path[len] == '/');
}

static void fs_queue(struct fake_store *fs, const char *path)
{
	for (unsigned i = 0; i < fs->n_watches; i++) {
		if (!is_under(path, fs->watches[i].path))
			continue;
		fs->events = realloc(fs->events, (fs->n_events + 1) * sizeof(*fs->events));
		fs->events[fs->n_events].path = strdup(path);
		fs->events[fs->n_events].token = strdup(fs->watches[i].token);
		fs->n_events++;
	}
}

static void fs_set(struct fake_store *fs, const char *path, const char *value)
{
	int i = fs_find(fs, path);

	if (i >= 0) {
		free(fs->nodes[i].value);
		fs->nodes[i].value = strdup(value);
		return;
	}
	fs->nodes = realloc(fs->nodes, (fs->n_nodes + 1) * sizeof(*fs->nodes));
	fs->nodes[fs->n_nodes].path = strdup(path);
	fs->nodes[fs->n_nodes].value = strdup(value);
	fs->n_nodes++;
}

static int fs_read(struct store *s, store_tx tx, const char *path, char **value)
{
	int i = fs_find(fs_of(s), path);

	if (i < 0)
		return -ENOENT;
	*value = strdup(fs_of(s)->nodes[i].value);
	return 0;
}

static int fs_write(struct store *s, store_tx tx, const char *path, const char *value)
{
	struct fake_store *fs = fs_of(s);
	char *parent = strdup(path), *slash;

	/* Create missing parents, as xenstored does. */
	while ((slash = strrchr(parent, '/')) && slash != parent) {
		*slash = '\0';
		if (fs_find(fs, parent) < 0)
			fs_set(fs, parent, "");
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
	int found = 0;

	for (unsigned i = 0; i < fs->n_nodes; i++) {
		if (is_under(fs->nodes[i].path, path)) {
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
	char **out = calloc(fs->n_nodes + 1, sizeof(*out));
	unsigned count = 0;

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

	if (fs_find(fs, path) < 0)
		return -ENOENT;
	if (fs->n_private < 16)
		fs->private_paths[fs->n_private++] = strdup(path);
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

	if (fs->open_tx)
		return -EBUSY;	/* the daemon never nests transactions */
	fs->saved = calloc(fs->n_nodes + 1, sizeof(*fs->saved));
	for (unsigned i = 0; i < fs->n_nodes; i++) {
		fs->saved[i].path = strdup(fs->nodes[i].path);
		fs->saved[i].value = strdup(fs->nodes[i].value);
	}
	fs->n_saved = fs->n_nodes;
	fs->open_tx = *tx = 42;
	return 0;
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
	if (abort) {
		nodes_free(fs->nodes, fs->n_nodes);
		fs->nodes = fs->saved;
		fs->n_nodes = fs->n_saved;
	} else {
		nodes_free(fs->saved, fs->n_saved);
	}
	fs->saved = NULL;
	fs->open_tx = 0;
	return rc;
}

static int fs_watch(struct store *s, const char *path, const char *token)
{
	struct fake_store *fs = fs_of(s);

	if (fs->n_watches == 16)
		return -ENOSPC;
	fs->watches[fs->n_watches].path = strdup(path);
	fs->watches[fs->n_watches].token = strdup(token);
	fs->n_watches++;
	fs_queue(fs, path);	/* xenstored fires every new watch once */
	return 0;
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

static void fs_free(struct store *s)
{
	struct fake_store *fs = fs_of(s);

	nodes_free(fs->nodes, fs->n_nodes);
	for (unsigned i = 0; i < fs->n_private; i++)
		free(fs->private_paths[i]);
	for (unsigned i = 0; i < fs->n_watches; i++) {
		free(fs->watches[i].path);
		free(fs->watches[i].token);
	}
	for (unsigned i = 0; i < fs->n_events; i++) {
		free(fs->events[i].path);
		free(fs->events[i].token);
	}
	free(fs->events);
	free(fs);
}

static const struct store_ops fake_store_ops = {
	.read = fs_read, .write = fs_write, .rm = fs_rm, .list = fs_list,
	.make_private = fs_make_private, .tx_start = fs_tx_start, .tx_end = fs_tx_end,
	.watch = fs_watch, .next_event = fs_next_event, .fd = fs_fd, .free = fs_free,
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
	struct fake_store *fs = fs_of(s);

	for (unsigned i = 0; i < fs->n_private; i++)
		if (!strcmp(fs->private_paths[i], path))
			return 1;
	return 0;
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
