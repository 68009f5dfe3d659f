/*
 * POSIX unnamed semaphores (semaphore.h): a count under a mutex, and a condition its waiters wait
 * on, as a textbook builds them (Butenhof, "Programming with POSIX Threads", 3.3): so they run on
 * either backend, and with subutai through the engines. The semaphore calls report errors in
 * errno and return -1 (unlike pthread calls).
 *
 * sem_post() signals whenever a waiter may be there; sem_wait() and the timed waits are
 * cancellation points, and a cancelled waiter gives the mutex back through a cleanup handler.
 */
#include <errno.h>
#include <limits.h>
#include <semaphore.h>

#include "rt.h"

#define SUBUTAI_SEM_MAGIC 0x53454d31u /* "SEM1" */

static int fail(int err)
{
	errno = err;
	return -1;
}

static bool sem_valid(const sem_t *sem)
{
	return sem && sem->magic == SUBUTAI_SEM_MAGIC;
}

int sem_init(sem_t *sem, int pshared, unsigned int value)
{
	(void)pshared; /* one process: every semaphore is shared by all its threads */
	if (!sem || value > SEM_VALUE_MAX) {
		return fail(EINVAL);
	}
	int err = pthread_mutex_init(&sem->mutex, NULL);

	if (err) {
		return fail(ENOSPC);
	}
	err = pthread_cond_init(&sem->cond, NULL);
	if (err) {
		pthread_mutex_destroy(&sem->mutex);
		return fail(ENOSPC);
	}
	sem->value = (int)value;
	sem->magic = SUBUTAI_SEM_MAGIC;
	return 0;
}

int sem_destroy(sem_t *sem)
{
	if (!sem_valid(sem)) {
		return fail(EINVAL);
	}
	pthread_mutex_lock(&sem->mutex);
	int busy = pthread_cond_destroy(&sem->cond);

	if (busy) {
		/* Threads still wait on it (undefined in POSIX): refused, it stays usable. */
		pthread_mutex_unlock(&sem->mutex);
		return fail(EBUSY);
	}
	sem->magic = 0;
	pthread_mutex_unlock(&sem->mutex);
	pthread_mutex_destroy(&sem->mutex);
	return 0;
}

static void sem_unlock(void *mutex)
{
	pthread_mutex_unlock(mutex);
}

/* Takes one unit, waiting until abstime (NULL: for ever); 0 or an errno value. */
static int sem_take(sem_t *sem, const struct timespec *abstime)
{
	int err = 0;

	pthread_testcancel();
	pthread_mutex_lock(&sem->mutex);
	pthread_cleanup_push(sem_unlock, &sem->mutex);
	while (sem->value == 0 && err == 0) {
		if (abstime) {
			/* The clocks are one counter: the condition's own clock serves both. */
			err = pthread_cond_timedwait(&sem->cond, &sem->mutex, abstime);
		} else {
			err = pthread_cond_wait(&sem->cond, &sem->mutex);
		}
	}
	if (sem->value > 0) {
		/* A unit that came with the deadline is still taken. */
		sem->value--;
		err = 0;
	}
	pthread_cleanup_pop(1);
	return err;
}

int sem_wait(sem_t *sem)
{
	if (!sem_valid(sem)) {
		return fail(EINVAL);
	}
	int err = sem_take(sem, NULL);

	return err ? fail(err) : 0;
}

int sem_clockwait(sem_t *restrict sem, clockid_t clock, const struct timespec *restrict abstime)
{
	if (!sem_valid(sem) || !rt_clock_known(clock)) {
		return fail(EINVAL);
	}
	if (!abstime) {
		return fail(EINVAL);
	}
	int err = sem_take(sem, abstime);

	return err ? fail(err) : 0;
}

int sem_timedwait(sem_t *restrict sem, const struct timespec *restrict abstime)
{
	return sem_clockwait(sem, CLOCK_REALTIME, abstime);
}

int sem_trywait(sem_t *sem)
{
	if (!sem_valid(sem)) {
		return fail(EINVAL);
	}
	int err = 0;

	pthread_mutex_lock(&sem->mutex);
	if (sem->value > 0) {
		sem->value--;
	} else {
		err = EAGAIN;
	}
	pthread_mutex_unlock(&sem->mutex);
	return err ? fail(err) : 0;
}

int sem_post(sem_t *sem)
{
	if (!sem_valid(sem)) {
		return fail(EINVAL);
	}
	int err = 0;

	pthread_mutex_lock(&sem->mutex);
	if (sem->value == SEM_VALUE_MAX) {
		err = EOVERFLOW;
	} else {
		sem->value++;
		pthread_cond_signal(&sem->cond);
	}
	pthread_mutex_unlock(&sem->mutex);
	return err ? fail(err) : 0;
}

int sem_getvalue(sem_t *restrict sem, int *restrict sval)
{
	if (!sem_valid(sem) || !sval) {
		return fail(EINVAL);
	}
	pthread_mutex_lock(&sem->mutex);
	*sval = sem->value;
	pthread_mutex_unlock(&sem->mutex);
	return 0;
}
