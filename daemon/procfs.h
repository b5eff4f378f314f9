/*
 * procfs: a small file of one process under /proc, read whole.
 */
#pragma once
#include <stddef.h>
#include <sys/types.h>

/* Read ROOT/PID/LEAF into BUF (at most LEN - 1 bytes, then a NUL); its length, or -errno. */
ssize_t procfs_read(const char *root, pid_t pid, const char *leaf, char *buf, size_t len);
