/*
 * cli-args: the `xenreaper` command line, read into a struct.
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

enum cli_command {
	CLI_NONE,		/* only with --help or --version */
	CLI_LIST,
	CLI_STATUS,
	CLI_WAIT,
	CLI_DESTROY,
	CLI_WAIT_FREE,
	CLI_TOP,
};

struct cli_args {
	enum cli_command command;
	const char *domain;		/* points into argv; NULL if none was given
					 * (for wait-free: the SIZE as given) */
	uint64_t size_pages;		/* wait-free: SIZE in 4 KiB pages */
	bool json, wait, help, version;
	int64_t timeout_ms;		/* --timeout in ms; -1: none */
	char error[512];		/* after -EINVAL: what was wrong and what is accepted */
};

/* Read ARGV[1..ARGC-1] (each a NUL-terminated string; ARGV[0] unread) into
 * OUT; 0, or -EINVAL with OUT->error set.  No I/O; nothing is kept. */
int cli_args_parse(int argc, char **argv, struct cli_args *out);
