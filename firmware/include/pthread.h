/*
 * POSIX threads for the bare-metal Subutai runtime: user-level threads, several per core.
 *
 * pthread_create() places the new thread on the core holding the fewest thread slots (a thread
 * that exited unjoined holds its slot until joined; cores 1, 2, ... before core 0,
 * which runs main(): up to one thread per core each thread has a core of its own) or on the core
 * pinned with pthread_attr_setcore_np(), up to SUBUTAI_PTHREAD_THREADS_PER_CORE (<limits.h>) on
 * each. The threads of a core are multiplexed by the core's scheduler
 * (firmware/port/baremetal/ult.c, after Seed 003's hybrid thread library): a thread runs until it
 * blocks (join, lock, barrier, condition, sleep), yields or exits, and the core then runs its next
 * ready thread, first in, first out, or sleeps in wfi until a NoC message, a reply of its engine or
 * its timer. A thread waiting for its engine's reply keeps the core only while nothing else needs
 * it. There is no preemption: a thread that spins without calling the library keeps its core. A
 * thread runs on its core's own stack when that is free, else on one from the heap
 * (PTHREAD_STACK_MIN to the heap's size; 8 KiB by default); errno and thread-specific data are the
 * thread's own. The synchronization objects are implemented by the backend the program is linked
 * with (firmware Makefile, BACKEND=subutai or BACKEND=swonly):
 *
 *   subutai  the Subutai-HW engines in the network interfaces; where an engine's scratchpad is
 *            full, that object falls back to the software implementation.
 *   swonly   the software-only baseline: the atomic unit, wait queues in uncached shared memory
 *            and NoC messages to wake sleeping cores.
 *
 * Visibility. The data caches are write-through and not coherent; what a thread sees of what
 * other threads wrote is decided by the library's calls:
 *   - after an acquire (lock granted, trylock taken, barrier released, condition woken with its
 *     mutex, thread start, join): everything written before the matching release, as POSIX's
 *     memory synchronization asks (the local data cache is invalidated, or was last filled
 *     after this core's own release of the same mutex);
 *   - after a sleep or a yield (sleep, usleep, nanosleep, sched_yield): everything written before
 *     the call returned, so the polling idiom "while (flag == BUSY) sleep(1);" ends, as on a
 *     coherent machine, though POSIX calls it a data race;
 *   - in a bare loop that calls none of these: nothing new (its reads may hit its cache for
 *     ever), and bare-metal the core's other threads do not run meanwhile; such a loop needs one
 *     of the calls above, or an atomic-unit word and a sched_yield().
 *
 * Under Zephyr (zephyr-app/) the same library runs several threads per core on each core's own
 * kernel; pthread_create() places a thread on a core by a placement policy (round-robin by default)
 * or on the core pinned with pthread_attr_setcore_np().
 *
 * Clocks: CLOCK_REALTIME and CLOCK_MONOTONIC both count from the SoC's reset on the global cycle
 * counter (the same on every core; the SoC has no calendar clock), one cycle being the resolution
 * clock_getres() gives. Timeouts (pthread_cond_timedwait) are absolute times of the condition's
 * clock (pthread_condattr_setclock(), CLOCK_REALTIME by default). Sleeping (sleep, usleep,
 * nanosleep) lets the core's other threads run (bare metal: the core sleeps in wfi when none is
 * ready, woken by its tile timer); sched_yield() lets the core's other ready threads run first.
 *
 * Cancellation is deferred: a thread acts on pthread_cancel() at its cancellation points, which
 * are pthread_join(), pthread_cond_wait(), pthread_cond_timedwait(), nanosleep(), sleep(),
 * usleep() and pthread_testcancel(); a thread blocked in one of them is got out (a condition
 * waiter comes back with its mutex, as POSIX wants before its cleanup handlers run). The
 * asynchronous type is accepted and acts at the same points, and at once when a request is
 * pending as the type or state changes: the library cannot stop a thread between two
 * instructions.
 *
 * Read-write and spin locks: see their types below.
 *
 * Not provided: scheduling policies, priority protocols, process-shared objects
 * (PTHREAD_PROCESS_SHARED gives ENOTSUP), signals.
 */
#ifndef SUBUTAI_PTHREAD_H
#define SUBUTAI_PTHREAD_H

#include <limits.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Thread handle: slot of the runtime's thread table and its generation. */
typedef uint32_t pthread_t;

typedef struct {
	uint32_t magic;
	int detachstate;
	int core;         /* pinned core, or -1: the placement policy decides */
	size_t stacksize; /* 0: the default (Zephyr) */
} pthread_attr_t;

#define PTHREAD_CREATE_JOINABLE 0
#define PTHREAD_CREATE_DETACHED 1

#define PTHREAD_MUTEX_NORMAL     0
#define PTHREAD_MUTEX_ERRORCHECK 1
#define PTHREAD_MUTEX_RECURSIVE  2
#define PTHREAD_MUTEX_DEFAULT    PTHREAD_MUTEX_NORMAL

#define PTHREAD_BARRIER_SERIAL_THREAD (-1)

typedef struct {
	uint32_t magic;
	int type;
} pthread_mutexattr_t;

typedef struct {
	uint32_t magic;
	clockid_t clock; /* of pthread_cond_timedwait()'s timeouts (both count the same cycles) */
} pthread_condattr_t;

typedef struct {
	uint32_t magic;
} pthread_barrierattr_t;

/*
 * The objects only hold a reference to the synchronization state, which lives in an NI's
 * scratchpad (subutai) or in the atomic unit (swonly). A zero magic marks a static initializer:
 * the object is set up at its first use, by whichever core uses it first.
 *
 * Each object is aligned to 16 bytes so that it lies in one data-cache line (32 bytes on the
 * shipped VexRiscv variants): a core that sees the magic of an object set up by another core in
 * its cache then sees every field that was written before it, never a stale handle or impl from a
 * line cached earlier (magic is the first word, written last).
 */
#define SUBUTAI_PTHREAD_OBJECT_ALIGN 16
typedef struct {
	uint32_t magic;
	uint32_t handle; /* Subutai sync id, or software object */
	uint8_t impl;    /* which implementation holds it */
	uint8_t type;    /* PTHREAD_MUTEX_* */
	uint16_t depth;  /* recursive mutexes: lock depth of the owner */
	pthread_t owner; /* recursive mutexes: owning thread */
} __attribute__((aligned(SUBUTAI_PTHREAD_OBJECT_ALIGN))) pthread_mutex_t;

typedef struct {
	uint32_t magic;
	uint32_t handle; /* allocated at the first wait, next to its mutex's implementation */
	uint8_t impl;
} __attribute__((aligned(SUBUTAI_PTHREAD_OBJECT_ALIGN))) pthread_cond_t;

typedef struct {
	uint32_t magic;
	uint32_t handle;
	uint8_t impl;
	unsigned int count;
} __attribute__((aligned(SUBUTAI_PTHREAD_OBJECT_ALIGN))) pthread_barrier_t;

/*
 * Read-write locks: in a Subutai engine (the subutai backend, while an engine has room: one
 * request per lock or unlock), else a mutex and two conditions of the program's backend with the
 * readers counted under the mutex. Writers are preferred either way: a reader waits while a writer
 * holds the lock or waits for it, so a thread that holds a read lock and asks another while a
 * writer waits deadlocks (POSIX leaves it to the implementation). A zero magic marks
 * PTHREAD_RWLOCK_INITIALIZER. An unlock by a thread that holds no read lock of any read-write
 * lock and is not this one's writer is refused (EPERM); one by a thread holding a read lock of
 * another is undefined, as POSIX says.
 */
typedef struct {
	uint32_t magic;
} pthread_rwlockattr_t;

typedef struct {
	uint32_t magic;
	uint32_t handle;          /* the engine's read-write lock (impl: hardware) */
	uint8_t impl;             /* which implementation holds it */
	uint32_t readers;         /* read locks held */
	uint32_t writers_waiting; /* writers blocked: new readers wait behind them */
	uint32_t writer;          /* the write owner's pthread_t + 1, 0 if none (both) */
	pthread_mutex_t lock;
	pthread_cond_t readers_go;
	pthread_cond_t writer_go;
} __attribute__((aligned(SUBUTAI_PTHREAD_OBJECT_ALIGN))) pthread_rwlock_t;

#define PTHREAD_RWLOCK_INITIALIZER                                                                 \
	{                                                                                          \
		0                                                                                  \
	}

/* Spin locks: a word of the atomic unit (the software object pool), taken by test-and-set; a
 * spinner lets the other threads of its core run now and then (Zephyr). */
typedef struct {
	uint32_t magic;
	uint32_t handle;
} pthread_spinlock_t;

/* pthread_once(): 0 not run, then running, then done. */
typedef struct {
	volatile uint32_t state;
} pthread_once_t;

#define PTHREAD_ONCE_INIT                                                                          \
	{                                                                                          \
		0                                                                                  \
	}

/* Thread-specific data keys: an index of the key table, valid while allocated. */
typedef uint32_t pthread_key_t;

/* Limits: <limits.h> (PTHREAD_KEYS_MAX, PTHREAD_THREADS_MAX, PTHREAD_STACK_MIN, ...). */

#define PTHREAD_CANCEL_ENABLE       0
#define PTHREAD_CANCEL_DISABLE      1
#define PTHREAD_CANCEL_DEFERRED     0
#define PTHREAD_CANCEL_ASYNCHRONOUS 1
#define PTHREAD_CANCELED            ((void *)-1)

/* A cleanup handler, on the stack of its thread (pthread_cleanup_push()). */
struct __subutai_cleanup {
	void (*routine)(void *);
	void *arg;
	struct __subutai_cleanup *outer;
};

#define PTHREAD_MUTEX_INITIALIZER                                                                  \
	{                                                                                          \
		0, 0, 0, 0, 0, 0                                                                   \
	}
#define PTHREAD_COND_INITIALIZER                                                                   \
	{                                                                                          \
		0, 0, 0                                                                            \
	}

int pthread_attr_init(pthread_attr_t *attr);
int pthread_attr_destroy(pthread_attr_t *attr);
int pthread_attr_setdetachstate(pthread_attr_t *attr, int detachstate);
int pthread_attr_getdetachstate(const pthread_attr_t *attr, int *detachstate);

int pthread_attr_setstacksize(pthread_attr_t *attr, size_t stacksize);
int pthread_attr_getstacksize(const pthread_attr_t *attr, size_t *stacksize);
/*
 * Scheduling (sched_attr.c): the library's one kind of thread has system scope, inherits its
 * scheduling and runs SCHED_OTHER at priority 0; other values are refused with ENOTSUP. The
 * concurrency level is a hint, kept and returned.
 */
#define PTHREAD_SCOPE_SYSTEM   0
#define PTHREAD_SCOPE_PROCESS  1
#define PTHREAD_INHERIT_SCHED  1
#define PTHREAD_EXPLICIT_SCHED 2

struct sched_param;
int pthread_attr_setscope(pthread_attr_t *attr, int scope);
int pthread_attr_getscope(const pthread_attr_t *attr, int *scope);
int pthread_attr_setinheritsched(pthread_attr_t *attr, int inheritsched);
int pthread_attr_getinheritsched(const pthread_attr_t *attr, int *inheritsched);
int pthread_attr_setschedpolicy(pthread_attr_t *attr, int policy);
int pthread_attr_getschedpolicy(const pthread_attr_t *attr, int *policy);
int pthread_attr_setschedparam(pthread_attr_t *attr, const struct sched_param *param);
int pthread_attr_getschedparam(const pthread_attr_t *attr, struct sched_param *param);
int pthread_getschedparam(pthread_t thread, int *policy, struct sched_param *param);
int pthread_setschedparam(pthread_t thread, int policy, const struct sched_param *param);
int pthread_setconcurrency(int new_level);
int pthread_getconcurrency(void);

/* Non-portable: run the thread on this core (-1: let the placement policy choose). */
int pthread_attr_setcore_np(pthread_attr_t *attr, int core);
int pthread_attr_getcore_np(const pthread_attr_t *attr, int *core);

int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *),
		   void *arg);
int pthread_join(pthread_t thread, void **retval);
int pthread_detach(pthread_t thread);
void pthread_exit(void *retval) __attribute__((noreturn));
pthread_t pthread_self(void);
int pthread_equal(pthread_t t1, pthread_t t2);

int pthread_cancel(pthread_t thread);
int pthread_setcancelstate(int state, int *oldstate);
int pthread_setcanceltype(int type, int *oldtype);
void pthread_testcancel(void);

/* pthread_cleanup_push() and pthread_cleanup_pop() are a pair in one block, as POSIX requires. */
void __subutai_cleanup_push(struct __subutai_cleanup *cleanup, void (*routine)(void *), void *arg);
void __subutai_cleanup_pop(struct __subutai_cleanup *cleanup, int execute);
#define pthread_cleanup_push(routine, arg)                                                         \
	{                                                                                          \
		struct __subutai_cleanup __subutai_cleanup_frame;                                  \
		__subutai_cleanup_push(&__subutai_cleanup_frame, (routine), (arg));
#define pthread_cleanup_pop(execute)                                                               \
	__subutai_cleanup_pop(&__subutai_cleanup_frame, (execute));                                \
	}

/* Every object is private to the program's threads: PTHREAD_PROCESS_SHARED gives ENOTSUP. */
#define PTHREAD_PROCESS_PRIVATE 0
#define PTHREAD_PROCESS_SHARED  1

int pthread_mutexattr_init(pthread_mutexattr_t *attr);
int pthread_mutexattr_destroy(pthread_mutexattr_t *attr);
int pthread_mutexattr_settype(pthread_mutexattr_t *attr, int type);
int pthread_mutexattr_gettype(const pthread_mutexattr_t *attr, int *type);
int pthread_mutexattr_setpshared(pthread_mutexattr_t *attr, int pshared);
int pthread_mutexattr_getpshared(const pthread_mutexattr_t *attr, int *pshared);

int pthread_mutex_init(pthread_mutex_t *mutex, const pthread_mutexattr_t *attr);
int pthread_mutex_destroy(pthread_mutex_t *mutex);
int pthread_mutex_lock(pthread_mutex_t *mutex);
int pthread_mutex_trylock(pthread_mutex_t *mutex);
int pthread_mutex_timedlock(pthread_mutex_t *mutex, const struct timespec *abstime);
int pthread_mutex_unlock(pthread_mutex_t *mutex);

int pthread_condattr_init(pthread_condattr_t *attr);
int pthread_condattr_destroy(pthread_condattr_t *attr);
int pthread_condattr_setclock(pthread_condattr_t *attr, clockid_t clock_id);
int pthread_condattr_getclock(const pthread_condattr_t *attr, clockid_t *clock_id);
int pthread_condattr_setpshared(pthread_condattr_t *attr, int pshared);
int pthread_condattr_getpshared(const pthread_condattr_t *attr, int *pshared);

int pthread_cond_init(pthread_cond_t *cond, const pthread_condattr_t *attr);
int pthread_cond_destroy(pthread_cond_t *cond);
int pthread_cond_wait(pthread_cond_t *cond, pthread_mutex_t *mutex);
int pthread_cond_timedwait(pthread_cond_t *cond, pthread_mutex_t *mutex,
			   const struct timespec *abstime);
int pthread_cond_signal(pthread_cond_t *cond);
int pthread_cond_broadcast(pthread_cond_t *cond);

int pthread_barrierattr_init(pthread_barrierattr_t *attr);
int pthread_barrierattr_destroy(pthread_barrierattr_t *attr);
int pthread_barrierattr_setpshared(pthread_barrierattr_t *attr, int pshared);
int pthread_barrierattr_getpshared(const pthread_barrierattr_t *attr, int *pshared);

int pthread_barrier_init(pthread_barrier_t *barrier, const pthread_barrierattr_t *attr,
			 unsigned int count);
int pthread_barrier_destroy(pthread_barrier_t *barrier);
int pthread_barrier_wait(pthread_barrier_t *barrier);

int pthread_rwlockattr_init(pthread_rwlockattr_t *attr);
int pthread_rwlockattr_destroy(pthread_rwlockattr_t *attr);
int pthread_rwlockattr_setpshared(pthread_rwlockattr_t *attr, int pshared);
int pthread_rwlockattr_getpshared(const pthread_rwlockattr_t *attr, int *pshared);
int pthread_rwlock_init(pthread_rwlock_t *rwlock, const pthread_rwlockattr_t *attr);
int pthread_rwlock_destroy(pthread_rwlock_t *rwlock);
int pthread_rwlock_rdlock(pthread_rwlock_t *rwlock);
int pthread_rwlock_tryrdlock(pthread_rwlock_t *rwlock);
int pthread_rwlock_timedrdlock(pthread_rwlock_t *rwlock, const struct timespec *abstime);
int pthread_rwlock_wrlock(pthread_rwlock_t *rwlock);
int pthread_rwlock_trywrlock(pthread_rwlock_t *rwlock);
int pthread_rwlock_timedwrlock(pthread_rwlock_t *rwlock, const struct timespec *abstime);
int pthread_rwlock_unlock(pthread_rwlock_t *rwlock);

int pthread_spin_init(pthread_spinlock_t *lock, int pshared);
int pthread_spin_destroy(pthread_spinlock_t *lock);
int pthread_spin_lock(pthread_spinlock_t *lock);
int pthread_spin_trylock(pthread_spinlock_t *lock);
int pthread_spin_unlock(pthread_spinlock_t *lock);

int pthread_once(pthread_once_t *once, void (*init)(void));

int pthread_key_create(pthread_key_t *key, void (*destructor)(void *));
int pthread_key_delete(pthread_key_t key);
void *pthread_getspecific(pthread_key_t key);
int pthread_setspecific(pthread_key_t key, const void *value);

/* Clocks, sleeping and yielding: <time.h> and <sched.h>, included above (see the top of this file).
 */

/* Non-portable: the core the calling thread runs on. */
unsigned int pthread_core_np(void);

/* Non-portable: the implementation holding an object ("subutai" or "swonly"), for reports. */
const char *pthread_mutex_impl_np(const pthread_mutex_t *mutex);
const char *pthread_cond_impl_np(const pthread_cond_t *cond);
const char *pthread_barrier_impl_np(const pthread_barrier_t *barrier);
/* Non-portable: the backend the program is linked with ("subutai" or "swonly"). */
extern const char pthread_backend_np[];
/*
 * Non-portable: how many mutexes, condition variables and barriers the software implementation
 * holds at once (one block of the atomic unit each; the build option or Kconfig
 * SUBUTAI_PTHREAD_SW_OBJECTS, else all the unit holds). The swonly backend has no other; the
 * subutai backend first fills the engines' scratchpads (docs/subutai-hw.md). Beyond: EAGAIN.
 */
unsigned int pthread_sw_objects_max_np(void);

#ifdef __cplusplus
}
#endif

#endif /* SUBUTAI_PTHREAD_H */
