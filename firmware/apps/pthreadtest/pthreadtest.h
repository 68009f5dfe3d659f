/*
 * pthreadtest: what every check group shares (main.c). One file per group of primitives, as
 * Zephyr's tests/posix: threads.c, mutex.c, barrier.c, cond.c, timedlock.c, clocks.c, cancel.c,
 * once_keys.c, fallback.c, visibility.c, headers.c, rwlock.c.
 */
#ifndef PTHREADTEST_H
#define PTHREADTEST_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS   64
/* More than any port's thread slots (Zephyr's CONFIG_SUBUTAI_THREADS_MAX is at most 255). */
#define PROBE_THREADS 256
/* The stack of each of those threads where the port lets the test choose it (bare metal). */
#define PROBE_STACK   2048

/* Cores of the SoC, threads of the test (per core times cores), failed checks so far. */
extern unsigned int n_cores, n_threads;
extern int failures;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("  FAIL %s:%d: %s\n", __func__, __LINE__, #cond);                   \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

/* In other threads: the failures come back as the thread's return value. */
#define TCHECK(cond)                                                                               \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("  FAIL core %u %s:%d: %s\n", pthread_core_np(), __func__,          \
			       __LINE__, #cond);                                                   \
			fails++;                                                                   \
		}                                                                                  \
	} while (0)

/* "<group>: ok" if no check failed since before (failures then), else "<group>: FAILED". */
void report(const char *group, int before);
/* Join threads t[0..n-1]; the sum of their failure counts. */
int join_all(const pthread_t *t, unsigned int n);
/* Run fn in every thread of the test: the main thread is thread 0, the others are created. */
void run_all(void *(*fn)(void *));

/* A gate: threads wait at it (wait_at_gate(next_gate())) until the main thread opens it. */
void *wait_at_gate(void *arg);
void *next_gate(void);
void open_gate(void);

/* The check groups, in the order main() runs them. */
void test_threads(void);
void test_thread_errors(void);
void test_placement(unsigned int per_core);
void test_mutex(void);
void test_mutex_types(void);
void test_mutex_errors(void);
void test_barrier(void);
void test_cond(void);
void test_cond_errors(void);
void test_timedwait(void);
void test_timedlock(void);
void test_clocks_sleep(void);
void test_cancel(void);
void test_once_keys(void);
void test_fallback(void);
void test_visibility(void);
void test_headers(void);
void test_rwlock_spin(void);

#endif /* PTHREADTEST_H */
