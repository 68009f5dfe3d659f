/* pthreadtest: timedlock (see main.c). */
#include "pthreadtest.h"

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

void test_timedlock(void)
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
	/* Held, and the time already past (0 included, which no wait may take for "none"). */
	CHECK(pthread_mutex_timedlock(&tl_mutex, &past) == ETIMEDOUT);
	soon = at_ns(now_ns() - 1000);
	CHECK(pthread_mutex_timedlock(&tl_mutex, &soon) == ETIMEDOUT);
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
