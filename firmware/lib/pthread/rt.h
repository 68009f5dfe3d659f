/*
 * Internals of the PThreads runtime, shared by its parts. The shared words several cores modify
 * are in the atomic unit; their map is atomic_words.h.
 */
#ifndef SUBUTAI_RT_H
#define SUBUTAI_RT_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pthread.h>
#include <subutai/atomic.h>
#include <subutai/ni.h>
#include <subutai/soc.h>
#include <subutai/sync.h>
#include <subutai_port.h> /* what the runtime asks of its port (subutai/port.h) */

#include "../atomic_words.h"

/* The driver's barrier result is passed through unchanged. */
_Static_assert(SUBUTAI_BARRIER_SERIAL_THREAD == PTHREAD_BARRIER_SERIAL_THREAD,
	       "the driver's serial-thread value is POSIX's");

/* The process (sysconf.c): pages exist only as what sysconf(_SC_PAGESIZE), valloc() and
 * picolibc's getpagesize() agree on (no MMU); times() and clock() count ticks of the C library's
 * CLOCKS_PER_SEC (picolibc's clock() sums times()'s fields); the one process's id. */
#define RT_PAGE_SIZE 4096
#ifdef CLOCKS_PER_SEC
#define RT_CLK_TCK CLOCKS_PER_SEC
#else
#define RT_CLK_TCK 1000
#endif
#define RT_PROCESS_ID 1

/* Thread handle: slot of the thread table and its generation (never 0). */
#define RT_SLOT_BITS         8
#define RT_HANDLE(slot, gen) (((gen) << RT_SLOT_BITS) | (slot))
#define RT_HANDLE_SLOT(t)    ((t) & ((1u << RT_SLOT_BITS) - 1))
#define RT_HANDLE_GEN(t)     ((t) >> RT_SLOT_BITS)

/* Data every core reads and writes (the port says where it goes). */
#define __rt_shared SUBUTAI_PORT_SHARED_DATA

/* Thread table (thread.c), in shared memory. */
struct rt_thread {
	void *(*start)(void *);
	void *arg;
	void *retval;
	unsigned int core;
	size_t stacksize;
	struct __subutai_cleanup *cleanup; /* the thread's own: its innermost cleanup handler */
	void *stack;             /* bare metal: its stack from the heap (NULL: its core's own) */
	unsigned int read_locks; /* read locks it holds of hardware read-write locks (rwlock.c) */
};
extern struct rt_thread rt_threads[RT_THREADS_MAX];

/*
 * The thread slots of a core's threads: SUBUTAI_PORT_SLOTS_PER_CORE of its own where the port
 * gives each core its slots (a waker then finds a waiter's core from its slot alone), else any.
 */
#if SUBUTAI_PORT_SLOTS_PER_CORE
#define RT_SLOT_COUNT       SUBUTAI_PORT_SLOTS_PER_CORE
#define RT_SLOT_FIRST(core) ((core)*RT_SLOT_COUNT)
#define RT_SLOT_CORE(slot)  ((slot) / RT_SLOT_COUNT)
#else
#define RT_SLOT_FIRST(core) 0u
#define RT_SLOT_COUNT       RT_THREADS_MAX
#endif

uint32_t rt_next_gen(void);
/* The slot of a live handle, or -1. */
int rt_slot_of(pthread_t t);
void rt_slot_free(unsigned int slot);
/* Last step of a thread on its core, after its key destructors (rt_keys_exit(), which may still
 * sleep): its return value and the joiner's wake-up. From here the slot may be reused. */
void rt_thread_finish(unsigned int slot, void *retval);

/* Provided by the port (firmware/port/baremetal/thread_baremetal.c,
 * zephyr-app/lib/pthread/thread_zephyr.c). */
#define RT_STACK_MIN PTHREAD_STACK_MIN
size_t rt_stack_default(void);
size_t rt_stack_max(void);
/* Whether a thread may be pinned on this core. */
bool rt_core_can_host(unsigned int core);
/* A core for a new thread (pinned by attr or by the placement policy), or -1. */
int rt_place(const pthread_attr_t *attr);
/* Gives back a core rt_place() returned, when the thread is not created after all. */
void rt_unplace(unsigned int core);
/* Starts the thread of a set-up slot on the core it was placed on; 0 or an errno value. */
int rt_spawn(unsigned int core, unsigned int slot);
pthread_t rt_current(void);
void rt_fatal(const char *what) __attribute__((noreturn));

/* NoC message types of the runtime (normal class). */
#define RT_MSG_SPAWN    0xf0 /* payload: thread slot */
#define RT_MSG_WAKE     0xf1 /* payload: the waiter (rt_waiter()) */
/* Zephyr, Tidon barrier policy: run the laggards of a barrier (sched_zephyr.c). */
#define RT_MSG_LAGGARDS 0xf2 /* payload: the BAPS of a waiter at the barrier */

/* Makes a set-up object valid: its magic is stored after every other field (the compiler may not
 * sink those stores below it; the core's write-through stores reach memory in order), so a core
 * that reads the magic reads the fields (see pthread.h). */
static inline void rt_publish(uint32_t *magic, uint32_t value)
{
	__asm__ volatile("" ::: "memory");
	*(volatile uint32_t *)magic = value;
}

/* One cache line per object (pthread.h): the fast path of a static initializer relies on it. */
_Static_assert(sizeof(pthread_mutex_t) <= SUBUTAI_PTHREAD_OBJECT_ALIGN, "mutex spans two lines");
_Static_assert(sizeof(pthread_cond_t) <= SUBUTAI_PTHREAD_OBJECT_ALIGN, "cond spans two lines");
_Static_assert(sizeof(pthread_barrier_t) <= SUBUTAI_PTHREAD_OBJECT_ALIGN,
	       "barrier spans two lines");

/* Which implementation holds a synchronization object. */
#define RT_IMPL_SW 1
#define RT_IMPL_HW 2

#define RT_MAGIC_MUTEX   0x4d555458u
#define RT_MAGIC_COND    0x434f4e44u
#define RT_MAGIC_BARRIER 0x42415252u
#define RT_MAGIC_RWLOCK  0x52574c4bu
#define RT_MAGIC_SPIN    0x5350494eu
#define RT_MAGIC_DEAD    0xdeadbeefu
#define RT_MAGIC_ATTR    0x41545452u

/* Attribute objects: a magic word marks them initialized. */
static inline int rt_attr_init(uint32_t *magic)
{
	if (!magic) {
		return EINVAL;
	}
	*magic = RT_MAGIC_ATTR;
	return 0;
}

static inline int rt_attr_destroy(uint32_t *magic)
{
	if (!magic || *magic != RT_MAGIC_ATTR) {
		return EINVAL;
	}
	*magic = RT_MAGIC_DEAD;
	return 0;
}

/* Process-shared attributes: one process, so only PTHREAD_PROCESS_PRIVATE is supported. */
static inline int rt_attr_setpshared(const uint32_t *magic, int pshared)
{
	if (!magic || *magic != RT_MAGIC_ATTR) {
		return EINVAL;
	}
	if (pshared == PTHREAD_PROCESS_SHARED) {
		return ENOTSUP;
	}
	return pshared == PTHREAD_PROCESS_PRIVATE ? 0 : EINVAL;
}

static inline int rt_attr_getpshared(const uint32_t *magic, int *pshared)
{
	if (!magic || *magic != RT_MAGIC_ATTR || !pshared) {
		return EINVAL;
	}
	*pshared = PTHREAD_PROCESS_PRIVATE;
	return 0;
}

/*
 * Critical sections, for a scheduler that knows them (TPDS'21 section VII, the critical-section-
 * aware policy): the mutex paths say when the calling thread is about to wait for a mutex (a
 * lock, or a condition wait: it holds the mutex again when woken), what its lock returned (0: it
 * holds one more) and what its unlock returned. A port whose scheduler tracks them defines
 * RT_CS_TRACKING (the Zephyr port, zephyr-app/lib/pthread/sched_zephyr.c); elsewhere they are
 * nothing, and the mutex paths compile as without them.
 */
#ifdef RT_CS_TRACKING
void rt_cs_wait(void);
void rt_cs_enter(int err);
void rt_cs_woken(void);
void rt_cs_exit(int err);
#else
static inline void rt_cs_wait(void)
{
}
static inline void rt_cs_enter(int err)
{
	(void)err;
}
static inline void rt_cs_woken(void)
{
}
static inline void rt_cs_exit(int err)
{
	(void)err;
}
#endif

/*
 * Barrier participation status (seed 002, Tidon): pthread_barrier_wait() says when the calling
 * thread arrives at a barrier and when it leaves it, so that the port's scheduler knows which
 * threads wait at a barrier and which of its siblings lag. A port that keeps it defines
 * RT_BARRIER_TRACKING (the Zephyr port with a barrier waiting policy other than spin-then-block);
 * elsewhere these are nothing.
 */
#ifdef RT_BARRIER_TRACKING
void rt_barrier_arrive(const void *barrier);
void rt_barrier_leave(void);
#else
static inline void rt_barrier_arrive(const void *barrier)
{
	(void)barrier;
}
static inline void rt_barrier_leave(void)
{
}
#endif

static inline unsigned int rt_core(void)
{
	return subutai_tile_id();
}

/* Short internal critical sections only (a few atomic-unit accesses): users of the
 * synchronization objects never spin, they sleep. The holder keeps its core where threads
 * preempt each other (subutai_port_spin_enter()); while the word is taken the port may let the
 * core's other threads run (subutai_port_spin_wait()).
 */
static inline void rt_spin_lock(unsigned int word)
{
	subutai_port_spin_enter();
	while (subutai_atomic_test_and_set(word) != 0) {
		for (unsigned int spins = 1; subutai_atomic_load(word) != 0; spins++) {
			subutai_port_spin_wait(spins);
		}
	}
}

static inline void rt_spin_unlock(unsigned int word)
{
	subutai_atomic_store(word, 0);
	subutai_port_spin_exit();
}

/*
 * Who sleeps on a wait queue of the software objects, and is woken by rt_wake(): a thread slot.
 * Below RT_THREADS_MAX.
 */
unsigned int rt_waiter(void);
/* Lets the other ready threads of this core run first. */
void rt_yield(void);

/* Thread-specific data of the calling thread: one value per key, tagged with its generation. */
struct rt_key_value {
	uint32_t gen;
	void *value;
};
struct rt_key_value *rt_key_values(void);
/* Runs the destructors of the calling thread's values (at its exit). */
void rt_keys_exit(void);

/* The clocks there are (clock.c): CLOCK_REALTIME and CLOCK_MONOTONIC, both the cycle counter. */
static inline bool rt_clock_known(clockid_t clock_id)
{
	return clock_id == CLOCK_REALTIME || clock_id == CLOCK_MONOTONIC;
}

/* A time or duration POSIX accepts: not NULL, not negative, nanoseconds below a second. */
static inline bool rt_timespec_valid(const struct timespec *t)
{
	return t && t->tv_sec >= 0 && t->tv_nsec >= 0 && t->tv_nsec < 1000000000L;
}

/* A time of either clock (see pthread.h) to global cycles. */
static inline uint64_t rt_timespec_to_cycles(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * CONFIG_CLOCK_FREQUENCY +
	       (uint64_t)t->tv_nsec * CONFIG_CLOCK_FREQUENCY / 1000000000ull;
}

/*
 * The absolute time of a timed wait as the waits above take it (rt_timespec_valid()), in *clamped;
 * EINVAL for nanoseconds out of range, the one error POSIX gives a time. Any second is a time: one
 * before the clock's start (a negative tv_sec) is long past and becomes the start, so the wait
 * times out; one beyond the cycle counter's range becomes its last second, never reached. The
 * timed calls clamp at their entry, so the waits' own paths stay as they are.
 */
static inline int rt_abstime_clamp(const struct timespec *t, struct timespec *clamped)
{
	/* The last second whose cycles fit the counter, its nanoseconds included. */
	const int64_t last = (int64_t)(UINT64_MAX / CONFIG_CLOCK_FREQUENCY) - 1;

	if (!t || t->tv_nsec < 0 || t->tv_nsec >= 1000000000L) {
		return EINVAL;
	}
	*clamped = *t;
	if (t->tv_sec < 0) {
		clamped->tv_sec = 0;
		clamped->tv_nsec = 0;
	} else if ((int64_t)t->tv_sec > last) {
		clamped->tv_sec = (time_t)last;
	}
	return 0;
}

/* pthread_cond_timedwait() with a time as the waits take it (rt_timespec_valid(): the public
 * call clamps it, rt_abstime_clamp()): what the library's own timed waits call. */
int rt_cond_timedwait(pthread_cond_t *cond, pthread_mutex_t *mutex, const struct timespec *abstime);

/* Sleeps until a wake-up arrives. */
void rt_sleep(void);
/* The same until the global cycle counter reaches deadline (0: none); false on timeout. */
bool rt_sleep_until(uint64_t deadline);
/* Wakes a waiter sleeping in rt_sleep() (or about to). */
void rt_wake(unsigned int waiter, uint32_t what);
/* Sleeps the calling thread until the global cycle counter reaches deadline, whatever arrives
 * meanwhile (sleep(), nanosleep()): the core's other threads run (Zephyr), or the core sleeps. */
void rt_nap_until(uint64_t deadline);

/*
 * Deferred cancellation (cancel.c). Two atomic-unit words per thread slot:
 *
 *   cancel  RT_CANCEL_DISABLED and RT_CANCEL_ASYNC, the thread's state and type (changed by the
 *           thread alone; the asynchronous type is refused, cancel.c); the requests, counted from
 * RT_CANCEL_REQ; RT_CANCEL_DONE once the first canceller is done with the thread, RT_CANCEL_TOOK if
 * it found the thread blocked and woke it (one wake-up the thread must take, RT_WAIT_WAKE). wait
 * what the thread blocks on while at a cancellation point, 0 elsewhere: a tag telling the canceller
 * how to get it out.
 *
 * The thread stores its tag, then reads its cancel word (rt_cancel_enter()); the canceller adds
 * its request, then swaps the tag out: one of them sees the other. A thread that sees a request
 * waits for RT_CANCEL_DONE before it goes on (the canceller is then done with the object it
 * blocked on), and takes the canceller's wake-up if there was one, so nothing of the cancellation
 * is left behind: no wake-up, no waiter in a queue, no request in an engine.
 */
#define RT_CANCEL_DISABLED 0x01u
#define RT_CANCEL_ASYNC    0x02u
#define RT_CANCEL_DONE     0x04u
#define RT_CANCEL_TOOK     0x08u
#define RT_CANCEL_REQ      0x100u

#define RT_WAIT_WAKE             1u /* (waiter << 2) | 1: woken by rt_wake(waiter) */
#define RT_WAIT_COND             2u /* address of a software condition | 2: woken by its broadcast */
#define RT_WAIT_POLL             3u /* the thread polls its cancel word while it waits */
#define RT_WAIT_KIND_MASK        3u
#define RT_WAIT_WAKE_TAG(waiter) (((uint32_t)(waiter) << 2) | RT_WAIT_WAKE)

/* A request the thread acts on now (it is at a cancellation point). */
static inline bool rt_cancel_acts(uint32_t cancel)
{
	return cancel >= RT_CANCEL_REQ && !(cancel & RT_CANCEL_DISABLED);
}

/*
 * Whether the program can cancel threads: pthread_cancel() is alone in its object
 * (cancel_request.c) and referenced weakly here, so a program that never calls it links none, no
 * request can ever come, and its condition waits go without the protocol (and its cost).
 */
#pragma weak pthread_cancel
static inline bool rt_cancel_linked(void)
{
	return pthread_cancel != NULL;
}

/* Waits for the canceller to be done; the cancel word then. */
uint32_t rt_cancel_settle(unsigned int slot);

/*
 * The slot of the calling thread, and the two ends of a cancellation point: each returns 0, or
 * (settled) the cancel word when the thread is to act: it then undoes what it started, takes the
 * canceller's wake-up (rt_cancel_take_wake()) and calls rt_cancel_act().
 */
static inline unsigned int rt_self_slot(void)
{
	return RT_HANDLE_SLOT(rt_current());
}

static inline uint32_t rt_cancel_enter(unsigned int slot, uint32_t tag)
{
	subutai_atomic_store(RT_THREAD_WAIT + slot, tag);
	return rt_cancel_acts(subutai_atomic_load(RT_THREAD_CANCEL + slot)) ? rt_cancel_settle(slot)
									    : 0;
}

static inline uint32_t rt_cancel_exit(unsigned int slot)
{
	return rt_cancel_enter(slot, 0);
}

/* Takes the canceller's wake-up (RT_WAIT_WAKE points) unless the thread took it (taken). */
void rt_cancel_take_wake(uint32_t cancel, bool taken);
/* Acts on the request: the cleanup handlers, then the thread exits with PTHREAD_CANCELED. */
void rt_cancel_act(void) __attribute__((noreturn));
/* What a canceller does to a thread in a wait of the port's own (rt_nap_cancellable(), a
 * hardware condition wait): RT_WAIT_POLL bare-metal, RT_WAIT_WAKE under Zephyr. */
uint32_t rt_wait_tag(void);
/* A cancellation stop for the Subutai driver's waits (subutai_cond_wait_stoppable()). */
bool rt_cancel_stop(unsigned int slot);
/* A new thread in slot: cancellation enabled and deferred, no request, no cleanup handler. */
void rt_cancel_reset(unsigned int slot);
/* First step of pthread_exit(): cancellation disabled, the cleanup handlers run. */
void rt_exit_cleanup(void);
/* The port's cancellable sleep (nanosleep() and the like): until deadline, or earlier once
 * cancellation acts; whether it took a wake-up of rt_wake(). */
bool rt_nap_cancellable(uint64_t deadline, unsigned int slot);

/* Software implementation (swonly.c). Handles are pool block + 1. */
int sw_mutex_init(uint32_t *handle);
int sw_mutex_destroy(uint32_t handle);
/* checked: error-checking mutex (its type is in the pthread object, cached) */
int sw_mutex_lock(uint32_t handle, bool checked);
int sw_mutex_trylock(uint32_t handle, bool checked);
int sw_mutex_unlock(uint32_t handle, bool checked);
/* As sw_mutex_lock() until the global cycle counter reaches deadline: then ETIMEDOUT. */
int sw_mutex_timedlock(uint32_t handle, bool checked, uint64_t deadline);
int sw_cond_init(uint32_t *handle);
int sw_cond_destroy(uint32_t handle);
/*
 * A condition wait in steps around the release of the mutex, which the pthread layer does (this
 * layer knows no pthread object). sw_mutex: the handle of the waiters' mutex if it is a software
 * one, else 0. sw_cond_enter() makes the caller a waiter and returns the sequence it waits on;
 * sw_cond_leave() undoes it when the release failed; sw_cond_sleep() sleeps until a wake-up or
 * the deadline (global cycles, 0: none) and returns 0 or ETIMEDOUT, owning sw_mutex again when
 * there is one (woken, or requeued onto it by a broadcast): the caller then takes no lock.
 */
uint32_t sw_cond_enter(uint32_t handle, uint32_t sw_mutex);
void sw_cond_leave(uint32_t handle);
int sw_cond_sleep(uint32_t handle, uint32_t seq, uint64_t deadline, uint32_t sw_mutex,
		  bool checked);
int sw_cond_signal(uint32_t handle);
int sw_cond_broadcast(uint32_t handle);
int sw_barrier_init(uint32_t *handle, unsigned int count);
int sw_barrier_destroy(uint32_t handle);
int sw_barrier_wait(uint32_t handle);
/* Spin locks: a block whose lock word (sw_spin_word()) is taken by test-and-set and whose owner
 * word (sw_spin_owner_word()) holds the owner's pthread_t + 1 (spin.c). */
int sw_spin_init(uint32_t *handle);
int sw_spin_destroy(uint32_t handle);
unsigned int sw_spin_word(uint32_t handle);
unsigned int sw_spin_owner_word(uint32_t handle);

/*
 * Hardware implementation: the Subutai driver (subutai/sync.h), linked only with the subutai
 * backend. Weak here, so programs linked with the swonly backend contain no hardware path (and
 * never call one: no object is ever RT_IMPL_HW there). Direct calls rather than a table of
 * pointers: right after an acquire has invalidated the data cache, every pointer read would be a
 * miss. The allocation functions (backend_subutai.c) try every engine and return EAGAIN when
 * every scratchpad is full.
 */
#pragma weak subutai_free
#pragma weak subutai_mutex_lock
#pragma weak subutai_mutex_trylock
#pragma weak subutai_mutex_unlock
#pragma weak subutai_barrier_wait
#pragma weak subutai_cond_wait
#pragma weak subutai_cond_timedwait
#pragma weak subutai_cond_wait_stoppable
#pragma weak subutai_cond_signal
#pragma weak subutai_cond_broadcast
int rt_hw_mutex_init(uint32_t *handle, bool errorcheck) __attribute__((weak));
int rt_hw_cond_init(uint32_t *handle) __attribute__((weak));
int rt_hw_barrier_init(uint32_t *handle, unsigned int count) __attribute__((weak));
#pragma weak subutai_rwlock_rdlock
#pragma weak subutai_rwlock_tryrdlock
#pragma weak subutai_rwlock_wrlock
#pragma weak subutai_rwlock_trywrlock
#pragma weak subutai_rwlock_unlock
int rt_hw_rwlock_init(uint32_t *handle) __attribute__((weak));

/*
 * 0 when the object is ready, after setting up a statically initialized one (magic 0) with
 * setup(obj) under the runtime lock; EINVAL for a destroyed or corrupt one (mutex.c).
 */
int rt_lazy_setup(uint32_t *magic, uint32_t want, int (*setup)(void *), void *obj);
/*
 * A hardware lock taken by polling trylock(handle) until the deadline (cycles): the engine cannot
 * take a waiter off its queue, so a timed wait never queues (mutex.c).
 */
int rt_hw_timedlock(uint32_t handle, uint64_t deadline, int (*trylock)(uint32_t handle));

/* Defined by each backend (and so pulling it in from the archive): does it use the hardware? */
extern const bool rt_backend_hw;

#endif /* SUBUTAI_RT_H */
