/* tap: the smallest TAP producer; a failed check makes the binary exit 1. */
#pragma once
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_count, tap_failed;

static inline int tap_ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline int tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!cond)
		tap_failed++;
	return cond;
}

#define ok(cond, ...) tap_ok(!!(cond), __VA_ARGS__)
#define is_int(got, want, what) do {						\
	long long got_ = (got), want_ = (want);					\
	if (!tap_ok(got_ == want_, "%s", what))					\
		printf("#   got %lld, want %lld (%s:%d)\n", got_, want_, __FILE__, __LINE__); \
} while (0)
#define is_str(got, want, what) do {						\
	const char *got_ = (got), *want_ = (want);				\
	if (!tap_ok(got_ && want_ && !strcmp(got_, want_), "%s", what))		\
		printf("#   got '%s', want '%s' (%s:%d)\n", got_ ? got_ : "(null)",	\
		       want_ ? want_ : "(null)", __FILE__, __LINE__);		\
} while (0)

static inline int tap_done(void)
{
	printf("1..%d\n", tap_count);
	return tap_failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
