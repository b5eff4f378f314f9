/*
 * Unit tests for a teardown that does not return (issue 16, section 3):
 * the stuck state after stuck-after, what it waits on (stuck.c on a
 * stand-in /proc), the slot it gives to others, the way back when the
 * destroy moves or returns, and the stop that does not wait for it.  The
 * teardowns run on the in-process runner; a held fake destroy is the
 * teardown that does not return.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "bed.h"
#include "clock.h"
#include "fake_hv.h"
#include "fake_proc.h"
#include "fake_store.h"
#include "holders.h"
#include "layout.h"
#include "metrics.h"
#include "reaper.h"
#include "scrub.h"
#include "stuck.h"
#include "tap.h"
#include "fake_runner.h"
#include "reaper-private.h"

static char scratch[] = "/tmp/xr-stuck-XXXXXX";

static void test_describe(void)
{
	char proc[300], libxl[300], lockfile[600], path[600], locks[512], uuid[HV_UUID_STR_LEN];
	struct store *s = fake_store_new();
	long ticks = sysconf(_SC_CLK_TCK);
	char *text = NULL;
	struct stat st;
	int rc;

	snprintf(proc, sizeof(proc), "%s/proc", scratch);
	snprintf(libxl, sizeof(libxl), "%s/xen", scratch);
	mkdir(proc, 0755);
	mkdir(libxl, 0755);
	fake_hv_uuid_text(5, uuid);

	/* Nothing to see: said so, not left empty. */
	stuck_set_roots(proc, libxl, 777);
	rc = stuck_describe(s, 5, uuid, 0, 31000, false, &text);
	is_int(rc, 0, "a description with nothing to see");
	ok(text && strstr(text, "nothing released for 31 s"), "it says how long: %s", text);
	ok(text && strstr(text, "no lock holder, hotplug script or open backend dom0 can see"),
	   "and that dom0 shows nothing it waits on");
	free(text);

	/* libxl's domain lock, held by flock(1), the daemon waiting for it. */
	snprintf(lockfile, sizeof(lockfile), "%s/userdata-l.5.%s.domain-userdata-lock", libxl, uuid);
	fake_proc_write_file(lockfile, "", 0);
	stat(lockfile, &st);
	snprintf(locks, sizeof(locks),
		 "1: POSIX  ADVISORY  WRITE 99 %02x:%02x:%llu 0 EOF\n"
		 "2: FLOCK  ADVISORY  WRITE 4242 %02x:%02x:%llu 0 EOF\n"
		 "2: -> FLOCK  ADVISORY  WRITE 777 %02x:%02x:%llu 0 EOF\n"
		 "3: FLOCK  ADVISORY  WRITE 5151 %02x:%02x:%llu 0 EOF\n",
		 major(st.st_dev), minor(st.st_dev), (unsigned long long)st.st_ino + 1,
		 major(st.st_dev), minor(st.st_dev), (unsigned long long)st.st_ino,
		 major(st.st_dev), minor(st.st_dev), (unsigned long long)st.st_ino,
		 major(st.st_dev), minor(st.st_dev), (unsigned long long)st.st_ino + 7);
	snprintf(path, sizeof(path), "%s/locks", proc);
	fake_proc_write_file(path, locks, strlen(locks));
	fake_proc_process(proc, 4242, 1, 100, FAKE_PROC_TEXT("flock\0-o\0/var/lib/xen/x\0sleep\000600"), FAKE_PROC_TEXT(""));
	/* The daemon's children: a hotplug script for domain 5, 12 s old at
	 * uptime 1000 s; one for domain 6 (another teardown's); and libxl's
	 * destroy child, which names no domain. */
	snprintf(path, sizeof(path), "%s/uptime", proc);
	fake_proc_write_file(path, "1000.00 1500.00\n", 16);
	fake_proc_process(proc, 888, 777, (1000 - 12) * ticks, FAKE_PROC_TEXT("/bin/sh\0/etc/xen/scripts/block\0remove"),
		     FAKE_PROC_TEXT("PATH=/bin\0XENBUS_PATH=backend/vbd/5/51712\0"));
	fake_proc_process(proc, 999, 777, 10, FAKE_PROC_TEXT("/etc/xen/scripts/vif-bridge\0offline"),
		     FAKE_PROC_TEXT("XENBUS_PATH=backend/vif/6/0\0"));
	fake_proc_process(proc, 1001, 777, (1000 - 3) * ticks, FAKE_PROC_TEXT("xenreaperd"), FAKE_PROC_TEXT("PATH=/bin"));
	fake_proc_process(proc, 1002, 4242, 10, FAKE_PROC_TEXT("sleep\000600"), FAKE_PROC_TEXT("XENBUS_PATH=backend/vbd/5/51712\0"));
	/* Its backends: a vbd still closing, a vif closed. */
	fake_store_set(s, "/local/domain/0/backend/vbd/5/51712/state", "5");
	fake_store_set(s, "/local/domain/0/backend/vif/5/0/state", "6");
	fake_store_set(s, "/local/domain/0/backend/vif/6/0/state", "4");

	rc = stuck_describe(s, 5, uuid, 0, 40000, false, &text);
	is_int(rc, 0, "a description of a teardown waiting on libxl's lock and a script");
	printf("# %s\n", text ? text : "(none)");
	ok(text && strstr(text, "is held by pid 4242 (flock -o /var/lib/xen/x sleep 600), and the teardown waits for it"),
	   "the domain lock's holder, its command line, and that the daemon waits for it");
	ok(text && strstr(text, lockfile), "the lock file by its path");
	ok(text && !strstr(text, "pid 99 ") && !strstr(text, "5151"), "other files' locks are not named");
	ok(text && strstr(text, "hotplug script pid 888 (/bin/sh /etc/xen/scripts/block remove) running for 12 s"),
	   "the hotplug script for this domain, with its arguments and age");
	ok(text && !strstr(text, "pid 999"), "another domain's script is not named");
	ok(text && strstr(text, "child of the teardown pid 1001 (xenreaperd) running for 3 s"),
	   "a child that names no domain (libxl's destroy child)");
	ok(text && !strstr(text, "pid 1002"), "another process's child is not the daemon's");
	ok(text && strstr(text, "backend /local/domain/0/backend/vbd/5/51712 in state 5 (Closing)"),
	   "the backend that has not closed, with its state");
	ok(text && !strstr(text, "vif/5/0") && !strstr(text, "vif/6"),
	   "closed backends and other domains' are not named");
	ok(text && !strstr(text, "no lock holder"), "no claim of nothing seen");
	free(text);

	/* A lock the daemon itself holds (its own libxl, briefly): said so. */
	snprintf(locks, sizeof(locks), "2: FLOCK  ADVISORY  WRITE 777 %02x:%02x:%llu 0 EOF\n",
		 major(st.st_dev), minor(st.st_dev), (unsigned long long)st.st_ino);
	snprintf(path, sizeof(path), "%s/locks", proc);
	fake_proc_write_file(path, locks, strlen(locks));
	rc = stuck_describe(s, 5, uuid, 0, 40000, false, &text);
	ok(rc == 0 && text && strstr(text, "is held by the teardown itself"), "a lock of the daemon's own");
	free(text);
	stuck_set_roots(NULL, NULL, 0);
	store_free(s);
}

/* A stand-in /proc/PID for holders.c: COMM, one Xen mapping unless
 * MAPS_XEN is false, state STATE, and a NUL-separated command line. */
static void fake_mapper(const char *proc, long pid, const char *comm, bool maps_xen, char state,
			const char *cmdline, size_t cmd_len)
{
	char path[512], stat[256];

	snprintf(path, sizeof(path), "%s/%ld", proc, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%ld/comm", proc, pid);
	fake_proc_write_file(path, comm, strlen(comm));
	snprintf(path, sizeof(path), "%s/%ld/maps", proc, pid);
	fake_proc_write_file(path, maps_xen ? "7f00-7f01 rw-s 0 00:05 12 /dev/xen/privcmd\n" : "",
		   maps_xen ? strlen("7f00-7f01 rw-s 0 00:05 12 /dev/xen/privcmd\n") : 0);
	snprintf(stat, sizeof(stat), "%ld (%s) %c 1 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 100 0 0\n",
		 pid, comm, state);
	snprintf(path, sizeof(path), "%s/%ld/stat", proc, pid);
	fake_proc_write_file(path, stat, strlen(stat));
	snprintf(path, sizeof(path), "%s/%ld/cmdline", proc, pid);
	fake_proc_write_file(path, cmdline, cmd_len);
}

/* Section 2: a zombie's holders named as precisely as dom0 tells. */
static void test_holders(void)
{
	char proc[300], *text = NULL;
	struct store *s = fake_store_new();

	snprintf(proc, sizeof(proc), "%s/holders", scratch);
	mkdir(proc, 0755);
	holders_set_proc_root(proc);
	fake_mapper(proc, 810, "oxenstored", true, 'S', FAKE_PROC_TEXT("/usr/sbin/oxenstored\0--pid-file\0/run/x.pid"));
	fake_mapper(proc, 845, "xenconsoled", true, 'S', FAKE_PROC_TEXT("/usr/sbin/xenconsoled"));
	fake_mapper(proc, 2001, "qemu-system-i38", true, 'T',
		    FAKE_PROC_TEXT("/usr/libexec/xen-qemu-system-i386\0-xen-domid\0005\0-no-shutdown\0-vnc\000127.0.0.1:0"));
	fake_mapper(proc, 2002, "qemu-system-i38", true, 'S',
		    FAKE_PROC_TEXT("/usr/libexec/xen-qemu-system-i386\0-xen-domid\0006\0-no-shutdown"));
	fake_mapper(proc, 2003, "qemu-system-i38", true, 'S',
		    FAKE_PROC_TEXT("/usr/libexec/xen-qemu-system-i386\0-xen-domid\0000\0-xen-attach\0-name\0dom0"));
	fake_mapper(proc, 3000, "myhelper", true, 'S', FAKE_PROC_TEXT("./myhelper\0005"));
	fake_mapper(proc, 3001, "bash", false, 'S', FAKE_PROC_TEXT("bash"));
	fake_store_set(s, "/local/domain/0/backend/vbd/5/51712/state", "5");
	fake_store_set(s, "/local/domain/0/backend/vbd/5/51728/state", "6");
	is_int(holders_describe(s, 5, 3, &text), 0, "a zombie's holders described");
	printf("# %s\n", text ? text : "(none)");
	ok(text && strstr(text, "vbd backend in domain 0 (/local/domain/0/backend/vbd/5: 51712 Closing, 51728 Closed)"),
	   "the backend with each device's state");
	ok(text && strstr(text, "2001 qemu-system-i38 (its device model: /usr/libexec/xen-qemu-system-i386 -xen-domid 5 "
			  "-no-shutdown -vnc 127.0.0.1:0) (stopped)"),
	   "its device model by pid and command line, and that it is stopped");
	ok(text && !strstr(text, "2002"), "another guest's device model is no suspect");
	ok(text && !strstr(text, "2003"), "nor dom0's qdisk QEMU while the domain has no qdisk backend");
	ok(text && strstr(text, "3000 myhelper"), "an unknown process with a mapping is still a suspect");
	ok(text && !strstr(text, "810") && !strstr(text, "845"), "running xenstored and xenconsoled are not named");
	ok(text && strstr(text, "xenstored and xenconsoled run"), "and it says why");
	ok(text && !strstr(text, "bash"), "a process without a Xen mapping is not named");
	free(text);

	fake_mapper(proc, 845, "xenconsoled", true, 'T', FAKE_PROC_TEXT("/usr/sbin/xenconsoled"));
	fake_store_set(s, "/local/domain/0/backend/qdisk/5/51744/state", "4");
	is_int(holders_describe(s, 5, 3, &text), 0, "described again");
	ok(text && strstr(text, "845 xenconsoled (stopped: it lets go of a dead domain only when it runs)"),
	   "a stopped xenconsoled is named, and why: %s", text ? text : "-");
	ok(text && strstr(text, "2003 qemu-system-i38 (dom0's qdisk backend: "), "with a qdisk backend left, dom0's QEMU is");
	ok(text && strstr(text, "qdisk backend in domain 0 (/local/domain/0/backend/qdisk/5: 51744 Connected)"),
	   "beside that backend");
	free(text);
	holders_set_proc_root(NULL);
	store_free(s);
}

static void test_stuck_and_back(void)
{
	char proc[300];
	const char *held;
	struct bed b;

	snprintf(proc, sizeof(proc), "%s/empty", scratch);
	mkdir(proc, 0755);
	stuck_set_roots(proc, proc, 0);
	bed_init(&b, 0, 1);
	bed_set_policy(&b, "[daemon]\nstuck-after = 5s\n");
	bed_start(&b);
	fake_hv_add(b.hv, 5, 5, 1000, 0);
	fake_hv_add(b.hv, 6, 6, 1000, 0);
	fake_hv_hold_domain(b.hv, 5, true);
	bed_request(&b, 5, 5);
	bed_run_busy(&b, 1000);
	fake_hv_wait_inside(b.hv, 1);
	bed_run_busy(&b, 3500);
	is_str(bed_node(&b, 5, "state"), "destroying", "4.5 s standing still: still destroying");
	ok(!bed_node(&b, 5, "held-by"), "and no held-by yet");
	is_str(fake_store_get(b.s, LAYOUT_MEMORY_DIR "/releasing"), "1000",
	       "its pages count as coming back while it is destroying");
	bed_run_busy(&b, 1000);
	is_str(bed_node(&b, 5, "state"), "stuck", "past stuck-after (5 s): stuck");
	held = bed_node(&b, 5, "held-by");
	ok(held && strstr(held, "libxl_domain_destroy has not returned, nothing released for 5 s"),
	   "held-by says what it waits on: %s", held ? held : "(none)");
	is_int(reaper_stuck(b.r), 1, "one stuck teardown");
	is_int(reaper_running(b.r), 0, "a stop does not wait for it");
	ok(reaper_may_start(b.r), "its slot is free for another teardown");
	is_str(fake_store_get(b.s, LAYOUT_MEMORY_DIR "/releasing"), "0",
	       "a stuck teardown's pages, not falling, do not count as coming back");

	/* The next request does not wait for it (jobs = 1). */
	bed_request(&b, 6, 6);
	bed_run_busy(&b, 100);
	bed_wait_gone(&b, 6);
	is_str(bed_node(&b, 6, "state"), "done", "the next teardown ran beside the stuck one");
	is_str(bed_node(&b, 5, "state"), "stuck", "which is still stuck");

	/* Its pages fall again (libxl got its lock): destroying once more. */
	fake_hv_set_pages(b.hv, 5, 600);
	bed_run_busy(&b, 300);
	is_str(bed_node(&b, 5, "state"), "destroying", "pages falling: destroying again");
	ok(!bed_node(&b, 5, "held-by"), "held-by cleared");
	is_int(reaper_stuck(b.r), 0, "no stuck teardown");
	bed_run_busy(&b, 5500);
	is_str(bed_node(&b, 5, "state"), "stuck", "standing still again: stuck again");
	is_int(fake_runner_started(b.runner), 2, "still the one teardown of it: none started again");

	/* The destroy returns at last: done, as any other. */
	fake_hv_hold_domain(b.hv, 5, false);
	bed_wait_gone(&b, 5);
	is_str(bed_node(&b, 5, "state"), "done", "the stuck teardown ends done when it returns");
	ok(!bed_node(&b, 5, "held-by"), "with no held-by");
	is_int(reaper_stuck(b.r), 0, "nothing stuck");
	bed_dispose(&b);
	stuck_set_roots(NULL, NULL, 0);
}

/* Start B (JOBS workers, POLICY) with no process or lock file to find,
 * and ask for the teardown of DOMID (1000 pages), whose destroy will not
 * return until released. */
static void held_bed_start(struct bed *b, unsigned jobs, const char *policy, uint32_t domid)
{
	static char proc[300];	/* stuck.c keeps the pointer */

	snprintf(proc, sizeof(proc), "%s/empty", scratch);
	mkdir(proc, 0755);
	stuck_set_roots(proc, proc, 0);
	bed_init(b, 0, jobs);
	bed_set_policy(b, policy);
	bed_start(b);
	fake_hv_add(b->hv, domid, (uint8_t)domid, 1000, 0);
	fake_hv_hold_domain(b->hv, domid, true);
	bed_request(b, domid, (uint8_t)domid);
}

/* The domain goes while its destroy does not return (a libxl that missed
 * its destroy child's exit): stuck, and held-by says its memory is back,
 * not that nothing was released. */
static void test_gone_not_returned(void)
{
	const char *held;
	struct bed b;

	held_bed_start(&b, 1, "[daemon]\nstuck-after = 5s\n", 5);
	bed_run_busy(&b, 1000);
	fake_hv_wait_inside(b.hv, 1);
	fake_hv_remove(b.hv, 5);
	bed_run_busy(&b, 4500);
	is_str(bed_node(&b, 5, "state"), "destroying", "gone 4.5 s ago, its destroy not back: destroying");
	is_str(bed_node(&b, 5, "pages-left"), "0", "with no page left");
	bed_run_busy(&b, 1000);
	is_str(bed_node(&b, 5, "state"), "stuck", "past stuck-after: stuck");
	held = bed_node(&b, 5, "held-by");
	ok(held && strstr(held, "libxl_domain_destroy has not returned 5 s after the domain's last page came back"),
	   "held-by says its memory is back and the destroy has not returned: %s", held ? held : "(none)");
	ok(held && !strstr(held, "nothing released"), "and does not say nothing was released");
	fake_hv_hold_domain(b.hv, 5, false);
	bed_wait_workers(&b);
	is_str(bed_node(&b, 5, "state"), "done", "done once the destroy returns");
	bed_dispose(&b);
	stuck_set_roots(NULL, NULL, 0);
}

static void test_spare_bound(void)
{
	char proc[300];
	struct bed b;
	unsigned n_stuck = 0;

	snprintf(proc, sizeof(proc), "%s/empty", scratch);
	stuck_set_roots(proc, proc, 0);
	bed_init(&b, 0, 1);
	bed_set_policy(&b, "[daemon]\nstuck-after = 2s\n");
	bed_start(&b);
	for (uint32_t domid = 10; domid < 10 + REAPER_STUCK_SPARE_MAX + 2; domid++) {
		fake_hv_add(b.hv, domid, (uint8_t)domid, 100, 0);
		fake_hv_hold_domain(b.hv, domid, true);
		bed_request(&b, domid, (uint8_t)domid);
	}
	for (unsigned round = 0; round < REAPER_STUCK_SPARE_MAX + 2; round++) {
		bed_run_busy(&b, 100);
		fake_hv_wait_inside(b.hv, round + 1 <= REAPER_STUCK_SPARE_MAX + 1 ? round + 1 : REAPER_STUCK_SPARE_MAX + 1);
		bed_run_busy(&b, 2500);
	}
	for (uint32_t domid = 10; domid < 10 + REAPER_STUCK_SPARE_MAX + 2; domid++)
		n_stuck += !strcmp(bed_node(&b, domid, "state"), "stuck");
	is_int(n_stuck, REAPER_STUCK_SPARE_MAX + 1, "one stuck in its own slot and one in each spare one");
	is_int(fake_runner_running(b.runner), 1 + REAPER_STUCK_SPARE_MAX, "no more teardowns running than the bound");
	is_str(bed_node(&b, 10 + REAPER_STUCK_SPARE_MAX + 1, "state"), "queued",
	       "past the bound, the next one waits");
	fake_hv_release(b.hv);
	for (uint32_t domid = 10; domid < 10 + REAPER_STUCK_SPARE_MAX + 2; domid++)
		bed_wait_gone(&b, domid);
	bed_run_busy(&b, 100);
	bed_wait_gone(&b, 10 + REAPER_STUCK_SPARE_MAX + 1);
	n_stuck = 0;
	for (uint32_t domid = 10; domid < 10 + REAPER_STUCK_SPARE_MAX + 2; domid++)
		n_stuck += strcmp(bed_node(&b, domid, "state"), "done") != 0;
	is_int(n_stuck, 0, "once they return, every one is done");
	bed_dispose(&b);
	stuck_set_roots(NULL, NULL, 0);
}

static void test_stop_bound(void)
{
	struct bed b;

	held_bed_start(&b, 2, "[daemon]\nstuck-after = 10m\n", 7);
	bed_run_busy(&b, 100);
	fake_hv_wait_inside(b.hv, 1);
	bed_run_busy(&b, 60 * 1000);
	is_str(bed_node(&b, 7, "state"), "destroying", "a minute standing still, stuck-after 10m: destroying");
	fake_hv_add(b.hv, 8, 8, 1000, 0);
	fake_hv_hold_domain(b.hv, 8, true);
	bed_request(&b, 8, 8);
	bed_run_busy(&b, 100);
	fake_hv_wait_inside(b.hv, 2);
	bed_run_busy(&b, 1000);
	reaper_stop(b.r);
	is_int(reaper_running(b.r), 2, "a stop waits for both at first");
	bed_run_busy(&b, 300);
	is_str(bed_node(&b, 7, "state"), "stuck", "the one standing still past 30 s is stuck at once");
	is_int(reaper_running(b.r), 1, "and the stop no longer waits for it");
	bed_run_busy(&b, 27 * 1000);
	is_int(reaper_running(b.r), 1, "stopping, 28.4 s standing still: the other still waited for");
	bed_run_busy(&b, 2000);
	is_str(bed_node(&b, 8, "state"), "stuck", "standing still 30 s, stopping: stuck");
	is_int(reaper_running(b.r), 0, "and the stop waits for nothing");
	bed_dispose(&b);
	stuck_set_roots(NULL, NULL, 0);
}

/* A stuck teardown taken back (issue 39): by the policy's take-back-after
 * and by asking again.  Its teardown is ended and started again, which
 * counts as one failed attempt of the job; done once a destroy returns. */
static void test_take_back(void)
{
	const char *error;
	struct bed b;

	held_bed_start(&b, 1, "[daemon]\nstuck-after = 2s\ntake-back-after = 5s\n", 7);
	bed_run_busy(&b, 100);
	fake_hv_wait_inside(b.hv, 1);
	bed_run_busy(&b, 2500);
	is_str(bed_node(&b, 7, "state"), "stuck", "standing still 2.5 s: stuck");
	bed_run_busy(&b, 2000);
	is_int(fake_runner_started(b.runner), 1, "4.5 s: not taken back before take-back-after");
	bed_run_busy(&b, 1000);
	reaper_handle_runner(b.r);
	is_str(bed_node(&b, 7, "state"), "destroying", "5.5 s: taken back, destroying again");
	error = bed_node(&b, 7, "error");
	ok(error && strstr(error, "ended to take it back") && strstr(error, "attempt 1 of"),
	   "  its error says so, as a failed attempt: %s", error ? error : "(none)");
	bed_run_busy(&b, 1500);
	fake_hv_wait_inside(b.hv, 2);
	is_int(fake_runner_started(b.runner), 2, "  and its teardown starts again after the back-off");

	bed_run_busy(&b, 2500);
	is_str(bed_node(&b, 7, "state"), "stuck", "standing still again: stuck again");
	bed_request(&b, 7, 7);
	reaper_handle_store_events(b.r);
	reaper_handle_runner(b.r);
	is_str(bed_node(&b, 7, "state"), "destroying", "asked again: taken back at once");
	bed_run_busy(&b, 2500);
	fake_hv_wait_inside(b.hv, 3);
	is_int(fake_runner_started(b.runner), 3, "  and started again");

	fake_hv_hold_domain(b.hv, 7, false);
	bed_wait_gone(&b, 7);
	bed_wait_workers(&b);
	is_str(bed_node(&b, 7, "state"), "done", "once a destroy returns: done");
	bed_dispose(&b);
	stuck_set_roots(NULL, NULL, 0);
}

static void test_metrics(void)
{
	struct scrub_snapshot snap = { 0 };
	struct metrics *m = NULL;
	uint8_t uuid[HV_UUID_LEN] = { 1 };
	struct job *job = NULL;
	char *text = NULL;

	metrics_new(0, &m);
	metrics_configure(m, NULL, "test");
	job_new(5, uuid, "web", "Pool-0", &job);
	job_set_state(job, JOB_DESTROYING);
	is_int(job_set_state(job, JOB_STUCK), 0, "destroying -> stuck");
	metrics_render(m, job, &snap, NULL, &text);
	ok(text && strstr(text, "xen_teardown_jobs{state=\"stuck\"} 1"), "metrics count the stuck job");
	ok(text && strstr(text, "xen_teardown_jobs{state=\"destroying\"} 0"), "not as destroying");
	free(text);
	is_int(job_set_state(job, JOB_DESTROYING), 0, "stuck -> destroying");
	is_int(job_set_state(job, JOB_STUCK), 0, "destroying -> stuck again");
	is_int(job_set_state(job, JOB_QUEUED), 0, "stuck -> queued (resume)");
	is_int(job_set_state(job, JOB_STUCK), -EINVAL, "queued -> stuck is refused");
	job_free(job);
	metrics_free(m);
}

int main(void)
{
	char cmd[64];

	if (!mkdtemp(scratch))
		return 1;
	test_describe();
	test_holders();
	test_stuck_and_back();
	test_gone_not_returned();
	test_spare_bound();
	test_stop_bound();
	test_take_back();
	test_metrics();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", scratch);
	if (system(cmd))
		printf("# could not remove %s\n", scratch);
	return tap_done();
}
