/*
 * fuzz-cli: libFuzzer on the `xenreaper` command-line parser,
 * cli_args_parse(), with an argv made of the input split at its NUL bytes
 * (argv[0] is "xenreaper").  Beyond surviving it, it checks what the CLI
 * relies on:
 *
 *   - 0 or -EINVAL, and -EINVAL always with a message (terminated);
 *   - a command comes only from an argv word naming it (list, status,
 *     wait, destroy, wait-free, top, or help), and a DOMAIN points into
 *     argv;
 *   - wait and destroy always name a DOMAIN, list and top never do;
 *   - wait-free names its SIZE, never more than 1 PiB (2^38 pages of
 *     4 KiB: its stated bound, "1024T");
 *   - a timeout is -1 or from 0 to 7 days;
 *   - the same line gives the same answer twice, and argv is not changed.
 *
 * It prints nothing, runs nothing and talks to no daemon.
 */
#include <errno.h>

#include "cli-args.h"
#include "fuzz.h"

#define MAX_ARGS 64

static int has_arg(int argc, char **argv, const char *word)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], word))
			return 1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf, *copy[MAX_ARGS + 1], *argv[MAX_ARGS + 1];
	struct cli_args args, again;
	int argc, rc, found;

	argc = fuzz_split_argv(data, size, "xenreaper", argv, MAX_ARGS, &buf);
	memcpy(copy, argv, sizeof(argv));

	rc = cli_args_parse(argc, argv, &args);
	fuzz_check(!memcmp(copy, argv, sizeof(argv)), "argv was changed");
	fuzz_check(rc == 0 || rc == -EINVAL, "rc %d", rc);
	fuzz_check(memchr(args.error, '\0', sizeof(args.error)) != NULL, "unterminated message");
	if (rc) {
		fuzz_check(args.error[0] != '\0', "usage error without a message");
	} else {
		static const char *const words[] = {
			[CLI_LIST] = "list", [CLI_STATUS] = "status", [CLI_WAIT] = "wait",
			[CLI_DESTROY] = "destroy", [CLI_WAIT_FREE] = "wait-free", [CLI_TOP] = "top",
		};

		if (args.command != CLI_NONE)
			fuzz_check(args.command <= CLI_TOP && has_arg(argc, argv, words[args.command]),
				   "command %d from no argv word naming it", args.command);
		else
			fuzz_check(args.help || args.version, "no command, and no --help or --version");
		found = args.domain == NULL;
		for (int i = 1; i < argc; i++)
			found |= args.domain == argv[i];
		fuzz_check(found, "DOMAIN does not point into argv");
		if (!args.help && !args.version) {
			if (args.command == CLI_WAIT || args.command == CLI_DESTROY)
				fuzz_check(args.domain && args.domain[0], "%s without a DOMAIN",
					   words[args.command]);
			if (args.command == CLI_LIST || args.command == CLI_TOP)
				fuzz_check(args.domain == NULL, "%s with a DOMAIN", words[args.command]);
			if (args.command == CLI_WAIT_FREE)
				fuzz_check(args.domain && args.size_pages <= (1ULL << 38),
					   "wait-free with SIZE '%s' = %llu pages",
					   args.domain ? args.domain : "(none)",
					   (unsigned long long)args.size_pages);
		}
		fuzz_check(args.timeout_ms == -1 ||
			   (args.timeout_ms >= 0 && args.timeout_ms <= 7LL * 24 * 3600 * 1000),
			   "timeout %lld ms", (long long)args.timeout_ms);
	}
	rc = cli_args_parse(argc, argv, &again);
	fuzz_check(again.command == args.command && again.domain == args.domain &&
		   again.json == args.json && again.wait == args.wait &&
		   again.timeout_ms == args.timeout_ms && again.size_pages == args.size_pages && !strcmp(again.error, args.error),
		   "a second parse of the same line differs");
	free(buf);
	return 0;
}
