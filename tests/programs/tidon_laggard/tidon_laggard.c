/*
 * A laggard preempted on its waiting sibling's core, for the barrier tests (tests/test_tidon.py;
 * seed 002, Tidon). Three threads share core 1: a waiter and a laggard that meet at a barrier of
 * two every round, and a spinner that takes no part in it (it stands for another application).
 * Each round the waiter arrives while the laggard still has several timeslots of work, done in
 * short steps; the laggard notes when it first runs after the waiter's arrival, at its first
 * reading of the clock. The waiter notes its arrival just before it calls the barrier, at the
 * beginning of a timeslot of its own: a slot's end between the note and the call (about 1,000
 * cycles, a tenth of a 100 us slot) would delay the arrival itself, which no barrier policy can
 * act on. Under
 * Tidon the waiter donates its core to the laggard at once; under the other policies the laggard
 * waits for the round-robin to come back to it, behind the spinner.
 *
 * Prints the largest wait of the laggard, from the waiter's arrival to its next step, in ns.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define ROUNDS     12
#define STEP_NS    5000   /* one step of the laggard's work */
#define WORK_NS    300000 /* the laggard's work per round: three 100 us timeslots */
#define WORK_CORE  1
#define RESUMED_NS 20000 /* a gap this long between two readings of the clock: preempted */

static pthread_barrier_t barrier;
static volatile int64_t arrived_ns;     /* the waiter's arrival this round, 0 before */
static volatile int64_t first_after_ns; /* the laggard's first step after it, 0 before */
static volatile int done;
static int64_t gaps[ROUNDS];

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Spins for ns; the laggard (note) notes its first reading of the clock after the arrival. */
static void busy_ns(int64_t ns, int note)
{
	int64_t end = now_ns() + ns;

	for (;;) {
		int arrived =
			arrived_ns != 0; /* read before the clock: a reading after the arrival */
		int64_t now = now_ns();

		if (note && arrived && first_after_ns == 0) {
			first_after_ns = now;
		}
		if (now >= end) {
			return;
		}
	}
}

/* Returns at the beginning of a timeslot of the caller's: once it has been preempted. */
static void until_resumed(void)
{
	int64_t last = now_ns();

	for (;;) {
		int64_t now = now_ns();

		if (now - last > RESUMED_NS) {
			return;
		}
		last = now;
	}
}

static void *laggard(void *arg)
{
	int64_t *gap = arg;

	for (int r = 0; r < ROUNDS; r++) {
		for (int64_t worked = 0; worked < WORK_NS; worked += STEP_NS) {
			busy_ns(STEP_NS, 1);
		}
		/* From the second round on: the laggard has waited at the barrier before (its
		 * participation is what makes it the waiter's sibling). */
		gaps[r] = first_after_ns != 0 ? first_after_ns - arrived_ns : -1;
		if (r > 0 && first_after_ns != 0 && first_after_ns - arrived_ns > *gap) {
			*gap = first_after_ns - arrived_ns;
		}
		pthread_barrier_wait(&barrier);
		arrived_ns = 0;
		first_after_ns = 0;
		pthread_barrier_wait(
			&barrier); /* the waiter's next arrival comes after the reset */
	}
	return NULL;
}

static void *waiter(void *arg)
{
	(void)arg;
	for (int r = 0; r < ROUNDS; r++) {
		until_resumed();
		arrived_ns = now_ns();
		pthread_barrier_wait(&barrier);
		pthread_barrier_wait(&barrier);
	}
	return NULL;
}

static void *spinner(void *arg)
{
	(void)arg;
	while (!done) {
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t threads[3];
	void *(*const start[3])(void *) = {spinner, laggard, waiter};
	int64_t gap = 0;
	pthread_attr_t attr;

	(void)argc;
	(void)argv;
	pthread_barrier_init(&barrier, NULL, 2);
	pthread_attr_init(&attr);
	pthread_attr_setcore_np(&attr, WORK_CORE);
	for (int k = 0; k < 3; k++) {
		if (pthread_create(&threads[k], &attr, start[k], k == 1 ? &gap : NULL) != 0) {
			printf("tidon_laggard: pthread_create failed\n");
			return 1;
		}
	}
	pthread_join(threads[2], NULL);
	pthread_join(threads[1], NULL);
	done = 1;
	pthread_join(threads[0], NULL);
	printf("tidon_laggard: waits (ns)");
	for (int r = 0; r < ROUNDS; r++) {
		printf(" %lld", (long long)gaps[r]);
	}
	printf("\ntidon_laggard: %d rounds, largest wait %lld ns\n", ROUNDS, (long long)gap);
	return 0;
}
