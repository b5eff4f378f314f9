/*
 * cli-args: the `xenreaper` command-line parser.  Options may come before
 * or after the command, "--" ends them, and each command's rules (which
 * need a DOMAIN, which take --wait or --timeout) are checked here, so that
 * the CLI only acts on a line that makes sense.  It writes nothing: a
 * usage error is a sentence in the struct that the caller prints.  It does
 * not interpret DOMAIN beyond refusing an empty one (libxenreaper and
 * cli-target tell a domid from a name), and it reads no environment.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli-args.h"
#include "progress.h"

#define CLI_COMMANDS "list, status, wait, destroy, wait-free, top"
#define CLI_OPTIONS "--json, --help, --version; destroy: --wait; wait, destroy --wait and wait-free: --timeout SECONDS"

static int cli_args_bad(struct cli_args *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int cli_args_bad(struct cli_args *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->error, sizeof(c->error), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int cli_args_timeout(struct cli_args *c, const char *text)
{
	if (progress_parse_seconds(text, &c->timeout_ms))
		return cli_args_bad(c, "--timeout needs a number of seconds (e.g. 30 or 2.5, at most 7 days), not '%s'",
				    text);
	return 0;
}

static const struct {
	const char *name;
	enum cli_command command;
} cli_args_commands[] = {
	{ "list", CLI_LIST },
	{ "status", CLI_STATUS },
	{ "wait", CLI_WAIT },
	{ "destroy", CLI_DESTROY },
	{ "wait-free", CLI_WAIT_FREE },
	{ "top", CLI_TOP },
};

/* The command NAME spells; CLI_NONE if it is not one. */
static enum cli_command cli_args_command(const char *name)
{
	for (size_t i = 0; i < sizeof(cli_args_commands) / sizeof(*cli_args_commands); i++)
		if (!strcmp(name, cli_args_commands[i].name))
			return cli_args_commands[i].command;
	return CLI_NONE;
}

/* Whether the words given suit COMMAND (NAME as the user spelled it). */
static int cli_args_check(struct cli_args *c, const char *name)
{
	switch (c->command) {
	case CLI_TOP:
		if (c->json)
			return cli_args_bad(c, "'top' has no --json (it is a live view): use 'xenreaper --json list'");
		if (c->domain)
			return cli_args_bad(c, "'top' takes no DOMAIN (got '%s'): it shows every teardown",
					    c->domain);
		if (c->wait || c->timeout_ms >= 0)
			return cli_args_bad(c, "--wait and --timeout do not apply to 'top' (it runs until q)");
		break;
	case CLI_LIST:
		if (c->domain)
			return cli_args_bad(c, "'list' takes no DOMAIN (got '%s'); try 'xenreaper status %s'",
					    c->domain, c->domain);
		/* fall through */
	case CLI_STATUS:
		if (c->wait || c->timeout_ms >= 0)
			return cli_args_bad(c, "--wait and --timeout do not apply to '%s'", name);
		break;
	case CLI_WAIT:
		if (!c->domain)
			return cli_args_bad(c, "'wait' needs a DOMAIN (a domid or a domain name)");
		if (c->wait)
			return cli_args_bad(c, "'wait' always waits: drop --wait");
		break;
	case CLI_DESTROY:
		if (!c->domain)
			return cli_args_bad(c, "'destroy' needs a DOMAIN (a domid or a domain name)");
		if (c->timeout_ms >= 0 && !c->wait)
			return cli_args_bad(c, "--timeout applies to 'destroy' only with --wait");
		break;
	case CLI_WAIT_FREE:
		if (!c->domain)
			return cli_args_bad(c, "'wait-free' needs a SIZE (e.g. 512M or 4G)");
		if (c->wait)
			return cli_args_bad(c, "'wait-free' always waits: drop --wait");
		switch (progress_parse_size(c->domain, &c->size_pages)) {
		case 0:
			return 0;
		case -ERANGE:
			return cli_args_bad(c, "SIZE '%s' is more memory than any host has (at most 1024T)",
					    c->domain);
		default:
			return cli_args_bad(c, "'%s' is not a SIZE: give a number and a binary unit, B, K, M, G or T "
					    "(1G = 1024M), e.g. 512M, 4G or 2.5G; a bare number is refused, "
					    "as it could mean bytes, KiB or MiB", c->domain);
		}
	case CLI_NONE:
		return cli_args_bad(c, "unknown command '%s' (commands: " CLI_COMMANDS ")", name);
	}
	if (c->domain && !c->domain[0])
		return cli_args_bad(c, "DOMAIN is empty: give a domid or a domain name");
	return 0;
}

int cli_args_parse(int argc, char **argv, struct cli_args *c)
{
	const char *name = NULL;
	bool dashdash = false;
	int rc;

	memset(c, 0, sizeof(*c));
	c->timeout_ms = -1;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];

		if (!dashdash && !strcmp(arg, "--")) {
			dashdash = true;
		} else if (dashdash || arg[0] != '-' || !arg[1]) {
			if (!name)
				name = arg;
			else if (!c->domain)
				c->domain = arg;
			else
				return cli_args_bad(c, "unexpected argument '%s' (commands take at most one DOMAIN)",
						    arg);
		} else if (!strcmp(arg, "--json")) {
			c->json = true;
		} else if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
			c->help = true;
		} else if (!strcmp(arg, "-V") || !strcmp(arg, "--version")) {
			c->version = true;
		} else if (!strcmp(arg, "-w") || !strcmp(arg, "--wait")) {
			c->wait = true;
		} else if (!strcmp(arg, "-t") || !strcmp(arg, "--timeout")) {
			if (++i == argc)
				return cli_args_bad(c, "%s needs a number of seconds", arg);
			rc = cli_args_timeout(c, argv[i]);
			if (rc)
				return rc;
		} else if (!strncmp(arg, "--timeout=", 10)) {
			rc = cli_args_timeout(c, arg + 10);
			if (rc)
				return rc;
		} else {
			return cli_args_bad(c, "unknown option '%s' (options: " CLI_OPTIONS ")", arg);
		}
	}
	if (c->help || c->version) {
		c->domain = NULL;
		return 0;
	}
	if (!name)
		return cli_args_bad(c, "no command given (commands: " CLI_COMMANDS ")");
	if (!strcmp(name, "help")) {
		c->help = true;
		c->domain = NULL;
		return 0;
	}
	c->command = cli_args_command(name);
	return cli_args_check(c, name);
}
