/*
 * fuzz-xl-front: libFuzzer on the xl front's command-line classifier,
 * xl_front_parse(), with an argv made of the input split at its NUL bytes
 * (argv[0] is "xl").  Beyond surviving it, it checks what the front
 * promises:
 *
 *   - a line without a word naming destroy (in full or by a prefix of at
 *     least 3 letters, as xl accepts it) is never the front's; the front
 *     serves a line (async, help or a usage error) only if it also asks
 *     for --async (or a -a cluster);
 *   - a create it looks at names create (in full or from "cr") at the
 *     argv index it reports, and names no DOMAIN;
 *   - async names exactly one DOMAIN, an element of argv; a usage error
 *     names none, returns -EINVAL and has a message (xl-front.c prints
 *     the usage, which lists what is accepted, after it);
 *   - the same line gives the same answer twice, and argv is not changed.
 *
 * It does not run xl, look at domains or talk to xenreaperd.
 */
#include <errno.h>

#include "fuzz.h"
#include "xl-front-args.h"

#define MAX_ARGS 64

/* Whether WORD names xl's command NAME, in full or by a prefix of at
 * least MIN letters. */
static int names_command(const char *word, const char *name, size_t min)
{
	size_t len = strlen(word);

	return len >= min && !strncmp(word, name, len);
}

/* Whether argv (from 1) holds a word naming NAME. */
static int has_command(int argc, char **argv, const char *name, size_t min)
{
	for (int i = 1; i < argc; i++)
		if (names_command(argv[i], name, min))
			return 1;
	return 0;
}

/* Whether any element is --async or a one-dash cluster with an 'a'. */
static int has_async(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--async") ||
		    (argv[i][0] == '-' && argv[i][1] != '-' && strchr(argv[i], 'a')))
			return 1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf, *copy[MAX_ARGS + 1], *argv[MAX_ARGS + 1];
	struct xl_front_args args, again;
	int argc, rc;

	argc = fuzz_split_argv(data, size, "xl", argv, MAX_ARGS, &buf);
	memcpy(copy, argv, sizeof(argv));

	rc = xl_front_parse(argc, argv, &args);
	fuzz_check(!memcmp(copy, argv, sizeof(argv)), "argv was changed");
	switch (args.mode) {
	case XL_FRONT_PASS:
	case XL_FRONT_HELP:
		fuzz_check(rc == 0, "mode %d with rc %d", args.mode, rc);
		break;
	case XL_FRONT_ASYNC: {
		int found = 0;

		fuzz_check(rc == 0, "async with rc %d", rc);
		fuzz_check(args.domain != NULL, "async without a DOMAIN");
		for (int i = 1; i < argc; i++)
			found |= args.domain == argv[i];
		fuzz_check(found, "DOMAIN does not point into argv");
		break;
	}
	case XL_FRONT_CREATE:
		fuzz_check(rc == 0, "create with rc %d", rc);
		fuzz_check(args.command >= 1 && args.command < argc &&
			   names_command(argv[args.command], "create", 2),
			   "create at argv index %d", args.command);
		fuzz_check(args.domain == NULL, "create naming DOMAIN '%s'", args.domain);
		break;
	case XL_FRONT_USAGE:
		fuzz_check(rc == -EINVAL, "usage error with rc %d", rc);
		fuzz_check(args.domain == NULL, "usage error naming DOMAIN '%s'", args.domain);
		fuzz_check(args.error[0] != '\0', "usage error without a message");
		fuzz_check(memchr(args.error, '\0', sizeof(args.error)) != NULL, "unterminated message");
		break;
	default:
		fuzz_fail("mode %d", args.mode);
	}
	if (args.mode != XL_FRONT_PASS && args.mode != XL_FRONT_CREATE) {
		fuzz_check(has_command(argc, argv, "destroy", 3), "mode %d without 'destroy'", args.mode);
		fuzz_check(has_async(argc, argv), "mode %d without --async", args.mode);
	}
	if (rc == 0 && args.mode != XL_FRONT_ASYNC)
		fuzz_check(args.domain == NULL || args.mode == XL_FRONT_HELP,
			   "mode %d names DOMAIN '%s'", args.mode, args.domain);

	xl_front_parse(argc, argv, &again);
	fuzz_check(again.mode == args.mode && again.wait == args.wait && again.force == args.force &&
		   again.verbose == args.verbose && again.domain == args.domain &&
		   (args.mode != XL_FRONT_CREATE || again.command == args.command) &&
		   !strcmp(again.error, args.error), "a second parse of the same line differs");
	free(buf);
	return 0;
}
