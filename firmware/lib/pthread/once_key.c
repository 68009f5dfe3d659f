/*
 * pthread_once and thread-specific data keys: parts of the PThreads library that do not depend on
 * how threads run (bare-metal runtime or Zephyr).
 *
 * Keys are allocated in atomic-unit words, one per key: its generation, odd while the key is
 * allocated (creating and deleting a key each add one, under the runtime lock), so every core
 * agrees on them; each thread's values live with the thread (rt_key_values()), tagged with the
 * generation they were set under.
 */
#include <errno.h>

#include "rt.h"

#define ONCE_RUNNING 1
#define ONCE_DONE    2

/* Destructors of the keys, in shared memory: written when a key is created. */
static void (*key_destructors[SUBUTAI_PTHREAD_KEYS])(void *) __rt_shared;

/* A cancelled initializer's once_control goes back to its initial state: the next call runs it. */
static void once_cancelled(void *arg)
{
	pthread_once_t *once = arg;

	rt_spin_lock(RT_LOCK);
	once->state = 0;
	rt_spin_unlock(RT_LOCK);
}

int pthread_once(pthread_once_t *once, void (*init)(void))
{
	if (!once || !init) {
		return EINVAL;
	}
	for (;;) {
		rt_spin_lock(RT_LOCK);
		subutai_dcache_invalidate();
		uint32_t state = once->state;

		if (state == 0) {
			once->state = ONCE_RUNNING;
		}
		rt_spin_unlock(RT_LOCK);
		if (state == ONCE_DONE) {
			return 0;
		}
		if (state == 0) {
			/* Cancelled in init(): as if pthread_once() had never been called (POSIX).
			 */
			pthread_cleanup_push(once_cancelled, once);
			init();
			pthread_cleanup_pop(0);
			once->state = ONCE_DONE;
			return 0;
		}
		/* Another thread runs the initializer: let it (and others on this core) go on. */
		rt_yield();
	}
}

int pthread_key_create(pthread_key_t *key, void (*destructor)(void *))
{
	if (!key) {
		return EINVAL;
	}
	int err = EAGAIN;

	rt_spin_lock(RT_LOCK);
	for (unsigned int k = 0; k < SUBUTAI_PTHREAD_KEYS; k++) {
		if ((subutai_atomic_load(RT_KEYS + k) & 1) == 0) {
			key_destructors[k] = destructor;
			subutai_atomic_fetch_add(RT_KEYS + k, 1);
			*key = k;
			err = 0;
			break;
		}
	}
	rt_spin_unlock(RT_LOCK);
	return err;
}

/* The generation of an allocated key, or 0 (never a generation: allocated ones are odd). */
static uint32_t key_generation(pthread_key_t key)
{
	if (key >= SUBUTAI_PTHREAD_KEYS) {
		return 0;
	}
	uint32_t gen = subutai_atomic_load(RT_KEYS + key);

	return gen & 1 ? gen : 0;
}

int pthread_key_delete(pthread_key_t key)
{
	int err = EINVAL;

	rt_spin_lock(RT_LOCK);
	if (key_generation(key) != 0) {
		/* Even: free. Values set under it are not seen under the key's next generation. */
		subutai_atomic_fetch_add(RT_KEYS + key, 1);
		err = 0;
	}
	rt_spin_unlock(RT_LOCK);
	return err;
}

/* Values are tagged with the key's generation, so a recreated key starts out NULL everywhere. */
void *pthread_getspecific(pthread_key_t key)
{
	uint32_t gen = key_generation(key);

	if (gen == 0) {
		return NULL;
	}
	struct rt_key_value *v = &rt_key_values()[key];

	return v->gen == gen ? v->value : NULL;
}

int pthread_setspecific(pthread_key_t key, const void *value)
{
	uint32_t gen = key_generation(key);

	if (gen == 0) {
		return EINVAL;
	}
	struct rt_key_value *v = &rt_key_values()[key];

	v->gen = gen;
	v->value = (void *)value;
	return 0;
}

void rt_keys_exit(void)
{
	struct rt_key_value *values = rt_key_values();

	for (unsigned int round = 0; round < SUBUTAI_PTHREAD_DESTRUCTOR_ITERATIONS; round++) {
		bool called = false;

		for (unsigned int k = 0; k < SUBUTAI_PTHREAD_KEYS; k++) {
			void *value = pthread_getspecific(k);
			void (*destructor)(void *) = key_destructors[k];

			if (value && destructor) {
				values[k].value = NULL;
				destructor(value);
				called = true;
			}
		}
		if (!called) {
			return;
		}
	}
}
