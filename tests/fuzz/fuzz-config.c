/*
 * fuzz-config: libFuzzer on the policy file parser, config_parse(), fed the
 * input as a file.  Beyond surviving it (no crash, leak or undefined
 * behaviour under ASan+UBSan), it checks what the parser promises:
 *
 *   - a file with a NUL byte in it is refused (a NUL would hide the rest
 *     of its line from the parser);
 *   - a refused file has at least one message, every message names the
 *     file and a line that exists and says what was expected (a line
 *     called too long is); an accepted file has none;
 *   - an accepted file printed by config_format() (what --check-config
 *     shows as "in effect") parses again, to the same text: nothing is
 *     lost or changed on the way round.
 *
 * It does not load files from disk, apply a policy or look at the daemon.
 */
#include <errno.h>

#include "config.h"
#include "fuzz.h"

#define FUZZ_NAME "fuzz.conf"

static FILE *fuzz_file(const char *text, size_t len)
{
	/* fmemopen() refuses an empty buffer; an empty file is a valid input. */
	static char empty[1];
	FILE *f = len ? fmemopen((void *)text, len, "r") : fmemopen(empty, 1, "r");

	if (!f)
		abort();
	if (!len)
		(void)getc(f);	/* at EOF: the file is empty */
	return f;
}

static unsigned count_lines(const uint8_t *data, size_t size)
{
	unsigned lines = 0;

	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	return lines + (size && data[size - 1] != '\n');
}

/* Length of line LINE (from 1) of DATA, without its newline. */
static size_t line_length(const uint8_t *data, size_t size, unsigned line)
{
	size_t start = 0, end;

	for (unsigned l = 1; l < line && start < size; start++)
		l += data[start] == '\n';
	for (end = start; end < size && data[end] != '\n'; end++)
		;
	return end - start;
}

static void check_errors(const uint8_t *data, size_t size, const struct config_errors *errs,
			 int rc, unsigned lines)
{
	const char *too_long;
	char prefix[64];

	if (rc == 0) {
		fuzz_check(errs->n == 0, "accepted with %zu messages, first '%s'", errs->n,
			   errs->v[0].text);
		return;
	}
	fuzz_check(rc == -EINVAL, "config_parse returned %d, want 0 or -EINVAL", rc);
	fuzz_check(errs->n > 0, "refused without a message");
	for (size_t i = 0; i < errs->n; i++) {
		const struct config_error *e = &errs->v[i];

		fuzz_check(e->line >= 1 && e->line <= lines, "message on line %u of a %u-line file: %s",
			   e->line, lines, e->text);
		snprintf(prefix, sizeof(prefix), FUZZ_NAME ":%u: ", e->line);
		fuzz_check(!strncmp(e->text, prefix, strlen(prefix)), "message without '%s': %s",
			   prefix, e->text);
		fuzz_check(strstr(e->text, "expected") != NULL, "message says nothing of what is expected: %s",
			   e->text);
		too_long = e->text + strlen(prefix);
		if (strncmp(too_long, "line is longer than ", strlen("line is longer than ")))
			continue;
		fuzz_check(line_length(data, size, e->line) >
			   strtoul(too_long + strlen("line is longer than "), NULL, 10),
			   "line %u is %zu bytes long, yet: %s", e->line,
			   line_length(data, size, e->line), e->text);
	}
}

/* The line at S, control characters as \xNN, into BUF (LEN). */
static const char *visible_line(const char *s, char *buf, size_t len)
{
	size_t o = 0;

	for (; *s && *s != '\n' && o + 5 < len; s++) {
		if ((unsigned char)*s < 0x20 && *s != '\t')
			o += snprintf(buf + o, len - o, "\\x%02x", (unsigned char)*s);
		else
			buf[o++] = *s;
	}
	buf[o] = '\0';
	return buf;
}

/* config_format(CFG) must read back to itself. */
static void check_round_trip(const struct config *cfg)
{
	struct config_errors errs = { 0 };
	struct config *again = NULL;
	char *text = NULL, *text_again = NULL;
	FILE *f;
	int rc;

	fuzz_check(config_format(cfg, &text) == 0, "config_format failed");
	f = fuzz_file(text, strlen(text));
	rc = config_parse(f, FUZZ_NAME, &again, &errs);
	fclose(f);
	fuzz_check(rc == 0, "config_format's output is refused (%s):\n%s",
		   errs.n ? errs.v[0].text : "no message", text);
	fuzz_check(config_format(again, &text_again) == 0, "config_format failed the second time");
	if (strcmp(text, text_again)) {
		const char *a = text, *b = text_again;
		char was[256], now[256];
		unsigned line = 1;

		for (; *a && *a == *b; a++, b++)
			if (*a == '\n')
				line++;
		while (a > text && a[-1] != '\n')
			a--, b--;
		fuzz_fail("config_format's output reads back differently from line %u: printed '%s', "
			  "read back as '%s'\n--- printed\n%s--- read back and printed again\n%s",
			  line, visible_line(a, was, sizeof(was)), visible_line(b, now, sizeof(now)),
			  text, text_again);
	}
	free(text);
	free(text_again);
	config_free(again);
	config_errors_clear(&errs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config_errors errs = { 0 };
	struct config *cfg = NULL;
	FILE *f;
	int rc;

	f = fuzz_file((const char *)data, size);
	rc = config_parse(f, FUZZ_NAME, &cfg, &errs);
	fclose(f);
	check_errors(data, size, &errs, rc, count_lines(data, size));
	/* A policy file is text: a NUL hides what follows it on its line. */
	fuzz_check(rc != 0 || !memchr(data, '\0', size), "a file with a NUL byte is accepted");
	if (rc == 0)
		check_round_trip(cfg);
	config_free(cfg);
	config_errors_clear(&errs);
	return 0;
}
