/*
 * Read-write locks (pthread.h): a mutex and two conditions of the program's backend, the state
 * (readers, waiting writers, the writer) read and written under the mutex, so every acquire of
 * the mutex sees it whole. Writers are preferred: readers wait while a writer holds the lock or
 * waits for it; a releasing writer wakes the next writer if one waits, else every reader. The
 * calls are not cancellation points (POSIX), so their waits run with cancellation disabled.
 */
#include <errno.h>

#include "rt.h"

static int rwlock_valid(const pthread_rwlock_t *rw)
{
	/* A zero magic is PTHREAD_RWLOCK_INITIALIZER: its mutex and conditions set themselves up.
	 */
	return rw && (rw->magic == RT_MAGIC_RWLOCK || rw->magic == 0) ? 0 : EINVAL;
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
	int err = pthread_mutex_init(&rw->lock, NULL);

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
		return err;
	}
	rw->readers = 0;
	rw->writers_waiting = 0;
	rw->writer = 0;
	rt_publish(&rw->magic, RT_MAGIC_RWLOCK);
	return 0;
}

int pthread_rwlock_destroy(pthread_rwlock_t *rw)
{
	int err = rwlock_valid(rw);

	if (err != 0 || (err = pthread_mutex_lock(&rw->lock)) != 0) {
		return err;
	}
	bool busy = rw->readers != 0 || rw->writer != 0 || rw->writers_waiting != 0;

	pthread_mutex_unlock(&rw->lock);
	if (busy) {
		return EBUSY;
	}
	pthread_cond_destroy(&rw->readers_go);
	pthread_cond_destroy(&rw->writer_go);
	pthread_mutex_destroy(&rw->lock);
	rw->magic = RT_MAGIC_DEAD;
	return 0;
}

/* Waits on cond with rw->lock held, until abstime (NULL: none), not a cancellation point. */
static int rwlock_wait(pthread_rwlock_t *rw, pthread_cond_t *cond, const struct timespec *abstime)
{
	int state;
	int err;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &state);
	err = abstime ? pthread_cond_timedwait(cond, &rw->lock, abstime)
		      : pthread_cond_wait(cond, &rw->lock);
	pthread_setcancelstate(state, NULL);
	return err;
}

/* A read lock; try: EBUSY instead of waiting; abstime: ETIMEDOUT past it (NULL: no limit). */
static int rdlock(pthread_rwlock_t *rw, bool try, const struct timespec *abstime)
{
	int err = rwlock_valid(rw);

	if (err != 0 || (err = pthread_mutex_lock(&rw->lock)) != 0) {
		return err;
	}
	if (rw->writer == pthread_self() + 1) {
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

	if (err != 0 || (err = pthread_mutex_lock(&rw->lock)) != 0) {
		return err;
	}
	if (rw->writer == pthread_self() + 1) {
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
		rw->writer = pthread_self() + 1;
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
	return abstime ? rdlock(rw, false, abstime) : EINVAL;
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
	return abstime ? wrlock(rw, false, abstime) : EINVAL;
}

/*
 * Releases the caller's write lock, or one read lock: EPERM if it holds neither that the lock can
 * tell (a read lock is counted, not owned). The last reader wakes a waiting writer; a writer wakes
 * the next writer if one waits, else every reader.
 */
int pthread_rwlock_unlock(pthread_rwlock_t *rw)
{
	int err = rwlock_valid(rw);

	if (err != 0 || (err = pthread_mutex_lock(&rw->lock)) != 0) {
		return err;
	}
	if (rw->writer != 0) {
		if (rw->writer != pthread_self() + 1) {
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
