/* pthreadtest: clocks (see main.c). */
#include "pthreadtest.h"

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

void test_clocks_sleep(void)
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
