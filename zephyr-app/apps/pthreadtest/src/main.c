/*
 * Every PThreads primitive across all cores with several threads per core, each checked against
 * what must happen: mutexes (normal, error-checking, recursive, trylock), barriers, condition
 * variables (signal, broadcast, timed wait), pthread_once, thread-specific keys, join/detach/exit
 * and placement. Plain PThreads C; prints one "check" line per test and "pthreadtest: PASS" or
 * "pthreadtest: FAIL", and returns 0 only if every check passed.
 *
 *   pthreadtest [threads-per-core]   (default 3)
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_THREADS 64
#define ROUNDS      20
#define ITEMS       60

static unsigned int n_cores, n_threads;
static int failures;

static void check(const char *what, int ok)
{
	printf("check %-40s %s\n", what, ok ? "ok" : "FAILED");
	if (!ok) {
		failures++;
	}
}

/* Mutex: a counter under a normal mutex, with trylock. */
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long counter, trylock_busy;

static void *count_worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		if (i % 4 == 0) {
			int err = pthread_mutex_trylock(&count_lock);

			if (err == EBUSY) {
				pthread_mutex_lock(&count_lock);
				trylock_busy++;
			} else if (err != 0) {
				return (void *)1;
			}
		} else {
			pthread_mutex_lock(&count_lock);
		}
		unsigned long c = counter;

		counter = c + 1;
		pthread_mutex_unlock(&count_lock);
	}
	return NULL;
}

/* Barrier: phases in which every thread writes its slot and reads everyone's. */
static pthread_barrier_t barrier;
static unsigned int phase_value[MAX_THREADS];
static unsigned int serial_count[ROUNDS];
static int barrier_bad;

static void *barrier_worker(void *arg)
{
	unsigned int me = (unsigned int)(uintptr_t)arg;

	for (unsigned int r = 0; r < ROUNDS; r++) {
		phase_value[me] = r * 1000 + me;
		int ret = pthread_barrier_wait(&barrier);

		if (ret == PTHREAD_BARRIER_SERIAL_THREAD) {
			serial_count[r]++;
		} else if (ret != 0) {
			barrier_bad = 1;
		}
		for (unsigned int t = 0; t < n_threads; t++) {
			if (phase_value[t] != r * 1000 + t) {
				barrier_bad = 1;
			}
		}
		pthread_barrier_wait(&barrier);
	}
	return NULL;
}

/* Condition variables: a bounded queue, many producers and consumers. */
#define QUEUE 4
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_not_empty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t q_not_full = PTHREAD_COND_INITIALIZER;
static unsigned int q_items[QUEUE], q_head, q_count, q_produced;
static unsigned long q_sum;
static unsigned int q_consumed;

static void *producer(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&q_lock);
		while (q_count == QUEUE && q_produced < ITEMS) {
			pthread_cond_wait(&q_not_full, &q_lock);
		}
		if (q_produced == ITEMS) {
			pthread_mutex_unlock(&q_lock);
			return NULL;
		}
		q_items[(q_head + q_count) % QUEUE] = ++q_produced;
		q_count++;
		pthread_cond_signal(&q_not_empty);
		pthread_mutex_unlock(&q_lock);
	}
}

static void *consumer(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&q_lock);
		while (q_count == 0 && q_consumed < ITEMS) {
			pthread_cond_wait(&q_not_empty, &q_lock);
		}
		if (q_consumed == ITEMS) {
			pthread_mutex_unlock(&q_lock);
			return NULL;
		}
		q_sum += q_items[q_head];
		q_head = (q_head + 1) % QUEUE;
		q_count--;
		if (++q_consumed == ITEMS) {
			/* Everyone still waiting must see the end. */
			pthread_cond_broadcast(&q_not_empty);
			pthread_cond_broadcast(&q_not_full);
		} else {
			pthread_cond_signal(&q_not_full);
		}
		pthread_mutex_unlock(&q_lock);
	}
}

/* pthread_once and keys. */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static unsigned int once_runs;
static pthread_key_t key;
static pthread_mutex_t key_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned int destructor_runs;
static unsigned int key_values[MAX_THREADS];
static int key_bad;

static void once_init(void)
{
	once_runs++;
}

static void key_destructor(void *value)
{
	pthread_mutex_lock(&key_lock);
	destructor_runs++;
	if (*(unsigned int *)value != (unsigned int)((unsigned int *)value - key_values) + 100) {
		key_bad = 1;
	}
	pthread_mutex_unlock(&key_lock);
}

static void *once_key_worker(void *arg)
{
	unsigned int me = (unsigned int)(uintptr_t)arg;

	pthread_once(&once, once_init);
	if (pthread_getspecific(key) != NULL) {
		key_bad = 1;
	}
	key_values[me] = me + 100;
	pthread_setspecific(key, &key_values[me]);
	pthread_barrier_wait(&barrier);
	if (pthread_getspecific(key) != &key_values[me]) {
		key_bad = 1;
	}
	return NULL;
}

/* Error-checking and recursive mutexes, and timed waits. */
static pthread_mutex_t ec_lock, rec_lock;
static int ec_unlock_other;

static void *ec_other(void *arg)
{
	(void)arg;
	ec_unlock_other = pthread_mutex_unlock(&ec_lock);
	return NULL;
}

/* Exit and placement. */
static void *exit_worker(void *arg)
{
	pthread_exit((void *)((uintptr_t)arg * 3));
	return NULL;
}

static unsigned int ran_on[MAX_THREADS];

static void *where_worker(void *arg)
{
	ran_on[(uintptr_t)arg] = pthread_core_np();
	return NULL;
}

static int run_all(void *(*fn)(void *), bool index_arg)
{
	pthread_t t[MAX_THREADS];
	int bad = 0;

	/* The main thread is thread 0 of every test. */
	for (unsigned int i = 1; i < n_threads; i++) {
		if (pthread_create(&t[i], NULL, fn, index_arg ? (void *)(uintptr_t)i : NULL) != 0) {
			printf("pthread_create %u failed\n", i);
			return 1;
		}
	}
	bad |= fn(index_arg ? (void *)0 : NULL) != NULL;
	for (unsigned int i = 1; i < n_threads; i++) {
		void *ret;

		bad |= pthread_join(t[i], &ret) != 0 || ret != NULL;
	}
	return bad;
}

int main(int argc, char **argv)
{
	unsigned int per_core = argc > 1 ? (unsigned int)atoi(argv[1]) : 3;
	long cores = 0;

	(void)argv;
	for (;;) {
		/* The number of cores: pin threads until the library refuses. */
		pthread_attr_t attr;

		pthread_attr_init(&attr);
		if (pthread_attr_setcore_np(&attr, (int)cores) != 0) {
			break;
		}
		cores++;
	}
	n_cores = (unsigned int)cores;
	n_threads = n_cores * per_core;
	if (n_threads > MAX_THREADS || n_threads < 2) {
		printf("pthreadtest: %u threads: must be 2 to %d\n", n_threads, MAX_THREADS);
		return 2;
	}
	printf("pthreadtest: %u cores, %u threads\n", n_cores, n_threads);

	check("mutex counter", run_all(count_worker, false) == 0 &&
	      counter == (unsigned long)n_threads * ROUNDS);

	pthread_barrier_init(&barrier, NULL, n_threads);
	int bad = run_all(barrier_worker, true);
	int serial_ok = 1;

	for (int r = 0; r < ROUNDS; r++) {
		serial_ok &= serial_count[r] == 1;
	}
	check("barrier phases", bad == 0 && !barrier_bad);
	check("barrier serial thread once per round", serial_ok);

	{
		pthread_t t[MAX_THREADS];
		unsigned int producers = n_threads / 2;

		for (unsigned int i = 0; i < n_threads; i++) {
			pthread_create(&t[i], NULL, i < producers ? producer : consumer, NULL);
		}
		for (unsigned int i = 0; i < n_threads; i++) {
			pthread_join(t[i], NULL);
		}
		check("cond queue: every item once",
		      q_consumed == ITEMS && q_sum == (unsigned long)ITEMS * (ITEMS + 1) / 2);
	}

	pthread_key_create(&key, key_destructor);
	bad = run_all(once_key_worker, true);
	printf("once: %u runs; keys: %u destructor runs, %s\n", once_runs, destructor_runs,
	       key_bad ? "bad values" : "values ok");
	check("once and keys", bad == 0 && once_runs == 1 && !key_bad &&
	      destructor_runs == n_threads - 1);
	pthread_key_delete(key);
	check("deleted key refused", pthread_setspecific(key, &key_values[0]) == EINVAL);

	{
		pthread_mutexattr_t ma;
		pthread_t t;

		pthread_mutexattr_init(&ma);
		pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ERRORCHECK);
		pthread_mutex_init(&ec_lock, &ma);
		pthread_mutex_lock(&ec_lock);
		check("errorcheck relock: EDEADLK", pthread_mutex_lock(&ec_lock) == EDEADLK);
		pthread_create(&t, NULL, ec_other, NULL);
		pthread_join(t, NULL);
		check("errorcheck unlock by other thread: EPERM", ec_unlock_other == EPERM);
		check("errorcheck unlock by owner", pthread_mutex_unlock(&ec_lock) == 0);
		pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
		pthread_mutex_init(&rec_lock, &ma);
		check("recursive lock twice", pthread_mutex_lock(&rec_lock) == 0 &&
		      pthread_mutex_lock(&rec_lock) == 0 && pthread_mutex_unlock(&rec_lock) == 0 &&
		      pthread_mutex_unlock(&rec_lock) == 0);
	}

	{
		pthread_mutex_t m;
		pthread_mutexattr_t ma;
		pthread_cond_t c = PTHREAD_COND_INITIALIZER;
		struct timespec now, deadline;

		/* Error-checking: only the owner may unlock it, so the unlock proves the ownership. */
		pthread_mutexattr_init(&ma);
		pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ERRORCHECK);
		pthread_mutex_init(&m, &ma);

		clock_gettime(CLOCK_REALTIME, &now);
		deadline = now;
		deadline.tv_nsec += 2000000; /* 2 ms */
		if (deadline.tv_nsec >= 1000000000L) {
			deadline.tv_sec++;
			deadline.tv_nsec -= 1000000000L;
		}
		pthread_mutex_lock(&m);
		int err = pthread_cond_timedwait(&c, &m, &deadline);
		struct timespec after;

		clock_gettime(CLOCK_REALTIME, &after);
		check("cond timedwait: ETIMEDOUT", err == ETIMEDOUT);
		check("cond timedwait: after the deadline",
		      after.tv_sec > deadline.tv_sec ||
		      (after.tv_sec == deadline.tv_sec && after.tv_nsec >= deadline.tv_nsec));
		check("cond timedwait: mutex held again", pthread_mutex_unlock(&m) == 0);
		check("cond timedwait: bad time refused", pthread_cond_timedwait(&c, &m, NULL) == EINVAL);
	}

	{
		pthread_t t[MAX_THREADS];
		int ok = 1;

		for (unsigned int i = 0; i < n_threads; i++) {
			pthread_create(&t[i], NULL, exit_worker, (void *)(uintptr_t)i);
		}
		for (unsigned int i = 0; i < n_threads; i++) {
			void *ret;

			ok &= pthread_join(t[i], &ret) == 0 && ret == (void *)(uintptr_t)(i * 3);
		}
		check("pthread_exit values joined", ok);
		check("join of a joined thread: ESRCH", pthread_join(t[0], NULL) == ESRCH);
	}

	{
		pthread_t t[MAX_THREADS];
		pthread_attr_t attr;
		int ok = 1;

		pthread_attr_init(&attr);
		for (unsigned int i = 0; i < n_threads; i++) {
			pthread_attr_setcore_np(&attr, (int)(i % n_cores));
			ok &= pthread_create(&t[i], &attr, where_worker, (void *)(uintptr_t)i) == 0;
		}
		for (unsigned int i = 0; i < n_threads; i++) {
			pthread_join(t[i], NULL);
			ok &= ran_on[i] == i % n_cores;
		}
		check("pinned threads run on their core", ok);
		check("pin to a missing core refused",
		      pthread_attr_setcore_np(&attr, (int)n_cores) == EINVAL);
		pthread_t d;

		pthread_attr_setcore_np(&attr, -1);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		ok = pthread_create(&d, &attr, where_worker, (void *)0) == 0;
		check("detached thread: join refused", ok && pthread_join(d, NULL) != 0);
	}

	printf("pthreadtest: %s\n", failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
}
