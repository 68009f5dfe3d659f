/*
 * Spin locks (pthread.h): a block of the software object pool in the atomic unit, whatever the
 * backend: its lock word taken by test-and-set (test-and-test-and-set while it is held), its
 * owner word holding the owner's pthread_t + 1, so that a relock by the owner gives EDEADLK and
 * an unlock by another thread EPERM. Taking the lock is an acquire (the data cache is
 * invalidated), releasing it a release (the core's stores are not posted: they have reached
 * memory before the lock word is cleared).
 */
#include <errno.h>

#include "rt.h"

/* Attempts between two yields of a spinner: the holder may be a thread of the same core. */
#define SPINS_PER_YIELD 256

static int spin_handle(pthread_spinlock_t *lock, uint32_t *handle)
{
	if (!lock || lock->magic != RT_MAGIC_SPIN) {
		return EINVAL;
	}
	*handle = lock->handle;
	return 0;
}

int pthread_spin_init(pthread_spinlock_t *lock, int pshared)
{
	const uint32_t attr = RT_MAGIC_ATTR; /* pshared alone, as an attribute would hold it */
	int err = lock ? rt_attr_setpshared(&attr, pshared) : EINVAL;
	uint32_t handle;

	if (err == 0) {
		err = sw_spin_init(&handle);
	}
	if (err != 0) {
		return err;
	}
	lock->handle = handle;
	rt_publish(&lock->magic, RT_MAGIC_SPIN);
	return 0;
}

int pthread_spin_destroy(pthread_spinlock_t *lock)
{
	uint32_t h;
	int err = spin_handle(lock, &h);

	if (err == 0) {
		err = sw_spin_destroy(h);
	}
	if (err == 0) {
		lock->magic = RT_MAGIC_DEAD;
	}
	return err;
}

static int spin_take(pthread_spinlock_t *lock, bool try)
{
	uint32_t h;
	int err = spin_handle(lock, &h);

	if (err != 0) {
		return err;
	}
	unsigned int word = sw_spin_word(h);
	uint32_t me = pthread_self() + 1;

	if (subutai_atomic_load(word) != 0 && subutai_atomic_load(sw_spin_owner_word(h)) == me) {
		return EDEADLK;
	}
	unsigned int spins = 0;

	while (subutai_atomic_test_and_set(word) != 0) {
		if (try) {
			return EBUSY;
		}
		while (subutai_atomic_load(word) != 0) {
			if (++spins % SPINS_PER_YIELD == 0) {
				rt_yield();
			}
		}
	}
	subutai_atomic_store(sw_spin_owner_word(h), me);
	subutai_dcache_invalidate();
	return 0;
}

int pthread_spin_lock(pthread_spinlock_t *lock)
{
	return spin_take(lock, false);
}

int pthread_spin_trylock(pthread_spinlock_t *lock)
{
	return spin_take(lock, true);
}

int pthread_spin_unlock(pthread_spinlock_t *lock)
{
	uint32_t h;
	int err = spin_handle(lock, &h);

	if (err != 0) {
		return err;
	}
	if (subutai_atomic_load(sw_spin_word(h)) == 0 ||
	    subutai_atomic_load(sw_spin_owner_word(h)) != pthread_self() + 1) {
		return EPERM;
	}
	subutai_atomic_store(sw_spin_owner_word(h), 0);
	subutai_atomic_store(sw_spin_word(h), 0);
	return 0;
}
