/* pthreadtest: threads (see main.c). */
#include "pthreadtest.h"

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

void test_threads(void)
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

void test_thread_errors(void)
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

	/* Stack sizes: below PTHREAD_STACK_MIN or beyond what the port can give, EINVAL. */
	size_t size = 0;

	CHECK(pthread_attr_init(&attr) == 0);
	CHECK(pthread_attr_getstacksize(&attr, &size) == 0 && size >= PTHREAD_STACK_MIN);
	CHECK(pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN - 1) == EINVAL);
	CHECK(pthread_attr_setstacksize(&attr, SIZE_MAX) == EINVAL);
	CHECK(pthread_attr_setstacksize(NULL, PROBE_STACK) == EINVAL);
	CHECK(pthread_attr_setstacksize(&attr, PROBE_STACK) == 0);
	CHECK(pthread_attr_getstacksize(&attr, &size) == 0 && size == PROBE_STACK);

	/* Threads that wait until every core or thread slot is taken: then EAGAIN. The test's own
	 * thread count must fit. Bare metal gives them small stacks, so that the slots run out
	 * before the heap: a heap stack is cleared as it is allocated, and the default 8 KiB ones
	 * took 50,000 cycles each and ran a 1 MiB heap dry after 93 threads. */
	void *gate = next_gate();
	unsigned int live = 0;
	int err = 0;
#ifdef CONFIG_SUBUTAI_THREADS_MAX
	pthread_attr_t *probe_attr = NULL;
#else
	pthread_attr_t *probe_attr = &attr;
#endif

	while (live < PROBE_THREADS &&
	       (err = pthread_create(&t[live], probe_attr, wait_at_gate, gate)) == 0) {
		live++;
	}
	CHECK(err == EAGAIN);
	CHECK(live + 1 >= n_threads);
#ifndef CONFIG_SUBUTAI_THREADS_MAX
	/* Bare metal: user-level threads, as many as POSIX's minimum (_POSIX_THREAD_THREADS_MAX)
	 * where the slots allow, whatever the cores. */
	CHECK(live + 1 >= (PTHREAD_THREADS_MAX < 64 ? PTHREAD_THREADS_MAX : 64));
#endif
	open_gate();
	failures += join_all(t, live);
	CHECK(pthread_join(t[0], NULL) == ESRCH);
#ifndef CONFIG_SUBUTAI_THREADS_MAX
	/* Bare metal: the largest stack accepted is the heap's size, which leaves no room for the
	 * thread's TLS block, so creating it finds the heap exhausted: EAGAIN, before anything
	 * of the heap is cleared. */
	size_t lo = PROBE_STACK, hi = SIZE_MAX;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (pthread_attr_setstacksize(&attr, mid) == 0) {
			lo = mid;
		} else {
			hi = mid;
		}
	}
	CHECK(pthread_attr_setstacksize(&attr, lo) == 0);
	CHECK(pthread_create(&t[0], &attr, double_it, NULL) == EAGAIN);
#endif
	CHECK(pthread_attr_destroy(&attr) == 0);
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

void test_placement(unsigned int per_core)
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
