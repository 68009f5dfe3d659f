/* pthreadtest: cancel (see main.c). */
#include "pthreadtest.h"

/*
 * Cancellation: a thread blocked in each cancellation point is got out and runs its cleanup
 * handlers (innermost first, a condition waiter with its mutex), its joiner gets
 * PTHREAD_CANCELED; disabled cancellation waits; the objects it blocked on work on afterwards.
 */

static pthread_mutex_t cx_mutex; /* error-checking: a handler's unlock proves ownership */
static pthread_cond_t cx_cond = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t cx_barrier;      /* the main thread and one worker */
static pthread_barrier_t cx_late_barrier; /* the main thread and a joined thread */
static unsigned int cx_waiting;           /* under cx_mutex */
static unsigned int cx_log[8], cx_logged; /* cleanup handlers run, in order */
static volatile unsigned int cx_stage;    /* how far a worker got (read after its join) */
static volatile int cx_fails;             /* failed checks of a worker that ends cancelled */

static void cx_note(void *arg)
{
	if (cx_logged < sizeof(cx_log) / sizeof(cx_log[0])) {
		cx_log[cx_logged] = (unsigned int)(uintptr_t)arg;
	}
	cx_logged++;
}

/* A condition waiter's handler: the mutex is held again when it runs. */
static void cx_unlock(void *arg)
{
	cx_note(arg);
	if (pthread_mutex_unlock(&cx_mutex) != 0) {
		cx_note((void *)99);
	}
}

/* Waits on cx_cond for ever (arg: 1 for a timed wait with a far deadline). */
static void *cx_cond_waiter(void *arg)
{
	pthread_mutex_lock(&cx_mutex);
	pthread_cleanup_push(cx_unlock, (void *)1);
	cx_waiting = 1;
	for (;;) {
		if (arg) {
			struct timespec far;

			clock_gettime(CLOCK_REALTIME, &far);
			far.tv_sec += 1000;
			pthread_cond_timedwait(&cx_cond, &cx_mutex, &far);
		} else {
			pthread_cond_wait(&cx_cond, &cx_mutex);
		}
		cx_stage++;
	}
	pthread_cleanup_pop(0);
	return NULL;
}

/* Cancels a condition waiter once it waits (holding the mutex meanwhile if hold). */
static void cx_cancel_cond_waiter(bool timed, bool hold)
{
	pthread_t t;
	void *ret = NULL;
	unsigned int waiting = 0;

	cx_waiting = 0;
	cx_logged = 0;
	cx_stage = 0;
	CHECK(pthread_create(&t, NULL, cx_cond_waiter, (void *)(uintptr_t)timed) == 0);
	/* Once the mutex is free again with cx_waiting set, the waiter is in the condition's queue.
	 */
	while (!waiting) {
		CHECK(pthread_mutex_lock(&cx_mutex) == 0);
		waiting = cx_waiting;
		if (!waiting || !hold) {
			CHECK(pthread_mutex_unlock(&cx_mutex) == 0);
		}
	}
	CHECK(pthread_cancel(t) == 0);
	CHECK(pthread_cancel(t) == 0); /* a second request changes nothing */
	if (hold) {
		CHECK(pthread_mutex_unlock(&cx_mutex) == 0);
	}
	CHECK(pthread_join(t, &ret) == 0 && ret == PTHREAD_CANCELED);
	CHECK(cx_logged == 1 && cx_log[0] == 1);
	/* Woken by the cancellation, not by a signal: at most a spurious wake-up before it. */
	CHECK(cx_stage <= 1);
	/* The handler unlocked the mutex; the condition works on. */
	CHECK(pthread_mutex_trylock(&cx_mutex) == 0 && pthread_mutex_unlock(&cx_mutex) == 0);
}

/* Joins arg (a thread) after the barrier; its handler notes 2. */
static void *cx_joiner(void *arg)
{
	pthread_cleanup_push(cx_note, (void *)2);
	pthread_barrier_wait(&cx_barrier);
	pthread_join((pthread_t)(uintptr_t)arg, NULL);
	cx_stage = 1;
	pthread_cleanup_pop(0);
	return NULL;
}

/* Returns 42 once the main thread lets it. */
static void *cx_late(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&cx_late_barrier);
	return (void *)42;
}

/* Sleeps after the barrier (arg: 0 sleep, 1 nanosleep, 2 usleep), handlers 3 then 4. */
static void *cx_sleeper(void *arg)
{
	struct timespec long_time = {1000, 0};

	pthread_cleanup_push(cx_note, (void *)4);
	pthread_cleanup_push(cx_note, (void *)3);
	pthread_barrier_wait(&cx_barrier);
	switch ((uintptr_t)arg) {
	case 0:
		sleep(1000);
		break;
	case 1:
		nanosleep(&long_time, NULL);
		break;
	default:
		usleep(1000000000u);
		break;
	}
	cx_stage = 1;
	pthread_cleanup_pop(0);
	pthread_cleanup_pop(0);
	return NULL;
}

/* Loops in pthread_testcancel(). */
static void *cx_spinner(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&cx_barrier);
	for (;;) {
		pthread_testcancel();
	}
	return NULL;
}

/*
 * Cancellation disabled across a request: a sleep and a timed wait run to their end, then the
 * thread enables it again and acts at its next point (arg: after being refused the asynchronous
 * type, which the library does not provide).
 */
static void *cx_disabled(void *arg)
{
	int fails = 0, old = -1;
	struct timespec short_time = {0, 200000}, soon;

	TCHECK(pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old) == 0 &&
	       old == PTHREAD_CANCEL_ENABLE);
	pthread_barrier_wait(&cx_barrier);
	pthread_barrier_wait(&cx_barrier); /* cancelled by now */
	TCHECK(nanosleep(&short_time, NULL) == 0);
	pthread_testcancel();
	TCHECK(pthread_mutex_lock(&cx_mutex) == 0);
	clock_gettime(CLOCK_REALTIME, &soon);
	soon.tv_nsec += 100000;
	if (soon.tv_nsec >= 1000000000L) {
		soon.tv_sec++;
		soon.tv_nsec -= 1000000000L;
	}
	TCHECK(pthread_cond_timedwait(&cx_cond, &cx_mutex, &soon) == ETIMEDOUT);
	TCHECK(pthread_mutex_unlock(&cx_mutex) == 0);
	cx_stage = 1;
	cx_fails = fails;
	if (arg) {
		/* Asynchronous cancellation is refused, the type stays deferred (cancel.c). */
		old = -1;
		TCHECK(pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old) == ENOTSUP &&
		       old == PTHREAD_CANCEL_DEFERRED);
		TCHECK(pthread_setcanceltype(3, &old) == EINVAL);
		old = -1;
		TCHECK(pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &old) == 0 &&
		       old == PTHREAD_CANCEL_DEFERRED);
	}
	TCHECK(pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old) == 0 &&
	       old == PTHREAD_CANCEL_DISABLE);
	cx_stage = 2;
	pthread_testcancel();
	cx_stage = 3;
	return (void *)(intptr_t)(fails + 100);
}

/* Cancels itself, then waits on the condition: acted on at the entry, with the mutex. */
static void *cx_self(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&cx_mutex);
	pthread_cleanup_push(cx_unlock, (void *)5);
	pthread_cancel(pthread_self());
	cx_stage = 1;
	pthread_cond_wait(&cx_cond, &cx_mutex);
	cx_stage = 2;
	pthread_cleanup_pop(1);
	return NULL;
}

/* Cleanup handlers without cancellation: pop with and without running, and pthread_exit(). */
static void *cx_handlers(void *arg)
{
	(void)arg;
	pthread_cleanup_push(cx_note, (void *)7);
	pthread_cleanup_push(cx_note, (void *)6);
	pthread_cleanup_pop(1);
	pthread_cleanup_push(cx_note, (void *)8);
	pthread_cleanup_pop(0);
	pthread_exit((void *)9);
	pthread_cleanup_pop(0);
	return NULL;
}

/* Creates fn(arg), meets it at the barrier, lets it block, cancels it; its return value. */
static void *cx_cancel_after_barrier(void *(*fn)(void *), void *arg)
{
	struct timespec settle = {0, 2000000};
	pthread_t t;
	void *ret = NULL;

	cx_logged = 0;
	cx_stage = 0;
	CHECK(pthread_create(&t, NULL, fn, arg) == 0);
	pthread_barrier_wait(&cx_barrier);
	CHECK(nanosleep(&settle, NULL) == 0);
	CHECK(pthread_cancel(t) == 0);
	CHECK(pthread_join(t, &ret) == 0);
	return ret;
}

void test_cancel(void)
{
	int before = failures;
	pthread_mutexattr_t attr;
	pthread_t t, late;
	void *ret = NULL;
	int old;

	/* Bad arguments. */
	CHECK(pthread_cancel((pthread_t)0) == ESRCH);
	CHECK(pthread_setcancelstate(7, NULL) == EINVAL);
	CHECK(pthread_setcanceltype(7, NULL) == EINVAL);
	CHECK(pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old) == 0 &&
	      old == PTHREAD_CANCEL_ENABLE);
	CHECK(pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &old) == 0 &&
	      old == PTHREAD_CANCEL_DEFERRED);
	pthread_testcancel(); /* nothing requested */

	CHECK(pthread_mutexattr_init(&attr) == 0);
	CHECK(pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK) == 0);
	CHECK(pthread_mutex_init(&cx_mutex, &attr) == 0);
	CHECK(pthread_mutexattr_destroy(&attr) == 0);
	CHECK(pthread_barrier_init(&cx_barrier, NULL, 2) == 0);
	CHECK(pthread_barrier_init(&cx_late_barrier, NULL, 2) == 0);

	/* Condition waits, untimed and timed, the canceller holding the mutex or not. */
	cx_cancel_cond_waiter(false, false);
	cx_cancel_cond_waiter(false, true);
	cx_cancel_cond_waiter(true, false);
	cx_cancel_cond_waiter(true, true);

	/* Sleeps: handlers innermost first. */
	for (uintptr_t how = 0; how < 3; how++) {
		ret = cx_cancel_after_barrier(cx_sleeper, (void *)how);
		CHECK(ret == PTHREAD_CANCELED && cx_stage == 0);
		CHECK(cx_logged == 2 && cx_log[0] == 3 && cx_log[1] == 4);
	}
	ret = cx_cancel_after_barrier(cx_spinner, NULL);
	CHECK(ret == PTHREAD_CANCELED);

	/* A join (needs two workers): the joined thread stays joinable. */
	if (n_threads >= 3) {
		CHECK(pthread_create(&late, NULL, cx_late, NULL) == 0);
		ret = cx_cancel_after_barrier(cx_joiner, (void *)(uintptr_t)late);
		CHECK(ret == PTHREAD_CANCELED && cx_stage == 0 && cx_logged == 1 && cx_log[0] == 2);
		pthread_barrier_wait(&cx_late_barrier);
		CHECK(pthread_join(late, &ret) == 0 && ret == (void *)42);
	}

	/* Disabled, then enabled; the second time after asking for the asynchronous type. */
	for (uintptr_t async = 0; async < 2; async++) {
		cx_stage = 0;
		cx_fails = -1;
		CHECK(pthread_create(&t, NULL, cx_disabled, (void *)async) == 0);
		pthread_barrier_wait(&cx_barrier);
		CHECK(pthread_cancel(t) == 0);
		pthread_barrier_wait(&cx_barrier);
		CHECK(pthread_join(t, &ret) == 0 && ret == PTHREAD_CANCELED && cx_stage == 2);
		CHECK(cx_fails == 0);
	}

	/* Requested before the wait: acted on at its entry. */
	cx_logged = 0;
	cx_stage = 0;
	CHECK(pthread_create(&t, NULL, cx_self, NULL) == 0);
	CHECK(pthread_join(t, &ret) == 0 && ret == PTHREAD_CANCELED && cx_stage == 1);
	CHECK(cx_logged == 1 && cx_log[0] == 5);

	/* Handlers without cancellation; an exited, unjoined thread can still be "cancelled". */
	cx_logged = 0;
	CHECK(pthread_create(&t, NULL, cx_handlers, NULL) == 0);
	CHECK(pthread_join(t, &ret) == 0 && ret == (void *)9);
	CHECK(cx_logged == 2 && cx_log[0] == 6 && cx_log[1] == 7);

	/* The objects the cancelled threads blocked on are whole: nothing left queued. */
	CHECK(pthread_mutex_lock(&cx_mutex) == 0);
	CHECK(pthread_cond_signal(&cx_cond) == 0 && pthread_cond_broadcast(&cx_cond) == 0);
	CHECK(pthread_mutex_unlock(&cx_mutex) == 0);
	CHECK(pthread_cond_destroy(&cx_cond) == 0);
	CHECK(pthread_mutex_destroy(&cx_mutex) == 0);
	CHECK(pthread_barrier_destroy(&cx_barrier) == 0);
	CHECK(pthread_barrier_destroy(&cx_late_barrier) == 0);
	CHECK(pthread_cancel(t) == ESRCH); /* joined */
	report("cancellation", before);
}
