/*
 * What the pthread objects' files (mutex.c, cond.c, barrier.c) share: the choice of
 * implementation, the set-up of statically initialized objects, and the mutex's steps a
 * condition wait takes with its mutex.
 */
#ifndef SUBUTAI_PTHREAD_OBJECTS_H
#define SUBUTAI_PTHREAD_OBJECTS_H

#include <errno.h>
#include <stddef.h>

#include "rt.h"

#define LIKELY(x) __builtin_expect(!!(x), 1)

/* Whether new objects go to the hardware first: linked with the subutai backend. */
SUBUTAI_SYNC_PATH static inline bool use_hw(void)
{
	return rt_backend_hw;
}

/*
 * 0 when the object is ready, after setting up a statically initialized one (under the runtime
 * lock: several cores may use it first at once); EINVAL for a destroyed or corrupt one.
 */
SUBUTAI_SYNC_PATH static inline int lazy_setup(uint32_t *magic, uint32_t want, int (*setup)(void *),
					       void *obj)
{
	if (*magic == want) {
		return 0;
	}
	if (*magic != 0) {
		return EINVAL;
	}
	int err = 0;

	rt_spin_lock(RT_LOCK);
	/* Another core may have set it up: our cached copy of the object may be stale. */
	subutai_dcache_invalidate();
	if (*magic == 0) {
		err = setup(obj);
	} else if (*magic != want) {
		err = EINVAL;
	}
	rt_spin_unlock(RT_LOCK);
	return err;
}

/* Sets up a statically initialized mutex (mutex.c). */
int rt_mutex_static_setup(void *m);

static inline int mutex_ready(pthread_mutex_t *m)
{
	if (!m) {
		return EINVAL;
	}
	return lazy_setup(&m->magic, RT_MAGIC_MUTEX, rt_mutex_static_setup, m);
}

static inline bool is_errorcheck(const pthread_mutex_t *m)
{
	return m->type == PTHREAD_MUTEX_ERRORCHECK;
}

SUBUTAI_SYNC_PATH static inline int mutex_lock_raw(pthread_mutex_t *m)
{
	return m->impl == RT_IMPL_HW ? subutai_mutex_lock(m->handle)
				     : sw_mutex_lock(m->handle, is_errorcheck(m));
}

SUBUTAI_SYNC_PATH static inline int mutex_unlock_raw(pthread_mutex_t *m)
{
	return m->impl == RT_IMPL_HW ? subutai_mutex_unlock(m->handle)
				     : sw_mutex_unlock(m->handle, is_errorcheck(m));
}

/*
 * The pthread object's owner field: the owning thread of a recursive mutex (its depth beside it),
 * and of an error-checking one, so that a timed lock by the owner says EDEADLK (the hardware's
 * TRYLOCK says EBUSY to its owner, and a timed lock only ever tries). Only the owner writes it;
 * another thread reads it only to compare with itself, which a stale copy cannot fool: a thread
 * finds itself there only if it wrote it, and it clears it (write-through) before it unlocks.
 */
static inline bool tracks_owner(const pthread_mutex_t *m)
{
	return m->type != PTHREAD_MUTEX_NORMAL;
}

/* The implementation holding an object, as the *_impl_np() reports name it. */
static inline const char *impl_name(uint32_t magic, uint32_t want, uint8_t impl)
{
	if (magic != want) {
		return "none";
	}
	return impl == RT_IMPL_HW ? "subutai" : impl == RT_IMPL_SW ? "swonly" : "none";
}

#endif /* SUBUTAI_PTHREAD_OBJECTS_H */
