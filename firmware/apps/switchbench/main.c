/*
 * switchbench: what it costs to hand a core from one thread to another, under either runtime
 * (bare metal: the user-level threads of port/baremetal/ult.c; Zephyr: its kernel threads, built
 * with zephyr-app/apps/program, PROGRAM=switchbench). Every thread of a measurement is pinned on
 * the last core, which runs nothing else:
 *
 *   yield    T threads call sched_yield() ROUNDS times each, round-robin: cycles per yield, a
 *            switch to the next thread included (and the data-cache invalidation sched_yield()
 *            does, pthread.h);
 *   handoff  two threads take turns through a mutex and a condition variable (the classic
 *            ping-pong): cycles per turn, the signal, the waiter made ready and the switch to
 *            it, the wait of the other included.
 *
 * One line per measurement: @subutai {"program":"switchbench","backend":...,"what":...,
 * "threads":T,"count":...,"cycles":per yield or turn}.
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>

#include <subutai/soc.h>

#define ROUNDS     200
#define MAX_YIELDS 8

static pthread_barrier_t start;
static uint32_t began[MAX_YIELDS], ended[MAX_YIELDS];

static void *yielder(void *arg)
{
	unsigned int me = (uintptr_t)arg;

	pthread_barrier_wait(&start);
	began[me] = subutai_cycles32();
	for (unsigned int r = 0; r < ROUNDS; r++) {
		sched_yield();
	}
	ended[me] = subutai_cycles32();
	return NULL;
}

static pthread_mutex_t turn_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_changed = PTHREAD_COND_INITIALIZER;
static unsigned int turn;
static uint32_t handoff_began, handoff_ended;

static void *taker(void *arg)
{
	unsigned int me = (uintptr_t)arg;

	pthread_barrier_wait(&start);
	if (me == 0) {
		handoff_began = subutai_cycles32();
	}
	for (unsigned int r = 0; r < ROUNDS; r++) {
		pthread_mutex_lock(&turn_lock);
		while (turn % 2 != me) {
			pthread_cond_wait(&turn_changed, &turn_lock);
		}
		turn++;
		pthread_cond_signal(&turn_changed);
		pthread_mutex_unlock(&turn_lock);
	}
	if (me == 1) {
		handoff_ended = subutai_cycles32();
	}
	return NULL;
}

/* Runs fn in n threads on core; false if they could not all be created. */
static int run_on(unsigned int core, unsigned int n, void *(*fn)(void *))
{
	pthread_t t[MAX_YIELDS];
	pthread_attr_t attr;
	unsigned int created = 0;
	int err;

	pthread_attr_init(&attr);
	pthread_attr_setcore_np(&attr, (int)core);
	pthread_barrier_init(&start, NULL, n);
	for (; created < n; created++) {
		if ((err = pthread_create(&t[created], &attr, fn, (void *)(uintptr_t)created)) !=
		    0) {
			printf("switchbench: cannot create %u threads on core %u (error %d)\n", n,
			       core, err);
			break;
		}
	}
	for (unsigned int i = 0; i < created; i++) {
		pthread_join(t[i], NULL);
	}
	pthread_barrier_destroy(&start);
	pthread_attr_destroy(&attr);
	return created == n;
}

static void report(const char *what, unsigned int threads, uint32_t cycles, unsigned int count)
{
	printf("@subutai {\"program\":\"switchbench\",\"backend\":\"%s\",\"tiles\":%u,"
	       "\"what\":\"%s\",\"threads\":%u,\"count\":%u,\"cycles\":%lu}\n",
	       pthread_backend_np, subutai_num_tiles(), what, threads, count,
	       (unsigned long)(cycles / count));
}

int main(void)
{
	unsigned int core = subutai_num_tiles() - 1;
	static const unsigned int yielders[] = {2, MAX_YIELDS};

	if (core == 0) {
		printf("switchbench: needs 2 tiles or more\n");
		return 1;
	}
	for (unsigned int i = 0; i < sizeof(yielders) / sizeof(yielders[0]); i++) {
		unsigned int n = yielders[i];

		if (!run_on(core, n, yielder)) {
			return 1;
		}
		uint32_t first = began[0], last = ended[0];

		for (unsigned int k = 1; k < n; k++) {
			first = (int32_t)(began[k] - first) < 0 ? began[k] : first;
			last = (int32_t)(ended[k] - last) > 0 ? ended[k] : last;
		}
		report("yield", n, last - first, n * ROUNDS);
	}
	if (!run_on(core, 2, taker)) {
		return 1;
	}
	report("handoff", 2, handoff_ended - handoff_began, 2 * ROUNDS);
	printf("switchbench: done\n");
	return 0;
}
