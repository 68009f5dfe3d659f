/* pthreadtest: what a thread that sleeps or yields in a polling loop sees (see main.c). */
#include "pthreadtest.h"

/* Plain shared memory, written by a thread of another core while the main thread polls it. */
static volatile unsigned int vis_flag;
static pthread_barrier_t vis_barrier;

#define VIS_BUSY 1
#define VIS_DONE 2

static uint64_t vis_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Writes the flag 50 us after the barrier, when the poller has read it into its cache. */
static void *vis_writer(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&vis_barrier);
	uint64_t at = vis_now_ns() + 50000;

	while (vis_now_ns() < at) {
	}
	vis_flag = VIS_DONE;
	return NULL;
}

static void poll_with(unsigned int how)
{
	static const struct timespec ten_us = {0, 10000};

	switch (how) {
	case 0:
		usleep(10);
		break;
	case 1:
		nanosleep(&ten_us, NULL);
		break;
	default:
		sched_yield();
		break;
	}
}

/*
 * The legacy idiom "while (flag == BUSY) usleep(...);": the poller sees the write once it has
 * slept or yielded (pthread.h, "Visibility"), with each of the calls; 5 ms is a hundred times
 * what the write takes to come.
 */
void test_visibility(void)
{
	int before = failures;
	pthread_attr_t other;

	CHECK(pthread_attr_init(&other) == 0);
	CHECK(pthread_attr_setcore_np(&other, (int)n_cores - 1) == 0);
	for (unsigned int how = 0; how < 3; how++) {
		pthread_t t;

		vis_flag = VIS_BUSY;
		CHECK(pthread_barrier_init(&vis_barrier, NULL, 2) == 0);
		CHECK(pthread_create(&t, &other, vis_writer, NULL) == 0);
		pthread_barrier_wait(&vis_barrier);
		uint64_t give_up = vis_now_ns() + 5000000;

		while (vis_flag == VIS_BUSY && vis_now_ns() < give_up) {
			poll_with(how);
		}
		CHECK(vis_flag == VIS_DONE);
		CHECK(pthread_join(t, NULL) == 0);
		CHECK(pthread_barrier_destroy(&vis_barrier) == 0);
	}
	CHECK(pthread_attr_destroy(&other) == 0);
	report("visibility", before);
}
