/*
 * Rounds of a barrier, checked, for the barrier-policy tests (tests/test_tidon.py): one thread per
 * core (-t, default 4) meets at one barrier for ROUNDS rounds. Before each wait a thread counts
 * its arrival in the round; after it, it checks that every thread had arrived (no thread was
 * released early) and counts PTHREAD_BARRIER_SERIAL_THREAD. Each round must release every waiter
 * exactly once: all threads pass every round, and exactly one of them is the serial thread.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS      300
#define THREADS_MAX 16

static pthread_barrier_t barrier;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int arrivals[ROUNDS]; /* under lock */
static int serial[ROUNDS];   /* under lock */
static int passed[ROUNDS];   /* under lock */
static int early;            /* under lock: releases before every thread arrived */
static int nthreads = 4;

static void *worker(void *arg)
{
	(void)arg;
	for (int r = 0; r < ROUNDS; r++) {
		pthread_mutex_lock(&lock);
		arrivals[r]++;
		pthread_mutex_unlock(&lock);
		int ret = pthread_barrier_wait(&barrier);

		pthread_mutex_lock(&lock);
		if (arrivals[r] != nthreads) {
			early++;
		}
		passed[r]++;
		serial[r] += ret == PTHREAD_BARRIER_SERIAL_THREAD;
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t threads[THREADS_MAX];
	int wrong = 0;

	for (int k = 1; k + 1 < argc; k++) {
		if (strcmp(argv[k], "-t") == 0) {
			nthreads = atoi(argv[k + 1]);
		}
	}
	if (nthreads < 1 || nthreads > THREADS_MAX) {
		printf("barrier_rounds: -t %d: 1 to %d threads\n", nthreads, THREADS_MAX);
		return 2;
	}
	pthread_barrier_init(&barrier, NULL, nthreads);
	for (int k = 1; k < nthreads; k++) {
		if (pthread_create(&threads[k], NULL, worker, NULL) != 0) {
			printf("barrier_rounds: pthread_create failed\n");
			return 1;
		}
	}
	worker(NULL);
	for (int k = 1; k < nthreads; k++) {
		pthread_join(threads[k], NULL);
	}
	for (int r = 0; r < ROUNDS; r++) {
		wrong += passed[r] != nthreads || serial[r] != 1;
	}
	printf("barrier_rounds: %d threads, %d rounds, %d wrong, %d early\n", nthreads, ROUNDS,
	       wrong, early);
	return wrong || early ? 1 : 0;
}
