/*
 * Unit tests for runner_spawn on real processes (issue 39): the daemon's
 * runner starts a stand-in helper, a shell script that acts by domid, the
 * way it starts xenreaper-teardown.  What the helper starts with (no
 * signal blocked or ignored, though the daemon blocks and ignores some),
 * its command line and request lines, its result line, one helper
 * serving teardown after teardown with one started ahead of need and the
 * rest ended once idle, one per priority, none after a teardown that
 * failed, a kill that takes a teardown
 * back, a helper that dies without a result, and the children a helper
 * leaves behind, reaped by the daemon as their subreaper.
 */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runner.h"
#include "tap.h"

static const char helper_script[] =
	"#!/bin/sh\n"
	"while read d u f s su; do\n"
	"case $d in\n"
	"1) echo \"1 0 $(grep -E '^Sig(Blk|Ign):' /proc/$$/status | tr '\\t\\n' '  ')\" >&3 ;;\n"
	"2) echo \"2 -16 libxl could not take the lock $$\" >&3 ;;\n"
	"3) echo started > \"$HELPER_DIR/3.started\"; exec sleep 60 ;;\n"
	"4) sh -c 'sleep 0.5; echo left > \"$HELPER_DIR/4.orphan\"' & echo 4 0 >&3 ;;\n"
	"5) exit 3 ;;\n"
	"6|7) echo \"$d 0 $1 $d $u $f $s $su (${#2})\" >&3 ;;\n"
	"8|9|10) echo \"$d 0 $$\" >&3 ;;\n"
	"11) echo '11 zero' >&3 ;;\n"
	"esac\n"
	"done\n";

static char scratch[] = "/tmp/test-runner.XXXXXX";

static const uint8_t uuid[HV_UUID_LEN] = { 0xab, 0xcd, [15] = 0x01 };
static const uint8_t stub_uuid[HV_UUID_LEN] = { 0x57, 0xdb, [15] = 0x0d };

/* Start a teardown of DOMID on RUNNER. */
static int start(struct runner *runner, uint32_t domid, unsigned flags)
{
	struct runner_request request = { .domid = domid, .priority = JOB_PRIORITY_IDLE, .flags = flags };

	memcpy(request.uuid, uuid, HV_UUID_LEN);
	return runner_start(runner, &request);
}

/* Wait (up to 10 s) for one ended teardown. */
static int wait_done(struct runner *runner, struct runner_result *out)
{
	struct pollfd pfd = { .fd = runner_fd(runner), .events = POLLIN };

	for (int i = 0; i < 100; i++) {
		if (runner_next_done(runner, out) == 0)
			return 0;
		poll(&pfd, 1, 100);
	}
	return -ETIMEDOUT;
}

static bool file_exists(const char *name)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", scratch, name);
	return stat(path, &st) == 0;
}

/* Children of this process, any state; *ZOMBIES of them exited unreaped. */
static unsigned children(unsigned *zombies)
{
	char path[300], line[512], state;
	unsigned n = 0;
	struct dirent *e;
	long ppid;
	FILE *f;
	DIR *d = opendir("/proc");

	*zombies = 0;
	while (d && (e = readdir(d))) {
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(line, sizeof(line), f) && strrchr(line, ')') &&
		    sscanf(strrchr(line, ')') + 2, "%c %ld", &state, &ppid) == 2 && ppid == getpid()) {
			n++;
			*zombies += state == 'Z';
		}
		fclose(f);
	}
	if (d)
		closedir(d);
	return n;
}

int main(void)
{
	struct runner *runner = NULL;
	struct runner_request request;
	struct runner_result res;
	char path[300], want[256], *ign;
	pid_t pid;
	unsigned zombies;
	sigset_t term;
	FILE *f;

	if (!mkdtemp(scratch))
		return 1;
	snprintf(path, sizeof(path), "%s/helper", scratch);
	f = fopen(path, "w");
	fputs(helper_script, f);
	fclose(f);
	chmod(path, 0755);
	setenv("HELPER_DIR", scratch, 1);
	/* As the daemon runs: its signalfd's signals blocked, SIGPIPE ignored
	 * (systemd's IgnoreSIGPIPE=yes). */
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigaddset(&term, SIGHUP);
	sigprocmask(SIG_BLOCK, &term, NULL);
	signal(SIGPIPE, SIG_IGN);

	is_int(runner_spawn_new(path, JOB_PRIORITY_IDLE, &runner), 0, "the spawning runner starts");
	for (int i = 0; i < 100 && children(&zombies) != 1; i++)
		usleep(20000);
	is_int(children(&zombies), 1, "  with one helper ready before any teardown");

	is_int(start(runner, 1, 0), 0, "a teardown starts");
	is_int(runner_busy(runner), 1, "  and is busy");
	ok(runner_pid(runner, 1) > 0, "  in a process of its own");
	is_int(children(&zombies), 1, "  in the helper that was ready");
	runner_settle_idle(runner);
	is_int(children(&zombies), 2, "  and, settled, the next one's process is started meanwhile");
	is_int(start(runner, 1, 0), -EALREADY, "  one per domid");
	is_int(wait_done(runner, &res), 0, "  and ends");
	is_int(res.domid, 1, "  for its domid");
	is_int(res.result, 0, "  with the helper's result");
	ok(strstr(res.text, "SigBlk: 0000000000000000") != NULL,
	   "  the helper starts with no signal blocked: %s", res.text);
	/* glibc's posix_spawn leaves its own two (32 and 33, thread
	 * cancellation and setxid) ignored; xenreaper-teardown puts them back
	 * first thing (49-children checks the scripts libxl runs from it). */
	ign = strstr(res.text, "SigIgn: ");
	ok(ign && (strtoull(ign + 8, NULL, 16) & 0x7fffffffULL) == 0,
	   "  and no standard signal ignored, though the daemon ignores SIGPIPE");
	is_int(runner_busy(runner), 0, "  nothing busy once collected");
	is_int(runner_pid(runner, 1), 0, "  and no process for it");
	runner_settle_idle(runner);
	for (int i = 0; i < 100 && children(&zombies) != 1; i++) {
		runner_next_done(runner, &res);
		usleep(20000);
	}
	is_int(children(&zombies), 1, "  settled, one idle helper is kept and the other ends");

	is_int(start(runner, 8, 0), 0, "teardowns one after another");
	is_int(wait_done(runner, &res), 0, "  the first ends");
	pid = atoi(res.text);
	is_int(start(runner, 9, 0), 0, "  the second starts");
	is_int(wait_done(runner, &res), 0, "  and ends");
	ok(pid > 0 && atoi(res.text) == pid, "  in the same process, its libxl context kept (%ld, %s)",
	   (long)pid, res.text);
	request = (struct runner_request){ .domid = 10, .priority = JOB_PRIORITY_LOW };
	memcpy(request.uuid, uuid, HV_UUID_LEN);
	is_int(runner_start(runner, &request), 0, "  one at another priority");
	is_int(wait_done(runner, &res), 0, "  ends");
	ok(atoi(res.text) > 0 && atoi(res.text) != pid,
	   "  in another process: a helper's priority is for its life (%ld, %s)", (long)pid, res.text);

	hv_uuid_format(uuid, want + 9);
	memcpy(want, "idle 6 ", 7);
	want[7] = ' ';
	memmove(want + 7, want + 9, strlen(want + 9) + 1);
	strcat(want, " 1   (112)");
	is_int(start(runner, 6, 1), 0, "the request is a line on the helper's input");
	is_int(wait_done(runner, &res), 0, "  it ends");
	is_str(res.text, want, "  domid, UUID and flags; the priority and room for ps on the command line");

	request = (struct runner_request){ .domid = 7, .priority = JOB_PRIORITY_NORMAL, .stubdom = 12 };
	memcpy(request.uuid, uuid, HV_UUID_LEN);
	memcpy(request.stubdom_uuid, stub_uuid, HV_UUID_LEN);
	strcpy(want, "normal 7 ");
	hv_uuid_format(uuid, want + strlen(want));
	strcat(want, " 0 12 ");
	hv_uuid_format(stub_uuid, want + strlen(want));
	strcat(want, " (112)");
	is_int(runner_start(runner, &request), 0, "a guest with a stub domain");
	is_int(wait_done(runner, &res), 0, "  it ends");
	is_str(res.text, want, "  the stub domain and its UUID follow on the request");

	is_int(start(runner, 11, 0), 0, "a helper that writes a result that is not one");
	is_int(wait_done(runner, &res), 0, "  ends");
	is_int(res.result, -EIO, "  as an I/O error");
	ok(strstr(res.text, "wrote a result it should not: zero") != NULL, "  saying so: %s", res.text);

	is_int(start(runner, 2, 0), 0, "a teardown that fails");
	is_int(wait_done(runner, &res), 0, "  ends");
	is_int(res.result, -EBUSY, "  with its errno");
	ok(!strncmp(res.text, "libxl could not take the lock ", 30), "  and its sentence: %s", res.text);
	pid = atoi(res.text + 30);
	is_int(start(runner, 8, 0), 0, "  the next teardown");
	is_int(wait_done(runner, &res), 0, "  ends");
	ok(pid > 0 && atoi(res.text) > 0 && atoi(res.text) != pid,
	   "  in another process: one whose teardown failed is given no other (%ld, %s)", (long)pid, res.text);

	is_int(start(runner, 5, 0), 0, "a helper that exits without a result");
	is_int(wait_done(runner, &res), 0, "  ends");
	is_int(res.result, -EIO, "  as an I/O error");
	ok(strstr(res.text, "exited with status 3 and no result") != NULL, "  saying so: %s", res.text);

	is_int(start(runner, 3, 0), 0, "a teardown that does not end");
	for (int i = 0; i < 100 && !file_exists("3.started"); i++)
		usleep(50000);
	is_int(runner_next_done(runner, &res), -EAGAIN, "  has not ended");
	is_int(runner_kill(runner, 3), 0, "  is taken back");
	is_int(runner_kill(runner, 7), -ESRCH, "  (and none runs for another domid)");
	is_int(wait_done(runner, &res), 0, "  ends");
	is_int(res.result, -EINTR, "  as interrupted");
	ok(strstr(res.text, "ended to take it back") != NULL, "  saying why: %s", res.text);

	is_int(start(runner, 4, 0), 0, "a helper that leaves a child running");
	is_int(wait_done(runner, &res), 0, "  ends");
	is_int(res.result, 0, "  with its result");
	for (int i = 0; i < 100 && !file_exists("4.orphan"); i++)
		usleep(50000);
	ok(file_exists("4.orphan"), "  its child ran to its end");
	runner_settle_idle(runner);
	for (int i = 0; i < 100 && (children(&zombies) != 1 || zombies); i++) {
		runner_next_done(runner, &res);
		usleep(20000);
	}
	is_int(children(&zombies) * 10 + zombies, 10,
	       "  and was reaped here, its subreaper: only the idle helper kept is left, no zombie");
	is_int(runner_next_done(runner, &res), -EAGAIN, "  an orphan is no teardown's result");

	is_int(start(runner, 3, 0), 0, "a teardown still running when the runner is freed");
	runner_free(runner);
	for (int i = 0; i < 100 && children(&zombies) != zombies; i++)
		usleep(20000);
	children(&zombies);
	is_int(zombies, children(&zombies), "  is ended with it (its job resumes on the next start)");
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	runner_free(NULL);

	snprintf(path, sizeof(path), "rm -rf %s", scratch);
	if (system(path)) {
		/* scratch left behind */
	}
	return tap_done();
}
