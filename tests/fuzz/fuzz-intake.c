/*
 * fuzz-intake: libFuzzer on request intake, through the daemon's real
 * reaper, teardown runner and policy on the unit tests' fake store and
 * hypervisor (script.c on tests/unit/bed.c).  The input is a script of
 * lines: mostly requests NAME=VALUE written under /tool/xenreaper/request/,
 * plus commands that run the main loop, move time and change the domains
 * between steps (see script.h).  The daemon is started first; at the end
 * it settles and script.c checks that no domain was destroyed without a
 * request naming it with its UUID (or its pool's policy), that dom0, the
 * daemon's own and protected domains lived, that every request was
 * consumed (a refused one leaves a failed job saying why), and that no job
 * exists nobody asked for.  ASan and LeakSanitizer see the rest.
 *
 * It does not fuzz the store or hypervisor themselves (they are doubles).
 */
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
	const char *text = (const char *)data, *end = text + size, *nl;
	struct script *s = script_new();

	script_start(s);
	while (text < end) {
		nl = memchr(text, '\n', end - text);
		if (!nl)
			nl = end;
		script_run_line(s, text, nl - text);
		text = nl + 1;
	}
	script_finish(s);
	script_free(s);
	return 0;
}
