/*
 * Read-write locks (pthread.h). With the subutai backend a lock lives in a Subutai engine (the
 * engine's queue holds readers and writers, and a leaving writer grants every reader behind it up
 * to the next writer in one request: Seed 003's legacy PThreads on the hardware of TPDS'21).
 * Otherwise, or when no engine has room, a mutex and two conditions of the program's backend, the
 * state (readers, waiting writers, the writer) read and written under the mutex, so every acquire
 * of the mutex sees it whole. Writers are preferred both ways: readers wait while a writer holds
 * the lock or waits for it; a releasing writer wakes the next writer if one waits, else every
 * reader. The calls are not cancellation points (POSIX), so their waits run with cancellation
 * disabled.
 */
#include <errno.h>

#include "rt.h"

/* In an engine if the backend has them and one has room, else made of a mutex and conditions. */
static int rwlock_setup(pthread_rwlock_t *rw)
{
	int err = EAGAIN;

	rw->readers = 0;
	rw->writers_waiting = 0;
	rw->writer = 0;
	if (rt_backend_hw) {
		err = rt_hw_rwlock_init(&rw->handle);
		rw->impl = RT_IMPL_HW;
	}
	if (err == EAGAIN) {
		rw->impl = RT_IMPL_SW;
		err = pthread_mutex_init(&rw->lock, NULL);
		if (err != 0) {
			return err;
		}
		err = pthread_cond_init(&rw->readers_go, NULL);
		if (err == 0) {
			err = pthread_cond_init(&rw->writer_go, NULL);
			if (err != 0) {
				pthread_cond_destroy(&rw->readers_go);
			}
		}
		if (err != 0) {
			pthread_mutex_destroy(&rw->lock);
		}
	}
	if (err == 0) {
		rt_publish(&rw->magic, RT_MAGIC_RWLOCK);
	}
	return err;
}

static int rwlock_static_setup(void *rw)
{
	return rwlock_setup(rw);
}

/* 0 once a PTHREAD_RWLOCK_INITIALIZER lock is set up (at its first use), EINVAL if not a lock. */
static int rwlock_valid(pthread_rwlock_t *rw)
{
	return rw ? rt_lazy_setup(&rw->magic, RT_MAGIC_RWLOCK, rwlock_static_setup, rw) : EINVAL;
}

static bool is_hw(const pthread_rwlock_t *rw)
{
	return rw->impl == RT_IMPL_HW;
}

/* The writer's tag: only the writer writes its own, so its cached copy of the field is never
 * stale about itself. */
static uint32_t writer_tag(void)
{
	return (uint32_t)pthread_self() + 1;
}

/* A hardware lock granted (or not): the caller's read locks, its write ownership. */
static int hw_granted(pthread_rwlock_t *rw, bool write, int err)
{
	if (err == 0) {
		if (write) {
			rw->writer = writer_tag();
		} else {
			rt_threads[rt_self_slot()].read_locks++;
		}
	}
	return err;
}

static int hw_lock(pthread_rwlock_t *rw, bool write, bool try, const struct timespec *abstime)
{
	uint32_t h = rw->handle;
	int err = write ? subutai_rwlock_trywrlock(h) : subutai_rwlock_tryrdlock(h);

	if (err != EBUSY || try) {
		return hw_granted(rw, write, err);
	}
	if (!abstime) {
		return hw_granted(rw, write,
				  write ? subutai_rwlock_wrlock(h) : subutai_rwlock_rdlock(h));
	}
	if (!rt_timespec_valid(abstime)) {
		return EINVAL;
	}
	uint64_t deadline = rt_timespec_to_cycles(abstime);

	if (deadline <= subutai_cycles()) {
		return ETIMEDOUT;
	}
	return hw_granted(
		rw, write,
		rt_hw_timedlock(h, deadline,
				write ? subutai_rwlock_trywrlock : subutai_rwlock_tryrdlock));
}

/* The writer's unlock, or one of the caller's read locks; EPERM if it holds neither. */
static int hw_unlock(pthread_rwlock_t *rw)
{
	unsigned int *read_locks = &rt_threads[rt_self_slot()].read_locks;

	if (rw->writer == writer_tag()) {
		rw->writer = 0;
	} else if (*read_locks != 0) {
		--*read_locks;
	} else {
		return EPERM;
	}
	subutai_rwlock_unlock(rw->handle);
	return 0;
}

int pthread_rwlockattr_init(pthread_rwlockattr_t *attr)
{
	return rt_attr_init(attr ? &attr->magic : NULL);
}

int pthread_rwlockattr_destroy(pthread_rwlockattr_t *attr)
{
	return rt_attr_destroy(attr ? &attr->magic : NULL);
}

int pthread_rwlockattr_setpshared(pthread_rwlockattr_t *attr, int pshared)
{
	return rt_attr_setpshared(attr ? &attr->magic : NULL, pshared);
}

int pthread_rwlockattr_getpshared(const pthread_rwlockattr_t *attr, int *pshared)
{
	return rt_attr_getpshared(attr ? &attr->magic : NULL, pshared);
}

int pthread_rwlock_init(pthread_rwlock_t *rw, const pthread_rwlockattr_t *attr)
{
	if (!rw || (attr && attr->magic != RT_MAGIC_ATTR)) {
		return EINVAL;
	}
	return rwlock_setup(rw);
}

int pthread_rwlock_destroy(pthread_rwlock_t *rw)
{
	int err = rwlock_valid(rw);

	if (err == 0 && is_hw(rw)) {
		err = subutai_free(rw->handle);
	} else if (err == 0 && (err = pthread_mutex_lock(&rw->lock)) == 0) {
		bool busy = rw->readers != 0 || rw->writer != 0 || rw->writers_waiting != 0;

		pthread_mutex_unlock(&rw->lock);
		if (busy) {
			return EBUSY;
		}
		pthread_cond_destroy(&rw->readers_go);
		pthread_cond_destroy(&rw->writer_go);
		pthread_mutex_destroy(&rw->lock);
	}
	if (err == 0) {
		rw->magic = RT_MAGIC_DEAD;
	}
	return err;
}

/* Waits on cond with rw->lock held, until abstime (NULL: none), not a cancellation point. */
static int rwlock_wait(pthread_rwlock_t *rw, pthread_cond_t *cond, const struct timespec *abstime)
{
	int state;
	int err;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &state);
	err = abstime ? rt_cond_timedwait(cond, &rw->lock, abstime)
		      : pthread_cond_wait(cond, &rw->lock);
	pthread_setcancelstate(state, NULL);
	return err;
}

/* A read lock; try: EBUSY instead of waiting; abstime: ETIMEDOUT past it (NULL: no limit). */
static int rdlock(pthread_rwlock_t *rw, bool try, const struct timespec *abstime)
{
	int err = rwlock_valid(rw);

	if (err == 0 && is_hw(rw)) {
		return hw_lock(rw, false, try, abstime);
	}
	if (err != 0 || (err = pthread_mutex_lock(&rw->lock)) != 0) {
		return err;
	}
	if (rw->writer == writer_tag()) {
		err = EDEADLK;
	}
	while (err == 0 && (rw->writer != 0 || rw->writers_waiting != 0)) {
		if (try) {
			err = EBUSY;
		} else if (abstime && !rt_timespec_valid(abstime)) {
			err = EINVAL;
		} else {
			err = rwlock_wait(rw, &rw->readers_go, abstime);
		}
	}
	if (err == 0) {
		if (rw->readers == UINT32_MAX) {
			err = EAGAIN;
		} else {
			rw->readers++;
		}
	}
	pthread_mutex_unlock(&rw->lock);
	return err;
}

/* A write lock, as rdlock(). */
static int wrlock(pthread_rwlock_t *rw, bool try, const struct timespec *abstime)
{
	int err = rwlock_valid(rw);

	if (err == 0 && is_hw(rw)) {
		return hw_lock(rw, true, try, abstime);
	}
	if (err != 0 || (err = pthread_mutex_lock(&rw->lock)) != 0) {
		return err;
	}
	if (rw->writer == writer_tag()) {
		err = EDEADLK;
	}
	while (err == 0 && (rw->writer != 0 || rw->readers != 0)) {
		if (try) {
			err = EBUSY;
		} else if (abstime && !rt_timespec_valid(abstime)) {
			err = EINVAL;
		} else {
			rw->writers_waiting++;
			err = rwlock_wait(rw, &rw->writer_go, abstime);
			rw->writers_waiting--;
			if (err != 0 && rw->writers_waiting == 0 && rw->writer == 0) {
				/* The readers that waited behind this writer go on. */
				pthread_cond_broadcast(&rw->readers_go);
			}
		}
	}
	if (err == 0) {
		rw->writer = writer_tag();
	}
	pthread_mutex_unlock(&rw->lock);
	return err;
}

int pthread_rwlock_rdlock(pthread_rwlock_t *rw)
{
	return rdlock(rw, false, NULL);
}

int pthread_rwlock_tryrdlock(pthread_rwlock_t *rw)
{
	return rdlock(rw, true, NULL);
}

int pthread_rwlock_timedrdlock(pthread_rwlock_t *rw, const struct timespec *abstime)
{
	struct timespec t;

	/* A time with its nanoseconds out of range goes on as it is: EINVAL if the lock must wait.
	 */
	return abstime ? rdlock(rw, false, rt_abstime_clamp(abstime, &t) == 0 ? &t : abstime)
		       : EINVAL;
}

int pthread_rwlock_wrlock(pthread_rwlock_t *rw)
{
	return wrlock(rw, false, NULL);
}

int pthread_rwlock_trywrlock(pthread_rwlock_t *rw)
{
	return wrlock(rw, true, NULL);
}

int pthread_rwlock_timedwrlock(pthread_rwlock_t *rw, const struct timespec *abstime)
{
	struct timespec t;

	/* A time with its nanoseconds out of range goes on as it is: EINVAL if the lock must wait.
	 */
	return abstime ? wrlock(rw, false, rt_abstime_clamp(abstime, &t) == 0 ? &t : abstime)
		       : EINVAL;
}

/*
 * Releases the caller's write lock, or one read lock: EPERM if it holds neither that the lock can
 * tell (a read lock is counted, not owned). The last reader wakes a waiting writer; a writer wakes
 * the next writer if one waits, else every reader.
 */
int pthread_rwlock_unlock(pthread_rwlock_t *rw)
{
	int err = rwlock_valid(rw);

	if (err == 0 && is_hw(rw)) {
		return hw_unlock(rw);
	}
	if (err != 0 || (err = pthread_mutex_lock(&rw->lock)) != 0) {
		return err;
	}
	if (rw->writer != 0) {
		if (rw->writer != writer_tag()) {
			err = EPERM;
		} else {
			rw->writer = 0;
		}
	} else if (rw->readers != 0) {
		rw->readers--;
	} else {
		err = EPERM;
	}
	if (err == 0 && rw->writer == 0 && rw->readers == 0) {
		if (rw->writers_waiting != 0) {
			pthread_cond_signal(&rw->writer_go);
		} else {
			pthread_cond_broadcast(&rw->readers_go);
		}
	}
	pthread_mutex_unlock(&rw->lock);
	return err;
}
