/*
 * xl-front-args: the front's command-line classifier.  xl's own global
 * options come first (xl's main() takes them with getopt "+vftTN"), then
 * the subcommand, which xl also accepts abbreviated to any prefix no
 * other command shares.  `destroy` with -a/--async is the front's, and
 * its options are read anywhere on the line, clustered, up to "--";
 * `create` (unless -N asks for a dry run) is marked for a look at its
 * memory before it goes on (xl-front-create.c reads the rest of that
 * line).  Every other line, including ones the real xl will reject, is
 * left to the real xl, so its errors stay its own.  This file does not
 * look at the domain, the environment or the system.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "xl-front-args.h"

#define XL_FRONT_ACCEPTED "accepted: -a/--async, -w/--wait, -f, -h/--help"

static int xl_front_usage(struct xl_front_args *args, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int xl_front_usage(struct xl_front_args *args, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(args->error, sizeof(args->error), fmt, ap);
	va_end(ap);
	args->mode = XL_FRONT_USAGE;
	args->domain = NULL;
	return -EINVAL;
}

/* Whether WORD names xl's command NAME: NAME itself, or a prefix of it at
 * least MIN long (the shortest no other command of xl 4.17 shares). */
static int xl_front_is_command(const char *word, const char *name, size_t min)
{
	size_t len = strlen(word);

	return len >= min && !strncmp(word, name, len);
}

static int xl_front_is_option(const char *arg)
{
	return arg[0] == '-' && arg[1] != '\0';
}

/* Whether destroy's arguments from FIRST on ask for --async. */
static int xl_front_wants_async(int first, int argc, char **argv)
{
	for (int i = first; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--async"))
			return 1;
		if (xl_front_is_option(argv[i]) && argv[i][1] != '-' && strchr(argv[i] + 1, 'a'))
			return 1;
	}
	return 0;
}

int xl_front_parse(int argc, char **argv, struct xl_front_args *args)
{
	int i, dashdash = 0, help = 0, dryrun = 0;

	memset(args, 0, sizeof(*args));
	args->mode = XL_FRONT_PASS;
	for (i = 1; i < argc && xl_front_is_option(argv[i]); i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		}
		if (argv[i][1] == '-')
			return 0;	/* xl has no long global options: its error */
		for (const char *c = argv[i] + 1; *c; c++) {
			switch (*c) {
			case 'v':
				args->verbose = true;
				break;
			case 'f':
				args->force = true;
				break;
			case 't':
			case 'T':
				break;
			case 'N':
				dryrun = 1;
				break;
			default:
				return 0;	/* unknown: xl's business */
			}
		}
	}
	if (i >= argc || dryrun)
		return 0;	/* a dry run creates nothing and destroys nothing */
	if (xl_front_is_command(argv[i], "create", 2)) {
		args->mode = XL_FRONT_CREATE;
		args->command = i;
		return 0;
	}
	if (!xl_front_is_command(argv[i], "destroy", 3) || !xl_front_wants_async(i + 1, argc, argv))
		return 0;
	for (i++; i < argc; i++) {
		const char *arg = argv[i];

		if (!dashdash && !strcmp(arg, "--")) {
			dashdash = 1;
			continue;
		}
		if (dashdash || !xl_front_is_option(arg)) {
			if (args->domain)
				return xl_front_usage(args,
						      "unexpected argument '%s' after DOMAIN '%s': destroy --async takes one DOMAIN",
						      arg, args->domain);
			args->domain = arg;
			continue;
		}
		if (arg[1] == '-') {
			if (!strcmp(arg, "--async"))
				continue;
			else if (!strcmp(arg, "--wait"))
				args->wait = true;
			else if (!strcmp(arg, "--help"))
				help = 1;
			else
				return xl_front_usage(args, "unknown option '%s' for destroy --async ("
						      XL_FRONT_ACCEPTED ")", arg);
			continue;
		}
		for (const char *c = arg + 1; *c; c++) {
			switch (*c) {
			case 'a':
				break;
			case 'w':
				args->wait = true;
				break;
			case 'f':
				args->force = true;
				break;
			case 'h':
				help = 1;
				break;
			default:
				return xl_front_usage(args, "unknown option '-%c' in '%s' for destroy --async ("
						      XL_FRONT_ACCEPTED ")", *c, arg);
			}
		}
	}
	if (help) {
		args->mode = XL_FRONT_HELP;
		return 0;
	}
	if (!args->domain)
		return xl_front_usage(args, "destroy --async needs a DOMAIN (a domid or a domain name)");
	args->mode = XL_FRONT_ASYNC;
	return 0;
}
