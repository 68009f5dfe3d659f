/*
 * PThreads test: every primitive and error path of pthread.h, on every core of the SoC, checked
 * against what must happen. One source for both runtimes: bare metal (one thread per core) and
 * Zephyr (zephyr-app/apps/pthreadtest builds this file, several threads per core).
 *
 *   pthreadtest [threads-per-core]   (default 1; the Zephyr application passes 3)
 *
 * Plain PThreads C with the library's placement extensions (pthread_attr_setcore_np,
 * pthread_core_np) and its backend query (pthread_*_impl_np). Prints one line per check group,
 * "<group>: ok" or "<group>: FAILED" after the failed checks, then "pthreadtest: <n> failures",
 * and returns 0 only if every check passed. Nothing printed depends on the backend: the tests
 * compare the subutai and swonly runs line by line.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS   64
/* More than any port's thread slots (Zephyr's CONFIG_SUBUTAI_THREADS_MAX is at most 255). */
#define PROBE_THREADS 256

static unsigned int n_cores, n_threads;
static int failures;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("  FAIL %s:%d: %s\n", __func__, __LINE__, #cond);                   \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

/* In other threads: the failures come back as the thread's return value. */
#define TCHECK(cond)                                                                               \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("  FAIL core %u %s:%d: %s\n", pthread_core_np(), __func__,          \
			       __LINE__, #cond);                                                   \
			fails++;                                                                   \
		}                                                                                  \
	} while (0)

static void report(const char *group, int before)
{
	printf("%s: %s\n", group, failures == before ? "ok" : "FAILED");
}

/* Join threads t[0..n-1]; the sum of their failure counts. */
static int join_all(const pthread_t *t, unsigned int n)
{
	int fails = 0;

	for (unsigned int i = 0; i < n; i++) {
		void *ret = (void *)-1;

		CHECK(pthread_join(t[i], &ret) == 0);
		fails += (int)(intptr_t)ret;
	}
	return fails;
}

/* Run fn in every thread of the test: the main thread is thread 0, the others are created. */
static void run_all(void *(*fn)(void *))
{
	pthread_t t[MAX_THREADS];
	unsigned int created = 1;

	for (; created < n_threads; created++) {
		if (pthread_create(&t[created], NULL, fn, (void *)(uintptr_t)created) != 0) {
			CHECK(!"pthread_create");
			break;
		}
	}
	failures += (int)(intptr_t)fn((void *)0);
	failures += join_all(&t[1], created - 1);
}

/* A gate: threads wait at it until the main thread opens it. Each opening has a number. */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_opened = PTHREAD_COND_INITIALIZER;
static unsigned int gate_number;

static void *wait_at_gate(void *arg)
{
	unsigned int number = (unsigned int)(uintptr_t)arg;

	pthread_mutex_lock(&gate_lock);
	while (gate_number < number) {
		pthread_cond_wait(&gate_opened, &gate_lock);
	}
	pthread_mutex_unlock(&gate_lock);
	return NULL;
}

static void *next_gate(void)
{
	return (void *)(uintptr_t)(gate_number + 1);
}

static void open_gate(void)
{
	pthread_mutex_lock(&gate_lock);
	gate_number++;
	pthread_cond_broadcast(&gate_opened);
	pthread_mutex_unlock(&gate_lock);
}

/* Threads: create, join, exit, self, equal, detach, placement. */

static void *double_it(void *arg)
{
	if ((intptr_t)arg == 7) {
		pthread_exit((void *)(intptr_t)14);
	}
	return (void *)((intptr_t)arg * 2);
}

static void *self_id(void *arg)
{
	*(pthread_t *)arg = pthread_self();
	return NULL;
}

static unsigned int ran_on[MAX_THREADS];

static void *where(void *arg)
{
	ran_on[(uintptr_t)arg] = pthread_core_np();
	return NULL;
}

static void test_threads(void)
{
	int before = failures;
	pthread_t t[MAX_THREADS], ids[MAX_THREADS];

	/* Return values, through return and through pthread_exit (argument 7), twice per slot. */
	for (unsigned int round = 0; round < 2; round++) {
		for (unsigned int i = 1; i < n_threads; i++) {
			CHECK(pthread_create(&t[i], NULL, double_it,
					     (void *)(intptr_t)(i + 5 * round)) == 0);
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
	CHECK(pthread_join(t[1], NULL) == ESRCH); /* joined already */

	/* Placement: thread i on core i mod cores; the main thread is on core 0. */
	pthread_attr_t attr;

	CHECK(pthread_attr_init(&attr) == 0);
	for (unsigned int i = 1; i < n_threads; i++) {
		CHECK(pthread_attr_setcore_np(&attr, (int)(i % n_cores)) == 0);
		CHECK(pthread_create(&t[i], &attr, where, (void *)(uintptr_t)i) == 0);
	}
	for (unsigned int i = 1; i < n_threads; i++) {
		CHECK(pthread_join(t[i], NULL) == 0);
		CHECK(ran_on[i] == i % n_cores);
	}
	CHECK(pthread_core_np() == 0);
	CHECK(pthread_attr_setcore_np(&attr, (int)n_cores) == EINVAL);
	CHECK(pthread_attr_setcore_np(&attr, -2) == EINVAL);

	/* Detached threads: not joinable while they run, their handle stale once they are gone (the
	 * main thread polls for that). They run on the last core, so the polling never keeps them
	 * from finishing, and that core is free again before the next test. */
	int state = -1;
	pthread_t d;
	int err;

	CHECK(pthread_attr_setcore_np(&attr, (int)n_cores - 1) == 0);
	CHECK(pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0);
	CHECK(pthread_attr_getdetachstate(&attr, &state) == 0 && state == PTHREAD_CREATE_DETACHED);
	CHECK(pthread_create(&d, &attr, wait_at_gate, next_gate()) == 0);
	CHECK(pthread_join(d, NULL) == EINVAL);
	CHECK(pthread_detach(d) == EINVAL);
	open_gate();
	while ((err = pthread_join(d, NULL)) == EINVAL) {
	}
	CHECK(err == ESRCH);

	/* A joinable thread detached while it waits. */
	CHECK(pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_JOINABLE) == 0);
	CHECK(pthread_create(&d, &attr, wait_at_gate, next_gate()) == 0);
	CHECK(pthread_detach(d) == 0);
	CHECK(pthread_detach(d) == EINVAL);
	CHECK(pthread_join(d, NULL) == EINVAL);
	open_gate();
	while ((err = pthread_detach(d)) == EINVAL) {
	}
	CHECK(err == ESRCH);
	CHECK(pthread_attr_destroy(&attr) == 0);
	report("threads", before);
}

static void test_thread_errors(void)
{
	int before = failures;
	static pthread_t t[PROBE_THREADS];
	pthread_attr_t attr;

	CHECK(pthread_create(NULL, NULL, double_it, NULL) == EINVAL);
	CHECK(pthread_create(&t[0], NULL, NULL, NULL) == EINVAL);
	memset(&attr, 0, sizeof(attr));
	CHECK(pthread_create(&t[0], &attr, double_it, NULL) == EINVAL);
	CHECK(pthread_attr_init(&attr) == 0);
	CHECK(pthread_attr_setdetachstate(&attr, 5) == EINVAL);
	CHECK(pthread_attr_destroy(&attr) == 0);
	CHECK(pthread_attr_destroy(&attr) == EINVAL);
	CHECK(pthread_join(pthread_self(), NULL) == EDEADLK);
	CHECK(pthread_join(0x12345678, NULL) == ESRCH);
	CHECK(pthread_detach(0x12345678) == ESRCH);

	/* Threads that wait until every core or thread slot is taken: then EAGAIN. The test's own
	 * thread count must fit. */
	void *gate = next_gate();
	unsigned int live = 0;
	int err = 0;

	while (live < PROBE_THREADS &&
	       (err = pthread_create(&t[live], NULL, wait_at_gate, gate)) == 0) {
		live++;
	}
	CHECK(err == EAGAIN);
	CHECK(live + 1 >= n_threads);
	open_gate();
	failures += join_all(t, live);
	CHECK(pthread_join(t[0], NULL) == ESRCH);
	report("thread errors", before);
}

/*
 * Placement of threads created without a core: the policy's choices are printed for the test
 * runner, which knows the policy (tests/test_zephyr.py). With per_core > 1 (several threads per
 * core, Zephyr), `crowd` threads are pinned on core n_cores / 2 and n_cores unpinned threads
 * follow, every one alive until all are placed: the least-loaded policy then fills the emptiest
 * cores first (lowest number first), round-robin takes the cores in turn whatever they hold.
 */
static unsigned int placed_on[MAX_THREADS];
static void *placement_gate;

static void *placed_then_wait(void *arg)
{
	*(unsigned int *)arg = pthread_core_np();
	return wait_at_gate(placement_gate);
}

static void test_placement(unsigned int per_core)
{
	int before = failures;
	pthread_t t[MAX_THREADS];
	pthread_attr_t pinned;
	unsigned int crowd = per_core > 1 ? 2 : 1;
	unsigned int free = per_core > 1 ? n_cores : n_cores - 1 - crowd;

	if (crowd + free + 1 > n_threads) {
		return;
	}
	placement_gate = next_gate();
	CHECK(pthread_attr_init(&pinned) == 0);
	CHECK(pthread_attr_setcore_np(&pinned, (int)(n_cores / 2)) == 0);
	for (unsigned int i = 0; i < crowd; i++) {
		CHECK(pthread_create(&t[i], &pinned, wait_at_gate, placement_gate) == 0);
	}
	for (unsigned int i = 0; i < free; i++) {
		CHECK(pthread_create(&t[crowd + i], NULL, placed_then_wait, &placed_on[i]) == 0);
	}
	open_gate();
	failures += join_all(t, crowd + free);
	/* Joined: each thread's record is visible. */
	printf("placement:");
	for (unsigned int i = 0; i < free; i++) {
		CHECK(placed_on[i] < n_cores);
		printf(" %u", placed_on[i]);
	}
	printf("\n");
	CHECK(pthread_attr_destroy(&pinned) == 0);
	report("placement", before);
}

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

static void test_mutex(void)
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

static void test_mutex_types(void)
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

/* Barriers: in every round each thread writes its slot and reads everyone's. */

#define BARRIER_ROUNDS 6

static pthread_barrier_t barrier;
static unsigned int serial_count[BARRIER_ROUNDS];
static unsigned int arrivals[BARRIER_ROUNDS][MAX_THREADS];

static void *barrier_rounds(void *arg)
{
	unsigned int me = (uintptr_t)arg;
	int fails = 0;

	for (unsigned int r = 0; r < BARRIER_ROUNDS; r++) {
		arrivals[r][me] = r * 1000 + me;
		int ret = pthread_barrier_wait(&barrier);

		TCHECK(ret == 0 || ret == PTHREAD_BARRIER_SERIAL_THREAD);
		/* Every thread's write before the barrier is visible after it. */
		for (unsigned int i = 0; i < n_threads; i++) {
			TCHECK(arrivals[r][i] == r * 1000 + i);
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

	CHECK(pthread_barrier_init(&barrier, NULL, n_threads) == 0);
	run_all(barrier_rounds);
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

/* Condition variables: a bounded queue, half the threads produce, the others consume. */

#define QUEUE 4
#define ITEMS 60

static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_not_empty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t q_not_full = PTHREAD_COND_INITIALIZER;
static unsigned int q_items[QUEUE], q_head, q_count, q_produced, q_consumed, q_producers;
static unsigned long q_sum;

static void produce(void)
{
	for (;;) {
		pthread_mutex_lock(&q_lock);
		while (q_count == QUEUE && q_produced < ITEMS) {
			pthread_cond_wait(&q_not_full, &q_lock);
		}
		if (q_produced == ITEMS) {
			pthread_mutex_unlock(&q_lock);
			return;
		}
		q_items[(q_head + q_count) % QUEUE] = ++q_produced;
		q_count++;
		/* Alternate the two ways of waking consumers. */
		if (q_produced % 2) {
			pthread_cond_signal(&q_not_empty);
		} else {
			pthread_cond_broadcast(&q_not_empty);
		}
		pthread_mutex_unlock(&q_lock);
	}
}

static void consume(void)
{
	for (;;) {
		pthread_mutex_lock(&q_lock);
		while (q_count == 0 && q_consumed < ITEMS) {
			pthread_cond_wait(&q_not_empty, &q_lock);
		}
		if (q_consumed == ITEMS) {
			pthread_mutex_unlock(&q_lock);
			return;
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

static void *queue_worker(void *arg)
{
	if ((uintptr_t)arg < q_producers) {
		produce();
	} else {
		consume();
	}
	return NULL;
}

static void test_cond(void)
{
	int before = failures;

	q_producers = n_threads / 2;
	run_all(queue_worker);
	CHECK(q_produced == ITEMS && q_consumed == ITEMS && q_count == 0);
	CHECK(q_sum == (unsigned long)ITEMS * (ITEMS + 1) / 2);
	printf("cond: %u items, sum %lu\n", q_consumed, q_sum);
	report("cond", before);
}

static pthread_cond_t busy_cond;
static pthread_mutex_t busy_mutex;
static unsigned int busy_waiting;

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
	pthread_attr_t attr_elsewhere;

	CHECK(pthread_cond_init(NULL, NULL) == EINVAL);
	memset(&garbage, 0x5a, sizeof(garbage));
	CHECK(pthread_cond_signal(&garbage) == EINVAL);
	CHECK(pthread_cond_init(&c, NULL) == 0);
	CHECK(pthread_cond_signal(&c) == 0); /* nobody waits */
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

	/* Destroying a condition somebody waits on. The waiter runs on the last core: the main
	 * thread polls for it, which would keep a thread on its own core from running. */
	pthread_t t;

	CHECK(pthread_cond_init(&busy_cond, NULL) == 0);
	CHECK(pthread_mutex_init(&busy_mutex, NULL) == 0);
	CHECK(pthread_attr_init(&attr_elsewhere) == 0);
	CHECK(pthread_attr_setcore_np(&attr_elsewhere, (int)n_cores - 1) == 0);
	CHECK(pthread_create(&t, &attr_elsewhere, wait_once, NULL) == 0);
	CHECK(pthread_attr_destroy(&attr_elsewhere) == 0);
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
	report("cond errors", before);
}

/* Timed waits: nobody signals, the wait ends after its deadline with the mutex held again. */

static void test_timedwait(void)
{
	int before = failures;
	pthread_mutex_t m;
	pthread_mutexattr_t attr;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	struct timespec deadline, after;

	/* Error-checking: only the owner may unlock it, so the unlock proves the ownership. */
	CHECK(pthread_mutexattr_init(&attr) == 0);
	CHECK(pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK) == 0);
	CHECK(pthread_mutex_init(&m, &attr) == 0);
	CHECK(clock_gettime(CLOCK_REALTIME, &deadline) == 0);
	deadline.tv_nsec += 2000000; /* 2 ms */
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	CHECK(pthread_mutex_lock(&m) == 0);
	CHECK(pthread_cond_timedwait(&c, &m, &deadline) == ETIMEDOUT);
	CHECK(clock_gettime(CLOCK_REALTIME, &after) == 0);
	CHECK(after.tv_sec > deadline.tv_sec ||
	      (after.tv_sec == deadline.tv_sec && after.tv_nsec >= deadline.tv_nsec));
	CHECK(pthread_mutex_unlock(&m) == 0);
	CHECK(pthread_cond_timedwait(&c, &m, NULL) == EINVAL);
	CHECK(pthread_cond_destroy(&c) == 0);
	CHECK(pthread_mutex_destroy(&m) == 0);
	report("timedwait", before);
}

/* Timed locks. */

static pthread_mutex_t tl_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t tl_barrier;
static uint64_t tl_release; /* CLOCK_MONOTONIC ns at which the holder unlocks */
static volatile unsigned int tl_waiter_got;

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static struct timespec at_ns(uint64_t ns)
{
	struct timespec t = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};

	return t;
}

/* Holds tl_mutex from the barrier until tl_release. */
static void *tl_holder(void *arg)
{
	int fails = 0;

	(void)arg;
	TCHECK(pthread_mutex_lock(&tl_mutex) == 0);
	/* Twice: held; then tl_release is set (and seen: a barrier is an acquire). */
	pthread_barrier_wait(&tl_barrier);
	pthread_barrier_wait(&tl_barrier);
	while (now_ns() < tl_release) {
	}
	TCHECK(pthread_mutex_unlock(&tl_mutex) == 0);
	return (void *)(intptr_t)fails;
}

/* Holds tl_mutex until the main thread's timed lock has returned. */
static void *tl_keeper(void *arg)
{
	int fails = 0;

	(void)arg;
	TCHECK(pthread_mutex_lock(&tl_mutex) == 0);
	pthread_barrier_wait(&tl_barrier);
	pthread_barrier_wait(&tl_barrier);
	TCHECK(pthread_mutex_unlock(&tl_mutex) == 0);
	return (void *)(intptr_t)fails;
}

/* Queued behind the holder with a plain lock: must get the mutex whatever the timed locker did. */
static void *tl_waiter(void *arg)
{
	int fails = 0;

	(void)arg;
	pthread_barrier_wait(&tl_barrier);
	pthread_barrier_wait(&tl_barrier);
	TCHECK(pthread_mutex_lock(&tl_mutex) == 0);
	tl_waiter_got++;
	TCHECK(pthread_mutex_unlock(&tl_mutex) == 0);
	return (void *)(intptr_t)fails;
}

static void test_timedlock(void)
{
	int before = failures;
	pthread_mutexattr_t attr;
	pthread_mutex_t ec, rec;
	struct timespec past = {0, 0}, soon;
	pthread_t t[2];
	void *ret;

	/* Free: taken at once, even with a deadline in the past; bad arguments. */
	CHECK(pthread_mutex_timedlock(&tl_mutex, &past) == 0);
	CHECK(pthread_mutex_unlock(&tl_mutex) == 0);
	CHECK(pthread_mutex_timedlock(NULL, &past) == EINVAL);
	/* Owned by the caller: error-checking says EDEADLK, recursive counts one more. */
	CHECK(pthread_mutexattr_init(&attr) == 0);
	CHECK(pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK) == 0);
	CHECK(pthread_mutex_init(&ec, &attr) == 0);
	CHECK(pthread_mutex_lock(&ec) == 0);
	soon = at_ns(now_ns() + 100000);
	CHECK(pthread_mutex_timedlock(&ec, &soon) == EDEADLK);
	CHECK(pthread_mutex_unlock(&ec) == 0);
	CHECK(pthread_mutex_timedlock(&ec, &soon) == 0);
	CHECK(pthread_mutex_unlock(&ec) == 0);
	CHECK(pthread_mutex_unlock(&ec) == EPERM);
	CHECK(pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE) == 0);
	CHECK(pthread_mutex_init(&rec, &attr) == 0);
	CHECK(pthread_mutex_lock(&rec) == 0);
	CHECK(pthread_mutex_timedlock(&rec, &soon) == 0);
	CHECK(pthread_mutex_unlock(&rec) == 0 && pthread_mutex_unlock(&rec) == 0);
	CHECK(pthread_mutex_unlock(&rec) == EPERM);
	CHECK(pthread_mutex_destroy(&ec) == 0 && pthread_mutex_destroy(&rec) == 0);
	CHECK(pthread_mutexattr_destroy(&attr) == 0);

	/* Held by another thread until it returns: a timeout, not before the deadline. */
	CHECK(pthread_barrier_init(&tl_barrier, NULL, 2) == 0);
	CHECK(pthread_create(&t[0], NULL, tl_keeper, NULL) == 0);
	pthread_barrier_wait(&tl_barrier);
	soon = at_ns(now_ns() + 500000);
	CHECK(pthread_mutex_timedlock(&tl_mutex, &soon) == ETIMEDOUT);
	CHECK(now_ns() >= (uint64_t)soon.tv_sec * 1000000000u + (uint64_t)soon.tv_nsec);
	pthread_barrier_wait(&tl_barrier);
	CHECK(pthread_join(t[0], &ret) == 0 && ret == NULL);
	CHECK(pthread_barrier_destroy(&tl_barrier) == 0);
	soon.tv_nsec = 1000000000L;
	CHECK(pthread_mutex_trylock(&tl_mutex) == 0);
	CHECK(pthread_mutex_timedlock(&tl_mutex, &soon) == EINVAL); /* held, bad time */
	CHECK(pthread_mutex_unlock(&tl_mutex) == 0);

	/*
	 * Held by another thread, which unlocks at tl_release, with a plain locker queued too: a
	 * timed lock whose deadline is before, at or after the release either times out (not before
	 * its deadline) or gets the mutex; the queued locker always gets it in the end (no grant is
	 * lost, no entry left behind). Deadlines around the release hit the moment both happen.
	 */
	static const int offsets_us[] = {-300, -20, -5, 0, 0, 5, 20, 2000};
	unsigned int timed_out = 0, taken = 0;

	pthread_attr_t on[2];

	/* Main, holder and waiter each on its own core (the holder spins until it unlocks). */
	bool waiter = n_cores >= 3;

	for (unsigned int k = 0; k < 2; k++) {
		CHECK(pthread_attr_init(&on[k]) == 0);
		if (k == 0 || waiter) {
			CHECK(pthread_attr_setcore_np(&on[k], (int)(k + 1)) == 0);
		}
	}
	for (unsigned int i = 0; i < sizeof(offsets_us) / sizeof(offsets_us[0]); i++) {
		CHECK(pthread_barrier_init(&tl_barrier, NULL, waiter ? 3 : 2) == 0);
		tl_waiter_got = 0;
		CHECK(pthread_create(&t[0], &on[0], tl_holder, NULL) == 0);
		if (waiter) {
			CHECK(pthread_create(&t[1], &on[1], tl_waiter, NULL) == 0);
		}
		pthread_barrier_wait(&tl_barrier);
		/* Thread start-up, here or on the other cores, is behind us: the release is 1 ms
		 * on. */
		tl_release = now_ns() + 1000000;
		pthread_barrier_wait(&tl_barrier);
		CHECK(pthread_mutex_trylock(&tl_mutex) == EBUSY);
		uint64_t deadline = tl_release + (int64_t)offsets_us[i] * 1000;
		struct timespec abstime = at_ns(deadline);
		int err = pthread_mutex_timedlock(&tl_mutex, &abstime);

		if (err == ETIMEDOUT) {
			timed_out++;
			CHECK(now_ns() >= deadline);
		} else {
			CHECK(err == 0);
			taken++;
			CHECK(pthread_mutex_unlock(&tl_mutex) == 0);
		}
		for (unsigned int k = 0; k < (waiter ? 2u : 1u); k++) {
			CHECK(pthread_join(t[k], &ret) == 0 && ret == NULL);
		}
		CHECK(!waiter || tl_waiter_got == 1);
		/* Nobody holds it now. */
		CHECK(pthread_mutex_trylock(&tl_mutex) == 0 &&
		      pthread_mutex_unlock(&tl_mutex) == 0);
		CHECK(pthread_barrier_destroy(&tl_barrier) == 0);
	}
	for (unsigned int k = 0; k < 2; k++) {
		CHECK(pthread_attr_destroy(&on[k]) == 0);
	}
	/* Long after the release it gets the mutex (long before it, it times out, but a kernel
	 * tick may round the timeout up past the release: Zephyr's are 10 ms here). */
	CHECK(taken >= 1 && timed_out + taken == sizeof(offsets_us) / sizeof(offsets_us[0]));
	report("timedlock", before);
}

/* Clocks, sleeping and yielding. */

static long long ns_between(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1000000000LL + (b->tv_nsec - a->tv_nsec);
}

static void add_ns(struct timespec *t, long ns)
{
	t->tv_nsec += ns;
	while (t->tv_nsec >= 1000000000L) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000L;
	}
}

static volatile unsigned int neighbour_ran;

static void *neighbour(void *arg)
{
	(void)arg;
	neighbour_ran = 1;
	return NULL;
}

/* A thread on the caller's own core, where the runtime allows one (Zephyr), else none. */
static bool start_neighbour(pthread_t *t)
{
	pthread_attr_t attr;
	bool started;

	neighbour_ran = 0;
	CHECK(pthread_attr_init(&attr) == 0);
	/* Bare metal, the main thread's core hosts no other thread: EINVAL. */
	started = pthread_attr_setcore_np(&attr, (int)pthread_core_np()) == 0 &&
		  pthread_create(t, &attr, neighbour, NULL) == 0;
	CHECK(pthread_attr_destroy(&attr) == 0);
	return started;
}

static void test_clocks_sleep(void)
{
	int before = failures;
	struct timespec res, t0, t1, rem = {5, 5};
	clockid_t clock;
	pthread_condattr_t cattr;
	pthread_cond_t c;
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_t t;

	/* Both clocks: one cycle of resolution, never going back. */
	CHECK(clock_getres(CLOCK_REALTIME, &res) == 0 && res.tv_sec == 0 && res.tv_nsec > 0 &&
	      res.tv_nsec < 1000);
	CHECK(clock_getres(CLOCK_MONOTONIC, NULL) == 0);
	errno = 0;
	CHECK(clock_getres((clockid_t)99, &res) == -1 && errno == EINVAL);
	errno = 0;
	CHECK(clock_gettime((clockid_t)99, &t0) == -1 && errno == EINVAL);
	CHECK(clock_gettime(CLOCK_MONOTONIC, &t0) == 0 && clock_gettime(CLOCK_MONOTONIC, &t1) == 0);
	CHECK(ns_between(&t0, &t1) >= 0);

	/* The condition clock attribute, and a timed wait on CLOCK_MONOTONIC. */
	CHECK(pthread_condattr_init(&cattr) == 0);
	CHECK(pthread_condattr_getclock(&cattr, &clock) == 0 && clock == CLOCK_REALTIME);
	CHECK(pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC) == 0);
	CHECK(pthread_condattr_getclock(&cattr, &clock) == 0 && clock == CLOCK_MONOTONIC);
	CHECK(pthread_condattr_setclock(&cattr, (clockid_t)99) == EINVAL);
	CHECK(pthread_condattr_getclock(&cattr, NULL) == EINVAL);
	CHECK(pthread_cond_init(&c, &cattr) == 0);
	CHECK(pthread_condattr_destroy(&cattr) == 0);
	CHECK(pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC) == EINVAL); /* destroyed */
	CHECK(clock_gettime(CLOCK_MONOTONIC, &t0) == 0);
	t1 = t0;
	add_ns(&t1, 1000000);
	CHECK(pthread_mutex_lock(&m) == 0);
	CHECK(pthread_cond_timedwait(&c, &m, &t1) == ETIMEDOUT);
	CHECK(pthread_mutex_unlock(&m) == 0);
	CHECK(clock_gettime(CLOCK_MONOTONIC, &t0) == 0 && ns_between(&t1, &t0) >= 0);
	CHECK(pthread_cond_destroy(&c) == 0);
	CHECK(pthread_mutex_destroy(&m) == 0);

	/* Sleeping: at least as long as asked, nothing remains; bad durations refused. */
	struct timespec one_ms = {0, 1000000};

	CHECK(clock_gettime(CLOCK_MONOTONIC, &t0) == 0);
	CHECK(nanosleep(&one_ms, &rem) == 0 && rem.tv_sec == 0 && rem.tv_nsec == 0);
	CHECK(clock_gettime(CLOCK_MONOTONIC, &t1) == 0 && ns_between(&t0, &t1) >= 1000000);
	CHECK(usleep(500) == 0);
	CHECK(clock_gettime(CLOCK_MONOTONIC, &t0) == 0 && ns_between(&t1, &t0) >= 500000);
	CHECK(sleep(0) == 0);
	struct timespec bad[] = {{0, 1000000000L}, {0, -1}, {-1, 0}};

	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		CHECK(nanosleep(&bad[i], NULL) == -1 && errno == EINVAL);
	}
	errno = 0;
	CHECK(nanosleep(NULL, NULL) == -1 && errno == EINVAL);

	/* A sleep and a yield let the core's other threads run (where a core runs several). */
	CHECK(sched_yield() == 0);
	if (start_neighbour(&t)) {
		CHECK(nanosleep(&one_ms, NULL) == 0);
		CHECK(neighbour_ran);
		CHECK(pthread_join(t, NULL) == 0);
	}
	if (start_neighbour(&t)) {
		for (unsigned int i = 0; i < 1000 && !neighbour_ran; i++) {
			CHECK(sched_yield() == 0);
		}
		CHECK(neighbour_ran);
		CHECK(pthread_join(t, NULL) == 0);
	}
	report("clocks and sleeping", before);
}

/*
 * Cancellation: a thread blocked in each cancellation point is got out and runs its cleanup
 * handlers (innermost first, a condition waiter with its mutex), its joiner gets
 * PTHREAD_CANCELED; disabled cancellation waits; the objects it blocked on work on afterwards.
 */

static pthread_mutex_t cx_mutex; /* error-checking: a handler's unlock proves ownership */
static pthread_cond_t cx_cond = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t cx_barrier;      /* the main thread and one worker */
static pthread_barrier_t cx_late_barrier; /* the main thread and a joined thread */
static unsigned int cx_waiting;           /* under cx_mutex */
static unsigned int cx_log[8], cx_logged; /* cleanup handlers run, in order */
static volatile unsigned int cx_stage;    /* how far a worker got (read after its join) */
static volatile int cx_fails;             /* failed checks of a worker that ends cancelled */

static void cx_note(void *arg)
{
	if (cx_logged < sizeof(cx_log) / sizeof(cx_log[0])) {
		cx_log[cx_logged] = (unsigned int)(uintptr_t)arg;
	}
	cx_logged++;
}

/* A condition waiter's handler: the mutex is held again when it runs. */
static void cx_unlock(void *arg)
{
	cx_note(arg);
	if (pthread_mutex_unlock(&cx_mutex) != 0) {
		cx_note((void *)99);
	}
}

/* Waits on cx_cond for ever (arg: 1 for a timed wait with a far deadline). */
static void *cx_cond_waiter(void *arg)
{
	pthread_mutex_lock(&cx_mutex);
	pthread_cleanup_push(cx_unlock, (void *)1);
	cx_waiting = 1;
	for (;;) {
		if (arg) {
			struct timespec far;

			clock_gettime(CLOCK_REALTIME, &far);
			far.tv_sec += 1000;
			pthread_cond_timedwait(&cx_cond, &cx_mutex, &far);
		} else {
			pthread_cond_wait(&cx_cond, &cx_mutex);
		}
		cx_stage++;
	}
	pthread_cleanup_pop(0);
	return NULL;
}

/* Cancels a condition waiter once it waits (holding the mutex meanwhile if hold). */
static void cx_cancel_cond_waiter(bool timed, bool hold)
{
	pthread_t t;
	void *ret = NULL;
	unsigned int waiting = 0;

	cx_waiting = 0;
	cx_logged = 0;
	cx_stage = 0;
	CHECK(pthread_create(&t, NULL, cx_cond_waiter, (void *)(uintptr_t)timed) == 0);
	/* Once the mutex is free again with cx_waiting set, the waiter is in the condition's queue.
	 */
	while (!waiting) {
		CHECK(pthread_mutex_lock(&cx_mutex) == 0);
		waiting = cx_waiting;
		if (!waiting || !hold) {
			CHECK(pthread_mutex_unlock(&cx_mutex) == 0);
		}
	}
	CHECK(pthread_cancel(t) == 0);
	CHECK(pthread_cancel(t) == 0); /* a second request changes nothing */
	if (hold) {
		CHECK(pthread_mutex_unlock(&cx_mutex) == 0);
	}
	CHECK(pthread_join(t, &ret) == 0 && ret == PTHREAD_CANCELED);
	CHECK(cx_logged == 1 && cx_log[0] == 1);
	/* Woken by the cancellation, not by a signal: at most a spurious wake-up before it. */
	CHECK(cx_stage <= 1);
	/* The handler unlocked the mutex; the condition works on. */
	CHECK(pthread_mutex_trylock(&cx_mutex) == 0 && pthread_mutex_unlock(&cx_mutex) == 0);
}

/* Joins arg (a thread) after the barrier; its handler notes 2. */
static void *cx_joiner(void *arg)
{
	pthread_cleanup_push(cx_note, (void *)2);
	pthread_barrier_wait(&cx_barrier);
	pthread_join((pthread_t)(uintptr_t)arg, NULL);
	cx_stage = 1;
	pthread_cleanup_pop(0);
	return NULL;
}

/* Returns 42 once the main thread lets it. */
static void *cx_late(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&cx_late_barrier);
	return (void *)42;
}

/* Sleeps after the barrier (arg: 0 sleep, 1 nanosleep, 2 usleep), handlers 3 then 4. */
static void *cx_sleeper(void *arg)
{
	struct timespec long_time = {1000, 0};

	pthread_cleanup_push(cx_note, (void *)4);
	pthread_cleanup_push(cx_note, (void *)3);
	pthread_barrier_wait(&cx_barrier);
	switch ((uintptr_t)arg) {
	case 0:
		sleep(1000);
		break;
	case 1:
		nanosleep(&long_time, NULL);
		break;
	default:
		usleep(1000000000u);
		break;
	}
	cx_stage = 1;
	pthread_cleanup_pop(0);
	pthread_cleanup_pop(0);
	return NULL;
}

/* Loops in pthread_testcancel(). */
static void *cx_spinner(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&cx_barrier);
	for (;;) {
		pthread_testcancel();
	}
	return NULL;
}

/*
 * Cancellation disabled across a request: a sleep and a timed wait run to their end, then the
 * thread enables it again; deferred, it acts at its next point, asynchronous at once.
 */
static void *cx_disabled(void *arg)
{
	int fails = 0, old = -1;
	struct timespec short_time = {0, 200000}, soon;

	TCHECK(pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old) == 0 &&
	       old == PTHREAD_CANCEL_ENABLE);
	pthread_barrier_wait(&cx_barrier);
	pthread_barrier_wait(&cx_barrier); /* cancelled by now */
	TCHECK(nanosleep(&short_time, NULL) == 0);
	pthread_testcancel();
	TCHECK(pthread_mutex_lock(&cx_mutex) == 0);
	clock_gettime(CLOCK_REALTIME, &soon);
	soon.tv_nsec += 100000;
	if (soon.tv_nsec >= 1000000000L) {
		soon.tv_sec++;
		soon.tv_nsec -= 1000000000L;
	}
	TCHECK(pthread_cond_timedwait(&cx_cond, &cx_mutex, &soon) == ETIMEDOUT);
	TCHECK(pthread_mutex_unlock(&cx_mutex) == 0);
	cx_stage = 1;
	cx_fails = fails;
	if (arg) {
		TCHECK(pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old) == 0 &&
		       old == PTHREAD_CANCEL_DEFERRED);
		cx_stage = 2;
		/* Pending and asynchronous: enabling acts at once. */
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
		cx_stage = 3;
	} else {
		TCHECK(pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old) == 0 &&
		       old == PTHREAD_CANCEL_DISABLE);
		cx_stage = 2;
		pthread_testcancel();
		cx_stage = 3;
	}
	return (void *)(intptr_t)(fails + 100);
}

/* Cancels itself, then waits on the condition: acted on at the entry, with the mutex. */
static void *cx_self(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&cx_mutex);
	pthread_cleanup_push(cx_unlock, (void *)5);
	pthread_cancel(pthread_self());
	cx_stage = 1;
	pthread_cond_wait(&cx_cond, &cx_mutex);
	cx_stage = 2;
	pthread_cleanup_pop(1);
	return NULL;
}

/* Cleanup handlers without cancellation: pop with and without running, and pthread_exit(). */
static void *cx_handlers(void *arg)
{
	(void)arg;
	pthread_cleanup_push(cx_note, (void *)7);
	pthread_cleanup_push(cx_note, (void *)6);
	pthread_cleanup_pop(1);
	pthread_cleanup_push(cx_note, (void *)8);
	pthread_cleanup_pop(0);
	pthread_exit((void *)9);
	pthread_cleanup_pop(0);
	return NULL;
}

/* Creates fn(arg), meets it at the barrier, lets it block, cancels it; its return value. */
static void *cx_cancel_after_barrier(void *(*fn)(void *), void *arg)
{
	struct timespec settle = {0, 2000000};
	pthread_t t;
	void *ret = NULL;

	cx_logged = 0;
	cx_stage = 0;
	CHECK(pthread_create(&t, NULL, fn, arg) == 0);
	pthread_barrier_wait(&cx_barrier);
	CHECK(nanosleep(&settle, NULL) == 0);
	CHECK(pthread_cancel(t) == 0);
	CHECK(pthread_join(t, &ret) == 0);
	return ret;
}

static void test_cancel(void)
{
	int before = failures;
	pthread_mutexattr_t attr;
	pthread_t t, late;
	void *ret = NULL;
	int old;

	/* Bad arguments. */
	CHECK(pthread_cancel((pthread_t)0) == ESRCH);
	CHECK(pthread_setcancelstate(7, NULL) == EINVAL);
	CHECK(pthread_setcanceltype(7, NULL) == EINVAL);
	CHECK(pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old) == 0 &&
	      old == PTHREAD_CANCEL_ENABLE);
	CHECK(pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &old) == 0 &&
	      old == PTHREAD_CANCEL_DEFERRED);
	pthread_testcancel(); /* nothing requested */

	CHECK(pthread_mutexattr_init(&attr) == 0);
	CHECK(pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK) == 0);
	CHECK(pthread_mutex_init(&cx_mutex, &attr) == 0);
	CHECK(pthread_mutexattr_destroy(&attr) == 0);
	CHECK(pthread_barrier_init(&cx_barrier, NULL, 2) == 0);
	CHECK(pthread_barrier_init(&cx_late_barrier, NULL, 2) == 0);

	/* Condition waits, untimed and timed, the canceller holding the mutex or not. */
	cx_cancel_cond_waiter(false, false);
	cx_cancel_cond_waiter(false, true);
	cx_cancel_cond_waiter(true, false);
	cx_cancel_cond_waiter(true, true);

	/* Sleeps: handlers innermost first. */
	for (uintptr_t how = 0; how < 3; how++) {
		ret = cx_cancel_after_barrier(cx_sleeper, (void *)how);
		CHECK(ret == PTHREAD_CANCELED && cx_stage == 0);
		CHECK(cx_logged == 2 && cx_log[0] == 3 && cx_log[1] == 4);
	}
	ret = cx_cancel_after_barrier(cx_spinner, NULL);
	CHECK(ret == PTHREAD_CANCELED);

	/* A join (needs two workers): the joined thread stays joinable. */
	if (n_threads >= 3) {
		CHECK(pthread_create(&late, NULL, cx_late, NULL) == 0);
		ret = cx_cancel_after_barrier(cx_joiner, (void *)(uintptr_t)late);
		CHECK(ret == PTHREAD_CANCELED && cx_stage == 0 && cx_logged == 1 && cx_log[0] == 2);
		pthread_barrier_wait(&cx_late_barrier);
		CHECK(pthread_join(late, &ret) == 0 && ret == (void *)42);
	}

	/* Disabled, then enabled: deferred and asynchronous. */
	for (uintptr_t async = 0; async < 2; async++) {
		cx_stage = 0;
		cx_fails = -1;
		CHECK(pthread_create(&t, NULL, cx_disabled, (void *)async) == 0);
		pthread_barrier_wait(&cx_barrier);
		CHECK(pthread_cancel(t) == 0);
		pthread_barrier_wait(&cx_barrier);
		CHECK(pthread_join(t, &ret) == 0 && ret == PTHREAD_CANCELED && cx_stage == 2);
		CHECK(cx_fails == 0);
	}

	/* Requested before the wait: acted on at its entry. */
	cx_logged = 0;
	cx_stage = 0;
	CHECK(pthread_create(&t, NULL, cx_self, NULL) == 0);
	CHECK(pthread_join(t, &ret) == 0 && ret == PTHREAD_CANCELED && cx_stage == 1);
	CHECK(cx_logged == 1 && cx_log[0] == 5);

	/* Handlers without cancellation; an exited, unjoined thread can still be "cancelled". */
	cx_logged = 0;
	CHECK(pthread_create(&t, NULL, cx_handlers, NULL) == 0);
	CHECK(pthread_join(t, &ret) == 0 && ret == (void *)9);
	CHECK(cx_logged == 2 && cx_log[0] == 6 && cx_log[1] == 7);

	/* The objects the cancelled threads blocked on are whole: nothing left queued. */
	CHECK(pthread_mutex_lock(&cx_mutex) == 0);
	CHECK(pthread_cond_signal(&cx_cond) == 0 && pthread_cond_broadcast(&cx_cond) == 0);
	CHECK(pthread_mutex_unlock(&cx_mutex) == 0);
	CHECK(pthread_cond_destroy(&cx_cond) == 0);
	CHECK(pthread_mutex_destroy(&cx_mutex) == 0);
	CHECK(pthread_barrier_destroy(&cx_barrier) == 0);
	CHECK(pthread_barrier_destroy(&cx_late_barrier) == 0);
	CHECK(pthread_cancel(t) == ESRCH); /* joined */
	report("cancellation", before);
}

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

static void *once_key_worker(void *arg)
{
	unsigned int me = (unsigned int)(uintptr_t)arg;
	int fails = 0;

	TCHECK(pthread_once(&once, once_init) == 0);
	TCHECK(pthread_getspecific(key) == NULL);
	key_values[me] = me + 100;
	TCHECK(pthread_setspecific(key, &key_values[me]) == 0);
	/* Everyone has set its value before anyone reads its own back. */
	pthread_barrier_wait(&barrier);
	TCHECK(pthread_getspecific(key) == &key_values[me]);
	return (void *)(intptr_t)fails;
}

static void test_once_keys(void)
{
	int before = failures;

	CHECK(pthread_key_create(&key, key_destructor) == 0);
	CHECK(pthread_barrier_init(&barrier, NULL, n_threads) == 0);
	run_all(once_key_worker);
	CHECK(pthread_barrier_destroy(&barrier) == 0);
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
	report("once and keys", before);
}

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

/* The number of cores: one more than the last the placement extension accepts (bare metal, core
 * 0 hosts only the main thread and is refused). */
static unsigned int count_cores(void)
{
	pthread_attr_t attr;
	unsigned int cores = 0;

	pthread_attr_init(&attr);
	for (unsigned int core = 0; core < MAX_THREADS; core++) {
		if (pthread_attr_setcore_np(&attr, (int)core) == 0) {
			cores = core + 1;
		}
	}
	pthread_attr_destroy(&attr);
	return cores;
}

int main(int argc, char **argv)
{
	unsigned int per_core = argc > 1 ? (unsigned int)atoi(argv[1]) : 1;

	n_cores = count_cores();
	n_threads = n_cores * per_core;
	if (n_cores < 2 || per_core < 1 || n_threads > MAX_THREADS) {
		printf("pthreadtest: %u cores, %u threads per core: needs 2 cores or more and 1 to "
		       "%d "
		       "threads\n",
		       n_cores, per_core, MAX_THREADS);
		return 2;
	}
	printf("pthreadtest: %u cores, %u threads\n", n_cores, n_threads);
	test_threads();
	test_thread_errors();
	test_placement(per_core);
	test_mutex();
	test_mutex_types();
	test_mutex_errors();
	test_barrier();
	test_cond();
	test_cond_errors();
	test_timedwait();
	test_timedlock();
	test_clocks_sleep();
	test_cancel();
	test_once_keys();
	test_fallback();
	printf("pthreadtest: %d failures\n", failures);
	return failures ? 1 : 0;
}
