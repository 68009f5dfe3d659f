/* pthreadtest: mutex (see main.c). */
#include "pthreadtest.h"

/* Mutexes. */

static pthread_mutex_t counter_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned int counter;

#define INCREMENTS 40

static void *increment(void *arg)
{
	(void)arg;
	int fails = 0;

	for (unsigned int i = 0; i < INCREMENTS; i++) {
		if (i % 4 == 0) {
			int err = pthread_mutex_trylock(&counter_lock);

			TCHECK(err == 0 || err == EBUSY);
			if (err != 0) {
				pthread_mutex_lock(&counter_lock);
			}
		} else {
			pthread_mutex_lock(&counter_lock);
		}
		unsigned int c = counter;

		/* Widen the window a lost update would need. */
		for (volatile int d = 0; d < 5; d++) {
		}
		counter = c + 1;
		pthread_mutex_unlock(&counter_lock);
	}
	return (void *)(intptr_t)fails;
}

void test_mutex(void)
{
	int before = failures;

	run_all(increment);
	CHECK(counter == n_threads * INCREMENTS);
	printf("mutex: %u increments\n", counter);
	report("mutex", before);
}

static pthread_mutex_t shared_mutex;

static void *try_held(void *arg)
{
	(void)arg;
	int fails = 0;

	TCHECK(pthread_mutex_trylock(&shared_mutex) == EBUSY);
	return (void *)(intptr_t)fails;
}

static void *try_free(void *arg)
{
	(void)arg;
	int fails = 0;

	TCHECK(pthread_mutex_trylock(&shared_mutex) == 0);
	TCHECK(pthread_mutex_unlock(&shared_mutex) == 0);
	return (void *)(intptr_t)fails;
}

static void *unlock_foreign(void *arg)
{
	(void)arg;
	int fails = 0;

	TCHECK(pthread_mutex_unlock(&shared_mutex) == EPERM);
	return (void *)(intptr_t)fails;
}

/* fn in another thread, on another core. */
static int run_elsewhere(void *(*fn)(void *))
{
	pthread_attr_t attr;
	pthread_t t;

	CHECK(pthread_attr_init(&attr) == 0);
	CHECK(pthread_attr_setcore_np(&attr, (int)n_cores - 1) == 0);
	CHECK(pthread_create(&t, &attr, fn, NULL) == 0);
	CHECK(pthread_attr_destroy(&attr) == 0);
	return join_all(&t, 1);
}

void test_mutex_types(void)
{
	int before = failures;
	pthread_mutexattr_t attr;
	int type = -1;

	/* trylock */
	CHECK(pthread_mutex_init(&shared_mutex, NULL) == 0);
	CHECK(pthread_mutex_trylock(&shared_mutex) == 0);
	CHECK(pthread_mutex_trylock(&shared_mutex) == EBUSY);
	failures += run_elsewhere(try_held);
	CHECK(pthread_mutex_unlock(&shared_mutex) == 0);
	failures += run_elsewhere(try_free);
	CHECK(pthread_mutex_destroy(&shared_mutex) == 0);

	/* error checking */
	CHECK(pthread_mutexattr_init(&attr) == 0);
	CHECK(pthread_mutexattr_settype(&attr, 42) == EINVAL);
	CHECK(pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK) == 0);
	CHECK(pthread_mutexattr_gettype(&attr, &type) == 0 && type == PTHREAD_MUTEX_ERRORCHECK);
	CHECK(pthread_mutex_init(&shared_mutex, &attr) == 0);
	CHECK(pthread_mutex_unlock(&shared_mutex) == EPERM);
	CHECK(pthread_mutex_lock(&shared_mutex) == 0);
	CHECK(pthread_mutex_lock(&shared_mutex) == EDEADLK);
	failures += run_elsewhere(unlock_foreign);
	failures += run_elsewhere(try_held);
	CHECK(pthread_mutex_unlock(&shared_mutex) == 0);
	CHECK(pthread_mutex_unlock(&shared_mutex) == EPERM);
	CHECK(pthread_mutex_destroy(&shared_mutex) == 0);

	/* recursive */
	CHECK(pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE) == 0);
	CHECK(pthread_mutex_init(&shared_mutex, &attr) == 0);
	CHECK(pthread_mutex_lock(&shared_mutex) == 0);
	CHECK(pthread_mutex_lock(&shared_mutex) == 0);
	CHECK(pthread_mutex_trylock(&shared_mutex) == 0);
	failures += run_elsewhere(try_held);
	failures += run_elsewhere(unlock_foreign);
	CHECK(pthread_mutex_unlock(&shared_mutex) == 0);
	CHECK(pthread_mutex_unlock(&shared_mutex) == 0);
	CHECK(pthread_mutex_unlock(&shared_mutex) == 0);
	CHECK(pthread_mutex_unlock(&shared_mutex) == EPERM);
	failures += run_elsewhere(try_free);
	CHECK(pthread_mutex_destroy(&shared_mutex) == 0);
	CHECK(pthread_mutexattr_destroy(&attr) == 0);
	CHECK(pthread_mutexattr_destroy(&attr) == EINVAL);
	report("mutex types", before);
}

void test_mutex_errors(void)
{
	int before = failures;
	pthread_mutex_t m, garbage;
	pthread_mutex_t never_used = PTHREAD_MUTEX_INITIALIZER;

	CHECK(pthread_mutex_init(NULL, NULL) == EINVAL);
	CHECK(pthread_mutex_lock(NULL) == EINVAL);
	memset(&garbage, 0x5a, sizeof(garbage));
	CHECK(pthread_mutex_lock(&garbage) == EINVAL);
	CHECK(pthread_mutex_unlock(&garbage) == EINVAL);
	CHECK(pthread_mutex_destroy(&garbage) == EINVAL);
	CHECK(pthread_mutex_init(&m, NULL) == 0);
	CHECK(pthread_mutex_lock(&m) == 0);
	CHECK(pthread_mutex_destroy(&m) == EBUSY);
	CHECK(pthread_mutex_unlock(&m) == 0);
	CHECK(pthread_mutex_destroy(&m) == 0);
	CHECK(pthread_mutex_destroy(&m) == EINVAL);
	CHECK(pthread_mutex_lock(&m) == EINVAL);
	CHECK(pthread_mutex_trylock(&m) == EINVAL);
	CHECK(pthread_mutex_destroy(&never_used) == 0);

	/* Process-shared attributes: private accepted and reported, shared not supported. */
	pthread_mutexattr_t ma;
	pthread_condattr_t ca;
	pthread_barrierattr_t ba;
	int pshared = -1;

	CHECK(pthread_mutexattr_init(&ma) == 0 && pthread_condattr_init(&ca) == 0 &&
	      pthread_barrierattr_init(&ba) == 0);
	CHECK(pthread_mutexattr_getpshared(&ma, &pshared) == 0 &&
	      pshared == PTHREAD_PROCESS_PRIVATE);
	CHECK(pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_PRIVATE) == 0);
	CHECK(pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED) == ENOTSUP);
	CHECK(pthread_mutexattr_setpshared(&ma, 7) == EINVAL);
	CHECK(pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED) == ENOTSUP);
	CHECK(pthread_condattr_getpshared(&ca, &pshared) == 0 &&
	      pshared == PTHREAD_PROCESS_PRIVATE);
	CHECK(pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED) == ENOTSUP);
	CHECK(pthread_barrierattr_getpshared(&ba, &pshared) == 0 &&
	      pshared == PTHREAD_PROCESS_PRIVATE);
	CHECK(pthread_mutexattr_getpshared(NULL, &pshared) == EINVAL);
	CHECK(pthread_mutexattr_destroy(&ma) == 0 && pthread_condattr_destroy(&ca) == 0 &&
	      pthread_barrierattr_destroy(&ba) == 0);
	CHECK(pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_PRIVATE) == EINVAL); /* destroyed */
	report("mutex errors", before);
}
