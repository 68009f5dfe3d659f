/*
 * One instance of a program in a set, compiled once per instance (MULTI_INDEX, BENCH_PROGRAM,
 * BENCH_ARGS, MULTI_THREADS) and linked with its own copy of the program and of the benchmark
 * harness (CMakeLists.txt), so every global of theirs is the instance's own. It is the harness's
 * port for the instance, and what the program's calls of printf(), exit() and pthread_create()
 * were renamed to at link time:
 *
 * - its output goes to a buffer the launcher prints once the set is over, each line marked with
 *   the instance (printing would otherwise hold the printing thread on the UART while the set
 *   runs, and two instances of one program print the same lines);
 * - exit() prints the buffer, then ends the whole run (one program's failure is the set's);
 * - the threads it creates without a core of their own are placed one per core, from the core
 *   after its main thread's: the instance's n threads on n tiles cover every core once, whatever
 *   the other instances create meanwhile (the library's round-robin is shared by all of them).
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <subutai/soc.h>

#include "harness.h"
#include "multi.h"

#if !defined(MULTI_INDEX) || !defined(BENCH_PROGRAM) || !defined(MULTI_THREADS)
#error "MULTI_INDEX, BENCH_PROGRAM and MULTI_THREADS must be defined"
#endif
#ifndef BENCH_ARGS
#define BENCH_ARGS ""
#endif
#ifndef MULTI_PLACEMENT
/* The instance its threads are placed as: an application's runs after the first, as the first. */
#define MULTI_PLACEMENT MULTI_INDEX
#endif

#define MULTI_MAX_ARGS    32
#define MULTI_OUTPUT_SIZE 4096
#define MULTI_CAT(a, b)   a##b
#define INSTANCE_NAME(k)  MULTI_CAT(multi_instance_, k)

static char output[MULTI_OUTPUT_SIZE];
static size_t output_len;
static pthread_mutex_t output_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned int placed; /* threads created, under output_lock */

uint64_t bench_clock(void)
{
	return subutai_cycles();
}

uint32_t bench_clock32(void)
{
	return subutai_cycles32();
}

int multi_printf(const char *format, ...)
{
	static const char truncated[] = "...(output truncated)\n";
	va_list ap;

	pthread_mutex_lock(&output_lock);
	size_t room = sizeof(output) - sizeof(truncated) - output_len;

	va_start(ap, format);
	int n = vsnprintf(output + output_len, room, format, ap);

	va_end(ap);
	if (n >= 0 && (size_t)n < room) {
		output_len += n;
	} else if (room > 0) {
		memcpy(output + sizeof(output) - sizeof(truncated), truncated, sizeof(truncated));
		output_len = sizeof(output) - 1;
	}
	pthread_mutex_unlock(&output_lock);
	return n;
}

void multi_exit(int status)
{
	printf("\n*** instance %u (%s) exits with %d; its output:\n%.*s\n", MULTI_INDEX,
	       BENCH_PROGRAM, status, (int)output_len, output);
	exit(status);
}

/* exit() of a C library whose exit() is an inline call of _exit(). */
void multi__exit(int status)
{
	multi_exit(status);
}

int multi_pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *),
			 void *arg)
{
	pthread_attr_t placed_attr;
	int core = -1;

	if (attr != NULL) {
		placed_attr = *attr;
		pthread_attr_getcore_np(attr, &core);
	} else {
		pthread_attr_init(&placed_attr);
	}
	if (core < 0) {
		pthread_mutex_lock(&output_lock);
		core = (MULTI_PLACEMENT + 1 + placed++) % subutai_num_tiles();
		pthread_mutex_unlock(&output_lock);
		pthread_attr_setcore_np(&placed_attr, core);
	}
	return pthread_create(thread, &placed_attr, start, arg);
}

static int instance_main(void)
{
	static char args[] = BENCH_ARGS;
	static char threads[12];
	static char *argv[MULTI_MAX_ARGS + 1] = {BENCH_PROGRAM, "-t", threads};
	int argc = 3;
	const struct bench_platform platform = {
		.backend = pthread_backend_np,
		.unit = "cycles",
		.cores = subutai_num_tiles(),
	};

	snprintf(threads, sizeof(threads), "%u", MULTI_THREADS);
	char *save;

	for (char *arg = strtok_r(args, " ", &save); arg != NULL;
	     arg = strtok_r(NULL, " ", &save)) {
		if (argc == MULTI_MAX_ARGS) {
			multi_printf("multi: more than %d arguments\n", MULTI_MAX_ARGS - 3);
			return 2;
		}
		argv[argc++] = arg;
	}
	return bench_main(&platform, argc, argv);
}

const struct multi_instance INSTANCE_NAME(MULTI_INDEX) = {
	.program = BENCH_PROGRAM,
	.threads = MULTI_THREADS,
	.main = instance_main,
	.output = output,
	.output_len = &output_len,
};
