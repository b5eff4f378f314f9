/*
 * fake_xs: an in-process xenstore behind libxenstore's own API (xs_open,
 * xs_read, xs_watch, ...) and the four libxenctrl calls libxenreaper
 * makes (the domain list and physinfo), for unit tests of the client
 * library and of the xenreaper CLI and the xl front linked to it.  Nodes
 * live in one sorted array under one lock, so a test thread can play
 * xenreaperd on its own handle while the code under test waits on
 * another.  Like xenstored it fires a watch once when it is set, then for
 * every write or removal at or below its path (a removal also fires the
 * watches below the removed node), each event a byte on the handle's
 * pipe.  Transactions see live data and always commit: the tests here are
 * about what the client asks for and when, not about isolation.  It has
 * no permissions and no quotas; like libxenstore, it refuses a write over
 * XENSTORE_PAYLOAD_MAX with E2BIG.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xenctrl.h>
#include <xenstore.h>

#include "fake_xs.h"

#define FX_MAX_DOMAINS 1024

struct fx_node {
	char *path, *value;
};

struct fx_watch {
	char *path, *token;
};

struct fx_event {
	char *path, *token;
	struct fx_event *next;
};

struct xs_handle {
	int pipe[2];
	struct fx_watch *watches;
	unsigned n_watches;
	struct fx_event *head, *tail;
	struct xs_handle *next;
};

struct xc_interface_core {
	int unused;
};

static pthread_mutex_t fx_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fx_node *fx_nodes;
static size_t fx_n, fx_cap;
static struct xs_handle *fx_handles;
static unsigned long fx_requests;
static _Thread_local unsigned long fx_thread_requests;
static unsigned fx_latency_us;
static xs_transaction_t fx_next_tx = 1;
static xc_domaininfo_t fx_domains[FX_MAX_DOMAINS];
static unsigned fx_n_domains;
static uint64_t fx_free_pages;

/* ---------------------------------------------------------------- tree */

/* Index of the first node not sorting before PATH. */
static size_t fx_lower(const char *path)
{
	size_t lo = 0, hi = fx_n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (strcmp(fx_nodes[mid].path, path) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct fx_node *fx_find(const char *path)
{
	size_t i = fx_lower(path);

	return i < fx_n && !strcmp(fx_nodes[i].path, path) ? &fx_nodes[i] : NULL;
}

/* Whether PATH is BASE or below it. */
static bool fx_at_or_below(const char *path, const char *base)
{
	size_t n = strlen(base);

	return !strncmp(path, base, n) && (path[n] == '\0' || path[n] == '/' ||
					   (n == 1 && base[0] == '/'));
}

static void fx_queue(struct xs_handle *h, const char *path, const char *token)
{
	struct fx_event *e = calloc(1, sizeof(*e));

	if (!e)
		abort();
	e->path = strdup(path);
	e->token = strdup(token);
	if (!e->path || !e->token)
		abort();
	if (h->tail)
		h->tail->next = e;
	else
		h->head = e;
	h->tail = e;
	if (write(h->pipe[1], "!", 1) != 1)
		abort();
}

/* The events a change of PATH makes (REMOVED: PATH and all below went). */
static void fx_fire(const char *path, bool removed)
{
	for (struct xs_handle *h = fx_handles; h; h = h->next)
		for (unsigned i = 0; i < h->n_watches; i++) {
			const struct fx_watch *w = &h->watches[i];

			if (path[0] == '@' ? !strcmp(path, w->path) : fx_at_or_below(path, w->path))
				fx_queue(h, path, w->token);
			else if (removed && path[0] != '@' && fx_at_or_below(w->path, path))
				fx_queue(h, w->path, w->token);
		}
}

static void fx_insert(const char *path, const char *value, size_t len)
{
	size_t i = fx_lower(path);
	char *copy = malloc(len + 1);

	if (!copy)
		abort();
	memcpy(copy, value, len);
	copy[len] = '\0';
	if (i < fx_n && !strcmp(fx_nodes[i].path, path)) {
		free(fx_nodes[i].value);
		fx_nodes[i].value = copy;
		return;
	}
	if (fx_n == fx_cap) {
		fx_cap = fx_cap ? fx_cap * 2 : 256;
		fx_nodes = realloc(fx_nodes, fx_cap * sizeof(*fx_nodes));
		if (!fx_nodes)
			abort();
	}
	memmove(&fx_nodes[i + 1], &fx_nodes[i], (fx_n - i) * sizeof(*fx_nodes));
	fx_nodes[i].path = strdup(path);
	fx_nodes[i].value = copy;
	if (!fx_nodes[i].path)
		abort();
	fx_n++;
}

/* Write PATH, making its parents as xenstored does. */
static void fx_set(const char *path, const char *value, size_t len)
{
	char parent[4096];

	snprintf(parent, sizeof(parent), "%s", path);
	for (char *slash = strchr(parent + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (!fx_find(parent))
			fx_insert(parent, "", 0);
		*slash = '/';
	}
	fx_insert(path, value, len);
	fx_fire(path, false);
}

static void fx_drop(size_t from, size_t to)
{
	for (size_t i = from; i < to; i++) {
		free(fx_nodes[i].path);
		free(fx_nodes[i].value);
	}
	memmove(&fx_nodes[from], &fx_nodes[to], (fx_n - to) * sizeof(*fx_nodes));
	fx_n -= to - from;
}

/* Remove PATH and below; false if there was no such node.  What is below
 * PATH sorts as one run, from "PATH/" to "PATH0" ('0' follows '/'), apart
 * from PATH itself: "/a" < "/a-b" < "/a/b". */
static bool fx_remove(const char *path)
{
	char from[4096], to[4096];
	size_t self = fx_lower(path);

	if (self == fx_n || strcmp(fx_nodes[self].path, path))
		return false;
	snprintf(from, sizeof(from), "%s/", path);
	snprintf(to, sizeof(to), "%s0", path);
	fx_drop(fx_lower(from), fx_lower(to));
	fx_drop(self, self + 1);
	fx_fire(path, true);
	return true;
}

/* ---------------------------------------------------------------- test API */

void fake_xs_reset(void)
{
	pthread_mutex_lock(&fx_lock);
	for (size_t i = 0; i < fx_n; i++) {
		free(fx_nodes[i].path);
		free(fx_nodes[i].value);
	}
	fx_n = 0;
	fx_requests = 0;
	fx_latency_us = 0;
	fx_n_domains = 0;
	fx_free_pages = 0;
	pthread_mutex_unlock(&fx_lock);
}

void fake_xs_write(const char *path, const char *value)
{
	pthread_mutex_lock(&fx_lock);
	fx_set(path, value, strlen(value));
	pthread_mutex_unlock(&fx_lock);
}

void fake_xs_rm(const char *path)
{
	pthread_mutex_lock(&fx_lock);
	fx_remove(path);
	pthread_mutex_unlock(&fx_lock);
}

char *fake_xs_read(const char *path)
{
	struct fx_node *node;
	char *value = NULL;

	pthread_mutex_lock(&fx_lock);
	node = fx_find(path);
	if (node)
		value = strdup(node->value);
	pthread_mutex_unlock(&fx_lock);
	return value;
}

unsigned fake_xs_count(const char *path)
{
	unsigned n = 0;

	pthread_mutex_lock(&fx_lock);
	for (size_t i = 0; i < fx_n; i++)
		n += fx_at_or_below(fx_nodes[i].path, path);
	pthread_mutex_unlock(&fx_lock);
	return n;
}

unsigned long fake_xs_requests(void)
{
	unsigned long n;

	pthread_mutex_lock(&fx_lock);
	n = fx_requests;
	pthread_mutex_unlock(&fx_lock);
	return n;
}

unsigned long fake_xs_requests_here(void)
{
	return fx_thread_requests;
}

void fake_xs_set_latency_us(unsigned us)
{
	pthread_mutex_lock(&fx_lock);
	fx_latency_us = us;
	pthread_mutex_unlock(&fx_lock);
}

/* One request: counted, and slowed down as configured (outside the lock,
 * as another client's requests go on meanwhile). */
static void fx_request(void)
{
	unsigned us;

	fx_thread_requests++;
	pthread_mutex_lock(&fx_lock);
	fx_requests++;
	us = fx_latency_us;
	pthread_mutex_unlock(&fx_lock);
	if (us)
		usleep(us);
}

/* ---------------------------------------------------------------- libxenstore */

struct xs_handle *xs_open(unsigned long flags)
{
	struct xs_handle *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	if (pipe2(h->pipe, O_CLOEXEC | O_NONBLOCK)) {
		free(h);
		return NULL;
	}
	pthread_mutex_lock(&fx_lock);
	h->next = fx_handles;
	fx_handles = h;
	pthread_mutex_unlock(&fx_lock);
	return h;
}

void xs_close(struct xs_handle *h)
{
	struct fx_event *e, *next;

	if (!h)
		return;
	pthread_mutex_lock(&fx_lock);
	for (struct xs_handle **link = &fx_handles; *link; link = &(*link)->next)
		if (*link == h) {
			*link = h->next;
			break;
		}
	pthread_mutex_unlock(&fx_lock);
	for (e = h->head; e; e = next) {
		next = e->next;
		free(e->path);
		free(e->token);
		free(e);
	}
	for (unsigned i = 0; i < h->n_watches; i++) {
		free(h->watches[i].path);
		free(h->watches[i].token);
	}
	free(h->watches);
	close(h->pipe[0]);
	close(h->pipe[1]);
	free(h);
}

void *xs_read(struct xs_handle *h, xs_transaction_t t, const char *path, unsigned int *len)
{
	struct fx_node *node;
	char *value = NULL;

	fx_request();
	pthread_mutex_lock(&fx_lock);
	node = fx_find(path);
	if (node) {
		value = strdup(node->value);
		if (len)
			*len = strlen(node->value);
	}
	pthread_mutex_unlock(&fx_lock);
	if (!node)
		errno = ENOENT;
	return value;
}

bool xs_write(struct xs_handle *h, xs_transaction_t t, const char *path, const void *data,
	      unsigned int len)
{
	/* libxenstore's own check, before anything is sent (xs_talkv). */
	if (strlen(path) + 1 + len > XENSTORE_PAYLOAD_MAX) {
		errno = E2BIG;
		return false;
	}
	fx_request();
	pthread_mutex_lock(&fx_lock);
	fx_set(path, data, len);
	pthread_mutex_unlock(&fx_lock);
	return true;
}

bool xs_rm(struct xs_handle *h, xs_transaction_t t, const char *path)
{
	bool found;

	fx_request();
	pthread_mutex_lock(&fx_lock);
	found = fx_remove(path);
	pthread_mutex_unlock(&fx_lock);
	if (!found)
		errno = ENOENT;
	return found;
}

char **xs_directory(struct xs_handle *h, xs_transaction_t t, const char *path,
		    unsigned int *num)
{
	size_t base = strlen(path), bytes = 0, n = 0, i;
	char **names = NULL, *text = NULL;

	fx_request();
	pthread_mutex_lock(&fx_lock);
	if (!fx_find(path)) {
		pthread_mutex_unlock(&fx_lock);
		errno = ENOENT;
		return NULL;
	}
	for (int pass = 0; pass < 2; pass++) {
		for (i = fx_lower(path); i < fx_n && !strncmp(fx_nodes[i].path, path, base); i++) {
			const char *rest = fx_nodes[i].path + base;

			if (rest[0] != '/' || !rest[1] || strchr(rest + 1, '/'))
				continue;
			if (pass == 0) {
				n++;
				bytes += strlen(rest);
			} else {
				strcpy(text, rest + 1);
				names[n++] = text;
				text += strlen(rest);
			}
		}
		if (pass == 0) {
			names = malloc((n + 1) * sizeof(*names) + bytes + 1);
			if (!names)
				abort();
			text = (char *)(names + n + 1);
			n = 0;
		}
	}
	pthread_mutex_unlock(&fx_lock);
	*num = n;
	return names;
}

xs_transaction_t xs_transaction_start(struct xs_handle *h)
{
	xs_transaction_t t;

	fx_request();
	pthread_mutex_lock(&fx_lock);
	t = fx_next_tx++;
	if (!fx_next_tx)
		fx_next_tx = 1;
	pthread_mutex_unlock(&fx_lock);
	return t;
}

bool xs_transaction_end(struct xs_handle *h, xs_transaction_t t, bool abort_it)
{
	fx_request();
	return true;
}

bool xs_watch(struct xs_handle *h, const char *path, const char *token)
{
	struct fx_watch *grown;

	fx_request();
	pthread_mutex_lock(&fx_lock);
	grown = realloc(h->watches, (h->n_watches + 1) * sizeof(*grown));
	if (!grown)
		abort();
	h->watches = grown;
	grown[h->n_watches].path = strdup(path);
	grown[h->n_watches].token = strdup(token);
	h->n_watches++;
	fx_queue(h, path, token);	/* xenstored fires a new watch once */
	pthread_mutex_unlock(&fx_lock);
	return true;
}

bool xs_unwatch(struct xs_handle *h, const char *path, const char *token)
{
	bool found = false;

	fx_request();
	pthread_mutex_lock(&fx_lock);
	for (unsigned i = 0; i < h->n_watches; i++) {
		if (strcmp(h->watches[i].path, path) || strcmp(h->watches[i].token, token))
			continue;
		free(h->watches[i].path);
		free(h->watches[i].token);
		h->watches[i] = h->watches[--h->n_watches];
		found = true;
		break;
	}
	pthread_mutex_unlock(&fx_lock);
	if (!found)
		errno = ENOENT;
	return found;
}

int xs_fileno(struct xs_handle *h)
{
	return h->pipe[0];
}

char **xs_check_watch(struct xs_handle *h)
{
	struct fx_event *e;
	char **vec, byte;
	size_t lp, lt;

	pthread_mutex_lock(&fx_lock);
	e = h->head;
	if (e) {
		h->head = e->next;
		if (!h->head)
			h->tail = NULL;
		if (read(h->pipe[0], &byte, 1) != 1)
			abort();
	}
	pthread_mutex_unlock(&fx_lock);
	if (!e) {
		errno = EAGAIN;
		return NULL;
	}
	lp = strlen(e->path) + 1;
	lt = strlen(e->token) + 1;
	vec = malloc(2 * sizeof(*vec) + lp + lt);
	if (!vec)
		abort();
	vec[XS_WATCH_PATH] = (char *)(vec + 2);
	vec[XS_WATCH_TOKEN] = vec[XS_WATCH_PATH] + lp;
	memcpy(vec[XS_WATCH_PATH], e->path, lp);
	memcpy(vec[XS_WATCH_TOKEN], e->token, lt);
	free(e->path);
	free(e->token);
	free(e);
	return vec;
}

/* ---------------------------------------------------------------- libxenctrl */

void fake_xc_uuid_text(uint8_t seed, char out[37])
{
	static const char hex[] = "0123456789abcdef";
	char byte[3] = { hex[seed >> 4], hex[seed & 15], 0 };

	out[0] = '\0';
	for (int i = 0; i < 16; i++) {
		strcat(out, byte);
		if (i == 3 || i == 5 || i == 7 || i == 9)
			strcat(out, "-");
	}
}

void fake_xc_add(uint32_t domid, uint8_t seed, uint64_t tot_pages, uint32_t flags)
{
	unsigned i;

	pthread_mutex_lock(&fx_lock);
	for (i = 0; i < fx_n_domains && fx_domains[i].domain != domid; i++)
		;
	if (i == fx_n_domains) {
		if (fx_n_domains == FX_MAX_DOMAINS)
			abort();
		/* Kept sorted by domid, as Xen lists them. */
		for (i = fx_n_domains; i > 0 && fx_domains[i - 1].domain > domid; i--)
			fx_domains[i] = fx_domains[i - 1];
		fx_n_domains++;
	}
	memset(&fx_domains[i], 0, sizeof(fx_domains[i]));
	fx_domains[i].domain = domid;
	fx_domains[i].tot_pages = tot_pages;
	fx_domains[i].flags = flags;
	memset(fx_domains[i].handle, seed, sizeof(fx_domains[i].handle));
	pthread_mutex_unlock(&fx_lock);
}

void fake_xc_remove(uint32_t domid)
{
	pthread_mutex_lock(&fx_lock);
	for (unsigned i = 0; i < fx_n_domains; i++)
		if (fx_domains[i].domain == domid) {
			memmove(&fx_domains[i], &fx_domains[i + 1],
				(fx_n_domains - i - 1) * sizeof(fx_domains[0]));
			fx_n_domains--;
			break;
		}
	pthread_mutex_unlock(&fx_lock);
}

void fake_xc_set_free(uint64_t pages)
{
	pthread_mutex_lock(&fx_lock);
	fx_free_pages = pages;
	pthread_mutex_unlock(&fx_lock);
}

xc_interface *xc_interface_open(xentoollog_logger *logger, xentoollog_logger *dombuild_logger,
				unsigned open_flags)
{
	return calloc(1, sizeof(struct xc_interface_core));
}

int xc_interface_close(xc_interface *xch)
{
	free(xch);
	return 0;
}

int xc_domain_getinfolist(xc_interface *xch, uint32_t first_domain, unsigned int max_domains,
			  xc_domaininfo_t *info)
{
	int n = 0;

	pthread_mutex_lock(&fx_lock);
	for (unsigned i = 0; i < fx_n_domains && (unsigned)n < max_domains; i++)
		if (fx_domains[i].domain >= first_domain)
			info[n++] = fx_domains[i];
	pthread_mutex_unlock(&fx_lock);
	return n;
}

int xc_physinfo(xc_interface *xch, xc_physinfo_t *info)
{
	memset(info, 0, sizeof(*info));
	pthread_mutex_lock(&fx_lock);
	info->free_pages = fx_free_pages;
	pthread_mutex_unlock(&fx_lock);
	return 0;
}

/* A PV guest's answer: no paging pool (what the fake's domains are). */
int xc_get_paging_mempool_size(xc_interface *xch, uint32_t domid, uint64_t *size)
{
	(void)xch;
	(void)domid;
	*size = 0;
	errno = EOPNOTSUPP;
	return -1;
}
