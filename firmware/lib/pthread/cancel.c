/*
 * Deferred cancellation (pthread.h): requests, the cancellation state and type, cleanup handlers,
 * and how a canceller gets a thread out of the cancellation point it blocks on (the protocol of
 * the cancel and wait words is in rt.h).
 *
 * What the canceller does depends on the tag the thread left in its wait word:
 *
 *   RT_WAIT_WAKE  the thread sleeps until rt_wake() (a join, a sleep under Zephyr, a hardware
 *                 condition wait under Zephyr, whose driver tells a wake-up from its reply): the
 *                 canceller wakes it and says so (RT_CANCEL_TOOK), so that exactly one wake-up is
 *                 taken whatever else woke the thread.
 *   RT_WAIT_COND  the thread waits on a software condition: the canceller broadcasts it (the
 *                 other waiters wake spuriously, as POSIX allows), and the thread comes back with
 *                 the mutex. The thread published the tag after it entered the condition's queue,
 *                 so the broadcast cannot come too early.
 *   RT_WAIT_POLL  the thread looks at its cancel word while it waits (bare metal: a sleep, and a
 *                 hardware condition wait, where the core waits on its window). A waiter of a
 *                 hardware condition then broadcasts the condition itself: its own requests reach
 *                 the engine in order, so it is never ahead of its wait, and it leaves no entry
 *                 behind in the engine (the engine cannot take a waiter off a queue).
 *
 * A thread is never cancelled while queued on a mutex: locks are not cancellation points, and a
 * hardware mutex's timed lock never queues (mutex.c). The canceller's side,
 * pthread_cancel(), is in cancel_request.c (see rt_cancel_linked()).
 */
#include <errno.h>
#include <stddef.h>

#include "rt.h"

void rt_cancel_reset(unsigned int slot)
{
	subutai_atomic_store(RT_THREAD_CANCEL + slot, 0);
	subutai_atomic_store(RT_THREAD_WAIT + slot, 0);
	rt_threads[slot].cleanup = NULL;
}

uint32_t rt_cancel_settle(unsigned int slot)
{
	uint32_t cancel;

	subutai_atomic_store(RT_THREAD_WAIT + slot, 0);
	/* A canceller is a few atomic-unit accesses and one wake-up or broadcast from done. */
	while (!((cancel = subutai_atomic_load(RT_THREAD_CANCEL + slot)) & RT_CANCEL_DONE)) {
		rt_yield();
	}
	return cancel;
}

void rt_cancel_take_wake(uint32_t cancel, bool taken)
{
	if ((cancel & RT_CANCEL_TOOK) && !taken) {
		rt_sleep();
	}
}

bool rt_cancel_stop(unsigned int slot)
{
	return rt_cancel_acts(subutai_atomic_load(RT_THREAD_CANCEL + slot));
}

void rt_cancel_act(void)
{
	rt_cancel_settle(rt_self_slot());
	pthread_exit(PTHREAD_CANCELED);
}

/*
 * Sets or clears one of the thread's own bits of its cancel word; the word then. A thread that
 * disables cancellation while a canceller is at work waits for it to be done: the canceller
 * saw cancellation enabled and may still swap the wait word, which the thread could be using
 * again by then.
 */
static uint32_t cancel_set(unsigned int slot, uint32_t bit, bool on)
{
	uint32_t cancel = subutai_atomic_load(RT_THREAD_CANCEL + slot);

	if (((cancel & bit) != 0) == on) {
		return cancel;
	}
	cancel = subutai_atomic_fetch_add(RT_THREAD_CANCEL + slot, on ? bit : -bit) +
		 (on ? bit : -bit);
	if (cancel >= RT_CANCEL_REQ && !(cancel & RT_CANCEL_DONE)) {
		cancel = rt_cancel_settle(slot);
	}
	return cancel;
}

/* An asynchronous, enabled thread acts on a pending request at once. */
static void act_if_async(uint32_t cancel)
{
	if ((cancel & RT_CANCEL_ASYNC) && rt_cancel_acts(cancel)) {
		rt_cancel_act();
	}
}

/* A setting of the thread's own: bit set for the value set, clear for clear; the old value. */
static int cancel_setting(uint32_t bit, int value, int set, int clear, int *old)
{
	if (value != set && value != clear) {
		return EINVAL;
	}
	unsigned int slot = rt_self_slot();
	uint32_t before = subutai_atomic_load(RT_THREAD_CANCEL + slot);
	uint32_t cancel = cancel_set(slot, bit, value == set);

	if (old) {
		*old = (before & bit) ? set : clear;
	}
	act_if_async(cancel);
	return 0;
}

int pthread_setcancelstate(int state, int *oldstate)
{
	return cancel_setting(RT_CANCEL_DISABLED, state, PTHREAD_CANCEL_DISABLE,
			      PTHREAD_CANCEL_ENABLE, oldstate);
}

/*
 * Asynchronous cancellation is refused (ENOTSUP), not emulated: POSIX lets it act at any moment,
 * a thread blocked in a mutex, read-write lock or barrier wait included, and neither backend can
 * take such a waiter out safely. The engines have no operation that removes a waiter from the
 * middle of a queue (docs/subutai-hw.md), and leaving a software queue would need a check on the
 * lock paths, the timed code whose placement the published figures depend on (docs/programs.md,
 * "Asynchronous cancellation"). A program that ignores the error keeps the deferred type, which
 * *oldtype reports. (The RT_CANCEL_ASYNC bit is then never set; its paths stay, unchanged, in the
 * code the figures were measured with.)
 */
int pthread_setcanceltype(int type, int *oldtype)
{
	if (type == PTHREAD_CANCEL_ASYNCHRONOUS) {
		if (oldtype) {
			*oldtype = PTHREAD_CANCEL_DEFERRED;
		}
		return ENOTSUP;
	}
	return cancel_setting(RT_CANCEL_ASYNC, type, PTHREAD_CANCEL_ASYNCHRONOUS,
			      PTHREAD_CANCEL_DEFERRED, oldtype);
}

void pthread_testcancel(void)
{
	if (rt_cancel_stop(rt_self_slot())) {
		rt_cancel_act();
	}
}

/* Cleanup handlers: a list through the thread's stack, innermost first. */

void __subutai_cleanup_push(struct __subutai_cleanup *cleanup, void (*routine)(void *), void *arg)
{
	unsigned int slot = rt_self_slot();

	cleanup->routine = routine;
	cleanup->arg = arg;
	cleanup->outer = rt_threads[slot].cleanup;
	rt_threads[slot].cleanup = cleanup;
}

void __subutai_cleanup_pop(struct __subutai_cleanup *cleanup, int execute)
{
	unsigned int slot = rt_self_slot();

	if (rt_threads[slot].cleanup != cleanup) {
		rt_fatal("pthread_cleanup_pop() is not the innermost handler's (a jump out of its "
			 "block?)");
	}
	rt_threads[slot].cleanup = cleanup->outer;
	if (execute) {
		cleanup->routine(cleanup->arg);
	}
}

void rt_exit_cleanup(void)
{
	unsigned int slot = rt_self_slot();
	struct __subutai_cleanup *cleanup;

	/* An exiting thread acts on no request: its handlers may call cancellation points. */
	cancel_set(slot, RT_CANCEL_DISABLED, true);
	while ((cleanup = rt_threads[slot].cleanup) != NULL) {
		rt_threads[slot].cleanup = cleanup->outer;
		cleanup->routine(cleanup->arg);
	}
}
