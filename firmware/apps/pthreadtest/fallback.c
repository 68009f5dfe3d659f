/* pthreadtest: fallback (see main.c). */
#include "pthreadtest.h"

/* Scratchpads full: objects go on in software. */

/* Scratchpads hold 64 control structures per tile by default; the SoC has at most 16 tiles; the
 * software implementation a few hundred objects (pthread_sw_objects_max_np()). */
#define MANY     (64 * 16 + 320)
#define SOFTWARE 4

static pthread_mutex_t many[MANY];
static unsigned int many_count[MANY];
static unsigned int n_many;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static unsigned int gate_arrived;

static bool sampled(unsigned int i)
{
	return i % 37 == 0 || i >= n_many - SOFTWARE;
}

static void *lock_many(void *arg)
{
	(void)arg;
	for (unsigned int round = 0; round < 4; round++) {
		for (unsigned int i = 0; i < n_many; i++) {
			if (sampled(i)) {
				pthread_mutex_lock(&many[i]);
				many_count[i]++;
				pthread_mutex_unlock(&many[i]);
			}
		}
	}
	/* A condition used with a software mutex: a gate for all threads. */
	pthread_mutex_t *m = &many[n_many - 1];

	pthread_mutex_lock(m);
	if (++gate_arrived == n_threads) {
		pthread_cond_broadcast(&gate_cond);
	}
	while (gate_arrived < n_threads) {
		pthread_cond_wait(&gate_cond, m);
	}
	pthread_mutex_unlock(m);
	return NULL;
}

void test_fallback(void)
{
	int before = failures;
	unsigned int software = 0;

	while (n_many < MANY && pthread_mutex_init(&many[n_many], NULL) == 0) {
		if (strcmp(pthread_mutex_impl_np(&many[n_many]), "swonly") == 0) {
			software++;
		}
		n_many++;
		if (software == SOFTWARE) {
			break;
		}
	}
	CHECK(software == SOFTWARE);
	run_all(lock_many);
	for (unsigned int i = 0; i < n_many; i++) {
		CHECK(many_count[i] == (sampled(i) ? 4 * n_threads : 0));
	}
	CHECK(strcmp(pthread_cond_impl_np(&gate_cond), "swonly") == 0);
	CHECK(pthread_cond_destroy(&gate_cond) == 0);

	/* Every object the implementations hold: then EAGAIN (a barrier too), and room again once
	 * one is destroyed. The software ones are the pool but the few the program holds elsewhere.
	 */
	int err = 0;

	CHECK(pthread_sw_objects_max_np() >= 64);
	while (n_many < MANY && (err = pthread_mutex_init(&many[n_many], NULL)) == 0) {
		software += strcmp(pthread_mutex_impl_np(&many[n_many]), "swonly") == 0;
		n_many++;
	}
	CHECK(n_many < MANY && err == EAGAIN);
	CHECK(software <= pthread_sw_objects_max_np() &&
	      software + 16 > pthread_sw_objects_max_np());
	pthread_barrier_t full;

	CHECK(pthread_barrier_init(&full, NULL, 2) == EAGAIN);
	CHECK(pthread_mutex_destroy(&many[n_many - 1]) == 0);
	CHECK(pthread_barrier_init(&full, NULL, 2) == 0);
	CHECK(pthread_mutex_init(&many[n_many - 1], NULL) == EAGAIN);
	CHECK(pthread_barrier_destroy(&full) == 0);
	CHECK(pthread_mutex_init(&many[n_many - 1], NULL) == 0);
	for (unsigned int i = 0; i < n_many; i++) {
		CHECK(pthread_mutex_destroy(&many[i]) == 0);
	}
	report("fallback", before);
}
