/* pthreadtest: barrier (see main.c). */
#include "pthreadtest.h"

/* Barriers: in every round each thread writes its slot and reads everyone's. */

#define BARRIER_ROUNDS 6

static pthread_barrier_t barrier;
static unsigned int serial_count[BARRIER_ROUNDS];
static unsigned int arrivals[BARRIER_ROUNDS][MAX_THREADS];

static void *barrier_rounds(void *arg)
{
	unsigned int me = (uintptr_t)arg;
	int fails = 0;

	for (unsigned int r = 0; r < BARRIER_ROUNDS; r++) {
		arrivals[r][me] = r * 1000 + me;
		int ret = pthread_barrier_wait(&barrier);

		TCHECK(ret == 0 || ret == PTHREAD_BARRIER_SERIAL_THREAD);
		/* Every thread's write before the barrier is visible after it. */
		for (unsigned int i = 0; i < n_threads; i++) {
			TCHECK(arrivals[r][i] == r * 1000 + i);
		}
		if (ret == PTHREAD_BARRIER_SERIAL_THREAD) {
			serial_count[r]++;
		}
		/* The serial thread's count is in memory before anyone reads it. */
		pthread_barrier_wait(&barrier);
	}
	return (void *)(intptr_t)fails;
}

void test_barrier(void)
{
	int before = failures;

	CHECK(pthread_barrier_init(&barrier, NULL, n_threads) == 0);
	run_all(barrier_rounds);
	for (unsigned int r = 0; r < BARRIER_ROUNDS; r++) {
		CHECK(serial_count[r] == 1);
	}
	CHECK(pthread_barrier_destroy(&barrier) == 0);
	CHECK(pthread_barrier_destroy(&barrier) == EINVAL);
	CHECK(pthread_barrier_wait(&barrier) == EINVAL);
	CHECK(pthread_barrier_init(&barrier, NULL, 0) == EINVAL);
	printf("barrier: %u rounds of %u threads\n", (unsigned int)BARRIER_ROUNDS, n_threads);
	report("barrier", before);
}
