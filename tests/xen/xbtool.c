/*
 * xbtool: what the real-Xen scenarios need to ask the hypervisor quickly and
 * precisely (xl pays libxl's start-up, ~1 s under emulation, on every call).
 * Test tooling only; it changes no domain except in floor-destroy, the
 * benchmarks' teardown floor (kill-when signals a process, the daemon
 * under test).
 *
 *   xbtool free-pages              free pages in the heap
 *   xbtool physinfo [-H]           "free_pages=N scrub_pages=N
 *                                  outstanding_pages=N scrub_cap=0|1" from
 *                                  one XEN_SYSCTL_physinfo (scrub_cap: the
 *                                  XEN_SYSCTL_PHYSCAP_scrub_pages bit of
 *                                  xen-patches/, set only by a hypervisor
 *                                  that fills scrub_pages in); with -H,
 *                                  then press debug key H and add
 *                                  " h_unscrubbed=N scrub_pages_after=N":
 *                                  the sum of H's "Node N has M unscrubbed
 *                                  pages" and physinfo read again after it
 *   xbtool pages DOMID             tot_pages of DOMID (exit 1 if gone)
 *   xbtool uuid DOMID              the hypervisor's UUID for DOMID
 *   xbtool info DOMID              "pages=N dying=0|1 shutdown=0|1 reason=N"
 *   xbtool wait-free PAGES MS      wait until free-pages >= PAGES; print ms waited
 *   xbtool wait-gone DOMID MS      wait until DOMID is gone; print ms waited
 *   xbtool wait-below DOMID PAGES MS  wait until DOMID holds fewer than PAGES
 *                                  (a teardown is under way); print tot_pages
 *   xbtool sample-job DOMID MS FILE  (following: it pings) every 20 ms until the job is done or
 *                                  failed (or MS passed), append
 *                                  "ms state pages-left rate wall-ms" to
 *                                  FILE (the first three read in one
 *                                  transaction; wall-ms after the reads)
 *   xbtool list                    every domain: "DOMID UUID TOT_PAGES DYING"
 *   xbtool wait-node PATH VALUE MS wait (a xenstore watch) until PATH reads
 *                                  VALUE ('*' any value, '-' absent, a|b
 *                                  either); print ms waited and the value
 *   xbtool kill-when [-r FILE] PID SIG DELAY LIMIT node PATH VALUE
 *   xbtool kill-when [-r FILE] PID SIG DELAY LIMIT below DOMID PAGES
 *                                  when PATH reads VALUE (as wait-node), or
 *                                  DOMID holds fewer than PAGES (or is gone),
 *                                  wait DELAY ms more and send signal SIG to
 *                                  PID; print "ms=N saw=WHAT".  After LIMIT ms
 *                                  it sends the signal anyway, prints
 *                                  "saw=timeout" and exits 1.  With -r,
 *                                  "watching" goes to FILE once DOMID was
 *                                  first read (or PATH's watch set), so that a
 *                                  caller can start what it waits for
 *                                  only when it is sure to be seen
 *   xbtool stamp                   copy stdin to stdout, each line prefixed
 *                                  with monotonic ms (for logs that carry
 *                                  no times of their own)
 *   xbtool random N                a random number in 0..N-1
 *   xbtool hold-page DOMID FILE    map one page of DOMID (its xenstore ring,
 *                                  through libxenforeignmemory, as a
 *                                  leftover dom0 helper would), write
 *                                  "held" to FILE and keep it mapped until
 *                                  SIGTERM: the domain cannot go away
 *   xbtool ms                      wall-clock milliseconds
 *   xbtool acct FILE | acct off    the kernel's process accounting to
 *                                  FILE (emptied), or off
 *   xbtool acct-sum FILE           the CPU of the processes that exited
 *                                  while it was on: "all=MS NAME=MS ..."
 *   xbtool time FILE CMD [ARG...]  run CMD; write how long it blocked its
 *                                  caller (ms, fork to exit) into FILE;
 *                                  exit with CMD's status
 *   xbtool back [-t TRACE:DOMID] FILE PAGES CMD [ARG...]  the same, and
 *                                  also wait until free pages reach PAGES;
 *                                  FILE gets "BLOCKED_MS BACK_MS", both from
 *                                  the fork; with -t, every 20 ms TRACE gets
 *                                  "MS TOT_PAGES_OF_DOMID FREE_PAGES" (for
 *                                  the pages-left plot); with -n PATH=VALUE,
 *                                  then also wait (a watch) until PATH reads
 *                                  VALUE and add that time as a third figure
 *                                  (e.g. a sync job done: memory clean);
 *                                  with -g D1,D2,..., also the ms until
 *                                  the first of them was gone, as the
 *                                  last figure; -i MS: look every MS ms
 *                                  (default 2; a mass teardown's 20)
 *   xbtool xs-latency FILE         until SIGTERM: read one xenstore node,
 *                                  pause 10 ms, again; FILE gets "WALL_MS
 *                                  RTT_US" per read (a resident client's
 *                                  view of xenstored)
 *   xbtool scrub-trace [-w] FILE MS  for MS ms, every 200 ms: press debug
 *                                  key H and add up its "Node N has M
 *                                  unscrubbed pages"; FILE gets "MS PAGES"
 *                                  (for the scrub backlog plot; each press
 *                                  writes the heap dump to the console);
 *                                  MS from the start, or with -w wall-clock
 *                                  ms (to set beside the daemon's times)
 *   xbtool spawn-cost N            what a teardown helper process would
 *                                  cost before its first destroy (issue
 *                                  39), medians of N: "ctx_us=" a libxl
 *                                  context made and freed in-process,
 *                                  "spawn_us=" posix_spawn of this program
 *                                  until its child has a libxl context
 *                                  open (exec, loading, libxl_ctx_alloc),
 *                                  "true_us=" posix_spawn of /bin/true
 *                                  until it is reaped
 *   xbtool probe-cost N            the daemon's two ways to read the scrub
 *                                  backlog, N times each, in one process:
 *                                  one XEN_SYSCTL_physinfo, and one heap
 *                                  dump (skip the ring, press H, read back
 *                                  what it added, add up its unscrubbed
 *                                  pages); prints "physinfo_us=MEDIAN
 *                                  h_us=MEDIAN h_lines=MEDIAN" (h_lines:
 *                                  console lines one dump wrote)
 *   xbtool scrub-compare [-H] ROOT FILE MS  every 20 ms (200 with -H) for
 *                                  MS ms or until SIGTERM: read the
 *                                  daemon's ROOT/scrub/pages and
 *                                  ROOT/scrub/probed, and at once the
 *                                  hypervisor's backlog (physinfo's
 *                                  scrub_pages; with -H a heap dump's sum);
 *                                  FILE gets "WALL_MS PUBLISHED PROBED HV"
 *                                  ('-' for an absent node)
 *   xbtool spin FILE               until SIGTERM: fixed CPU-bound work; FILE
 *                                  gets "WALL_MS UNITS" per 100 ms (a dom0
 *                                  task's share of the CPU)
 *   xbtool floor-destroy [-t TRACE:DOMID] FILE PAGES DOMID  the teardown
 *                                  floor: a child makes its libxl context
 *                                  first (not timed), then calls
 *                                  libxl_domain_destroy(DOMID); FILE gets
 *                                  "RETURN_MS BACK_MS" from the go (the
 *                                  child returned and exited; free pages
 *                                  reached PAGES)
 *
 * Under emulation starting any process costs hundreds of milliseconds, so
 * "t0=$(xbtool ms); cmd; t1=$(xbtool ms)" mostly measures xbtool itself;
 * `time` measures the command alone.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/acct.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <libxl.h>
#include <xenctrl.h>
#include <xenforeignmemory.h>
#include <xenstore.h>

static int64_t now_ms(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int free_pages(xc_interface *xch, uint64_t *pages)
{
	xc_physinfo_t info = { 0 };

	if (xc_physinfo(xch, &info))
		return -errno;
	*pages = info.free_pages;
	return 0;
}

/* Set by hypervisors with xen-patches/4.17 (0003): scrub_pages is meant. */
#ifndef XEN_SYSCTL_PHYSCAP_scrub_pages
#define XEN_SYSCTL_PHYSCAP_scrub_pages (1u << 10)
#endif

static int physinfo_line(xc_interface *xch, uint64_t *scrub)
{
	xc_physinfo_t info = { 0 };

	if (xc_physinfo(xch, &info))
		return -errno;
	printf("free_pages=%" PRIu64 " scrub_pages=%" PRIu64 " outstanding_pages=%" PRIu64
	       " scrub_cap=%d", (uint64_t)info.free_pages, (uint64_t)info.scrub_pages,
	       (uint64_t)info.outstanding_pages,
	       !!(info.capabilities & XEN_SYSCTL_PHYSCAP_scrub_pages));
	*scrub = info.scrub_pages;
	return 0;
}

/* Move *INDEX past what the console ring holds now. */
static int console_skip(xc_interface *xch, unsigned int *index)
{
	static char chunk[16384 + 1];
	unsigned int n;

	do {
		n = sizeof(chunk) - 1;
		if (xc_readconsolering(xch, chunk, &n, 0, 1, index))
			return -errno;
	} while (n);
	return 0;
}

/* Press debug key H and add up the "Node N has M unscrubbed pages" lines
 * it puts in the console ring after *INDEX (moved past them). */
static int h_press(xc_interface *xch, unsigned int *index, uint64_t *pages)
{
	static char chunk[16384 + 1];
	uint64_t node_pages;
	unsigned int n;
	char *line;

	if (xc_send_debug_keys(xch, "H"))
		return -errno;
	*pages = 0;
	do {
		n = sizeof(chunk) - 1;
		if (xc_readconsolering(xch, chunk, &n, 0, 1, index))
			return -errno;
		chunk[n] = '\0';
		for (line = strstr(chunk, "unscrubbed pages"); line; line = strstr(line + 1, "unscrubbed pages")) {
			char *bol = line;

			while (bol > chunk && bol[-1] != '\n')
				bol--;
			if (strstr(bol, "(XEN)") && (bol = strstr(bol, "Node ")) &&
			    sscanf(bol, "Node %*u has %" SCNu64, &node_pages) == 1)
				*pages += node_pages;
		}
	} while (n);
	return 0;
}

/* H's unscrubbed pages, what the ring held before skipped. */
static int h_unscrubbed(xc_interface *xch, uint64_t *pages)
{
	unsigned int index = 0;
	int rc = console_skip(xch, &index);

	return rc ? rc : h_press(xch, &index, pages);
}

/* `physinfo [-H]` */
static int physinfo(xc_interface *xch, int with_h)
{
	uint64_t scrub, h = 0;
	int rc = physinfo_line(xch, &scrub);

	if (!rc && with_h && !(rc = h_unscrubbed(xch, &h))) {
		xc_physinfo_t info = { 0 };

		printf(" h_unscrubbed=%" PRIu64, h);
		rc = xc_physinfo(xch, &info) ? -errno : 0;
		if (!rc)
			printf(" scrub_pages_after=%" PRIu64, (uint64_t)info.scrub_pages);
	}
	printf("\n");
	return rc;
}

/* 0 and INFO filled if DOMID exists, -ESRCH if not. */
static int domain_info(xc_interface *xch, uint32_t domid, xc_domaininfo_t *info)
{
	int got = xc_domain_getinfolist(xch, domid, 1, info);

	if (got < 0)
		return -errno;
	return (got == 1 && info->domain == domid) ? 0 : -ESRCH;
}

static int node_wait(const char *path, const char *want, int64_t limit, char **seen,
		     const char *ready);

/* What is being waited for while a teardown runs: the command (or the
 * floor's destroy call) to finish, and free pages to reach TARGET. */
struct back_watch {
	xc_interface *xch;
	uint64_t target;
	FILE *trace;		/* NULL, or "ms tot_pages free_pages" every 20 ms */
	uint32_t trace_domid;
	int64_t start, last_trace;
	int64_t done_ms, back_ms;	/* -1 until seen */
	char *node_path, *node_value;	/* -n: then wait for this node */
	uint32_t gone_domids[1024];	/* -g: the first of these to go (a whole host) */
	unsigned n_gone;
	int64_t gone_ms;		/* -1 until one is gone */
	unsigned poll_ms;		/* -i: between looks (default 2) */
};

/* Parse "-t TRACE:DOMID" and "-n PATH=VALUE" at ARGS (moving past them);
 * 0, or -EINVAL. */
static int back_trace_arg(char ***args, struct back_watch *w)
{
	char *sep;

	while (**args && (!strcmp(**args, "-t") || !strcmp(**args, "-n") || !strcmp(**args, "-g") ||
			  !strcmp(**args, "-i"))) {
		if (!(*args)[1])
			return -EINVAL;
		if (!strcmp(**args, "-i")) {
			w->poll_ms = atoi((*args)[1]);
			if (w->poll_ms < 1 || w->poll_ms > 1000)
				return -EINVAL;
		} else if (!strcmp(**args, "-g")) {
			for (char *d = strtok((*args)[1], ","); d; d = strtok(NULL, ",")) {
				if (w->n_gone == sizeof(w->gone_domids) / sizeof(*w->gone_domids))
					return -EINVAL;
				w->gone_domids[w->n_gone++] = atoi(d);
			}
		} else if (!strcmp(**args, "-n")) {
			if (!(sep = strchr((*args)[1], '=')))
				return -EINVAL;
			*sep = '\0';
			w->node_path = (*args)[1];
			w->node_value = sep + 1;
		} else {
			if (!(sep = strrchr((*args)[1], ':')))
				return -EINVAL;
			*sep = '\0';
			w->trace = fopen((*args)[1], "w");
			if (!w->trace)
				return -errno;
			w->trace_domid = atoi(sep + 1);
		}
		*args += 2;
	}
	return 0;
}

/* Is one of the -g domains gone?  One hypercall for all of them: a call
 * per domain, every look, kept a dom0 vCPU half busy with 48 of them. */
static bool back_one_gone(struct back_watch *w)
{
	static xc_domaininfo_t list[1024];
	uint32_t lowest = UINT32_MAX, highest = 0;
	unsigned i, j, span;
	int got;

	for (i = 0; i < w->n_gone; i++) {
		if (w->gone_domids[i] < lowest)
			lowest = w->gone_domids[i];
		if (w->gone_domids[i] > highest)
			highest = w->gone_domids[i];
	}
	/* No more than the span asks for: the list is bounced through a
	 * hypercall buffer as large. */
	span = highest - lowest + 1;
	got = xc_domain_getinfolist(w->xch, lowest, span < 1024 ? span : 1024, list);
	if (got < 0)
		return false;
	for (i = 0; i < w->n_gone; i++) {
		for (j = 0; j < (unsigned)got && list[j].domain != w->gone_domids[i]; j++)
			;
		if (j == (unsigned)got)
			return true;
	}
	return false;
}

/* One look: is the memory back yet; and a trace line when one is due. */
static void back_poll(struct back_watch *w)
{
	int64_t now = now_ms(CLOCK_MONOTONIC) - w->start;
	xc_domaininfo_t info;
	uint64_t pages = 0;

	if (free_pages(w->xch, &pages))
		return;
	if (w->back_ms < 0 && pages >= w->target)
		w->back_ms = now;
	if (w->gone_ms < 0 && w->n_gone && back_one_gone(w))
		w->gone_ms = now;
	if (w->trace && (w->last_trace < 0 || now - w->last_trace >= 20)) {
		w->last_trace = now;
		fprintf(w->trace, "%" PRId64 " %" PRIu64 " %" PRIu64 "\n", now,
			domain_info(w->xch, w->trace_domid, &info) ? 0 : (uint64_t)info.tot_pages,
			pages);
	}
}

/* `time` and `back`: ARGS is [-t TRACE:DOMID] FILE [PAGES] CMD... */
static int time_command(bool until_free, char **args)
{
	struct back_watch w = { .done_ms = -1, .back_ms = -1, .last_trace = -1, .gone_ms = -1,
				.poll_ms = 2 };
	int64_t node_ms = -1;
	const char *file;
	int status = 0, exited = 0;
	FILE *out;
	pid_t pid;

	if (until_free) {
		if (back_trace_arg(&args, &w)) {
			fprintf(stderr, "xbtool: -t wants TRACE:DOMID, -n PATH=VALUE, -g D1,D2,..., -i MS (1 to 1000)\n");
			return 2;
		}
		if (!args[0] || !args[1] || !args[2])
			return 2;
	}
	file = *args++;
	if (until_free) {
		w.target = strtoull(*args++, NULL, 10);
		w.xch = xc_interface_open(NULL, NULL, 0);
		if (!w.xch) {
			perror("xbtool: xc_interface_open");
			return 2;
		}
	}
	w.start = now_ms(CLOCK_MONOTONIC);
	pid = fork();
	if (pid == 0) {
		execvp(args[0], args);
		perror(args[0]);
		_exit(127);
	}
	if (pid < 0) {
		perror("xbtool: fork");
		return 2;
	}
	/* Poll both: the command's exit, and (for back) the free memory. */
	while (!exited || (until_free && (w.back_ms < 0 || (w.n_gone && w.gone_ms < 0)))) {
		if (!exited && waitpid(pid, &status, WNOHANG) == pid) {
			exited = 1;
			w.done_ms = now_ms(CLOCK_MONOTONIC) - w.start;
		}
		if (until_free)
			back_poll(&w);
		if (now_ms(CLOCK_MONOTONIC) - w.start > 300000)
			break;
		usleep(w.poll_ms * 1000);
	}
	if (w.node_path && w.back_ms >= 0) {
		/* The node comes after the memory (a sync job's done): a watch,
		 * not polling, so xenstored is not kept busy meanwhile. */
		char *seen = NULL;

		if (!node_wait(w.node_path, w.node_value, 300000, &seen, NULL))
			node_ms = now_ms(CLOCK_MONOTONIC) - w.start;
		free(seen);
	}
	if (w.xch)
		xc_interface_close(w.xch);
	if (w.trace)
		fclose(w.trace);
	out = fopen(file, "w");
	if (out) {
		if (w.node_path)
			fprintf(out, "%" PRId64 " %" PRId64 " %" PRId64 "\n", w.done_ms, w.back_ms,
				node_ms);
		else if (until_free)
			fprintf(out, "%" PRId64 " %" PRId64, w.done_ms, w.back_ms);
		else
			fprintf(out, "%" PRId64, w.done_ms);
		if (w.n_gone)
			fprintf(out, " %" PRId64, w.gone_ms);
		fputc('\n', out);
		fclose(out);
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The floor's destroyer: a child process with nothing but libxl in it.
 * libxl_domain_destroy forks a child of its own to run the destroy
 * hypercalls; forked from a process with a second thread, that child can
 * inherit a lock the other thread held (libxc's buffer cache, say) and
 * wait on it for ever, so the timing side stays in another process.  It
 * makes its context first (not timed), says so on READY, waits for a byte
 * on GO, then destroys. */
static void floor_child(uint32_t domid, int ready, int go)
{
	xentoollog_logger_stdiostream *logger;
	libxl_ctx *ctx = NULL;
	char byte = 0;

	logger = xtl_createlogger_stdiostream(stderr, XTL_ERROR, 0);
	if (!logger || libxl_ctx_alloc(&ctx, LIBXL_VERSION, 0, (xentoollog_logger *)logger)) {
		fprintf(stderr, "xbtool: no libxl context\n");
		_exit(2);
	}
	if (write(ready, &byte, 1) != 1 || read(go, &byte, 1) != 1)
		_exit(2);
	if (libxl_domain_destroy(ctx, domid, NULL)) {
		fprintf(stderr, "xbtool: libxl_domain_destroy(%u) failed\n", domid);
		_exit(1);
	}
	libxl_ctx_free(ctx);
	xtl_logger_destroy((xentoollog_logger *)logger);
	_exit(0);
}

/* `floor-destroy [-t TRACE:DOMID] FILE PAGES DOMID`: the least any dom0
 * toolstack pays for a teardown, its libxl context already open (as a
 * daemon's is): from the call to libxl_domain_destroy until free memory
 * is back (it may come back before the call returns: both are watched). */
static int floor_destroy(char **args)
{
	struct back_watch w = { .done_ms = -1, .back_ms = -1, .last_trace = -1, .gone_ms = -1,
				.poll_ms = 2 };
	int ready[2], go[2], status = 0, exited = 0;
	const char *file;
	uint32_t domid;
	char byte = 0;
	FILE *out;
	pid_t pid;

	if (back_trace_arg(&args, &w) || !args[0] || !args[1] || !args[2] || args[3]) {
		fprintf(stderr, "xbtool: floor-destroy [-t TRACE:DOMID] [-i MS] FILE PAGES DOMID\n");
		return 2;
	}
	file = args[0];
	w.target = strtoull(args[1], NULL, 10);
	domid = atoi(args[2]);
	if (pipe(ready) || pipe(go)) {
		perror("xbtool: pipe");
		return 2;
	}
	pid = fork();
	if (pid < 0) {
		perror("xbtool: fork");
		return 2;
	}
	if (pid == 0) {
		close(ready[0]);
		close(go[1]);
		floor_child(domid, ready[1], go[0]);
	}
	close(ready[1]);
	close(go[0]);
	w.xch = xc_interface_open(NULL, NULL, 0);
	if (!w.xch || read(ready[0], &byte, 1) != 1) {
		fprintf(stderr, "xbtool: the destroyer did not get ready\n");
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return 2;
	}
	w.start = now_ms(CLOCK_MONOTONIC);
	if (write(go[1], &byte, 1) != 1) {
		perror("xbtool: write");
		return 2;
	}
	while (!exited || w.back_ms < 0) {
		if (!exited && waitpid(pid, &status, WNOHANG) == pid) {
			exited = 1;
			w.done_ms = now_ms(CLOCK_MONOTONIC) - w.start;
		}
		back_poll(&w);
		if (now_ms(CLOCK_MONOTONIC) - w.start > 120000)
			break;
		usleep(w.poll_ms * 1000);
	}
	xc_interface_close(w.xch);
	if (w.trace)
		fclose(w.trace);
	if (!exited) {
		fprintf(stderr, "xbtool: libxl_domain_destroy(%u) has not returned after 120 s\n", domid);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return 1;
	}
	out = fopen(file, "w");
	if (out) {
		fprintf(out, "%" PRId64 " %" PRId64 "\n", w.done_ms, w.back_ms);
		fclose(out);
	}
	return !WIFEXITED(status) || WEXITSTATUS(status) || w.back_ms < 0;
}

/* A shell loop of xenstore-read manages a sample every few hundred ms
 * under emulation; this takes one every 20 ms, in one process. */
/* Ping as a following client does (daemon/liveness.c), every 2 s once the
 * last ping was answered, so that the daemon publishes at every sample. */
struct follow {
	char path[96];
	unsigned seq;
	bool out;
	int64_t next_ms;
};

static void follow_turn(struct xs_handle *xsh, struct follow *f)
{
	int64_t now = now_ms(CLOCK_MONOTONIC);
	unsigned len;
	char *value;

	if (now < f->next_ms)
		return;
	if (f->out) {
		value = xs_read(xsh, XBT_NULL, f->path, &len);
		free(value);
		if (value)
			return;		/* not answered yet */
	}
	snprintf(f->path, sizeof(f->path), "/tool/xenreaper/ping/%ld-xbtool-%u", (long)getpid(), ++f->seq);
	f->out = xs_write(xsh, XBT_NULL, f->path, "xbtool", 6);
	f->next_ms = now + 2000;
}

static int sample_job(const char *domid, int64_t limit, const char *file)
{
	struct follow follow = { .out = false };
	struct xs_handle *xsh = xs_open(0);
	char path[128], *state, *left, *rate;
	int64_t start = now_ms(CLOCK_MONOTONIC);
	unsigned len;
	FILE *out;
	int done = 0;

	if (!xsh) {
		perror("xbtool: xs_open");
		return 2;
	}
	out = fopen(file, "a");
	if (!out) {
		xs_close(xsh);
		return 2;
	}
	while (!done && now_ms(CLOCK_MONOTONIC) - start < limit) {
		/* One transaction: the count and the rate of one publication. */
		xs_transaction_t t;

		follow_turn(xsh, &follow);
		t = xs_transaction_start(xsh);

		snprintf(path, sizeof(path), "/tool/xenreaper/job/%s/state", domid);
		state = xs_read(xsh, t, path, &len);
		snprintf(path, sizeof(path), "/tool/xenreaper/job/%s/pages-left", domid);
		left = xs_read(xsh, t, path, &len);
		snprintf(path, sizeof(path), "/tool/xenreaper/job/%s/rate", domid);
		rate = xs_read(xsh, t, path, &len);
		if (t != XBT_NULL)
			xs_transaction_end(xsh, t, true);
		fprintf(out, "%" PRId64 " %s %s %s %" PRId64 "\n", now_ms(CLOCK_MONOTONIC) - start,
			state ? state : "-", left ? left : "-", rate ? rate : "-",
			now_ms(CLOCK_REALTIME));
		done = state && (!strcmp(state, "done") || !strcmp(state, "failed"));
		free(state);
		free(left);
		free(rate);
		usleep(20000);
	}
	if (follow.out)
		xs_rm(xsh, XBT_NULL, follow.path);
	fclose(out);
	xs_close(xsh);
	return done ? 0 : 1;
}

/* Does VALUE (NULL = absent) satisfy WANT: '*' any, '-' absent, or one of
 * the '|'-separated alternatives? */
static bool node_matches(const char *value, const char *want)
{
	size_t len;

	if (!strcmp(want, "-"))
		return !value;
	if (!value)
		return false;
	if (!strcmp(want, "*"))
		return true;
	len = strlen(value);
	for (const char *p = want; *p; p += strcspn(p, "|"), p += *p == '|') {
		if (strcspn(p, "|") == len && !strncmp(p, value, len))
			return true;
	}
	return false;
}

/* "watching" into FILE (NULL: nothing), for kill-when -r. */
static int ready_write(const char *file)
{
	FILE *f;

	if (!file)
		return 0;
	f = fopen(file, "w");
	if (!f || fputs("watching\n", f) == EOF || fclose(f)) {
		perror(file);
		return -EIO;
	}
	return 0;
}

/* Wait, with a watch on PATH, until it satisfies WANT or LIMIT ms pass.
 * 0 with *SEEN (malloc'd, NULL if absent) set, -ETIMEDOUT, or -errno.
 * "watching" goes to READY (if not NULL) once the watch is set. */
static int node_wait(const char *path, const char *want, int64_t limit, char **seen,
		     const char *ready)
{
	struct xs_handle *xsh = xs_open(0);
	int64_t start = now_ms(CLOCK_MONOTONIC), left;
	struct pollfd pfd;
	unsigned len;
	char **event;
	char *value;
	int rc;

	if (!xsh)
		return -errno;
	/* The watch fires once at once, then on every change below PATH. */
	if (!xs_watch(xsh, path, "xbtool")) {
		rc = -errno;
		goto out;
	}
	rc = ready_write(ready);
	if (rc)
		goto out;
	pfd.fd = xs_fileno(xsh);
	pfd.events = POLLIN;
	for (;;) {
		value = xs_read(xsh, XBT_NULL, path, &len);
		if (node_matches(value, want)) {
			*seen = value;
			rc = 0;
			goto out;
		}
		free(value);
		left = limit - (now_ms(CLOCK_MONOTONIC) - start);
		if (left <= 0) {
			rc = -ETIMEDOUT;
			goto out;
		}
		if (poll(&pfd, 1, left > 1000 ? 1000 : (int)left) > 0) {
			while ((event = xs_check_watch(xsh)))
				free(event);
		}
	}
out:
	xs_close(xsh);
	return rc;
}

/* `wait-node PATH VALUE MS` */
static int wait_node(const char *path, const char *want, int64_t limit)
{
	int64_t start = now_ms(CLOCK_MONOTONIC);
	char *seen = NULL;
	int rc = node_wait(path, want, limit, &seen, NULL);

	if (rc && rc != -ETIMEDOUT) {
		fprintf(stderr, "xbtool: %s: %s\n", path, strerror(-rc));
		return 2;
	}
	printf("%" PRId64 " %s\n", now_ms(CLOCK_MONOTONIC) - start,
	       rc ? "timeout" : seen ? seen : "-");
	free(seen);
	return rc ? 1 : 0;
}

/* `kill-when [-r FILE] PID SIG DELAY LIMIT node PATH VALUE | below DOMID PAGES` */
static int kill_when(char **args, const char *ready)
{
	pid_t pid = atoi(args[0]);
	int sig = atoi(args[1]), rc;
	int64_t delay = atoll(args[2]), limit = atoll(args[3]);
	int64_t start = now_ms(CLOCK_MONOTONIC), waited;
	xc_domaininfo_t info;
	xc_interface *xch;
	char saw[64], *seen = NULL;

	if (!strcmp(args[4], "node")) {
		rc = node_wait(args[5], args[6], limit, &seen, ready);
		snprintf(saw, sizeof(saw), "%s", rc ? "timeout" : seen ? seen : "-");
		free(seen);
	} else {
		xch = xc_interface_open(NULL, NULL, 0);
		if (!xch) {
			perror("xbtool: xc_interface_open");
			return 2;
		}
		/* Poll hard: a teardown's hypercall phase lasts about a second. */
		rc = domain_info(xch, atoi(args[5]), &info);
		if (!rc && ready_write(ready)) {
			xc_interface_close(xch);
			return 2;
		}
		for (; !rc && info.tot_pages >= strtoull(args[6], NULL, 10);
		     rc = domain_info(xch, atoi(args[5]), &info)) {
			if (now_ms(CLOCK_MONOTONIC) - start > limit) {
				rc = -ETIMEDOUT;
				break;
			}
			usleep(1000);
		}
		xc_interface_close(xch);
		if (!rc)
			snprintf(saw, sizeof(saw), "%" PRIu64, (uint64_t)info.tot_pages);
		else
			snprintf(saw, sizeof(saw), "%s", rc == -ESRCH ? "gone" : "timeout");
		if (rc == -ESRCH)
			rc = 0;
	}
	if (rc && rc != -ETIMEDOUT) {
		fprintf(stderr, "xbtool: %s\n", strerror(-rc));
		return 2;
	}
	waited = now_ms(CLOCK_MONOTONIC) - start;
	if (delay > 0)
		usleep(delay * 1000);
	if (kill(pid, sig) < 0) {
		fprintf(stderr, "xbtool: kill %d: %s\n", (int)pid, strerror(errno));
		return 2;
	}
	printf("ms=%" PRId64 " saw=%s\n", waited, saw);
	return rc ? 1 : 0;
}

/* `stamp`: one line in, one line out, at once (the reader may be killed). */
static int stamp(void)
{
	char line[4096];

	setvbuf(stdout, NULL, _IOLBF, 0);
	while (fgets(line, sizeof(line), stdin))
		printf("%" PRId64 " %s%s", now_ms(CLOCK_MONOTONIC), line,
		       strchr(line, '\n') ? "" : "\n");
	return 0;
}

static int list_domains(xc_interface *xch)
{
	xc_domaininfo_t info[256];
	uint32_t next = 0;
	int got;

	while ((got = xc_domain_getinfolist(xch, next, 256, info)) > 0) {
		for (int i = 0; i < got; i++) {
			const uint8_t *u = info[i].handle;

			printf("%u %02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x"
			       " %" PRIu64 " %d\n", info[i].domain,
			       u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
			       u[10], u[11], u[12], u[13], u[14], u[15],
			       (uint64_t)info[i].tot_pages, !!(info[i].flags & XEN_DOMINF_dying));
		}
		next = info[got - 1].domain + 1;
	}
	return got < 0 ? -errno : 0;
}

static volatile sig_atomic_t hold_stop;

static void hold_on_signal(int sig)
{
	hold_stop = 1;
}

/* Map DOMID's xenstore ring page (for a PV guest, ring-ref is its frame)
 * and keep it until SIGTERM. */
static int hold_page(uint32_t domid, const char *file)
{
	struct xs_handle *xsh = xs_open(0);
	xenforeignmemory_handle *fmem = NULL;
	char path[64], *ref = NULL;
	xen_pfn_t frame;
	void *page = NULL;
	unsigned len;
	int err = 0, rc = 2;
	FILE *out;

	signal(SIGTERM, hold_on_signal);
	signal(SIGINT, hold_on_signal);
	snprintf(path, sizeof(path), "/local/domain/%u/store/ring-ref", domid);
	if (xsh)
		ref = xs_read(xsh, XBT_NULL, path, &len);
	if (!ref) {
		fprintf(stderr, "xbtool: cannot read %s\n", path);
		goto out;
	}
	frame = strtoull(ref, NULL, 10);
	fmem = xenforeignmemory_open(NULL, 0);
	if (fmem)
		page = xenforeignmemory_map(fmem, domid, PROT_READ, 1, &frame, &err);
	if (!page || err) {
		fprintf(stderr, "xbtool: cannot map frame %s of domain %u: %s\n", ref, domid,
			strerror(err ? err : errno));
		goto out;
	}
	out = fopen(file, "w");
	if (out) {
		fprintf(out, "held %" PRIu64 "\n", (uint64_t)frame);
		fclose(out);
	}
	while (!hold_stop)
		pause();
	xenforeignmemory_unmap(fmem, page, 1);
	rc = 0;
out:
	if (fmem)
		xenforeignmemory_close(fmem);
	free(ref);
	if (xsh)
		xs_close(xsh);
	return rc;
}

static volatile sig_atomic_t sampler_stop;

static void sampler_on_term(int sig)
{
	(void)sig;
	sampler_stop = 1;
}

/* The samplers run until SIGTERM, buffering their lines (written at the
 * end, so that writing costs nothing while they measure). */
static FILE *sampler_open(const char *file)
{
	struct sigaction sa = { .sa_handler = sampler_on_term };
	FILE *out = fopen(file, "w");

	if (!out) {
		perror(file);
		return NULL;
	}
	setvbuf(out, NULL, _IOFBF, 1 << 20);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	return out;
}

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* `xs-latency FILE`: a resident client reading one node in a loop. */
static int xs_latency(const char *file)
{
	struct xs_handle *xsh = xs_open(0);
	FILE *out = xsh ? sampler_open(file) : NULL;
	unsigned len;
	int64_t t0;
	char *v;

	if (!out) {
		if (xsh)
			xs_close(xsh);
		else
			perror("xbtool: xs_open");
		return 2;
	}
	while (!sampler_stop) {
		t0 = now_us();
		v = xs_read(xsh, XBT_NULL, "/local/domain/0/name", &len);
		fprintf(out, "%" PRId64 " %" PRId64 "\n", now_ms(CLOCK_REALTIME), now_us() - t0);
		free(v);
		usleep(10000);
	}
	fclose(out);
	xs_close(xsh);
	return 0;
}

/* `spin FILE`: units of fixed work, counted per 100 ms window. */
static int spin(const char *file)
{
	FILE *out = sampler_open(file);
	volatile uint64_t x = 1;
	int64_t window;
	uint64_t units;

	if (!out)
		return 2;
	while (!sampler_stop) {
		window = now_ms(CLOCK_REALTIME) + 100;
		units = 0;
		while (now_ms(CLOCK_REALTIME) < window) {
			for (int i = 0; i < 10000; i++)
				x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			units++;
		}
		fprintf(out, "%" PRId64 " %" PRIu64 "\n", window, units);
	}
	fclose(out);
	return 0;
}

/* A trace's hypervisor handle and its FILE, written line by line: a
 * caller may read it while it runs, or kill it.  0, or -errno (said on
 * stderr). */
static int trace_open(const char *file, xc_interface **xch, FILE **out)
{
	int rc;

	*xch = xc_interface_open(NULL, NULL, 0);
	if (!*xch) {
		rc = -errno;
		perror("xbtool: xc_interface_open");
		return rc;
	}
	*out = fopen(file, "w");
	if (!*out) {
		rc = -errno;
		perror(file);
		xc_interface_close(*xch);
		return rc;
	}
	setvbuf(*out, NULL, _IOLBF, 0);
	return 0;
}

/* `physinfo-trace FILE MS`: "WALL_MS SCRUB_PAGES" every 20 ms for MS ms
 * (or until killed), from physinfo: a patched hypervisor's backlog, read
 * without an exec per reading, so that a 1 s drain shows. */
static int physinfo_trace(const char *file, int64_t limit)
{
	xc_physinfo_t info;
	int64_t start;
	xc_interface *xch;
	FILE *out;

	if (trace_open(file, &xch, &out))
		return 2;
	start = now_ms(CLOCK_MONOTONIC);
	while (now_ms(CLOCK_MONOTONIC) - start < limit) {
		memset(&info, 0, sizeof(info));
		if (xc_physinfo(xch, &info))
			break;
		fprintf(out, "%" PRId64 " %" PRIu64 "\n", now_ms(CLOCK_REALTIME), (uint64_t)info.scrub_pages);
		nanosleep(&(struct timespec){ .tv_nsec = 20 * 1000 * 1000 }, NULL);
	}
	fclose(out);
	xc_interface_close(xch);
	return 0;
}

/* `scrub-trace [-w] FILE MS`: the host's scrub backlog over time, probed
 * as the daemon probes it (key H, then what the dump added to the ring). */
static int scrub_trace(const char *file, int64_t limit, bool wall)
{
	unsigned int index = 0;
	int64_t start, now;
	xc_interface *xch;
	uint64_t pages;
	FILE *out;

	if (trace_open(file, &xch, &out))
		return 2;
	start = now_ms(CLOCK_MONOTONIC);
	if (console_skip(xch, &index))
		goto fail;
	while ((now = now_ms(CLOCK_MONOTONIC) - start) < limit) {
		if (h_press(xch, &index, &pages))
			goto fail;
		fprintf(out, "%" PRId64 " %" PRIu64 "\n", wall ? now_ms(CLOCK_REALTIME) : now, pages);
		usleep(200000);
	}
	fclose(out);
	xc_interface_close(xch);
	return 0;
fail:
	perror("xbtool: scrub-trace");
	fclose(out);
	xc_interface_close(xch);
	return 1;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static int64_t median(int64_t *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_i64);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One heap dump as the daemon's probe makes it (hv_xen_probe_heap_dump):
 * skip the ring, press H, read back what it added; *LINES: its lines.  As
 * the daemon's parser does, a node's last line counts, so that a dump
 * someone else pressed meanwhile is not added to ours. */
static int h_probe(xc_interface *xch, uint64_t *pages, int64_t *lines)
{
	static char chunk[16384 + 1];
	uint64_t node_pages[64] = { 0 };
	unsigned int index = 0, n, node;
	uint64_t value;
	char *p;
	int rc = console_skip(xch, &index);

	if (rc)
		return rc;
	if (xc_send_debug_keys(xch, "H"))
		return -errno;
	*pages = 0;
	*lines = 0;
	do {
		n = sizeof(chunk) - 1;
		if (xc_readconsolering(xch, chunk, &n, 0, 1, &index))
			return -errno;
		chunk[n] = '\0';
		for (p = chunk; (p = strchr(p, '\n')); p++)
			++*lines;
		for (p = strstr(chunk, "unscrubbed pages"); p; p = strstr(p + 1, "unscrubbed pages")) {
			char *bol = p;

			while (bol > chunk && bol[-1] != '\n')
				bol--;
			if (strstr(bol, "(XEN)") && (bol = strstr(bol, "Node ")) &&
			    sscanf(bol, "Node %u has %" SCNu64, &node, &value) == 2 && node < 64)
				node_pages[node] = value;
		}
	} while (n);
	for (node = 0; node < 64; node++)
		*pages += node_pages[node];
	return 0;
}

/* spawn-cost's child: a libxl context open, then one byte on fd 3. */
static int spawn_child(void)
{
	xentoollog_logger_stdiostream *logger;
	libxl_ctx *ctx = NULL;
	char byte = 0;

	logger = xtl_createlogger_stdiostream(stderr, XTL_ERROR, 0);
	if (!logger || libxl_ctx_alloc(&ctx, LIBXL_VERSION, 0, (xentoollog_logger *)logger))
		return 2;
	if (write(3, &byte, 1) != 1)
		return 2;
	libxl_ctx_free(ctx);
	xtl_logger_destroy((xentoollog_logger *)logger);
	return 0;
}

/* Spawn ARGV (with PIPE_FD as its fd 3 when >= 0); 0 and *PID, or -errno. */
static int spawn_with_fd3(char *const argv[], int pipe_fd, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	int rc;

	posix_spawn_file_actions_init(&fa);
	if (pipe_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, pipe_fd, 3);
	rc = posix_spawn(pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	return -rc;
}

/* `spawn-cost N` */
static int spawn_cost(int n)
{
	xentoollog_logger_stdiostream *logger = xtl_createlogger_stdiostream(stderr, XTL_ERROR, 0);
	int64_t *ctx_us = calloc(n, sizeof(int64_t)), *spawn_us = calloc(n, sizeof(int64_t));
	int64_t *true_us = calloc(n, sizeof(int64_t)), t0;
	char *child[] = { "/proc/self/exe", "spawn-child", NULL }, *truth[] = { "/bin/true", NULL };
	char self[4096], byte;
	libxl_ctx *ctx;
	int i, rc = 0, fds[2], status;
	ssize_t len;
	pid_t pid;

	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (!logger || !ctx_us || !spawn_us || !true_us || len <= 0) {
		rc = 2;
		goto out;
	}
	self[len] = '\0';
	child[0] = self;
	for (i = 0; i < n && !rc; i++) {
		t0 = now_us();
		if (libxl_ctx_alloc(&ctx, LIBXL_VERSION, 0, (xentoollog_logger *)logger))
			rc = 1;
		else
			libxl_ctx_free(ctx);
		ctx_us[i] = now_us() - t0;
	}
	for (i = 0; i < n && !rc; i++) {
		if (pipe(fds)) {
			rc = 2;
			break;
		}
		t0 = now_us();
		if (spawn_with_fd3(child, fds[1], &pid)) {
			rc = 2;
		} else {
			close(fds[1]);
			fds[1] = -1;
			if (read(fds[0], &byte, 1) != 1)
				rc = 1;
			spawn_us[i] = now_us() - t0;
			if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
				rc = 1;
		}
		close(fds[0]);
		if (fds[1] >= 0)
			close(fds[1]);
	}
	for (i = 0; i < n && !rc; i++) {
		t0 = now_us();
		if (spawn_with_fd3(truth, -1, &pid) || waitpid(pid, &status, 0) != pid)
			rc = 2;
		true_us[i] = now_us() - t0;
	}
	if (rc) {
		fprintf(stderr, "xbtool: spawn-cost: a %s failed\n",
			rc == 1 ? "libxl context or child" : "spawn");
		goto out;
	}
	printf("ctx_us=%" PRId64 " spawn_us=%" PRId64 " true_us=%" PRId64 "\n",
	       median(ctx_us, n), median(spawn_us, n), median(true_us, n));
out:
	free(ctx_us);
	free(spawn_us);
	free(true_us);
	if (logger)
		xtl_logger_destroy((xentoollog_logger *)logger);
	return rc;
}

/* `probe-cost N` */
static int probe_cost(int n)
{
	xc_interface *xch = xc_interface_open(NULL, NULL, 0);
	int64_t *pi = calloc(n, sizeof(*pi)), *h = calloc(n, sizeof(*h)), *lines = calloc(n, sizeof(*lines));
	xc_physinfo_t info;
	uint64_t pages;
	int64_t t0;
	int i, rc = 0;

	if (!xch || !pi || !h || !lines) {
		perror("xbtool: probe-cost");
		rc = 2;
		goto out;
	}
	for (i = 0; i < n && !rc; i++) {
		memset(&info, 0, sizeof(info));
		t0 = now_us();
		rc = xc_physinfo(xch, &info) ? -errno : 0;
		pi[i] = now_us() - t0;
	}
	for (i = 0; i < n && !rc; i++) {
		t0 = now_us();
		rc = h_probe(xch, &pages, &lines[i]);
		h[i] = now_us() - t0;
	}
	if (rc) {
		errno = -rc;
		perror("xbtool: probe-cost");
		rc = 1;
		goto out;
	}
	printf("physinfo_us=%" PRId64 " h_us=%" PRId64 " h_lines=%" PRId64 "\n",
	       median(pi, n), median(h, n), median(lines, n));
out:
	free(pi);
	free(h);
	free(lines);
	if (xch)
		xc_interface_close(xch);
	return rc;
}

/* `scrub-compare [-H] ROOT FILE MS` */
static int scrub_compare(bool with_h, const char *root, const char *file, int64_t limit)
{
	xc_interface *xch = xc_interface_open(NULL, NULL, 0);
	struct xs_handle *xsh = xs_open(0);
	FILE *out = xch && xsh ? sampler_open(file) : NULL;
	char pages_path[256], probed_path[256], *pub, *probed;
	int64_t start = now_ms(CLOCK_MONOTONIC), lines;
	xc_physinfo_t info;
	unsigned int len;
	uint64_t hv;
	int rc = 0;

	if (!out) {
		if (!xch || !xsh)
			perror("xbtool: scrub-compare");
		rc = 2;
		goto out;
	}
	setvbuf(out, NULL, _IOLBF, 0);	/* read while it runs */
	snprintf(pages_path, sizeof(pages_path), "%s/scrub/pages", root);
	snprintf(probed_path, sizeof(probed_path), "%s/scrub/probed", root);
	while (!sampler_stop && now_ms(CLOCK_MONOTONIC) - start < limit) {
		int64_t wall = now_ms(CLOCK_REALTIME);

		pub = xs_read(xsh, XBT_NULL, pages_path, &len);
		probed = xs_read(xsh, XBT_NULL, probed_path, &len);
		if (with_h) {
			rc = h_probe(xch, &hv, &lines);
		} else {
			memset(&info, 0, sizeof(info));
			rc = xc_physinfo(xch, &info) ? -errno : 0;
			hv = info.scrub_pages;
		}
		if (!rc)
			fprintf(out, "%" PRId64 " %s %s %" PRIu64 "\n", wall, pub ? pub : "-",
				probed ? probed : "-", hv);
		free(pub);
		free(probed);
		if (rc) {
			errno = -rc;
			perror("xbtool: scrub-compare");
			rc = 1;
			break;
		}
		usleep(with_h ? 200000 : 20000);
	}
out:
	if (out)
		fclose(out);
	if (xsh)
		xs_close(xsh);
	if (xch)
		xc_interface_close(xch);
	return rc;
}

/* acct's times are comp_t: 13 bits of mantissa, 3 of base-8 exponent. */
static unsigned long acct_ticks(comp_t c)
{
	return (unsigned long)(c & 0x1fff) << (3 * (c >> 13));
}

/* `acct-sum FILE`: the CPU of the processes whose exits the kernel's
 * accounting wrote to FILE, by name (digits folded, as 80-mass's
 * cpu_where folds them), "all=ms name=ms ...", most first, at most 12.  What a
 * teardown's short-lived processes cost (hotplug scripts and their
 * commands, xl, libxl's destroy children), which no live process's
 * counters keep once they are gone. */
static int acct_sum(const char *file)
{
	static struct { char name[sizeof(((struct acct_v3 *)0)->ac_comm) + 1]; unsigned long ticks; } tab[512];
	unsigned n = 0, i, best, shown;
	unsigned long all = 0;
	struct acct_v3 rec;
	char name[sizeof(tab[0].name)];
	FILE *f = fopen(file, "r");

	if (!f) {
		perror(file);
		return 2;
	}
	while (fread(&rec, sizeof(rec), 1, f) == 1) {
		unsigned long ticks = acct_ticks(rec.ac_utime) + acct_ticks(rec.ac_stime);
		unsigned o = 0;

		for (i = 0; i < sizeof(rec.ac_comm) && rec.ac_comm[i]; i++) {
			if (rec.ac_comm[i] >= '0' && rec.ac_comm[i] <= '9') {
				if (!o || name[o - 1] != 'N')
					name[o++] = 'N';
			} else {
				name[o++] = rec.ac_comm[i] == ' ' ? '_' : rec.ac_comm[i];
			}
		}
		name[o] = '\0';
		for (i = 0; i < n && strcmp(tab[i].name, name); i++)
			;
		if (i == n) {
			if (n == sizeof(tab) / sizeof(*tab))
				continue;
			strcpy(tab[n++].name, name);
		}
		tab[i].ticks += ticks;
		all += ticks;
	}
	fclose(f);
	printf("all=%lu", all * 1000 / AHZ);
	for (shown = 0; shown < 12; shown++) {
		for (best = n, i = 0; i < n; i++)
			if (tab[i].ticks && (best == n || tab[i].ticks > tab[best].ticks))
				best = i;
		if (best == n)
			break;
		printf(" %s=%lu", tab[best].name, tab[best].ticks * 1000 / AHZ);
		tab[best].ticks = 0;
	}
	putchar('\n');
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: xbtool free-pages | physinfo [-H] | pages D | uuid D | info D | "
		"wait-free PAGES MS | wait-gone D MS | wait-below D PAGES MS | ms |\n"
		"       time FILE CMD... | back [-t TRACE:D] [-n PATH=V] [-g D,...] [-i MS] FILE PAGES CMD... |\n"
		"       sample-job D MS FILE | xs-latency FILE | spin FILE | scrub-trace [-w] FILE MS | physinfo-trace FILE MS |\n"
		"       probe-cost N | spawn-cost N | scrub-compare [-H] ROOT FILE MS |\n"
		"       floor-destroy [-t TRACE:D] FILE PAGES D |\n"
		"       hold-page D FILE | list | wait-node PATH VALUE MS | stamp | random N |\n"
		"       kill-when [-r FILE] PID SIG DELAY LIMIT (node PATH VALUE | below D PAGES) |\n"
		"       acct FILE | acct off | acct-sum FILE\n");
	return 2;
}

int main(int argc, char **argv)
{
	xc_interface *xch;
	xc_domaininfo_t info;
	uint64_t pages;
	int64_t start, limit;
	int rc = 0;

	if (argc < 2)
		return usage();
	if ((!strcmp(argv[1], "time") && argc >= 4) || (!strcmp(argv[1], "back") && argc >= 5))
		return time_command(argv[1][0] == 'b', argv + 2);
	if (!strcmp(argv[1], "acct") && argc == 3) {
		const char *acct_file = strcmp(argv[2], "off") ? argv[2] : NULL;

		/* Emptied first: the kernel appends. */
		if (acct_file) {
			FILE *f = fopen(acct_file, "w");

			if (!f) {
				perror(acct_file);
				return 2;
			}
			fclose(f);
		}
		if (acct(acct_file)) {
			perror("xbtool: acct");
			return 2;
		}
		return 0;
	}
	if (!strcmp(argv[1], "acct-sum") && argc == 3)
		return acct_sum(argv[2]);
	if (!strcmp(argv[1], "floor-destroy"))
		return floor_destroy(argv + 2);
	if (!strcmp(argv[1], "sample-job") && argc == 5)
		return sample_job(argv[2], atoll(argv[3]), argv[4]);
	if (!strcmp(argv[1], "wait-node") && argc == 5)
		return wait_node(argv[2], argv[3], atoll(argv[4]));
	if (!strcmp(argv[1], "kill-when") && argc == 9 &&
	    (!strcmp(argv[6], "node") || !strcmp(argv[6], "below")))
		return kill_when(argv + 2, NULL);
	if (!strcmp(argv[1], "kill-when") && argc == 11 && !strcmp(argv[2], "-r") &&
	    (!strcmp(argv[8], "node") || !strcmp(argv[8], "below")))
		return kill_when(argv + 4, argv[3]);
	if (!strcmp(argv[1], "stamp") && argc == 2)
		return stamp();
	if (!strcmp(argv[1], "xs-latency") && argc == 3)
		return xs_latency(argv[2]);
	if (!strcmp(argv[1], "physinfo-trace") && argc == 4)
		return physinfo_trace(argv[2], atoll(argv[3]));
	if (!strcmp(argv[1], "scrub-trace") && argc == 4)
		return scrub_trace(argv[2], atoll(argv[3]), false);
	if (!strcmp(argv[1], "scrub-trace") && argc == 5 && !strcmp(argv[2], "-w"))
		return scrub_trace(argv[3], atoll(argv[4]), true);
	if (!strcmp(argv[1], "probe-cost") && argc == 3 && atoi(argv[2]) > 0)
		return probe_cost(atoi(argv[2]));
	if (!strcmp(argv[1], "spawn-cost") && argc == 3 && atoi(argv[2]) > 0)
		return spawn_cost(atoi(argv[2]));
	if (!strcmp(argv[1], "spawn-child") && argc == 2)
		return spawn_child();
	if (!strcmp(argv[1], "scrub-compare") && argc == 5)
		return scrub_compare(false, argv[2], argv[3], atoll(argv[4]));
	if (!strcmp(argv[1], "scrub-compare") && argc == 6 && !strcmp(argv[2], "-H"))
		return scrub_compare(true, argv[3], argv[4], atoll(argv[5]));
	if (!strcmp(argv[1], "spin") && argc == 3)
		return spin(argv[2]);
	if (!strcmp(argv[1], "random") && argc == 3 && atoi(argv[2]) > 0) {
		unsigned r;

		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			return 2;
		printf("%u\n", r % (unsigned)atoi(argv[2]));
		return 0;
	}
	if (!strcmp(argv[1], "hold-page") && argc == 4)
		return hold_page(atoi(argv[2]), argv[3]);
	if (!strcmp(argv[1], "ms")) {
		printf("%" PRId64 "\n", now_ms(CLOCK_REALTIME));
		return 0;
	}
	xch = xc_interface_open(NULL, NULL, 0);
	if (!xch) {
		perror("xbtool: xc_interface_open");
		return 2;
	}
	if (!strcmp(argv[1], "list") && argc == 2) {
		rc = list_domains(xch);
	} else if (!strcmp(argv[1], "physinfo") && (argc == 2 ||
		   (argc == 3 && !strcmp(argv[2], "-H")))) {
		rc = physinfo(xch, argc == 3);
	} else if (!strcmp(argv[1], "free-pages") && argc == 2) {
		rc = free_pages(xch, &pages);
		if (!rc)
			printf("%" PRIu64 "\n", pages);
	} else if (!strcmp(argv[1], "pages") && argc == 3) {
		rc = domain_info(xch, atoi(argv[2]), &info);
		if (!rc)
			printf("%" PRIu64 "\n", (uint64_t)info.tot_pages);
	} else if (!strcmp(argv[1], "uuid") && argc == 3) {
		rc = domain_info(xch, atoi(argv[2]), &info);
		if (!rc) {
			const uint8_t *u = info.handle;

			printf("%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x\n",
			       u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
			       u[10], u[11], u[12], u[13], u[14], u[15]);
		}
	} else if (!strcmp(argv[1], "info") && argc == 3) {
		rc = domain_info(xch, atoi(argv[2]), &info);
		if (!rc)
			printf("pages=%" PRIu64 " dying=%d shutdown=%d reason=%u pool=%u\n",
			       (uint64_t)info.tot_pages, !!(info.flags & XEN_DOMINF_dying),
			       !!(info.flags & XEN_DOMINF_shutdown),
			       (info.flags >> XEN_DOMINF_shutdownshift) & XEN_DOMINF_shutdownmask,
			       info.cpupool);
	} else if (!strcmp(argv[1], "wait-free") && argc == 4) {
		start = now_ms(CLOCK_MONOTONIC);
		limit = atoll(argv[3]);
		while (!(rc = free_pages(xch, &pages)) && pages < strtoull(argv[2], NULL, 10)) {
			if (now_ms(CLOCK_MONOTONIC) - start > limit) {
				rc = -ETIMEDOUT;
				break;
			}
			usleep(20000);
		}
		printf("%" PRId64 "\n", now_ms(CLOCK_MONOTONIC) - start);
	} else if (!strcmp(argv[1], "wait-gone") && argc == 4) {
		start = now_ms(CLOCK_MONOTONIC);
		limit = atoll(argv[3]);
		while (!(rc = domain_info(xch, atoi(argv[2]), &info))) {
			if (now_ms(CLOCK_MONOTONIC) - start > limit) {
				rc = -ETIMEDOUT;
				break;
			}
			usleep(20000);
		}
		if (rc == -ESRCH)
			rc = 0;
		printf("%" PRId64 "\n", now_ms(CLOCK_MONOTONIC) - start);
	} else if (!strcmp(argv[1], "wait-below") && argc == 5) {
		/* Poll hard: a teardown's hypercall phase lasts about a second. */
		start = now_ms(CLOCK_MONOTONIC);
		limit = atoll(argv[4]);
		while (!(rc = domain_info(xch, atoi(argv[2]), &info)) &&
		       info.tot_pages >= strtoull(argv[3], NULL, 10)) {
			if (now_ms(CLOCK_MONOTONIC) - start > limit) {
				rc = -ETIMEDOUT;
				break;
			}
			usleep(1000);
		}
		if (!rc)
			printf("%" PRIu64 "\n", (uint64_t)info.tot_pages);
	} else {
		xc_interface_close(xch);
		return usage();
	}
	xc_interface_close(xch);
	if (rc && rc != -ESRCH && rc != -ETIMEDOUT)
		fprintf(stderr, "xbtool: %s\n", strerror(-rc));
	return rc ? 1 : 0;
}
