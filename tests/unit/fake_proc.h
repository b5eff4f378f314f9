/*
 * fake_proc: a stand-in /proc for the modules that read processes (stuck,
 * holders): directories and files written under a scratch root.
 */
#pragma once
#include <stddef.h>

/* LEN bytes of DATA into PATH; says so on the TAP stream if it cannot. */
void fake_proc_write_file(const char *path, const char *data, size_t len);
/* PROC/PID: its stat (parent PPID, started START_TICKS after boot, a
 * command name with parentheses in it, as stat's parser must survive),
 * command line and environment (both NUL-separated, LEN bytes each). */
void fake_proc_process(const char *proc, long pid, long ppid, long start_ticks,
		       const char *cmdline, size_t cmd_len, const char *env, size_t env_len);

/* A string literal and its length without the final NUL, for NUL-separated
 * command lines. */
#define FAKE_PROC_TEXT(literal) literal, sizeof(literal) - 1
