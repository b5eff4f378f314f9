/*
 * fuzz-resume: libFuzzer on what a restarted daemon reads back: job nodes
 * left under /tool/xenreaper/job/ by an earlier run, which job_load()
 * parses for each domid reaper_start() finds.  The input's lines up to one
 * reading "@start" are NODE=VALUE, written as /tool/xenreaper/job/NODE
 * (e.g. "5/state=destroying"); then the daemon starts, and the lines after
 * it are a script.h script (requests, main loop steps).  At the end the same
 * checks as fuzz-intake hold, where a job node read back in an active
 * state with a domain's UUID counts as that domain's request: an
 * unreadable or finished job must never lead to a destroy.
 *
 * It does not fuzz the store or hypervisor themselves (they are doubles).
 */
#include <stdbool.h>

#include "fuzz.h"
#include "holders.h"
#include "script.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet_logs();
	/* Zombies' held-by would read every process in /proc: a directory
	 * without process entries keeps runs fast and alike. */
	holders_set_proc_root("/");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data, *end = text + size, *nl, *eq;
	struct script *s = script_new();
	bool started = false;
	unsigned planted = 0;

	while (text < end) {
		nl = memchr(text, '\n', end - text);
		if (!nl)
			nl = end;
		if (started) {
			script_run_line(s, text, nl - text);
		} else if (nl - text == 6 && !memcmp(text, "@start", 6)) {
			script_start(s);
			started = true;
		} else if ((eq = memchr(text, '=', nl - text)) && planted++ < SCRIPT_MAX_LINES) {
			char *node = fuzz_string((const uint8_t *)text, eq - text);
			char *value = fuzz_string((const uint8_t *)eq + 1, nl - eq - 1);

			script_plant_job_node(s, node, value);
			free(node);
			free(value);
		}
		text = nl + 1;
	}
	if (!started)
		script_start(s);
	script_finish(s);
	script_free(s);
	return 0;
}
