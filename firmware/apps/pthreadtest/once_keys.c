/* pthreadtest: once keys (see main.c). */
#include "pthreadtest.h"

/* pthread_once and thread-specific data. */

static pthread_once_t once = PTHREAD_ONCE_INIT;
static unsigned int once_runs;
static pthread_key_t key;
static pthread_mutex_t key_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned int destructor_runs, destructor_bad;
static unsigned int key_values[MAX_THREADS];

static void once_init(void)
{
	once_runs++;
}

static void key_destructor(void *value)
{
	unsigned int *v = value;

	pthread_mutex_lock(&key_lock);
	destructor_runs++;
	destructor_bad += *v != (unsigned int)(v - key_values) + 100;
	pthread_mutex_unlock(&key_lock);
}

/* Every thread sets its value before any reads its own back. */
static pthread_barrier_t key_barrier;

static void *once_key_worker(void *arg)
{
	unsigned int me = (unsigned int)(uintptr_t)arg;
	int fails = 0;

	TCHECK(pthread_once(&once, once_init) == 0);
	TCHECK(pthread_getspecific(key) == NULL);
	key_values[me] = me + 100;
	TCHECK(pthread_setspecific(key, &key_values[me]) == 0);
	/* Everyone has set its value before anyone reads its own back. */
	pthread_barrier_wait(&key_barrier);
	TCHECK(pthread_getspecific(key) == &key_values[me]);
	return (void *)(intptr_t)fails;
}

/* A pthread_once() whose initializer is cancelled: the next call runs an initializer again. */
static pthread_once_t oc_once = PTHREAD_ONCE_INIT;
static pthread_barrier_t oc_barrier;
static volatile unsigned int oc_runs;

static void oc_init_cancelled(void)
{
	oc_runs++;
	pthread_barrier_wait(&oc_barrier);
	for (;;) {
		usleep(20); /* a cancellation point */
	}
}

static void oc_init(void)
{
	oc_runs++;
}

static void *oc_thread(void *arg)
{
	(void)arg;
	pthread_once(&oc_once, oc_init_cancelled);
	return NULL;
}

static void test_once_cancelled(void)
{
	pthread_t t;
	void *ret = NULL;

	CHECK(pthread_barrier_init(&oc_barrier, NULL, 2) == 0);
	CHECK(pthread_create(&t, NULL, oc_thread, NULL) == 0);
	pthread_barrier_wait(&oc_barrier);
	CHECK(pthread_cancel(t) == 0);
	CHECK(pthread_join(t, &ret) == 0 && ret == PTHREAD_CANCELED);
	/* As if pthread_once() had never been called (POSIX): this one runs its initializer. */
	CHECK(pthread_once(&oc_once, oc_init) == 0);
	CHECK(pthread_once(&oc_once, oc_init) == 0);
	CHECK(oc_runs == 2);
	CHECK(pthread_barrier_destroy(&oc_barrier) == 0);
}

void test_once_keys(void)
{
	int before = failures;

	CHECK(pthread_key_create(&key, key_destructor) == 0);
	CHECK(pthread_barrier_init(&key_barrier, NULL, n_threads) == 0);
	run_all(once_key_worker);
	CHECK(pthread_barrier_destroy(&key_barrier) == 0);
	CHECK(once_runs == 1);
	/* Every thread but the main one has exited: one destructor run each, on its own value. */
	CHECK(destructor_runs == n_threads - 1 && destructor_bad == 0);
	CHECK(pthread_key_delete(key) == 0);
	CHECK(pthread_setspecific(key, &key_values[0]) == EINVAL);
	CHECK(pthread_key_delete(key) == EINVAL);

	/* Exactly PTHREAD_KEYS_MAX keys (at least POSIX's 128), then EAGAIN; a key deleted and
	 * created again starts out NULL. */
	static pthread_key_t keys[PTHREAD_KEYS_MAX + 1];
	unsigned int n_keys = 0;

	CHECK(PTHREAD_KEYS_MAX >= 128);
	while (n_keys <= PTHREAD_KEYS_MAX && pthread_key_create(&keys[n_keys], NULL) == 0) {
		n_keys++;
	}
	CHECK(n_keys == PTHREAD_KEYS_MAX);
	CHECK(pthread_key_create(&key, NULL) == EAGAIN);
	CHECK(pthread_setspecific(keys[n_keys / 2], &key_values[1]) == 0);
	CHECK(pthread_key_delete(keys[n_keys / 2]) == 0);
	CHECK(pthread_key_create(&keys[n_keys / 2], NULL) == 0);
	CHECK(pthread_getspecific(keys[n_keys / 2]) == NULL);
	for (unsigned int i = 0; i < n_keys; i++) {
		CHECK(pthread_key_delete(keys[i]) == 0);
	}
	CHECK(PTHREAD_THREADS_MAX >= n_threads && PTHREAD_DESTRUCTOR_ITERATIONS >= 4);
	test_once_cancelled();
	report("once and keys", before);
}
