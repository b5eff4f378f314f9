/* Unit tests of libxenreaper and of the programs on it, the xenreaper CLI
 * and the xl front, on an in-process xenstore and hypervisor (fake_xs.c
 * stands in for libxenstore and libxenctrl; the programs' main() is
 * renamed at build time, see Makefile.am).  A thread plays xenreaperd on
 * its own xenstore handle: it takes requests and answers liveness pings,
 * or stops doing anything, as a SIGSTOPped daemon would.  What is
 * checked: that what they print about a guest keeps to one line whatever
 * its name holds, that a time bound holds with the 512 finished jobs the
 * daemon may keep, and that a waiting client finds out, within its bound,
 * that a daemon which says it runs is not answering. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xenctrl.h>
#include <xenstore.h>

#include "fake_xs.h"
#include "xenreaper.h"
#include "layout.h"
#include "tap.h"
#include "under-test.h"


/* A guest name as a hostile tenant would pick it: a quote, a backslash,
 * braces and a real newline followed by a forged Prometheus sample, then
 * a carriage return, an ANSI escape and a right-to-left override. */
#define FORGED "evil\"\\{x}\nxenreaper_jobs_total{state=\"done\"} 99\r\033[2K\xe2\x80\xae"
#define FORGED_LINE "xenreaper_jobs_total"

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---------------------------------------------------------------- running a program */

#define RUN_LIMIT_S 30

struct run {
	int status;
	int64_t ms;		/* how long it took */
	char out[65536], err[65536];
};

static void run_slurp(FILE *f, char *buf, size_t len)
{
	size_t n;

	rewind(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

/* Run MAIN with the NULL-terminated arguments, stdout and stderr caught. */
static void run_main(struct run *r, int (*main_fn)(int, char **), const char *const *args)
{
	char *argv[32];
	int argc = 0, saved_out, saved_err;
	FILE *out = tmpfile(), *err = tmpfile();
	int64_t t0;

	if (!out || !err) {
		printf("Bail out! tmpfile\n");
		exit(1);
	}
	while (args[argc] && argc < 31) {
		argv[argc] = (char *)args[argc];
		argc++;
	}
	argv[argc] = NULL;
	fflush(stdout);
	fflush(stderr);
	saved_out = dup(1);
	saved_err = dup(2);
	dup2(fileno(out), 1);
	dup2(fileno(err), 2);
	t0 = now_ms();
	alarm(RUN_LIMIT_S);	/* a wait that never ends fails the test, not the suite */
	r->status = main_fn(argc, argv);
	alarm(0);
	r->ms = now_ms() - t0;
	fflush(stdout);
	fflush(stderr);
	dup2(saved_out, 1);
	dup2(saved_err, 2);
	close(saved_out);
	close(saved_err);
	run_slurp(out, r->out, sizeof(r->out));
	run_slurp(err, r->err, sizeof(r->err));
}

/* How many lines TEXT has, and whether one of them starts with PREFIX. */
static unsigned lines(const char *text)
{
	unsigned n = 0;

	for (; *text; text++)
		n += *text == '\n';
	return n;
}

static bool line_starts(const char *text, const char *prefix)
{
	size_t len = strlen(prefix);

	for (const char *line = text; *line; ) {
		const char *nl = strchr(line, '\n');

		if (!strncmp(line, prefix, len))
			return true;
		if (!nl)
			break;
		line = nl + 1;
	}
	return false;
}

/* Any byte a terminal would act on rather than show. */
static bool has_control(const char *text)
{
	for (const unsigned char *c = (const unsigned char *)text; *c; c++)
		if ((*c < 0x20 && *c != '\n') || *c == 0x7f)
			return true;
	return strstr(text, "\xe2\x80\xae") != NULL;
}

/* ---------------------------------------------------------------- xenstore as the daemon leaves it */

static void put(const char *path, const char *value)
{
	fake_xs_write(path, value);
}

static void putf(const char *path, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(const char *path, const char *fmt, ...)
{
	char value[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(value, sizeof(value), fmt, ap);
	va_end(ap);
	put(path, value);
}

static void job_put(uint32_t domid, const char *leaf, const char *value)
{
	char path[LAYOUT_PATH_LEN];

	layout_job_path(path, domid, leaf);
	put(path, value);
}

/* A job's nodes as job_publish writes them. */
static void plant_job(uint32_t domid, uint8_t seed, const char *state, const char *name,
		      uint64_t pages)
{
	char uuid[37], text[32];

	fake_xc_uuid_text(seed, uuid);
	job_put(domid, "uuid", uuid);
	job_put(domid, "name", name);
	job_put(domid, "pool", "Pool-0");
	job_put(domid, "reason", "request");
	job_put(domid, "policy", "deferred");
	job_put(domid, "priority", "low");
	snprintf(text, sizeof(text), "%" PRIu64, pages);
	job_put(domid, "pages-total", text);
	job_put(domid, "pages-left", strcmp(state, "done") ? text : "0");
	job_put(domid, "progress", strcmp(state, "done") ? "0" : "100");
	job_put(domid, "scrub-pages", "0");
	job_put(domid, "requested", "1700000000.000");
	job_put(domid, "started", "1700000000.100");
	if (!strcmp(state, "done") || !strcmp(state, "failed"))
		job_put(domid, "finished", "1700000002.600");
	if (!strcmp(state, "failed"))
		job_put(domid, "error", "libxl_domain_destroy failed");
	job_put(domid, "state", state);
}

/* A running guest as libxl leaves it in xenstore and the hypervisor. */
static void plant_domain(uint32_t domid, uint8_t seed, const char *name, uint64_t pages)
{
	char path[64], uuid[37];

	fake_xc_uuid_text(seed, uuid);
	fake_xc_add(domid, seed, pages, 0);
	snprintf(path, sizeof(path), "/local/domain/%u/name", domid);
	put(path, name);
	snprintf(path, sizeof(path), "/local/domain/%u/vm", domid);
	putf(path, "/vm/%s", uuid);
	snprintf(path, sizeof(path), "/vm/%s/name", uuid);
	put(path, name);
}

/* A guest xl preserved (on_crash = "rename-restart"), as
 * libxl_domain_preserve leaves it: renamed NAME, its "vm" node pointed at
 * a new /vm/<VM_SEED's UUID> holding only "uuid", its hypervisor handle
 * (SEED's UUID) untouched, and crashed. */
static void plant_preserved(uint32_t domid, uint8_t seed, uint8_t vm_seed, const char *name)
{
	char path[64], vm_uuid[37];

	fake_xc_uuid_text(vm_seed, vm_uuid);
	fake_xc_add(domid, seed, 25600,
		    XEN_DOMINF_shutdown | (SHUTDOWN_crash << XEN_DOMINF_shutdownshift));
	snprintf(path, sizeof(path), "/local/domain/%u/name", domid);
	put(path, name);
	snprintf(path, sizeof(path), "/local/domain/%u/vm", domid);
	putf(path, "/vm/%s", vm_uuid);
	snprintf(path, sizeof(path), "/vm/%s/uuid", vm_uuid);
	put(path, vm_uuid);
}

/* ---------------------------------------------------------------- a xenreaperd on its own handle */

struct daemon {
	pthread_t thread;
	pthread_mutex_t lock;
	bool stop, paused, answers_pings, takes_requests;
	unsigned pings_answered, requests_taken;
};

static struct daemon dmn = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Take each request: the job appears and is done at once. */
static void daemon_take_requests(struct xs_handle *xs)
{
	unsigned n = 0;
	char **ids = xs_directory(xs, XBT_NULL, LAYOUT_REQUEST_DIR, &n);

	for (unsigned i = 0; ids && i < n; i++) {
		char path[LAYOUT_PATH_LEN], *uuid, name[256] = "", *value;
		uint32_t domid;

		if (layout_parse_domid(ids[i], &domid))
			continue;
		layout_request_path(path, domid);
		uuid = xs_read(xs, XBT_NULL, path, NULL);
		if (!uuid)
			continue;
		snprintf(path, sizeof(path), "/local/domain/%u/name", domid);
		value = xs_read(xs, XBT_NULL, path, NULL);
		if (value)
			snprintf(name, sizeof(name), "%s", value);
		free(value);
		/* The job first, then the request goes: the daemon's intake
		 * does both in one transaction, and a client must never find
		 * neither (it did here, under load: "no teardown request or job"). */
		plant_job(domid, 0, "done", name, 25600);
		job_put(domid, "uuid", uuid);
		fake_xc_remove(domid);
		layout_request_path(path, domid);
		xs_rm(xs, XBT_NULL, path);
		free(uuid);
		dmn.requests_taken++;
	}
	free(ids);
}

static void daemon_answer_pings(struct xs_handle *xs)
{
	unsigned n = 0;
	char **names = xs_directory(xs, XBT_NULL, LAYOUT_ROOT "/ping", &n);

	for (unsigned i = 0; names && i < n; i++) {
		char path[LAYOUT_PATH_LEN];

		snprintf(path, sizeof(path), LAYOUT_ROOT "/ping/%s", names[i]);
		if (xs_rm(xs, XBT_NULL, path))
			dmn.pings_answered++;
	}
	free(names);
}

static void *daemon_main(void *arg)
{
	struct xs_handle *xs = xs_open(0);
	struct pollfd pfd;
	char **event;

	xs_watch(xs, LAYOUT_REQUEST_DIR, "request");
	xs_watch(xs, LAYOUT_ROOT "/ping", "ping");
	pfd.fd = xs_fileno(xs);
	pfd.events = POLLIN;
	for (;;) {
		poll(&pfd, 1, 20);
		pthread_mutex_lock(&dmn.lock);
		if (dmn.stop) {
			pthread_mutex_unlock(&dmn.lock);
			break;
		}
		if (dmn.paused) {	/* SIGSTOP: events wait, unread */
			pthread_mutex_unlock(&dmn.lock);
			continue;
		}
		while ((event = xs_check_watch(xs)))
			free(event);
		if (dmn.takes_requests)
			daemon_take_requests(xs);
		if (dmn.answers_pings)
			daemon_answer_pings(xs);
		pthread_mutex_unlock(&dmn.lock);
	}
	xs_close(xs);
	return NULL;
}

/* A daemon that says it runs (its pid is ours: alive, as a stopped one is)
 * and has made the ping directory, as reaper_publish_daemon does. */
static void daemon_start(bool pings, bool requests)
{
	putf(LAYOUT_DAEMON_DIR "/pid", "%d", (int)getpid());
	put(LAYOUT_DAEMON_DIR "/state", "running");
	put(LAYOUT_REQUEST_DIR, "");
	put(LAYOUT_JOB_DIR, "");
	if (pings)
		put(LAYOUT_ROOT "/ping", "");
	dmn.stop = dmn.paused = false;
	dmn.answers_pings = pings;
	dmn.takes_requests = requests;
	dmn.pings_answered = dmn.requests_taken = 0;
	pthread_create(&dmn.thread, NULL, daemon_main, NULL);
}

static void daemon_pause(bool paused)
{
	pthread_mutex_lock(&dmn.lock);
	dmn.paused = paused;
	pthread_mutex_unlock(&dmn.lock);
}

static unsigned daemon_taken(void)
{
	unsigned n;

	pthread_mutex_lock(&dmn.lock);
	n = dmn.requests_taken;
	pthread_mutex_unlock(&dmn.lock);
	return n;
}

static void daemon_stop(void)
{
	pthread_mutex_lock(&dmn.lock);
	dmn.stop = true;
	pthread_mutex_unlock(&dmn.lock);
	pthread_join(dmn.thread, NULL);
}

static void fresh(void)
{
	fake_xs_reset();
	unsetenv("XENREAPER_WAIT_TIMEOUT");
}

/* ---------------------------------------------------------------- names that forge lines */

static void test_forged_names(void)
{
	const char *list[] = { "xenreaper", "list", NULL };
	const char *status[] = { "xenreaper", "status", "5", NULL };
	const char *destroy[] = { "xl", "destroy", "--async", "--wait", "7", NULL };
	const char *status_line = "domain 5 (evil\"\\\\{x}\\nxenreaper_jobs_total{state=\"done\"} 99"
		"\\r\\x1b[2K\\xe2\\x80\\xae): destroying";
	struct run *r = calloc(1, sizeof(*r));

	fresh();
	daemon_start(true, true);
	plant_job(5, 5, "destroying", FORGED, 262144);
	plant_job(6, 6, "done", "web1", 131072);
	run_main(r, xenreaper_cli_main, list);
	is_int(r->status, 0, "forged name: xenreaper list succeeds");
	is_int(lines(r->out), 3, "forged name: xenreaper list prints a header and one line per job");
	ok(!line_starts(r->out, FORGED_LINE), "forged name: no line of the list starts with the forged sample");
	ok(!has_control(r->out), "forged name: the list holds no control character");
	ok(strstr(r->out, "evil\"\\\\{x}\\nxenreaper_jobs_total") != NULL,
	   "forged name: the name is shown escaped (\\\\ and \\n)");
	if (tap_failed)
		printf("# list printed:\n%s", r->out);

	run_main(r, xenreaper_cli_main, status);
	is_int(r->status, 0, "forged name: xenreaper status 5 succeeds");
	ok(!line_starts(r->out, FORGED_LINE), "forged name: no line of the status starts with the forged sample");
	ok(!has_control(r->out), "forged name: the status holds no control character");
	ok(!strncmp(r->out, status_line, strlen(status_line)),
	   "forged name: its first line names the guest escaped, then its state: %.120s", r->out);

	plant_domain(7, 7, FORGED, 25600);
	run_main(r, xl_front_main, destroy);
	is_int(r->status, 0, "forged name: xl destroy --async --wait through the front: done");
	ok(!line_starts(r->err, FORGED_LINE), "forged name: no line the front prints starts with the forged sample");
	ok(!has_control(r->err), "forged name: the front prints no control character");
	ok(strstr(r->err, "domain 7 (evil\"\\\\{x}\\n") && strstr(r->err, "): done"),
	   "forged name: the front's last line names the guest escaped");
	if (tap_failed)
		printf("# the front printed:\n%s", r->err);
	daemon_stop();
	free(r);
}

/* ---------------------------------------------------------------- a request from xenstore alone */

/* `xl destroy --async` of a guest libxl made takes its UUID from the "vm"
 * node and never loads libxenctrl (issue 18: what the caller pays); a
 * domain with no such node still gets its UUID from the hypervisor. */
static void test_request_without_hypervisor(void)
{
	const char *by_domid[] = { "xl", "destroy", "--async", "7", NULL };
	const char *by_name[] = { "xl", "destroy", "--async", "web8", NULL };
	const char *no_vm[] = { "xl", "destroy", "--async", "9", NULL };
	struct run *r = calloc(1, sizeof(*r));
	unsigned long loads, requests, requests_vm;
	char uuid[37], path[LAYOUT_PATH_LEN], *value;

	fresh();
	daemon_start(true, false);
	plant_domain(7, 7, "web7", 25600);
	loads = fake_xc_loads();
	requests = fake_xs_requests_here();
	run_main(r, xl_front_main, by_domid);
	requests_vm = fake_xs_requests_here() - requests;
	is_int(r->status, 0, "from xenstore: xl destroy --async 7 succeeds");
	is_int((int)(fake_xc_loads() - loads), 0, "  without loading libxenctrl");
	fake_xc_uuid_text(7, uuid);
	layout_request_path(path, 7);
	value = fake_xs_read(path);
	is_str(value ? value : "(none)", uuid, "  and requests the UUID the vm node names");
	free(value);

	plant_domain(8, 8, "web8", 25600);
	loads = fake_xc_loads();
	run_main(r, xl_front_main, by_name);
	is_int(r->status, 0, "from xenstore: xl destroy --async web8 succeeds");
	is_int((int)(fake_xc_loads() - loads), 0, "  without loading libxenctrl");

	plant_domain(9, 9, "novm", 25600);
	snprintf(path, sizeof(path), "/local/domain/9/vm");
	fake_xs_rm(path);
	loads = fake_xc_loads();
	requests = fake_xs_requests_here();
	run_main(r, xl_front_main, no_vm);
	requests = fake_xs_requests_here() - requests;
	is_int(r->status, 0, "no vm node: xl destroy --async 9 succeeds");
	ok(fake_xc_loads() > loads, "  after asking the hypervisor");
	fake_xc_uuid_text(9, uuid);
	layout_request_path(path, 9);
	value = fake_xs_read(path);
	is_str(value ? value : "(none)", uuid, "  for the UUID it has");
	free(value);
	ok(requests_vm < requests, "one reading asks xenstore less: %lu requests, %lu with the hypervisor",
	   requests_vm, requests);
	if (tap_failed)
		printf("# the front printed:\n%s", r->err);
	daemon_stop();
	free(r);
}

/* A guest xl preserved keeps its hypervisor UUID while its "vm" node names
 * a new one: the request must carry the hypervisor's, the one the daemon's
 * guard checks (and `xl list -v` shows).  A domid whose "vm" names another
 * UUID while its domain runs is still a reused domid, refused. */
static void test_request_preserved(void)
{
	const char *by_name[] = { "xl", "destroy", "--async", "web-20261205T2146Z", NULL };
	const char *by_domid[] = { "xl", "destroy", "--async", "12", NULL };
	const char *running[] = { "xl", "destroy", "--async", "13", NULL };
	struct run *r = calloc(1, sizeof(*r));
	char uuid[37], path[LAYOUT_PATH_LEN], *value;

	fresh();
	daemon_start(true, false);
	plant_domain(10, 10, "web", 25600);		/* restarted: the same hypervisor UUID */
	plant_preserved(11, 10, 111, "web-20261205T2146Z");
	run_main(r, xl_front_main, by_name);
	is_int(r->status, 0, "a preserved guest: xl destroy --async web-20261205T2146Z succeeds");
	fake_xc_uuid_text(10, uuid);
	layout_request_path(path, 11);
	value = fake_xs_read(path);
	is_str(value ? value : "(none)", uuid, "  and requests the hypervisor's UUID, not the vm node's");
	free(value);
	layout_request_path(path, 10);
	value = fake_xs_read(path);
	ok(!value, "  and nothing for the restarted guest of the same UUID");
	free(value);

	plant_preserved(12, 12, 112, "db-20261205T2146Z");
	run_main(r, xl_front_main, by_domid);
	is_int(r->status, 0, "a preserved guest by domid: xl destroy --async 12 succeeds");
	fake_xc_uuid_text(12, uuid);
	layout_request_path(path, 12);
	value = fake_xs_read(path);
	is_str(value ? value : "(none)", uuid, "  with the hypervisor's UUID");
	free(value);

	/* The same xenstore, but the domain runs: a new domain took the domid
	 * before libxl rewrote its directory. */
	plant_preserved(13, 13, 113, "old-20261205T2146Z");
	fake_xc_add(13, 13, 25600, 0);
	run_main(r, xl_front_main, running);
	ok(r->status != 0, "the same xenstore over a running domain: refused (%d)", r->status);
	ok(strstr(r->err, "domid was reused") != NULL, "  saying the domid was reused");
	layout_request_path(path, 13);
	value = fake_xs_read(path);
	ok(!value, "  and requesting nothing");
	free(value);
	if (tap_failed)
		printf("# the front printed:\n%s", r->err);
	daemon_stop();
	free(r);
}

/* ---------------------------------------------------------------- time bounds and history */

/* `xenreaper wait-free` with a bound, while a teardown is under way that
 * will cover the need, with N_FINISHED finished jobs kept beside it; the
 * domids of one in eight are those of running guests now (domids are
 * reused), whose finished records may not be passed over unread. */
static void wait_free_with_history(struct run *r, unsigned n_finished, unsigned long *requests)
{
	const char *args[] = { "xenreaper", "wait-free", "600M", "--timeout", "1", NULL };
	unsigned long before;

	fresh();
	daemon_start(true, false);
	for (unsigned i = 0; i < n_finished; i++) {
		plant_job(100 + i, (uint8_t)i, i % 7 ? "done" : "failed", "old", 25600);
		if (i % 8 == 0)
			plant_domain(100 + i, (uint8_t)(i + 1), "new", 256);
	}
	plant_domain(9, 9, "big", 262144);	/* 1 GiB, being torn down */
	plant_job(9, 9, "destroying", "big", 262144);
	fake_xc_set_free(25600);		/* 100 MiB free */
	fake_xs_set_latency_us(200);		/* a loaded xenstored under emulation */
	before = fake_xs_requests();
	run_main(r, xenreaper_cli_main, args);
	*requests = fake_xs_requests() - before;
	fake_xs_set_latency_us(0);
	daemon_stop();
}

/* `xenreaper wait DOMID --timeout 1` for a teardown whose domain has left
 * xenstore already (a dying domain; what follows a job by its domid),
 * with 512 finished jobs kept beside it: the CLI finds the job by its
 * domid, not by reading every job first. */
static void test_wait_gone_domain(void)
{
	const char *args[] = { "xenreaper", "wait", "9", "--timeout", "1", NULL };
	struct run *r = calloc(1, sizeof(*r));

	fresh();
	daemon_start(true, false);
	for (unsigned i = 0; i < 512; i++)
		plant_job(100 + i, (uint8_t)i, "done", "old", 25600);
	plant_job(9, 9, "destroying", "big", 262144);
	fake_xs_set_latency_us(200);
	run_main(r, xenreaper_cli_main, args);
	fake_xs_set_latency_us(0);
	is_int(r->status, 3, "wait 9 --timeout 1 (domain 9 gone from xenstore): times out (exit 3)");
	ok(r->ms < 1600, "  in time with 512 finished jobs kept: %" PRId64 " ms", r->ms);
	ok(strstr(r->err, "domain 9 (big): still destroying") != NULL, "  following job 9: %.200s", r->err);
	daemon_stop();
	free(r);
}

/* What the callback of test_history_changes saw and did. */
struct history_seen {
	unsigned readings, at_change, first_with_both;
	bool changed, freed;
};

static int history_cb(const struct xenreaper_memory *mem, void *arg)
{
	struct history_seen *seen = arg;

	seen->readings++;
	if (seen->readings == 2) {
		/* The guest running under domid 100 now, whose predecessor's
		 * finished record job/100 is, is torn down: the daemon
		 * replaces the record with the new teardown's. */
		plant_job(100, 0xa0, "destroying", "new", 524288);
		seen->at_change = seen->readings;
		seen->changed = true;
	} else if (seen->changed && !seen->first_with_both && mem->teardowns == 2) {
		/* (domain 100's teardown ends with the other's, below) */
		seen->first_with_both = seen->readings;
		plant_job(9, 9, "done", "big", 262144);
		fake_xc_remove(9);
		fake_xc_remove(100);
		fake_xc_set_free(1 << 20);
		seen->freed = true;
	}
	return seen->readings > 20 ? -ECANCELED : 0;
}

/* A finished job that becomes a teardown again is seen at once, and the
 * wait ends when the memory is there: what is not read again is only
 * what did not change. */
static void test_history_changes(void)
{
	struct history_seen seen = { 0 };
	struct xenreaper *h;
	int rc;

	fresh();
	daemon_start(true, false);
	for (unsigned i = 0; i < 64; i++) {
		plant_job(100 + i, (uint8_t)i, "done", "old", 25600);
		plant_domain(100 + i, i ? (uint8_t)(0x40 + i) : 0xa0, "new", i ? 256 : 524288);
	}
	plant_domain(9, 9, "big", 262144);
	plant_job(9, 9, "destroying", "big", 262144);
	fake_xc_set_free(25600);
	rc = xenreaper_open(&h);
	is_int(rc, 0, "history: xenreaper_open on the fake xenstore");
	rc = xenreaper_wait_free(h, 153600, 10000, history_cb, &seen);
	is_int(rc, 0, "history: the wait ends when enough is free");
	ok(seen.first_with_both == seen.at_change + 1,
	   "history: the reading right after finished job 100, whose domid a running guest has, "
	   "became that guest's teardown counts it (change at reading %u, counted at %u)",
	   seen.at_change, seen.first_with_both);
	xenreaper_close(h);
	daemon_stop();
}

static void test_history_bound(void)
{
	struct run *r = calloc(1, sizeof(*r));
	unsigned long none, kept;
	int64_t ms_none;

	wait_free_with_history(r, 0, &none);
	ms_none = r->ms;
	is_int(r->status, 3, "wait-free --timeout 1, no history: times out (exit 3)");
	wait_free_with_history(r, 512, &kept);
	is_int(r->status, 3, "wait-free --timeout 1, 512 finished jobs kept: times out (exit 3)");
	ok(r->ms < 1600, "wait-free --timeout 1 with 512 finished jobs kept gives up in time: "
	   "%" PRId64 " ms (%" PRId64 " ms without them)", r->ms, ms_none);
	/* One look at each finished job, once; not all of them on every turn. */
	ok(kept < none + 2 * 64, "  and reads only those of running domids, once: %lu xenstore "
	   "requests, %lu without them", kept, none);
	ok(strstr(r->err, "still") && strstr(r->err, "domain 9 (big)"),
	   "  and says what it waited on: %.200s", r->err);
	free(r);
}

/* ---------------------------------------------------------------- a daemon that does not answer */

static void test_hung_daemon(void)
{
	const char *wait[] = { "xenreaper", "wait", "5", "--timeout", "6", NULL };
	const char *wait_json[] = { "xenreaper", "--json", "wait", "5", "--timeout", "6", NULL };
	const char *wait_short[] = { "xenreaper", "wait", "5", "--timeout", "4", NULL };
	const char *front[] = { "xl", "destroy", "--async", "--wait", "7", NULL };
	struct run *r = calloc(1, sizeof(*r));
	char want[64];

	/* SIGSTOPped: daemon/state says running, the pid exists, nothing answers. */
	fresh();
	setenv("XENREAPER_WAIT_TIMEOUT", "1", 1);
	daemon_start(true, true);
	daemon_pause(true);
	plant_job(5, 5, "destroying", "big", 262144);
	run_main(r, xenreaper_cli_main, wait);
	is_int(r->status, 4, "hung daemon: xenreaper wait exits 4 (xenreaperd not answering)");
	ok(r->ms < 3500, "hung daemon: within the 1 s bound and one ping interval: %" PRId64 " ms", r->ms);
	snprintf(want, sizeof(want), "pid %d", (int)getpid());
	ok(strstr(r->err, want) && strstr(r->err, "not answered") && strstr(r->err, "domain 5"),
	   "hung daemon: the message names the pid and what was waited for: %.300s", r->err);
	is_int(fake_xs_count(LAYOUT_ROOT "/ping") - 1, 0,
	       "hung daemon: the client took its unanswered ping back");
	run_main(r, xenreaper_cli_main, wait_json);
	is_int(r->status, 4, "hung daemon: xenreaper --json wait exits 4 too");
	ok(strstr(r->out, "\"result\":\"daemon-not-answering\"") != NULL,
	   "hung daemon: and its JSON says daemon-not-answering: %.200s", r->out);
	daemon_pause(false);
	daemon_stop();

	/* The front's `xl destroy --async --wait`: the request is made, then the
	 * wait finds the daemon silent. */
	fresh();
	setenv("XENREAPER_WAIT_TIMEOUT", "1", 1);
	daemon_start(true, true);
	daemon_pause(true);
	plant_domain(7, 7, "web", 25600);
	run_main(r, xl_front_main, front);
	is_int(r->status, 4, "hung daemon: xl destroy --async --wait exits 4");
	ok(r->ms < 3500, "hung daemon: the front gives up within its bound: %" PRId64 " ms", r->ms);
	ok(strstr(r->err, want) != NULL, "hung daemon: and says which pid: %.300s", r->err);
	/* SIGCONT: the daemon goes on with the request it was given. */
	daemon_pause(false);
	for (int i = 0; i < 500 && !daemon_taken(); i++)
		usleep(10000);	/* the daemon thread polls every 20 ms */
	is_int(daemon_taken(), 1, "hung daemon: continued, it takes the request that waited");
	daemon_stop();

	/* A long teardown under a daemon that answers: no false alarm. */
	fresh();
	setenv("XENREAPER_WAIT_TIMEOUT", "1", 1);
	daemon_start(true, true);
	plant_job(5, 5, "destroying", "big", 262144);
	run_main(r, xenreaper_cli_main, wait_short);
	is_int(r->status, 3, "long teardown, daemon answering: the wait runs to its own --timeout (exit 3)");
	ok(dmn.pings_answered >= 2, "long teardown: the daemon was asked and answered (%u pings)",
	   dmn.pings_answered);
	ok(r->ms >= 3900, "long teardown: not given up before the timeout: %" PRId64 " ms", r->ms);
	daemon_stop();

	/* A daemon too old to answer (no ping directory): never taken for hung. */
	fresh();
	setenv("XENREAPER_WAIT_TIMEOUT", "1", 1);
	daemon_start(false, true);
	plant_job(5, 5, "destroying", "big", 262144);
	run_main(r, xenreaper_cli_main, wait_short);
	is_int(r->status, 3, "daemon without ping/: the wait runs to its --timeout, no false alarm");
	is_int(fake_xs_count(LAYOUT_ROOT "/ping"), 0, "daemon without ping/: no ping was written");
	daemon_stop();
	free(r);
}

/* ---------------------------------------------------------------- top, plain */

/* What the thread that plays xenreaperd during test_top_plain waits on. */
static pthread_t top_main_thread;

/* The test's own stdout, before run_main puts its file there. */
static struct stat top_orig_stdout;

/* What is on our stdout so far (run_main's file, read through /proc);
 * nothing until run_main has put its file there: the test's own stdout is
 * the harness's pipe under make check, and opening that for reading
 * would block the thread in read(2) for ever (seen: the 30 s alarm, when
 * this thread ran before run_main's dup2). */
static const char *top_output(void)
{
	static char buf[65536];
	struct stat now;
	int fd = -1;
	ssize_t n;

	if (fstat(STDOUT_FILENO, &now) == 0 &&
	    (now.st_dev != top_orig_stdout.st_dev || now.st_ino != top_orig_stdout.st_ino))
		fd = open("/proc/self/fd/1", O_RDONLY);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* Whether our stdout has a line containing TEXT, waiting for one up to 5 s. */
static bool top_output_has(const char *text)
{
	for (int i = 0; i < 500; i++) {
		if (strstr(top_output(), text))
			return true;
		usleep(10000);
	}
	return false;
}

/* The changes xenreaperd would make while `xenreaper top` shows them;
 * STEPS[i]: whether the output showed the i-th. */
static void *top_changes(void *arg)
{
	bool *steps = arg;
	unsigned before;
	sigset_t all;

	/* SIGTERM is for top's thread: pthread_kill below says which. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	steps[0] = top_output_has(" destroying  [  ");
	job_put(5, "progress", "50");
	steps[1] = top_output_has("[=======>        ]  50%");
	before = lines(top_output());
	put(LAYOUT_ROOT "/ping/4242-1-1", "nobody");	/* shown nowhere: no line */
	put(LAYOUT_MEMORY_DIR "/free", "25600");
	steps[2] = top_output_has("memory: 100 MiB free") && lines(top_output()) == before + 1;
	job_put(5, "state", "done");
	steps[3] = top_output_has(" done ");
	fake_xs_rm(LAYOUT_JOB_DIR "/5");
	steps[4] = top_output_has("    5  (job gone)");
	pthread_kill(top_main_thread, SIGTERM);
	return NULL;
}

/* `xenreaper top` with its stdout a file: plain lines, one per change of
 * a job or of the summary, none for a change nothing shown depends on,
 * until SIGTERM, which it exits on with 130 and nothing on stderr. */
static void test_top_plain(void)
{
	const char *top[] = { "xenreaper", "top", NULL };
	struct run *r = calloc(1, sizeof(*r));
	bool steps[5] = { false };
	pthread_t changer;
	unsigned job_lines = 0;

	fresh();
	daemon_start(true, false);
	plant_job(5, 5, "destroying", "web", 262144);
	top_main_thread = pthread_self();
	fstat(STDOUT_FILENO, &top_orig_stdout);
	pthread_create(&changer, NULL, top_changes, steps);
	run_main(r, xenreaper_cli_main, top);
	pthread_join(changer, NULL);
	daemon_stop();
	is_int(r->status, 130, "top: SIGTERM ends it with exit 130");
	is_str(r->err, "", "  nothing on stderr");
	ok(steps[0] && strstr(r->out, "DOMID  NAME"), "top: plain output starts with the titles, then the job");
	ok(steps[1], "  its progress to 50%% is printed");
	ok(steps[2], "  a ping (shown nowhere) prints nothing, the memory node that changed one line");
	ok(steps[3], "  its end (done) is printed");
	ok(steps[4], "  and its job going");
	for (const char *at = r->out; (at = strstr(at, "    5  web")); at++)
		job_lines++;
	is_int(job_lines, 3, "  one line for job 5 per change (0%, 50%, done), none for the memory line");
	ok(!has_control(r->out), "  no control character in plain output");
	if (tap_failed)
		printf("# top printed:\n%s# stderr: %s\n", r->out, r->err);
	free(r);
}

int main(void)
{
	test_forged_names();
	test_history_bound();
	test_history_changes();
	test_wait_gone_domain();
	test_hung_daemon();
	test_top_plain();
	test_request_without_hypervisor();
	test_request_preserved();
	return tap_done();
}
