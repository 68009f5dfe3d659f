/*
 * Clocks, sleeping and yielding (pthread.h): CLOCK_REALTIME and CLOCK_MONOTONIC both count the
 * global cycle counter from the SoC's reset, so a timeout of either clock is the same cycle count
 * and one cycle is their resolution. How a thread sleeps is the port's (rt_nap_cancellable()).
 */
#include <errno.h>
#include <time.h>
#include <unistd.h>

#include "rt.h"

#define RT_NSEC_PER_SEC 1000000000ull

/* Sets errno and returns -1 (the clock and sleep functions report errors so). */
static int fail(int err)
{
	errno = err;
	return -1;
}

int clock_gettime(clockid_t clock_id, struct timespec *tp)
{
	if (!tp || !rt_clock_known(clock_id)) {
		return fail(EINVAL);
	}
	uint64_t cycles = subutai_cycles();

	tp->tv_sec = cycles / CONFIG_CLOCK_FREQUENCY;
	tp->tv_nsec = (cycles % CONFIG_CLOCK_FREQUENCY) * RT_NSEC_PER_SEC / CONFIG_CLOCK_FREQUENCY;
	return 0;
}

/*
 * The time calls of classic benchmark code, where the C library declares them (picolibc; Zephyr's
 * minimal library has neither <sys/time.h> nor <sys/times.h>). picolibc builds time() on
 * gettimeofday() and clock() on times(). The time of day is the same clock: seconds since the
 * SoC's reset; clock() counts the time since the reset too, the SoC running one program.
 */
#if __has_include(<sys/time.h>) && __has_include(<sys/times.h>)
#include <sys/time.h>
#include <sys/times.h>

int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
	(void)tz; /* obsolete (POSIX): no time zone */
	if (tv) {
		struct timespec now;

		clock_gettime(CLOCK_REALTIME, &now);
		tv->tv_sec = now.tv_sec;
		tv->tv_usec = now.tv_nsec / 1000;
	}
	return 0;
}

clock_t times(struct tms *buf)
{
	clock_t ticks = (clock_t)(subutai_cycles() * RT_CLK_TCK / CONFIG_CLOCK_FREQUENCY);

	if (buf) {
		buf->tms_utime = ticks;
		buf->tms_stime = 0;
		buf->tms_cutime = 0;
		buf->tms_cstime = 0;
	}
	return ticks;
}
#endif

int clock_getres(clockid_t clock_id, struct timespec *res)
{
	if (!rt_clock_known(clock_id)) {
		return fail(EINVAL);
	}
	if (res) {
		/* One cycle, rounded up to whole nanoseconds. */
		res->tv_sec = 0;
		res->tv_nsec =
			(RT_NSEC_PER_SEC + CONFIG_CLOCK_FREQUENCY - 1) / CONFIG_CLOCK_FREQUENCY;
	}
	return 0;
}

/* Cycles of a duration, rounded up: a sleep never ends early. */
static uint64_t duration_cycles(uint64_t sec, uint64_t nsec)
{
	return sec * CONFIG_CLOCK_FREQUENCY +
	       (nsec * CONFIG_CLOCK_FREQUENCY + RT_NSEC_PER_SEC - 1) / RT_NSEC_PER_SEC;
}

/* The sleeping calls are cancellation points: the port's nap ends early for a canceller. */
static void nap(uint64_t cycles)
{
	unsigned int slot = rt_self_slot();
	bool woken = false;
	uint32_t cancel = rt_cancel_enter(slot, rt_wait_tag());

	if (cancel == 0) {
		woken = rt_nap_cancellable(subutai_cycles() + cycles, slot);
		cancel = rt_cancel_exit(slot);
	}
	/* A sleeper sees what other threads wrote before it woke (pthread.h, "Visibility"). */
	subutai_dcache_invalidate();
	if (cancel == 0) {
		if (woken) {
			rt_fatal("woken while sleeping, not by a canceller");
		}
		return;
	}
	rt_cancel_take_wake(cancel, woken);
	rt_cancel_act();
}

int nanosleep(const struct timespec *req, struct timespec *rem)
{
	if (!rt_timespec_valid(req)) {
		return fail(EINVAL);
	}
	nap(duration_cycles(req->tv_sec, req->tv_nsec));
	if (rem) {
		/* No signal ever interrupts the sleep: nothing remains. */
		rem->tv_sec = 0;
		rem->tv_nsec = 0;
	}
	return 0;
}

unsigned int sleep(unsigned int seconds)
{
	nap(duration_cycles(seconds, 0));
	return 0;
}

int usleep(useconds_t usec)
{
	nap(duration_cycles(0, (uint64_t)usec * 1000));
	return 0;
}

#ifndef SUBUTAI_PTHREAD_YIELD_INVALIDATES
#define SUBUTAI_PTHREAD_YIELD_INVALIDATES 1
#endif

int sched_yield(void)
{
	rt_yield();
	/* As after a sleep: a thread that yields in a polling loop sees the write it polls for.
	 * (SUBUTAI_PTHREAD_YIELD_INVALIDATES=0 only measures what that costs:
	 * scripts/experiments/switch.py.) */
#if SUBUTAI_PTHREAD_YIELD_INVALIDATES
	subutai_dcache_invalidate();
#endif
	return 0;
}
