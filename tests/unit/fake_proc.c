/*
 * fake_proc: a stand-in /proc, written as plain files under a scratch
 * directory that the module under test is pointed at.  It writes only
 * what stuck.c and holders.c read: stat, cmdline and environ.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "fake_proc.h"

void fake_proc_write_file(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "w");

	if (!f || fwrite(data, 1, len, f) != len)
		printf("# cannot write %s\n", path);
	if (f)
		fclose(f);
}

void fake_proc_process(const char *proc, long pid, long ppid, long start_ticks,
		       const char *cmdline, size_t cmd_len, const char *env, size_t env_len)
{
	char path[512], stat[256];

	snprintf(path, sizeof(path), "%s/%ld", proc, pid);
	mkdir(path, 0755);
	snprintf(stat, sizeof(stat),
		 "%ld (some (odd) name) S %ld 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 %ld 0 0\n",
		 pid, ppid, start_ticks);
	snprintf(path, sizeof(path), "%s/%ld/stat", proc, pid);
	fake_proc_write_file(path, stat, strlen(stat));
	snprintf(path, sizeof(path), "%s/%ld/cmdline", proc, pid);
	fake_proc_write_file(path, cmdline, cmd_len);
	snprintf(path, sizeof(path), "%s/%ld/environ", proc, pid);
	fake_proc_write_file(path, env, env_len);
}
