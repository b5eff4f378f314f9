/* under-test: the main() of the xenreaper CLI and of the xl front as the
 * test libraries rename them (Makefile.am), for tests/unit/test-libclient.c
 * to call with their output caught. */
#pragma once

int xenreaper_cli_main(int argc, char **argv);
int xl_front_main(int argc, char **argv);
