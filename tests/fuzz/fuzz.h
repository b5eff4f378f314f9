/* fuzz: what every libFuzzer target here shares; header-only. */
#pragma once
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

/* libFuzzer's entry points (it provides main()). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* A broken invariant: say which, and abort so libFuzzer keeps the input. */
static inline void fuzz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static inline void fuzz_fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fuzz: invariant broken: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	abort();
}

/* The message's arguments are only evaluated when COND fails. */
#define fuzz_check(cond, ...) do { if (!(cond)) fuzz_fail(__VA_ARGS__); } while (0)

/* The daemon logs every refused request; millions of lines would only
 * slow the fuzzer down.  FUZZ_VERBOSE=1 shows them when replaying one input. */
static inline void fuzz_quiet_logs(void)
{
	const char *verbose = getenv("FUZZ_VERBOSE");

	log_set_level(verbose && *verbose == '1' ? LOG_DEBUG : -1);
}

/* DATA as a NUL-terminated string (cut at its first NUL); free() it. */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* DATA as an argument vector: ARGV[0] is PROG, the rest are DATA's pieces
 * between NUL bytes (at most MAX - 1 of them), ARGV[argc] is NULL; ARGV
 * must hold MAX + 1 pointers.  Returns argc; free() *BUF afterwards. */
static inline int fuzz_split_argv(const uint8_t *data, size_t size, const char *prog, char **argv,
				  int max, char **buf)
{
	char *copy = fuzz_string(data, size);
	size_t start = 0;
	int argc = 1;

	argv[0] = (char *)prog;
	for (size_t i = 0; i <= size && argc < max; i++) {
		if (i == size || copy[i] == '\0') {
			copy[i] = '\0';
			argv[argc++] = copy + start;
			start = i + 1;
		}
	}
	argv[argc] = NULL;
	*buf = copy;
	return argc;
}
