/*
 * Unit tests for issue 41, items 3 to 5: every text the daemon publishes
 * fits the one request xenstore takes (STORE_PAYLOAD_MAX: path, NUL and
 * value), however many devices, errors or bytes of a name it has to name,
 * and a publish of the daemon's own nodes or of the memory figures that
 * fails is tried again, also while the daemon is idle.  The fake store
 * refuses an oversized write with E2BIG, as libxenstore does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bed.h"
#include "clock.h"
#include "config.h"
#include "fake_hv.h"
#include "fake_proc.h"
#include "fake_store.h"
#include "holders.h"
#include "job.h"
#include "layout.h"
#include "reaper.h"
#include "sentence.h"
#include "stuck.h"
#include "tap.h"

static char scratch[] = "/tmp/xr-bounds-XXXXXX";

/* Whether a write of VALUE to PATH is one xenstore takes. */
static bool fits(const char *path, const char *value)
{
	return value && strlen(path) + 1 + strlen(value) <= STORE_PAYLOAD_MAX;
}

/* The main loop of an idle daemon for MS: it wakes only when the reaper
 * has something due (bed_run also ticks at its end, which a daemon with
 * nothing due never does). */
static void run_idle(struct bed *b, int64_t ms)
{
	int64_t end = clock_mono_ms() + ms, next;

	for (int turns = 0; turns < 100; turns++) {
		next = reaper_next_deadline(b->r);
		if (next < 0 || next > end)
			break;
		if (next > clock_mono_ms())
			clock_advance(next - clock_mono_ms());
		reaper_handle_store_events(b->r);
		reaper_tick(b->r);
	}
}

/* The fake refuses what libxenstore refuses, and takes what it takes. */
static void test_fake_limit(void)
{
	const char *path = "/tool/xenreaper/x";
	size_t room = STORE_PAYLOAD_MAX - strlen(path) - 1;
	struct store *s = fake_store_new();
	char *value = malloc(room + 2);

	memset(value, 'v', room + 1);
	value[room + 1] = '\0';
	is_int(store_write(s, STORE_TX_NONE, path, value), -E2BIG, "a write one byte over the limit: E2BIG");
	ok(!fake_store_get(s, path), "and nothing written");
	value[room] = '\0';
	is_int(store_write(s, STORE_TX_NONE, path, value), 0, "a write of exactly the limit is taken");
	free(value);
	store_free(s);
}

/* The mechanism every bounded text is built with. */
static void test_sentence(void)
{
	static const struct sentence_kind cat = { "cat", "cats" }, dog = { "dog", "dogs" };
	struct sentence st;
	char *text = NULL, *fit = NULL, big[SENTENCE_MAX + 8];

	sentence_init(&st, 64);
	sentence_add(&st, "pets: ");
	ok(sentence_item(&st, &cat, "%s", "Tom"), "an item that fits is kept");
	ok(!sentence_item(&st, &dog, ", %s", "a dog with a name far too long for what is left"),
	   "one that does not is left out");
	ok(!sentence_item(&st, &cat, ", %s", "Kit"), "and so is every later one, even a short one");
	sentence_item(&st, &cat, ", %s", "Cleo");
	sentence_left(&st, "; ");
	is_int(sentence_finish(&st, &text), 0, "the text is made");
	is_str(text, "pets: Tom; and 1 more dog, 2 more cats", "it counts what it left out, by kind");
	free(text);

	sentence_init(&st, 9);
	sentence_add(&st, "abcdefgh\xc3\xa4xyz");
	sentence_finish(&st, &text);
	is_str(text, "abcdefgh", "text past the limit is cut, not inside a UTF-8 character");
	free(text);

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	is_int(sentence_fit(big, &fit), 0, "a long name is fitted");
	is_int(strlen(fit), SENTENCE_MAX, "to SENTENCE_MAX bytes");
	ok(fits("/tool/xenreaper/job/32751/last-release", fit) &&
	   strlen("/tool/xenreaper/job/32751/last-release") < LAYOUT_PATH_LEN,
	   "which fits under the daemon's longest path");
	free(fit);
}

/* Item 3: a stuck teardown whose 60 hotplug scripts hang, its 60 backends
 * open: stuck in xenstore too, with a held-by that says what it left out. */
static void test_stuck_many_devices(void)
{
	char proc[300], path[400], env[128], uuid[HV_UUID_STR_LEN];
	long ticks = sysconf(_SC_CLK_TCK);
	const char *held, *state;
	struct job *job;
	struct bed b;

	snprintf(proc, sizeof(proc), "%s/proc", scratch);
	mkdir(proc, 0755);
	snprintf(path, sizeof(path), "%s/uptime", proc);
	fake_proc_write_file(path, "1000.00 1500.00\n", 16);
	for (int i = 0; i < 60; i++) {
		int len = snprintf(env, sizeof(env), "PATH=/bin%cXENBUS_PATH=backend/vbd/5/%d%c", 0, 51712 + 16 * i, 0);

		fake_proc_process(proc, 2000 + i, 777, (1000 - 50) * ticks,
			     FAKE_PROC_TEXT("/bin/sh\0/etc/xen/scripts/block\0remove"), env, (size_t)len);
	}
	stuck_set_roots(proc, proc, 777);
	bed_init(&b, 0, 1);
	bed_set_policy(&b, "[daemon]\nstuck-after = 5s\n");
	bed_start(&b);
	fake_hv_add(b.hv, 5, 5, 1000, 0);
	fake_hv_uuid_text(5, uuid);
	for (int i = 0; i < 60; i++) {
		snprintf(path, sizeof(path), "/local/domain/0/backend/vbd/5/%d/state", 51712 + 16 * i);
		fake_store_set(b.s, path, "5");
	}
	fake_hv_hold_domain(b.hv, 5, true);
	bed_request(&b, 5, 5);
	bed_run_busy(&b, 1000);
	fake_hv_wait_inside(b.hv, 1);
	bed_run_busy(&b, 5500);
	job = reaper_find_job(b.r, 5);
	state = bed_node(&b, 5, "state");
	held = bed_node(&b, 5, "held-by");
	is_int(reaper_stuck(b.r), 1, "the daemon calls it stuck");
	is_str(state, "stuck", "and so does xenstore");
	ok(held != NULL, "held-by is published");
	ok(held && job && job->held_by && !strcmp(held, job->held_by), "as the daemon holds it");
	printf("# %zu bytes: ...%s\n", held ? strlen(held) : 0, held && strlen(held) > 200 ? held + strlen(held) - 200 : "");
	ok(held && strstr(held, "hotplug script pid 2000 (/bin/sh /etc/xen/scripts/block remove) running for 50 s"),
	   "it names the first script");
	ok(held && strstr(held, " more hotplug scripts") && strstr(held, " more backends"),
	   "and says how many scripts and backends it leaves out");
	ok(!job || !job->dirty, "the job's nodes are in step with the daemon");
	fake_hv_hold_domain(b.hv, 5, false);
	bed_wait_workers(&b);
	bed_dispose(&b);
	stuck_set_roots(NULL, NULL, 0);
}

/* Item 3, for a zombie: 300 devices in dom0's vbd backend and a vif
 * backend in each of 40 driver domains. */
static void test_zombie_many_backends(void)
{
	char proc[300], path[300];
	const char *held;
	struct bed b;

	snprintf(proc, sizeof(proc), "%s/noproc", scratch);
	mkdir(proc, 0755);
	holders_set_proc_root(proc);
	bed_init(&b, 0, 1);
	bed_start(&b);
	fake_hv_add(b.hv, 7, 7, 1000, 0);
	fake_hv_make_zombie(b.hv, 7, 1000, 10);
	for (int i = 0; i < 300; i++) {
		snprintf(path, sizeof(path), "/local/domain/0/backend/vbd/7/%d/state", 51712 + 16 * i);
		fake_store_set(b.s, path, "4");
	}
	for (int i = 0; i < 40; i++) {
		snprintf(path, sizeof(path), "/local/domain/%d/backend/vif/7/0/state", 100 + i);
		fake_store_set(b.s, path, "4");
	}
	bed_request(&b, 7, 7);
	bed_run(&b, 3000);
	held = bed_node(&b, 7, "held-by");
	is_str(bed_node(&b, 7, "state"), "zombie", "a zombie with 340 backend devices is a zombie in xenstore");
	ok(held != NULL, "with its held-by");
	printf("# %zu bytes: ...%s\n", held ? strlen(held) : 0, held && strlen(held) > 200 ? held + strlen(held) - 200 : "");
	ok(held && strstr(held, "vbd backend in domain 0 (/local/domain/0/backend/vbd/7: 51712 Connected, "),
	   "naming the first backend and its first devices");
	ok(held && strstr(held, " more devices)") && strstr(held, " more backends"),
	   "and how many devices and backends it leaves out");
	bed_dispose(&b);
	holders_set_proc_root(NULL);
}

/* Item 3's audit: a domain name as long as its own node takes, an error
 * sentence and a policy path past the budget are published all the same. */
static void test_audit(void)
{
	char path[LAYOUT_PATH_LEN], name_path[64], *name, *long_text;
	uint8_t uuid[HV_UUID_LEN] = { 1 };
	struct store *s = fake_store_new();
	size_t name_len;
	struct job *job;
	struct bed b;
	int rc;

	/* The longest name xenstore takes under /local/domain/12345. */
	snprintf(name_path, sizeof(name_path), "/local/domain/12345/name");
	name_len = STORE_PAYLOAD_MAX - strlen(name_path) - 1;
	name = malloc(name_len + 1);
	memset(name, 'n', name_len);
	name[name_len] = '\0';
	bed_init(&b, 0, 1);
	bed_start(&b);
	bed_add_named(&b, 12345, 100, 0, name);
	ok(fake_store_get(b.s, name_path) != NULL, "a domain named with %zu bytes", name_len);
	bed_request(&b, 12345, 12345 & 0xff);
	bed_run(&b, 2000);
	is_str(bed_node(&b, 12345, "state"), "done", "its job is published, and done");
	layout_job_path(path, 12345, "name");
	ok(bed_node(&b, 12345, "name") && !strncmp(bed_node(&b, 12345, "name"), name, 100),
	   "with its name, as much of it as fits");
	bed_dispose(&b);
	free(name);

	long_text = malloc(5001);
	memset(long_text, 'e', 5000);
	long_text[5000] = '\0';
	job_new(3, uuid, "g", "Pool-0", &job);
	job_fail(job, "%s", long_text);
	rc = job_publish(job, s, STORE_TX_NONE);
	is_int(rc, 0, "a job whose error sentence is 5000 bytes is published");
	layout_job_path(path, 3, "error");
	ok(fits(path, fake_store_get(s, path)), "with an error that fits");
	job_free(job);
	store_free(s);

	/* A policy file by a path longer than the budget (PATH_MAX is 4096). */
	bed_init(&b, 0, 1);
	long_text[4090] = '\0';
	long_text[0] = '/';
	free(b.cfg->path);
	b.cfg->path = strdup(long_text);
	is_int(bed_start(&b), 0, "the daemon starts with a policy path of 4090 bytes");
	layout_daemon_path(path, "config");
	ok(fits(path, fake_store_get(b.s, path)), "and publishes it in daemon/config as far as it fits");
	bed_dispose(&b);
	free(long_text);
}

/* Item 4: a reload with 30 errors says so in daemon/config-error. */
static void test_reload_many_errors(void)
{
	struct config_errors errs = { 0 };
	char policy[4096], path[LAYOUT_PATH_LEN], *joined = NULL;
	struct config *cfg = NULL;
	const char *node;
	size_t len = 0;
	FILE *f;
	struct bed b;

	len += snprintf(policy + len, sizeof(policy) - len, "[daemon]\n");
	for (int i = 1; i <= 30; i++)
		len += snprintf(policy + len, sizeof(policy) - len, "bogus-key-%d = 1\n", i);
	f = fmemopen(policy, len, "r");
	ok(config_parse(f, "/etc/xen/xenreaper.conf", &cfg, &errs) != 0 && errs.n == 30,
	   "a policy with 30 errors does not load");
	fclose(f);
	is_int(config_errors_join(&errs, &joined), 0, "its errors joined");
	bed_init(&b, 0, 1);
	bed_start(&b);
	layout_daemon_path(path, "config-error");
	is_int(reaper_set_config_error(b.r, joined), 0, "the reload's errors are taken");
	node = fake_store_get(b.s, path);
	ok(node != NULL, "daemon/config-error is published");
	ok(fits(path, node), "within xenstore's limit");
	ok(node && strstr(node, "/etc/xen/xenreaper.conf:2: unknown key 'bogus-key-1' in [daemon]"),
	   "it starts with the first error");
	ok(node && strstr(node, " more errors"), "and says how many it leaves out: %s",
	   node && strlen(node) > 80 ? node + strlen(node) - 80 : "-");
	free(joined);
	config_errors_clear(&errs);

	/* Its publish fails: tried again, with nothing else to wake the daemon. */
	bed_run(&b, 1000);
	fake_store_fail_writes(b.s, path, -EIO);
	reaper_set_config_error(b.r, "/etc/xen/xenreaper.conf:7: the second reload's error");
	fake_store_fail_writes(b.s, NULL, 0);
	ok(reaper_next_deadline(b.r) >= 0, "a failed publish of config-error keeps the daemon due to try again");
	run_idle(&b, 120000);
	is_str(fake_store_get(b.s, path), "/etc/xen/xenreaper.conf:7: the second reload's error",
	       "and it is published in the end");
	bed_dispose(&b);
}

/* Item 5: the last memory publish of a teardown (in flight -> idle) fails. */
static void test_memory_retry(void)
{
	const char *releasing;
	struct bed b;

	bed_init(&b, 0, 1);
	/* No scrub probe: nothing else is due once the teardown is over. */
	bed_set_policy(&b, "[daemon]\nscrub-probe = none\n");
	bed_start(&b);
	fake_hv_add(b.hv, 9, 9, 5000, 0);
	fake_hv_hold(b.hv);
	bed_request(&b, 9, 9);
	bed_run_busy(&b, 500);
	fake_hv_wait_inside(b.hv, 1);
	is_str(fake_store_get(b.s, LAYOUT_MEMORY_DIR "/releasing"), "5000", "memory/releasing while in flight");
	fake_store_fail_writes(b.s, LAYOUT_MEMORY_DIR "/releasing", -EIO);
	fake_hv_release(b.hv);
	bed_wait_gone(&b, 9);
	is_str(bed_node(&b, 9, "state"), "done", "the teardown is done");
	is_str(fake_store_get(b.s, LAYOUT_MEMORY_DIR "/releasing"), "5000", "its last memory publish failed");
	fake_store_fail_writes(b.s, NULL, 0);
	ok(reaper_next_deadline(b.r) >= 0 && reaper_next_deadline(b.r) <= clock_mono_ms() + 60000,
	   "a retry is due within a minute (next deadline %lld, now %lld)",
	   (long long)reaper_next_deadline(b.r), (long long)clock_mono_ms());
	run_idle(&b, 120000);
	releasing = fake_store_get(b.s, LAYOUT_MEMORY_DIR "/releasing");
	is_str(releasing, "0", "memory/releasing is 0 once the retry went through, the daemon idle");
	bed_dispose(&b);
}

int main(void)
{
	if (!mkdtemp(scratch)) {
		perror("mkdtemp");
		return 1;
	}
	test_fake_limit();
	test_sentence();
	test_stuck_many_devices();
	test_zombie_many_backends();
	test_audit();
	test_reload_many_errors();
	test_memory_retry();
	{
		char cmd[400];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", scratch);
		if (system(cmd))
			printf("# could not remove %s\n", scratch);
	}
	return tap_done();
}
