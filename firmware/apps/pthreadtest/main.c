/*
 * PThreads runtime test: every primitive and error path, on every core of the SoC.
 *
 * Prints one line per check group ("<group>: ok" or the failed checks) and exits with the number
 * of failures. The output does not depend on the backend: the tests compare the subutai and
 * swonly runs line by line.
 */
#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <subutai/soc.h>

static int failures;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("  FAIL %s:%d: %s\n", __func__, __LINE__, #cond);                   \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

/* Failures seen by other threads come back as their return value. */
#define TCHECK(cond)                                                                               \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("  FAIL tile %u %s:%d: %s\n", subutai_tile_id(), __func__, __LINE__, \
			       #cond);                                                             \
			fails++;                                                                   \
		}                                                                                  \
	} while (0)

static unsigned int n_threads; /* one per core */

static void report(const char *group, int before)
{
	printf("%s: %s\n", group, failures == before ? "ok" : "FAILED");
}

static int join_all(pthread_t *t, unsigned int n)
{
	int fails = 0;

	for (unsigned int i = 0; i < n; i++) {
		void *ret = (void *)-1;

		CHECK(pthread_join(t[i], &ret) == 0);
		fails += (int)(intptr_t)ret;
	}
	return fails;
}

/* Threads: create, join, exit, self, equal, detach. */

static void *double_it(void *arg)
{
	if ((intptr_t)arg == 7) {
		pthread_exit((void *)(intptr_t)14);
	}
	return (void *)((intptr_t)arg * 2);
}

static volatile unsigned int detached_ran;

static void *detached(void *arg)
{
	(void)arg;
	detached_ran = 1;
	return NULL;
}

static void *self_id(void *arg)
{
	*(pthread_t *)arg = pthread_self();
	return NULL;
}

static void test_threads(void)
{
	int before = failures;
	pthread_t t[16], ids[16];

	for (unsigned int round = 0; round < 2; round++) {
		for (unsigned int i = 1; i < n_threads; i++) {
			CHECK(pthread_create(&t[i], NULL, double_it, (void *)(intptr_t)(i + 5 * round)) == 0);
		}
		for (unsigned int i = 1; i < n_threads; i++) {
			void *ret;

			CHECK(pthread_join(t[i], &ret) == 0);
			CHECK((intptr_t)ret == (intptr_t)(2 * (i + 5 * round)));
		}
	}
	for (unsigned int i = 1; i < n_threads; i++) {
		CHECK(pthread_create(&t[i], NULL, self_id, &ids[i]) == 0);
	}
	for (unsigned int i = 1; i < n_threads; i++) {
		CHECK(pthread_join(t[i], NULL) == 0);
		CHECK(pthread_equal(ids[i], t[i]));
		CHECK(!pthread_equal(ids[i], pthread_self()));
	}

	pthread_attr_t attr;

	CHECK(pthread_attr_init(&attr) == 0);
	CHECK(pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0);
	int state = -1;

	CHECK(pthread_attr_getdetachstate(&attr, &state) == 0 && state == PTHREAD_CREATE_DETACHED);
	if (n_threads > 1) {
		CHECK(pthread_create(&t[0], &attr, detached, NULL) == 0);
		CHECK(pthread_join(t[0], NULL) == EINVAL);
		while (!detached_ran) {
			subutai_dcache_invalidate();
		}
	}
	CHECK(pthread_attr_destroy(&attr) == 0);
	report("threads", before);
}

static void *sleeper(void *arg)
{
	pthread_barrier_t *b = arg;

	pthread_barrier_wait(b);
	return NULL;
}

static void test_thread_errors(void)
{
	int before = failures;
	pthread_t t[16];
	pthread_attr_t attr;

	CHECK(pthread_create(NULL, NULL, double_it, NULL) == EINVAL);
	CHECK(pthread_create(&t[0], NULL, NULL, NULL) == EINVAL);
	memset(&attr, 0, sizeof(attr));
	CHECK(pthread_create(&t[0], &attr, double_it, NULL) == EINVAL);
	CHECK(pthread_attr_init(&attr) == 0);
	CHECK(pthread_attr_setdetachstate(&attr, 5) == EINVAL);
	CHECK(pthread_join(pthread_self(), NULL) == EDEADLK);
	CHECK(pthread_join(0x12345678, NULL) == ESRCH);
	CHECK(pthread_detach(0x12345678) == ESRCH);

	/* Every core busy: no room for another thread. */
	pthread_barrier_t b;

	CHECK(pthread_barrier_init(&b, NULL, n_threads) == 0);
	for (unsigned int i = 1; i < n_threads; i++) {
		CHECK(pthread_create(&t[i], NULL, sleeper, &b) == 0);
	}
	CHECK(pthread_create(&t[0], NULL, double_it, NULL) == EAGAIN);
	pthread_barrier_wait(&b);
	if (n_threads > 1) {
		CHECK(pthread_detach(t[1]) == 0);
		CHECK(pthread_detach(t[1]) == EINVAL || pthread_detach(t[1]) == ESRCH);
	}
	for (unsigned int i = 2; i < n_threads; i++) {
		CHECK(pthread_join(t[i], NULL) == 0);
		CHECK(pthread_join(t[i], NULL) == ESRCH);
	}
	CHECK(pthread_barrier_destroy(&b) == 0);
	report("thread errors", before);
}

/* Mutexes. */

static pthread_mutex_t counter_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned int counter;

#define INCREMENTS 40

static void *increment(void *arg)
{
	(void)arg;
	for (unsigned int i = 0; i < INCREMENTS; i++) {
		pthread_mutex_lock(&counter_lock);
		unsigned int c = counter;

		/* Widen the window a lost update would need. */
		for (volatile int d = 0; d < 5; d++) {
		}
		counter = c + 1;
		pthread_mutex_unlock(&counter_lock);
	}
	return NULL;
}

static void test_mutex(void)
{
	int before = failures;
	pthread_t t[16];

	for (unsigned int i = 1; i < n_threads; i++) {
		CHECK(pthread_create(&t[i], NULL, increment, NULL) == 0);
	}
	increment(NULL);
	for (unsigned int i = 1; i < n_threads; i++) {
		CHECK(pthread_join(t[i], NULL) == 0);
	}
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

static int run_on_other_core(void *(*fn)(void *))
{
	pthread_t t;

	if (n_threads < 2) {
		return 0;
	}
	CHECK(pthread_create(&t, NULL, fn, NULL) == 0);
	return join_all(&t, 1);
}

static void test_mutex_types(void)
{
	int before = failures;
	pthread_mutexattr_t attr;
	int type = -1;

	/* trylock */
	CHECK(pthread_mutex_init(&shared_mutex, NULL) == 0);
	CHECK(pthread_mutex_trylock(&shared_mutex) == 0);
	CHECK(pthread_mutex_trylock(&shared_mutex) == EBUSY);
	failures += run_on_other_core(try_held);
	CHECK(pthread_mutex_unlock(&shared_mutex) == 0);
	failures += run_on_other_core(try_free);
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
	failures += run_on_other_core(unlock_foreign);
	failures += run_on_other_core(try_held);
	CHECK(pthread_mutex_unlock(&shared_mutex) == 0);
	CHECK(pthread_mutex_unlock(&shared_mutex) == EPERM);
	CHECK(pthread_mutex_destroy(&shared_mutex) == 0);

	/* recursive */
	CHECK(pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE) == 0);
	CHECK(pthread_mutex_init(&shared_mutex, &attr) == 0);
	CHECK(pthread_mutex_lock(&shared_mutex) == 0);
	CHECK(pthread_mutex_lock(&shared_mutex) == 0);
	CHECK(pthread_mutex_trylock(&shared_mutex) == 0);
	failures += run_on_other_core(try_held);
	failures += run_on_other_core(unlock_foreign);
	CHECK(pthread_mutex_unlock(&shared_mutex) == 0);
	CHECK(pthread_mutex_unlock(&shared_mutex) == 0);
	CHECK(pthread_mutex_unlock(&shared_mutex) == 0);
	CHECK(pthread_mutex_unlock(&shared_mutex) == EPERM);
	failures += run_on_other_core(try_free);
	CHECK(pthread_mutex_destroy(&shared_mutex) == 0);
	CHECK(pthread_mutexattr_destroy(&attr) == 0);
	CHECK(pthread_mutexattr_destroy(&attr) == EINVAL);
	report("mutex types", before);
}

static void test_mutex_errors(void)
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
	report("mutex errors", before);
}

/* Barriers. */

#define BARRIER_ROUNDS 6

static pthread_barrier_t barrier;
static volatile unsigned int serial_count[BARRIER_ROUNDS];
static unsigned int arrivals[BARRIER_ROUNDS][16];

static void *barrier_rounds(void *arg)
{
	unsigned int me = (uintptr_t)arg;
	int fails = 0;

	for (unsigned int r = 0; r < BARRIER_ROUNDS; r++) {
		arrivals[r][me] = r + 1;
		int ret = pthread_barrier_wait(&barrier);

		TCHECK(ret == 0 || ret == PTHREAD_BARRIER_SERIAL_THREAD);
		/* Every thread's write before the barrier is visible after it. */
		for (unsigned int i = 0; i < n_threads; i++) {
			TCHECK(arrivals[r][i] == r + 1);
		}
		if (ret == PTHREAD_BARRIER_SERIAL_THREAD) {
			serial_count[r]++;
		}
		/* The serial thread's count is in memory before anyone reads it. */
		pthread_barrier_wait(&barrier);
	}
	return (void *)(intptr_t)fails;
}

static void test_barrier(void)
{
	int before = failures;
	pthread_t t[16];

	CHECK(pthread_barrier_init(&barrier, NULL, n_threads) == 0);
	for (unsigned int i = 1; i < n_threads; i++) {
		CHECK(pthread_create(&t[i], NULL, barrier_rounds, (void *)(uintptr_t)i) == 0);
	}
	failures += (int)(intptr_t)barrier_rounds((void *)0);
	failures += join_all(&t[1], n_threads - 1);
	subutai_dcache_invalidate();
	for (unsigned int r = 0; r < BARRIER_ROUNDS; r++) {
		CHECK(serial_count[r] == 1);
	}
	CHECK(pthread_barrier_destroy(&barrier) == 0);
	CHECK(pthread_barrier_destroy(&barrier) == EINVAL);
	CHECK(pthread_barrier_wait(&barrier) == EINVAL);
	CHECK(pthread_barrier_init(&barrier, NULL, 0) == EINVAL);
	printf("barrier: %u rounds of %u threads\n", BARRIER_ROUNDS, n_threads);
	report("barrier", before);
}

/* Condition variables: one producer, consumers taking items. */

#define ITEMS_PER_CONSUMER 6

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_nonempty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t queue_nonfull = PTHREAD_COND_INITIALIZER;
static unsigned int queue[4];
static unsigned int queue_len;
static unsigned int consumed_sum[16];

static void *consumer(void *arg)
{
	unsigned int me = (uintptr_t)arg;

	for (unsigned int i = 0; i < ITEMS_PER_CONSUMER; i++) {
		pthread_mutex_lock(&queue_lock);
		while (queue_len == 0) {
			pthread_cond_wait(&queue_nonempty, &queue_lock);
		}
		consumed_sum[me] += queue[--queue_len];
		pthread_cond_signal(&queue_nonfull);
		pthread_mutex_unlock(&queue_lock);
	}
	return NULL;
}

static void test_cond(void)
{
	int before = failures;
	pthread_t t[16];
	unsigned int consumers = n_threads - 1, produced = 0, expected = 0;

	for (unsigned int i = 1; i <= consumers; i++) {
		CHECK(pthread_create(&t[i], NULL, consumer, (void *)(uintptr_t)i) == 0);
	}
	for (unsigned int n = 0; n < consumers * ITEMS_PER_CONSUMER; n++) {
		pthread_mutex_lock(&queue_lock);
		while (queue_len == sizeof(queue) / sizeof(queue[0])) {
			pthread_cond_wait(&queue_nonfull, &queue_lock);
		}
		queue[queue_len++] = n + 1;
		expected += n + 1;
		produced++;
		/* Alternate the two ways of waking consumers. */
		if (n % 2) {
			pthread_cond_broadcast(&queue_nonempty);
		} else {
			pthread_cond_signal(&queue_nonempty);
		}
		pthread_mutex_unlock(&queue_lock);
	}
	join_all(&t[1], consumers);
	unsigned int sum = 0;

	for (unsigned int i = 1; i <= consumers; i++) {
		sum += consumed_sum[i];
	}
	CHECK(sum == expected);
	CHECK(queue_len == 0);
	printf("cond: %u items, sum %u\n", produced, sum);
	report("cond", before);
}

static pthread_cond_t busy_cond;
static pthread_mutex_t busy_mutex;
static volatile unsigned int busy_waiting;

static void *wait_once(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&busy_mutex);
	busy_waiting = 1;
	pthread_cond_wait(&busy_cond, &busy_mutex);
	busy_waiting = 0;
	pthread_mutex_unlock(&busy_mutex);
	return NULL;
}

static void test_cond_errors(void)
{
	int before = failures;
	pthread_cond_t c, garbage;
	pthread_mutex_t m;
	pthread_mutexattr_t attr;

	CHECK(pthread_cond_init(NULL, NULL) == EINVAL);
	memset(&garbage, 0x5a, sizeof(garbage));
	CHECK(pthread_cond_signal(&garbage) == EINVAL);
	CHECK(pthread_cond_init(&c, NULL) == 0);
	CHECK(pthread_cond_signal(&c) == 0);    /* nobody waits */
	CHECK(pthread_cond_broadcast(&c) == 0);
	CHECK(pthread_mutexattr_init(&attr) == 0);
	CHECK(pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK) == 0);
	CHECK(pthread_mutex_init(&m, &attr) == 0);
	/* Waiting without owning an error-checking mutex. */
	CHECK(pthread_cond_wait(&c, &m) == EPERM);
	CHECK(pthread_cond_destroy(&c) == 0);
	CHECK(pthread_cond_destroy(&c) == EINVAL);
	CHECK(pthread_cond_wait(&c, &m) == EINVAL);
	CHECK(pthread_mutex_destroy(&m) == 0);

	/* Destroying a condition somebody waits on. */
	if (n_threads > 1) {
		pthread_t t;

		CHECK(pthread_cond_init(&busy_cond, NULL) == 0);
		CHECK(pthread_mutex_init(&busy_mutex, NULL) == 0);
		CHECK(pthread_create(&t, NULL, wait_once, NULL) == 0);
		for (;;) {
			pthread_mutex_lock(&busy_mutex);
			if (busy_waiting) {
				break;
			}
			pthread_mutex_unlock(&busy_mutex);
		}
		/* The waiter released the mutex by waiting: it is queued. */
		CHECK(pthread_cond_destroy(&busy_cond) == EBUSY);
		CHECK(pthread_cond_signal(&busy_cond) == 0);
		CHECK(pthread_mutex_unlock(&busy_mutex) == 0);
		CHECK(pthread_join(t, NULL) == 0);
		CHECK(pthread_cond_destroy(&busy_cond) == 0);
		CHECK(pthread_mutex_destroy(&busy_mutex) == 0);
	}
	report("cond errors", before);
}

/* Scratchpads full: objects go on in software. */

/* Scratchpads hold 64 control structures per tile by default. */
#define MANY (64 * N_TILES + 8)
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

static void test_fallback(void)
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
	pthread_t t[16];

	for (unsigned int i = 1; i < n_threads; i++) {
		CHECK(pthread_create(&t[i], NULL, lock_many, NULL) == 0);
	}
	lock_many(NULL);
	join_all(&t[1], n_threads - 1);
	subutai_dcache_invalidate();
	for (unsigned int i = 0; i < n_many; i++) {
		CHECK(many_count[i] == (sampled(i) ? 4 * n_threads : 0));
	}
	CHECK(strcmp(pthread_cond_impl_np(&gate_cond), "swonly") == 0);
	CHECK(pthread_cond_destroy(&gate_cond) == 0);
	for (unsigned int i = 0; i < n_many; i++) {
		CHECK(pthread_mutex_destroy(&many[i]) == 0);
	}
	report("fallback", before);
}

int main(void)
{
	n_threads = subutai_num_tiles();
	printf("pthreadtest: %u threads\n", n_threads);
	test_threads();
	test_thread_errors();
	test_mutex();
	test_mutex_types();
	test_mutex_errors();
	test_barrier();
	test_cond();
	test_cond_errors();
	test_fallback();
	printf("pthreadtest: %d failures\n", failures);
	return failures ? 1 : 0;
}
