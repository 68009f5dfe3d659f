/*
 * Timed waits with times in the past, negative seconds included, and out of range; semaphores;
 * the asynchronous cancellation type. A helper thread holds the objects while the main thread
 * tries them. Prints each failed check and "timeouts: N checks, M failed"; exit code 1 if any.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

static int checks, failed;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		checks++;                                                                          \
		if (!(cond)) {                                                                     \
			failed++;                                                                  \
			printf("FAILED line %d: %s\n", __LINE__, #cond);                           \
		}                                                                                  \
	} while (0)

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_barrier_t step;
static pthread_mutex_t cm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int signalled;

static void *holder(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&held);
	pthread_rwlock_wrlock(&rw);
	pthread_barrier_wait(&step); /* held */
	pthread_barrier_wait(&step); /* the main thread is done trying */
	pthread_rwlock_unlock(&rw);
	pthread_mutex_unlock(&held);
	pthread_barrier_wait(&step); /* released */
	/* A waiter with a deadline beyond the clock's range is woken, not timed out. */
	pthread_barrier_wait(&step);
	pthread_mutex_lock(&cm);
	signalled = 1;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&cm);
	return NULL;
}

static volatile int waiting;

static void *sem_waiter(void *arg)
{
	waiting = 1;
	sem_wait(arg); /* a cancellation point; nothing posts */
	return NULL;
}

int main(void)
{
	const struct timespec past[] = {
		{-1, 0},          /* a clock that starts at 0, minus one second */
		{-1000000, 999999999},
		{0, 0},
		{0, 1},
	};
	const struct timespec bad[] = {{0, -1}, {0, 1000000000}, {-1, 1000000000}};
	struct timespec far = {INT32_MAX, 0};
	pthread_t t;

	if (sizeof(time_t) > 4) {
		far.tv_sec = (time_t)INT64_MAX;
	}
	pthread_barrier_init(&step, NULL, 2);
	CHECK(pthread_create(&t, NULL, holder, NULL) == 0);
	pthread_barrier_wait(&step);

	for (unsigned int i = 0; i < sizeof(past) / sizeof(past[0]); i++) {
		CHECK(pthread_mutex_timedlock(&held, &past[i]) == ETIMEDOUT);
		CHECK(pthread_rwlock_timedrdlock(&rw, &past[i]) == ETIMEDOUT);
		CHECK(pthread_rwlock_timedwrlock(&rw, &past[i]) == ETIMEDOUT);
		pthread_mutex_lock(&cm);
		CHECK(pthread_cond_timedwait(&cv, &cm, &past[i]) == ETIMEDOUT);
		/* The mutex is held again after the timeout. */
		CHECK(pthread_mutex_trylock(&cm) != 0);
		pthread_mutex_unlock(&cm);
	}
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(pthread_mutex_timedlock(&held, &bad[i]) == EINVAL);
		CHECK(pthread_rwlock_timedwrlock(&rw, &bad[i]) == EINVAL);
		pthread_mutex_lock(&cm);
		CHECK(pthread_cond_timedwait(&cv, &cm, &bad[i]) == EINVAL);
		pthread_mutex_unlock(&cm);
	}
	pthread_barrier_wait(&step);
	pthread_barrier_wait(&step); /* released */

	/* Free objects are taken at once, whatever the time says. */
	CHECK(pthread_mutex_timedlock(&held, &past[0]) == 0);
	pthread_mutex_unlock(&held);
	CHECK(pthread_rwlock_timedrdlock(&rw, &past[0]) == 0);
	pthread_rwlock_unlock(&rw);

	/* A deadline far beyond the clock's range does not wrap into the past. */
	pthread_mutex_lock(&cm);
	pthread_barrier_wait(&step);
	int err = 0;

	while (!signalled && err == 0) {
		err = pthread_cond_timedwait(&cv, &cm, &far);
	}
	CHECK(err == 0 && signalled);
	pthread_mutex_unlock(&cm);
	CHECK(pthread_join(t, NULL) == 0);

	/* Semaphores. */
	sem_t sem;
	int value = -1;

	CHECK(sem_init(&sem, 0, 1) == 0);
	CHECK(sem_trywait(&sem) == 0);
	CHECK(sem_trywait(&sem) == -1 && errno == EAGAIN);
	CHECK(sem_timedwait(&sem, &past[0]) == -1 && errno == ETIMEDOUT);
	CHECK(sem_timedwait(&sem, &bad[0]) == -1 && errno == EINVAL);
	CHECK(sem_post(&sem) == 0 && sem_post(&sem) == 0);
	CHECK(sem_getvalue(&sem, &value) == 0 && value == 2);
	/* A unit there is taken, whatever the time says. */
	CHECK(sem_timedwait(&sem, &past[0]) == 0);
	CHECK(sem_wait(&sem) == 0);
	CHECK(sem_getvalue(&sem, &value) == 0 && value == 0);
	/* A thread blocked in sem_wait() is cancelled out of it and leaves the semaphore usable. */
	void *ret = NULL;

	CHECK(pthread_create(&t, NULL, sem_waiter, &sem) == 0);
	while (!waiting) {
		sched_yield();
	}
	CHECK(pthread_cancel(t) == 0);
	CHECK(pthread_join(t, &ret) == 0 && ret == PTHREAD_CANCELED);
	CHECK(sem_post(&sem) == 0 && sem_trywait(&sem) == 0);
	CHECK(sem_destroy(&sem) == 0);
	CHECK(sem_post(&sem) == -1 && errno == EINVAL);
	CHECK(sem_init(&sem, 0, (unsigned int)SEM_VALUE_MAX + 1u) == -1 && errno == EINVAL);

	/* The asynchronous type is refused; the type stays deferred. */
	int old = -1;

	CHECK(pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old) == ENOTSUP &&
	      old == PTHREAD_CANCEL_DEFERRED);
	CHECK(pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &old) == 0 &&
	      old == PTHREAD_CANCEL_DEFERRED);

	/* Scheduling attributes: the one kind of thread there is, the rest refused. */
	pthread_attr_t attr;
	struct sched_param param = {0};
	int v = -1;

	CHECK(pthread_attr_init(&attr) == 0);
	CHECK(pthread_attr_setscope(&attr, PTHREAD_SCOPE_SYSTEM) == 0);
	CHECK(pthread_attr_getscope(&attr, &v) == 0 && v == PTHREAD_SCOPE_SYSTEM);
	CHECK(pthread_attr_setscope(&attr, PTHREAD_SCOPE_PROCESS) == ENOTSUP);
	CHECK(pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED) == ENOTSUP);
	CHECK(pthread_attr_setschedpolicy(&attr, SCHED_OTHER) == 0);
	CHECK(pthread_attr_setschedpolicy(&attr, SCHED_FIFO) == ENOTSUP);
	CHECK(pthread_attr_setschedparam(&attr, &param) == 0);
	CHECK(pthread_getschedparam(pthread_self(), &v, &param) == 0 && v == SCHED_OTHER);
	CHECK(pthread_setconcurrency(4) == 0 && pthread_getconcurrency() == 4);
	CHECK(pthread_setconcurrency(-1) == EINVAL);
	CHECK(pthread_attr_destroy(&attr) == 0);

	printf("timeouts: %d checks, %d failed\n", checks, failed);
	return failed != 0;
}
