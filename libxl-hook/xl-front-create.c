/*
 * xl-front-create: the front's reading of an `xl create` line, as xl
 * 4.17's main_create reads it, to learn whether xl will build a guest and
 * from which configuration: the first word if it is neither an option nor
 * key=value, else -f/--defconfig or the first bare word after the
 * options; every key=value word, appended to the file's text; and the
 * options that build nothing (-n/--dryrun, -h/--help) or that xl refuses.
 * xl's options are read with getopt_long in REQUIRE_ORDER, as xl's are:
 * its global "+vftTN" parse leaves glibc in that mode, so `xl create cfg
 * a=1 -p` is a usage error to xl, and is left to xl here too.  The
 * front's own --wait-memory-timeout (anywhere after the command, before a
 * "--") is taken out; every other word goes to the real xl as it was.
 * This file reads no files and prints nothing.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "progress.h"
#include "xl-front-create.h"

static int xl_front_create_usage(struct xl_front_create *c, const char *value)
{
	snprintf(c->error, sizeof(c->error),
		 XL_FRONT_CREATE_OPTION " needs a number of seconds (e.g. 120 or 2.5, at most 7 days; 0: do not wait), not '%s'",
		 value ? value : "(nothing)");
	c->plan = XL_FRONT_CREATE_USAGE;
	return -EINVAL;
}

static void xl_front_create_pass(struct xl_front_create *c, const char *why)
{
	c->plan = XL_FRONT_CREATE_PASS;
	c->why = why;
}

/* Append WORD and "\n" to C->extra. */
static int xl_front_create_extra(struct xl_front_create *c, const char *word)
{
	size_t used = c->extra ? strlen(c->extra) : 0, n = strlen(word);
	char *bigger = realloc(c->extra, used + n + 2);

	if (!bigger)
		return -ENOMEM;
	memcpy(bigger + used, word, n);
	bigger[used + n] = '\n';
	bigger[used + n + 1] = '\0';
	c->extra = bigger;
	return 0;
}

/* Take --wait-memory-timeout out of ARGV into C->argv and C->timeout_ms. */
static int xl_front_create_strip(int argc, char **argv, int command, struct xl_front_create *c)
{
	size_t len = strlen(XL_FRONT_CREATE_OPTION);
	bool dashdash = false;
	const char *value;

	c->argv = calloc(argc + 1, sizeof(*c->argv));
	if (!c->argv)
		return -ENOMEM;
	for (int i = 0; i < argc; i++) {
		if (i > command && !dashdash && !strcmp(argv[i], "--"))
			dashdash = true;
		if (i <= command || dashdash || strncmp(argv[i], XL_FRONT_CREATE_OPTION, len) ||
		    (argv[i][len] != '\0' && argv[i][len] != '=')) {
			c->argv[c->argc++] = argv[i];
			continue;
		}
		if (argv[i][len] == '=')
			value = argv[i] + len + 1;
		else
			value = ++i < argc ? argv[i] : NULL;
		if (!value || progress_parse_seconds(value, &c->timeout_ms))
			return xl_front_create_usage(c, value);
	}
	c->argv[c->argc] = NULL;
	return 0;
}

int xl_front_create_parse(int argc, char **argv, int command, const char *env_timeout,
			  struct xl_front_create *c)
{
	static const struct option longopts[] = {	/* xl 4.17's, with COMMON_LONG_OPTS */
		{ "defconfig", 1, 0, 'f' },
		{ "dryrun", 0, 0, 'n' },
		{ "ignore-global-affinity-masks", 0, 0, 'i' },
		{ "quiet", 0, 0, 'q' },
		{ "vncviewer", 0, 0, 'V' },
		{ "vncviewer-autopass", 0, 0, 'A' },
		{ "help", 0, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	char **sub = NULL;
	int subc, opt, rc;

	memset(c, 0, sizeof(*c));
	c->plan = XL_FRONT_CREATE_CHECK;
	c->timeout_ms = XL_FRONT_CREATE_TIMEOUT_MS;
	if (env_timeout && env_timeout[0] && progress_parse_seconds(env_timeout, &c->timeout_ms)) {
		snprintf(c->error, sizeof(c->error),
			 XL_FRONT_CREATE_ENV "='%s' is not a number of seconds (e.g. 120 or 2.5, at most 7 days; 0: do not wait)",
			 env_timeout);
		c->plan = XL_FRONT_CREATE_USAGE;
		return -EINVAL;
	}
	rc = xl_front_create_strip(argc, argv, command, c);
	if (rc)
		return rc;
	if (c->timeout_ms == 0) {
		xl_front_create_pass(c, "waiting for memory is switched off (" XL_FRONT_CREATE_OPTION " 0)");
		return 0;
	}

	/* main_create: argv[0] is the command; getopt_long permutes what it
	 * is given, so it gets a copy. */
	subc = c->argc - command;
	sub = calloc(subc + 1, sizeof(*sub));
	if (!sub)
		return -ENOMEM;
	memcpy(sub, c->argv + command, subc * sizeof(*sub));
	{
		char **av = sub;
		int ac = subc;

		if (av[1] && av[1][0] != '-' && !strchr(av[1], '=')) {
			c->config_file = av[1];
			ac--;
			av++;
		}
		optind = 0;	/* glibc: start afresh */
		opterr = 0;
		while ((opt = getopt_long(ac, av, "+hAFVcdef:inpq", longopts, NULL)) != -1) {
			switch (opt) {
			case 'f':
				c->config_file = optarg;
				break;
			case 'n':
				xl_front_create_pass(c, "a dry run creates nothing");
				goto out;
			case 'h':
				xl_front_create_pass(c, "help");
				goto out;
			case '?':
				xl_front_create_pass(c, "xl refuses one of the options");
				goto out;
			default:
				break;	/* -p, -e, -c, ... build the guest all the same */
			}
		}
		for (; optind < ac; optind++) {
			if (strchr(av[optind], '=')) {
				rc = xl_front_create_extra(c, av[optind]);
				if (rc)
					goto out;
			} else if (!c->config_file) {
				c->config_file = av[optind];
			} else {
				xl_front_create_pass(c, "xl prints its usage for a second config file");
				goto out;
			}
		}
	}
	if (!c->config_file)
		xl_front_create_pass(c, "no config file (xl says so)");
	rc = 0;
out:
	free(sub);
	return rc;
}

void xl_front_create_free(struct xl_front_create *c)
{
	free(c->extra);
	free(c->argv);
	c->extra = NULL;
	c->argv = NULL;
}

int xl_front_create_text(const char *data, size_t len, const char *extra, char **out,
			 size_t *out_len)
{
	size_t n = extra ? strlen(extra) : 0, total = len + (n ? n + 2 : 0);
	char *text = malloc(total + 1);

	if (!text)
		return -ENOMEM;
	if (len)
		memcpy(text, data, len);
	if (n) {
		text[len] = '\n';
		memcpy(text + len + 1, extra, n);
		text[len + 1 + n] = '\n';
	}
	text[total] = '\0';
	*out = text;
	*out_len = total;
	return 0;
}
