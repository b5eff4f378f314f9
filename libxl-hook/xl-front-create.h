/*
 * xl-front-create: what an `xl create` command line asks for, as xl 4.17
 * reads it, and the front's own --wait-memory-timeout taken out of it.
 */
#pragma once
#include <stddef.h>
#include <stdint.h>

#define XL_FRONT_CREATE_TIMEOUT_MS 120000	/* default --wait-memory-timeout */
#define XL_FRONT_CREATE_OPTION "--wait-memory-timeout"
#define XL_FRONT_CREATE_ENV "XENREAPER_WAIT_MEMORY_TIMEOUT"

enum xl_front_create_plan {
	XL_FRONT_CREATE_CHECK,	/* xl will build a guest: look at its memory first */
	XL_FRONT_CREATE_PASS,	/* nothing to wait for: run the real xl at once */
	XL_FRONT_CREATE_USAGE,	/* the front's own option is wrong (error says how) */
};

struct xl_front_create {
	enum xl_front_create_plan plan;
	const char *why;		/* PASS: why not (a phrase, for -v) */
	int64_t timeout_ms;		/* how long to wait for memory at most */
	const char *config_file;	/* points into argv; NULL if none */
	char *extra;			/* the key=value words, each with "\n" (as xl
					 * joins them); malloc'd, NULL if none */
	char **argv;			/* the line for the real xl (malloc'd array of
					 * pointers into argv, NULL-terminated) */
	int argc;
	char error[256];		/* USAGE: what was wrong, what is accepted */
};

/* Read ARGV, whose word COMMAND is xl's create command, into C, with
 * ENV_TIMEOUT (XENREAPER_WAIT_MEMORY_TIMEOUT, may be NULL) as the default
 * of --wait-memory-timeout; 0, -EINVAL (plan USAGE) or -ENOMEM.  Free C
 * with xl_front_create_free() whatever it returns. */
int xl_front_create_parse(int argc, char **argv, int command, const char *env_timeout,
			  struct xl_front_create *c);
void xl_front_create_free(struct xl_front_create *c);
/* The text xl parses: the config file's LEN bytes of DATA, then, if EXTRA
 * is not empty, "\n", EXTRA and "\n" (xl's create_domain does exactly
 * this); malloc'd and NUL-terminated into *OUT, its length in *OUT_LEN. */
int xl_front_create_text(const char *data, size_t len, const char *extra, char **out,
			 size_t *out_len);
