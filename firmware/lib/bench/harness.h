/*
 * Benchmark harness: runs an unmodified PThreads program (its main renamed app_main at compile
 * time) and reports its cycles and synchronization events as "@subutai {json}" lines.
 *
 * The program's pthread calls reach the harness through the linker's --wrap (options in
 * pthread-wrap.rsp): each call is counted and timed, then passed on to the real implementation.
 * A port (port_*.c) supplies the platform: its main(), a clock and the names it reports.
 */
#ifndef BENCH_HARNESS_H
#define BENCH_HARNESS_H

#include <stdint.h>

/* The port's platform. */
struct bench_platform {
	const char
		*backend; /* implementation of the pthread objects: "subutai", "swonly", "glibc" */
	const char *unit; /* unit of bench_clock(): "cycles" or "ns" */
	unsigned int cores; /* cores of the machine (tiles of the SoC) */
};

/* Monotonic time, the same on every core; its low 32 bits, cheaper to read where the port can,
 * time single calls.
 */
uint64_t bench_clock(void);
uint32_t bench_clock32(void);

/*
 * Run the program with argv (argv[0] is the program's name) and print the report (a program of
 * one's own's also when it ends by exit(), BENCH_OWN_PROGRAM); returns the program's exit code.
 */
int bench_main(const struct bench_platform *platform, int argc, char **argv);

/* The program's main, renamed. */
int app_main(int argc, char **argv);

#endif /* BENCH_HARNESS_H */
