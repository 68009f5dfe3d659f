/*
 * pthreadtest: what <time.h>, <sched.h> and <limits.h> give a program that does not include
 * <pthread.h> (see main.c). This file includes no other header of the test or the library, so a
 * name missing from them fails its build.
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>

extern unsigned int n_cores;
extern int failures;
void report(const char *group, int before);

#define HCHECK(cond)                                                                               \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("  FAIL %s:%d: %s\n", __func__, __LINE__, #cond);                   \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

void test_headers(void)
{
	int before = failures;
	struct timespec now, res;
	const struct timespec one_us = {0, 1000};

	HCHECK(clock_gettime(CLOCK_MONOTONIC, &now) == 0);
	HCHECK(clock_gettime(CLOCK_REALTIME, &now) == 0);
	HCHECK(clock_getres(CLOCK_MONOTONIC, &res) == 0 && res.tv_sec == 0 && res.tv_nsec > 0);
	HCHECK(nanosleep(&one_us, NULL) == 0);
	HCHECK(sched_yield() == 0);
	/* POSIX's minimums: _POSIX_THREAD_KEYS_MAX, _POSIX_THREAD_DESTRUCTOR_ITERATIONS. */
	HCHECK(PTHREAD_KEYS_MAX >= 128 && PTHREAD_DESTRUCTOR_ITERATIONS >= 4);
	HCHECK(PTHREAD_THREADS_MAX >= n_cores && PTHREAD_STACK_MIN > 0);
	report("headers", before);
}
