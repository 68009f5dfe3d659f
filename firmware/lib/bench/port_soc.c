/*
 * Port of the benchmark harness to the Subutai SoC, bare metal and Zephyr alike: the program runs
 * as the main thread on core 0 with "-t <tiles>" followed by the build's arguments (BENCH_ARGS:
 * ARGS=... of the firmware Makefile, PROGRAM_ARGS of zephyr-app/apps/program), so it uses every
 * core of the SoC; times are cycles of the SoC's global counter. Under Zephyr this main is
 * renamed subutai_app_main at compile time, as any application's.
 *
 * A program of one's own (PROGRAM_DIR; built with BENCH_OWN_PROGRAM) gets exactly its user's
 * arguments instead, split as a shell splits them (subutai/args.h), and no "-t": it learns the
 * core count, if it wants it, from sysconf(_SC_NPROCESSORS_ONLN). The project's programs keep
 * the code above, which the images their figures were measured on hold.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <subutai/soc.h>

#include "harness.h"

#ifndef BENCH_PROGRAM
#error "BENCH_PROGRAM (the program's name) must be defined"
#endif
#ifndef BENCH_ARGS
#define BENCH_ARGS ""
#endif

#define BENCH_MAX_ARGS 32

uint64_t bench_clock(void)
{
	return subutai_cycles();
}

uint32_t bench_clock32(void)
{
	return subutai_cycles32();
}

#ifdef BENCH_OWN_PROGRAM
#include <subutai/args.h>

int main(void)
{
	static char name[] = BENCH_PROGRAM;
	static char *argv[1 + SUBUTAI_PROGRAM_ARGS_MAX + 1] = {name};
	int argc = 1;
	const struct bench_platform platform = {
		.backend = pthread_backend_np,
		.unit = "cycles",
		.cores = subutai_num_tiles(),
	};

	for (unsigned int i = 0; i < subutai_program_argc; i++) {
		argv[argc++] = subutai_program_args[i];
	}
	argv[argc] = NULL;
	return bench_main(&platform, argc, argv);
}
#else
int main(void)
{
	static char args[] = BENCH_ARGS;
	static char threads[12];
	static char *argv[BENCH_MAX_ARGS + 1] = {BENCH_PROGRAM, "-t", threads};
	int argc = 3;
	const struct bench_platform platform = {
		.backend = pthread_backend_np,
		.unit = "cycles",
		.cores = subutai_num_tiles(),
	};

	snprintf(threads, sizeof(threads), "%u", subutai_num_tiles());
	char *save;

	for (char *arg = strtok_r(args, " ", &save); arg != NULL;
	     arg = strtok_r(NULL, " ", &save)) {
		if (argc == BENCH_MAX_ARGS) {
			printf("bench: more than %d arguments in ARGS\n", BENCH_MAX_ARGS - 3);
			return 2;
		}
		argv[argc++] = arg;
	}
	return bench_main(&platform, argc, argv);
}
#endif /* BENCH_OWN_PROGRAM */
