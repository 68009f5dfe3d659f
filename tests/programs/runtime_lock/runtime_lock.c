/*
 * Takers of the runtime's internal lock in two applications, for the scheduling tests
 * (tests/test_multi.py). Each thread (one a core, -t of them) sets up condition variables in a
 * loop: every round initializes one, waits on it with a deadline already past (the first wait
 * allocates it, under the library's runtime lock: an engine's allocation request with the
 * subutai backend, a block of the atomic unit with swonly) and destroys it. The threads never
 * sleep for long, so under a rotation of applications a core runs the slot's application's
 * thread and no other.
 *
 * A holder of the lock that lost its core at its timeslot's end would keep it until its own
 * application's next slot: every thread of the application whose slot begins would spin on the
 * lock for that whole slot, and its next round would end a whole slot later. Prints the largest
 * time between two consecutive ends of a round of one thread, in ns: about one timeslot of the
 * other application and a round when holders keep their cores, two timeslots and more when not.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROUNDS      400
#define THREADS_MAX 64

static int64_t largest_gap[THREADS_MAX];

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void *taker(void *arg)
{
	int64_t *gap = arg;
	pthread_mutex_t mutex;
	int64_t last = now_ns();

	pthread_mutex_init(&mutex, NULL);
	for (int round = 0; round < ROUNDS; round++) {
		pthread_cond_t cond;
		struct timespec past = {0, 0};

		pthread_cond_init(&cond, NULL);
		pthread_mutex_lock(&mutex);
		/* The first wait sets the condition up; the deadline is past, so it returns. */
		pthread_cond_timedwait(&cond, &mutex, &past);
		pthread_mutex_unlock(&mutex);
		pthread_cond_destroy(&cond);
		int64_t now = now_ns();

		if (now - last > *gap) {
			*gap = now - last;
		}
		last = now;
	}
	pthread_mutex_destroy(&mutex);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = 4;
	pthread_t thread[THREADS_MAX];

	for (int i = 1; i + 1 < argc; i++) {
		if (strcmp(argv[i], "-t") == 0) {
			threads = atoi(argv[i + 1]);
		}
	}
	if (threads < 1 || threads > THREADS_MAX) {
		printf("runtime_lock: -t %d: 1 to %d threads\n", threads, THREADS_MAX);
		return 2;
	}
	for (int k = 0; k < threads; k++) {
		if (pthread_create(&thread[k], NULL, taker, &largest_gap[k]) != 0) {
			printf("runtime_lock: pthread_create failed\n");
			return 1;
		}
	}
	int64_t largest = 0;

	for (int k = 0; k < threads; k++) {
		pthread_join(thread[k], NULL);
		if (largest_gap[k] > largest) {
			largest = largest_gap[k];
		}
	}
	printf("runtime_lock: %d threads, %d rounds, largest gap %lld ns\n", threads, ROUNDS,
	       (long long)largest);
	return 0;
}
