/*
 * xl-front-args: which xl command lines the front serves itself
 * (`xl destroy --async [--wait] DOMAIN`), which it looks at before it
 * hands them on (`xl create`: wait for memory), and which go straight to
 * the real xl.
 */
#pragma once
#include <stdbool.h>

enum xl_front_mode {
	XL_FRONT_PASS,		/* exec the real xl with the arguments untouched */
	XL_FRONT_ASYNC,		/* destroy through xenreaperd */
	XL_FRONT_HELP,		/* print the front's usage, exit 0 */
	XL_FRONT_USAGE,		/* print error and usage, exit 2 */
	XL_FRONT_CREATE,	/* xl create: maybe wait for memory, then exec the real xl */
};

struct xl_front_args {
	enum xl_front_mode mode;
	bool wait;		/* --wait/-w */
	bool force;		/* -f (destroy's or xl's global one): accepted, ignored */
	bool verbose;		/* xl's global -v */
	const char *domain;	/* points into argv */
	int command;		/* XL_FRONT_CREATE: argv index of the command word */
	char error[192];	/* for XL_FRONT_USAGE: what was wrong */
};

/* Classify ARGV into ARGS; -EINVAL (mode XL_FRONT_USAGE) for a bad
 * --async command line, else 0.  Commands are matched as xl matches
 * them: in full, or by a prefix no other xl command shares ("cr",
 * "des"). */
int xl_front_parse(int argc, char **argv, struct xl_front_args *args);
