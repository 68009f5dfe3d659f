/* pthreadtest: read-write and spin locks (see main.c). */
#include "pthreadtest.h"

#define RW_ENTRIES 8
#define RW_ROUNDS  40

static pthread_rwlock_t rw_static = PTHREAD_RWLOCK_INITIALIZER;
static unsigned int rw_data[RW_ENTRIES]; /* all equal outside a write: the writes so far */
static unsigned int rw_writes;

/* Readers see the entries all equal; every fourth round a writer increments them all. */
static void *rw_worker(void *arg)
{
	unsigned int me = (unsigned int)(uintptr_t)arg;
	int fails = 0;

	for (unsigned int round = 0; round < RW_ROUNDS; round++) {
		if ((round + me) % 4 == 0) {
			TCHECK(pthread_rwlock_wrlock(&rw_static) == 0);
			for (unsigned int i = 0; i < RW_ENTRIES; i++) {
				rw_data[i]++;
			}
			rw_writes++;
			TCHECK(pthread_rwlock_unlock(&rw_static) == 0);
		} else {
			TCHECK(pthread_rwlock_rdlock(&rw_static) == 0);
			for (unsigned int i = 1; i < RW_ENTRIES; i++) {
				TCHECK(rw_data[i] == rw_data[0]);
			}
			TCHECK(pthread_rwlock_unlock(&rw_static) == 0);
		}
	}
	return (void *)(intptr_t)fails;
}

static pthread_rwlock_t rw_held;
static pthread_barrier_t rw_barrier;

/* Holds rw_held for writing between two barriers. */
static void *rw_writer_holds(void *arg)
{
	int fails = 0;

	(void)arg;
	TCHECK(pthread_rwlock_wrlock(&rw_held) == 0);
	pthread_barrier_wait(&rw_barrier);
	pthread_barrier_wait(&rw_barrier);
	TCHECK(pthread_rwlock_unlock(&rw_held) == 0);
	return (void *)(intptr_t)fails;
}

static struct timespec rw_in_us(long us)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_nsec += us * 1000;
	while (t.tv_nsec >= 1000000000L) {
		t.tv_nsec -= 1000000000L;
		t.tv_sec++;
	}
	return t;
}

static pthread_spinlock_t spin;
static unsigned int spin_count;

static void *spin_worker(void *arg)
{
	int fails = 0;

	(void)arg;
	for (unsigned int i = 0; i < 50; i++) {
		TCHECK(pthread_spin_lock(&spin) == 0);
		spin_count++;
		TCHECK(pthread_spin_unlock(&spin) == 0);
	}
	return (void *)(intptr_t)fails;
}

static void *spin_not_owner(void *arg)
{
	int fails = 0;

	(void)arg;
	TCHECK(pthread_spin_unlock(&spin) == EPERM);
	TCHECK(pthread_spin_trylock(&spin) == EBUSY);
	return (void *)(intptr_t)fails;
}

void test_rwlock_spin(void)
{
	int before = failures;
	pthread_rwlockattr_t attr;
	pthread_rwlock_t rw, garbage;
	struct timespec past = {0, 0}, bad = {0, 1000000000L};
	int pshared = -1;
	pthread_t t;
	void *ret;

	/* Read-write locks: readers together, writers alone (all threads). */
	run_all(rw_worker);
	CHECK(rw_data[0] == rw_writes && rw_writes > 0);

	/* Errors and the single-thread rules. */
	CHECK(pthread_rwlockattr_init(&attr) == 0);
	CHECK(pthread_rwlockattr_getpshared(&attr, &pshared) == 0 &&
	      pshared == PTHREAD_PROCESS_PRIVATE);
	CHECK(pthread_rwlockattr_setpshared(&attr, PTHREAD_PROCESS_SHARED) == ENOTSUP);
	CHECK(pthread_rwlock_init(&rw, &attr) == 0);
	CHECK(pthread_rwlockattr_destroy(&attr) == 0);
	CHECK(pthread_rwlock_rdlock(&rw) == 0 && pthread_rwlock_rdlock(&rw) == 0);
	CHECK(pthread_rwlock_tryrdlock(&rw) == 0);
	CHECK(pthread_rwlock_trywrlock(&rw) == EBUSY);
	CHECK(pthread_rwlock_timedwrlock(&rw, &past) == ETIMEDOUT);
	CHECK(pthread_rwlock_timedwrlock(&rw, &bad) == EINVAL);
	CHECK(pthread_rwlock_destroy(&rw) == EBUSY);
	CHECK(pthread_rwlock_unlock(&rw) == 0 && pthread_rwlock_unlock(&rw) == 0 &&
	      pthread_rwlock_unlock(&rw) == 0);
	CHECK(pthread_rwlock_unlock(&rw) == EPERM);
	CHECK(pthread_rwlock_wrlock(&rw) == 0);
	CHECK(pthread_rwlock_wrlock(&rw) == EDEADLK);
	CHECK(pthread_rwlock_rdlock(&rw) == EDEADLK);
	CHECK(pthread_rwlock_unlock(&rw) == 0);
	CHECK(pthread_rwlock_timedrdlock(&rw, &past) == 0 && pthread_rwlock_unlock(&rw) == 0);
	CHECK(pthread_rwlock_destroy(&rw) == 0);
	CHECK(pthread_rwlock_rdlock(&rw) == EINVAL);
	memset(&garbage, 0x5a, sizeof(garbage));
	CHECK(pthread_rwlock_wrlock(&garbage) == EINVAL && pthread_rwlock_rdlock(NULL) == EINVAL);

	/* Held for writing by another thread: tries fail, timed locks time out, unlock is refused.
	 */
	CHECK(pthread_rwlock_init(&rw_held, NULL) == 0);
	CHECK(pthread_barrier_init(&rw_barrier, NULL, 2) == 0);
	CHECK(pthread_create(&t, NULL, rw_writer_holds, NULL) == 0);
	pthread_barrier_wait(&rw_barrier);
	CHECK(pthread_rwlock_tryrdlock(&rw_held) == EBUSY);
	CHECK(pthread_rwlock_trywrlock(&rw_held) == EBUSY);
	struct timespec soon = rw_in_us(200);

	CHECK(pthread_rwlock_timedrdlock(&rw_held, &soon) == ETIMEDOUT);
	soon = rw_in_us(200);
	CHECK(pthread_rwlock_timedwrlock(&rw_held, &soon) == ETIMEDOUT);
	CHECK(pthread_rwlock_unlock(&rw_held) == EPERM);
	pthread_barrier_wait(&rw_barrier);
	CHECK(pthread_join(t, &ret) == 0 && ret == NULL);
	/* Free again: a timed write lock that waited leaves nobody behind. */
	CHECK(pthread_rwlock_trywrlock(&rw_held) == 0 && pthread_rwlock_unlock(&rw_held) == 0);
	CHECK(pthread_rwlock_destroy(&rw_held) == 0);
	CHECK(pthread_barrier_destroy(&rw_barrier) == 0);

	/* Spin locks: counts exact under contention; owner rules; errors. */
	CHECK(pthread_spin_init(&spin, PTHREAD_PROCESS_SHARED) == ENOTSUP);
	CHECK(pthread_spin_init(&spin, 7) == EINVAL);
	CHECK(pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE) == 0);
	spin_count = 0;
	run_all(spin_worker);
	CHECK(pthread_spin_lock(&spin) == 0);
	CHECK(spin_count == 50 * n_threads);
	CHECK(pthread_spin_lock(&spin) == EDEADLK);
	CHECK(pthread_spin_trylock(&spin) == EDEADLK);
	CHECK(pthread_spin_destroy(&spin) == EBUSY);
	CHECK(pthread_create(&t, NULL, spin_not_owner, NULL) == 0);
	CHECK(pthread_join(t, &ret) == 0 && ret == NULL);
	CHECK(pthread_spin_unlock(&spin) == 0);
	CHECK(pthread_spin_unlock(&spin) == EPERM);
	CHECK(pthread_spin_trylock(&spin) == 0 && pthread_spin_unlock(&spin) == 0);
	CHECK(pthread_spin_destroy(&spin) == 0);
	CHECK(pthread_spin_lock(&spin) == EINVAL && pthread_spin_lock(NULL) == EINVAL);
	report("rwlock and spin", before);
}
