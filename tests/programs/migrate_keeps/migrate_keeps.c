/*
 * Threads that move between kernels keep what is theirs, for the migration tests
 * (tests/test_multi.py; the migrating baseline, Kconfig SUBUTAI_SCHED_STEAL). Three workers start
 * on core 1 while main and a filler thread on every other core spin; once every worker is set up
 * the fillers end and main joins, so idle kernels take the workers. Each worker, before it can
 * move, disables cancellation (main cancels it at once: the request stays pending), sets
 * its value of a thread-specific key and fills an array on its stack; once it finds itself on
 * another core it checks both. Then it waits for a mutex the others hold (queued in an engine, or
 * in the software baseline's queue) and holds it across two timeslots, noting any change of core
 * from its lock call to its unlock (a waiter's reply comes to its core's NI, and an engine knows
 * a holder by its core) and the unlock's result;
 * last it enables cancellation, and the pending request must end it at pthread_testcancel().
 *
 * Prints one line: how many moved, kept their key and data, moved while waiting for the mutex or
 * holding it, failed to unlock, and were cancelled (main's joins return PTHREAD_CANCELED).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define WORKERS     3
#define CROWDED     1
#define WAIT_NS     20000000 /* the longest a worker waits to be moved */
#define HOLD_NS     200000   /* two 100 us timeslots inside the critical section */
#define STACK_WORDS 64

static pthread_key_t key;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int markers[WORKERS];
static volatile int moved, kept, moved_queued, moved_holding, unlock_errors, set_up;
static pthread_mutex_t counts = PTHREAD_MUTEX_INITIALIZER;

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void add(volatile int *count)
{
	pthread_mutex_lock(&counts);
	(*count)++;
	pthread_mutex_unlock(&counts);
}

/* Shared data is read after an acquire (the caches are not coherent). */
static int read_set_up(void)
{
	pthread_mutex_lock(&counts);
	int n = set_up;

	pthread_mutex_unlock(&counts);
	return n;
}

static void *worker(void *arg)
{
	int id = (int)(intptr_t)arg;
	volatile uint32_t data[STACK_WORDS];
	unsigned int start_core;
	int64_t until;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	pthread_setspecific(key, &markers[id]);
	for (int k = 0; k < STACK_WORDS; k++) {
		data[k] = 0x9e3779b9u * (uint32_t)(id * STACK_WORDS + k + 1);
	}
	start_core = pthread_core_np();
	add(&set_up);
	until = now_ns() + WAIT_NS;
	while (pthread_core_np() == start_core && now_ns() < until) {
	}
	if (pthread_core_np() != start_core) {
		int intact = pthread_getspecific(key) == &markers[id];

		for (int k = 0; k < STACK_WORDS; k++) {
			intact &= data[k] == 0x9e3779b9u * (uint32_t)(id * STACK_WORDS + k + 1);
		}
		add(&moved);
		if (intact) {
			add(&kept);
		}
	}
	unsigned int waiting_core = pthread_core_np();

	pthread_mutex_lock(&lock); /* the others queue behind the holder */
	unsigned int holding_core = pthread_core_np();

	if (holding_core != waiting_core) {
		moved_queued++; /* under the lock */
	}

	until = now_ns() + HOLD_NS;
	while (now_ns() < until) {
		if (pthread_core_np() != holding_core) {
			moved_holding++; /* under the lock */
			holding_core = pthread_core_np();
		}
	}
	if (pthread_mutex_unlock(&lock) != 0) {
		add(&unlock_errors);
	}
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
	pthread_testcancel();
	return NULL; /* the cancellation was lost */
}

/* Keeps its core busy until every worker is set up (an idle core would take one at once). */
static void *filler(void *arg)
{
	(void)arg;
	while (read_set_up() < WORKERS) {
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t threads[WORKERS], fillers[4];
	int n_fillers = 0;
	pthread_attr_t attr;
	int cancelled = 0;

	(void)argc;
	(void)argv;
	pthread_key_create(&key, NULL);
	pthread_attr_init(&attr);
	for (unsigned int core = 1; core < 4; core++) {
		if (core != CROWDED) {
			pthread_attr_setcore_np(&attr, core);
			pthread_create(&fillers[n_fillers++], &attr, filler, NULL);
		}
	}
	pthread_attr_setcore_np(&attr, CROWDED);
	for (int i = 0; i < WORKERS; i++) {
		pthread_create(&threads[i], &attr, worker, (void *)(intptr_t)i);
		pthread_cancel(threads[i]);
	}
	while (read_set_up() < WORKERS) {
	}
	for (int i = 0; i < n_fillers; i++) {
		pthread_join(fillers[i], NULL);
	}
	for (int i = 0; i < WORKERS; i++) {
		void *result;

		pthread_join(threads[i], &result);
		cancelled += result == PTHREAD_CANCELED;
	}
	printf("migrate_keeps: %d threads, %d moved, %d kept their key and data, %d moved while "
	       "waiting for the mutex, %d while holding it, %d unlock errors, %d cancelled\n",
	       WORKERS, moved, kept, moved_queued, moved_holding, unlock_errors, cancelled);
	return 0;
}
