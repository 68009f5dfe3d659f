/*
 * Host port of the benchmark harness (gcc and glibc's pthreads): the reference the simulated
 * SoC's results are checked against. Arguments are the program's; without any, it gets
 * "-t <online CPUs>". Times are nanoseconds of the monotonic clock.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

uint64_t bench_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint32_t bench_clock32(void)
{
	return (uint32_t)bench_clock();
}

int main(int argc, char **argv)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	const struct bench_platform platform = {
		.backend = "glibc",
		.unit = "ns",
		.cores = cpus > 0 ? (unsigned int)cpus : 1,
	};
	char threads[12];
	char *default_argv[] = {argv[0], "-t", threads, NULL};

	if (argc > 1) {
		return bench_main(&platform, argc, argv);
	}
	snprintf(threads, sizeof(threads), "%u", platform.cores);
	return bench_main(&platform, 3, default_argv);
}
