/*
 * fuzz-intake: libFuzzer on request intake, through the daemon's real
 * reaper, worker pool and policy on the unit tests' fake store and
 * hypervisor (bed.c).  The input is a script of lines: mostly requests
 * NAME=VALUE written under /tool/xenreaper/request/, plus commands that
 * run the main loop, move time and change the domains between steps (see
 * bed.h).  The daemon is started first; at the end it settles and the bed
 * checks that no domain was destroyed without a request naming it with its
 * UUID (or its pool's policy), that dom0, the daemon's own and protected
 * domains lived, that every request was consumed (a refused one leaves a
 * failed job saying why), and that no job exists nobody asked for.  ASan
 * and LeakSanitizer see the rest.
 *
 * It does not fuzz the store or hypervisor themselves (they are doubles).
 */
#include "bed.h"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet_logs();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data, *end = text + size, *nl;
	struct bed *b = bed_new();

	bed_start(b);
	while (text < end) {
		nl = memchr(text, '\n', end - text);
		if (!nl)
			nl = end;
		bed_run_line(b, text, nl - text);
		text = nl + 1;
	}
	bed_finish(b);
	bed_free(b);
	return 0;
}
