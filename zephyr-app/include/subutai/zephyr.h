/*
 * Subutai SoC under Zephyr: what the network interface driver (drivers/subutai/subutai_ni.c)
 * offers the PThreads library and applications.
 */
#ifndef SUBUTAI_ZEPHYR_H
#define SUBUTAI_ZEPHYR_H

#include <stdint.h>

#include <zephyr/kernel.h>
#include <subutai/ni.h>
#include <subutai/sync.h>

/*
 * A thread that talks to the NI: it sleeps on its semaphore for its Subutai-HW replies and for the
 * wake-ups of other cores. Its id (below CONFIG_SUBUTAI_THREADS_MAX) is the thread field of its
 * requests. Registered on its own core, in its k_thread's custom data.
 */
struct subutai_waiter {
	struct k_sem sem;
	struct subutai_reply reply;
	bool replied; /* reply holds a reply not yet taken (a give of sem without it: a wake-up) */
	bool asleep;  /* in subutai_waiter_sleep() without a timeout: not runnable */
	bool awaited; /* its reply comes through the reply interrupt (counted in the driver) */
	bool at_barrier; /* waits at a barrier (subutai_waiter_mark_barrier()) */
	unsigned int id;
	struct k_thread *thread;
};

/* Makes the calling thread a waiter with this id (on this core). */
void subutai_waiter_register(struct subutai_waiter *waiter, unsigned int id);
/* Forgets this waiter (its thread ends), unless its id already names a newer one on this core. */
void subutai_waiter_unregister(struct subutai_waiter *waiter);
/* The waiter of the calling thread (NULL if it has none). */
struct subutai_waiter *subutai_waiter_current(void);
/* Wakes the waiter of this id on this core (from a thread or an interrupt handler). */
void subutai_waiter_wake(unsigned int id);
/* Sleeps on the waiter's semaphore (k_sem_take), counted out of the core's runnable threads
 * while it waits without a timeout. */
int subutai_waiter_sleep(struct subutai_waiter *waiter, k_timeout_t timeout);
/*
 * Spin, then block: returns once the waiter's semaphore has been given, or after
 * CONFIG_SUBUTAI_REPLY_SPIN_CYCLES unless the caller is the only thread of its core that can run.
 */
void subutai_waiter_spin(struct subutai_waiter *waiter);
/* An application thread of this core is created (+1) or ends (-1): the count of threads that
 * can run, which decides whether a waiting thread may keep its core spinning. */
void subutai_thread_runs(int change);

/* Application threads of this core that can run (ready or running): ThrReady + ThrRun of
 * TPDS'21 Eq. 2. */
unsigned int subutai_threads_runnable(void);

/*
 * Whether the waiter's thread waits at a barrier now: the barrier waiting policies other than
 * spin-then-block mark their waits (CONFIG_SUBUTAI_NI_BARRIER_MARKS), and the driver waits there
 * their way. The thread itself marks them, so the mark is its core's.
 */
#ifdef CONFIG_SUBUTAI_NI_BARRIER_MARKS
static inline bool subutai_waiter_at_barrier(const struct subutai_waiter *waiter)
{
	return waiter->at_barrier;
}

static inline void subutai_waiter_mark_barrier(struct subutai_waiter *waiter, bool at_barrier)
{
	waiter->at_barrier = at_barrier;
}
#else
static inline bool subutai_waiter_at_barrier(const struct subutai_waiter *waiter)
{
	ARG_UNUSED(waiter);
	return false;
}
#endif

/* The waiter of this id if its thread is on this core, else NULL. */
struct subutai_waiter *subutai_waiter_local(unsigned int id);

/*
 * A thread moves between kernels (CONFIG_SUBUTAI_SCHED_MIGRATION, lib/pthread/thread_zephyr.c),
 * interrupts locked or in an interrupt. Leaving: its waiter is forgotten on this core and counted
 * out of its runnable threads, unless it waits for anything this core's NI or kernel would hand
 * it (asleep, or its engine's reply due here): false then, and nothing changed. Arriving: the
 * waiter is this core's and counted runnable.
 */
bool subutai_waiter_leave(struct subutai_waiter *waiter);
void subutai_waiter_arrive(struct subutai_waiter *waiter);

/*
 * Hooks: what the driver tells a scheduling policy, which implements them and selects their
 * Kconfig symbol, as Zephyr's platform hooks are (<zephyr/platform/hooks.h>): the driver never
 * knows the policy otherwise, and a hook is a direct call on the synchronization path. Called
 * with interrupts locked or in an interrupt unless said otherwise.
 */
#ifdef CONFIG_SUBUTAI_NI_THREAD_HOOKS
/* The waiter's semaphore is about to be given (its reply or a wake-up): it can run again. */
void subutai_ni_waking_hook(struct subutai_waiter *waiter);
/* The waiter's thread is about to block on its semaphore (a schedule request). */
void subutai_ni_blocking_hook(struct subutai_waiter *waiter);
#endif

#ifdef CONFIG_SUBUTAI_NI_RUNNABLE_HOOK
/* subutai_threads_runnable() of this core changed to runnable. */
void subutai_ni_runnable_hook(unsigned int runnable);
#endif

#ifdef CONFIG_SUBUTAI_NI_BARRIER_HOOKS
/* A barrier waiter of this core is about to sleep (Tidon's step: it may run other threads
 * meanwhile; interrupts on). */
void subutai_ni_barrier_sleeping_hook(struct subutai_waiter *waiter);
/* A barrier waiter alone on its core watches for its reply (Tidon: only other cores' laggards
 * may be preempted), interrupts locked or not; it never switches threads. */
void subutai_ni_barrier_notify_hook(struct subutai_waiter *waiter);
/* Whether a thread of this core that the waiter's step would run is preempted (Tidon: the step
 * then comes at once, without the brief spin); interrupts locked or not. */
bool subutai_ni_barrier_laggard_here_hook(const struct subutai_waiter *waiter);
#endif

/*
 * Handler of the NoC messages of one type arriving at this core (normal class), called in the NI
 * interrupt. Types 0xf0 and above belong to the PThreads library.
 */
typedef void (*subutai_msg_handler_t)(const struct subutai_ni_msg *msg);
int subutai_ni_add_handler(unsigned int type, subutai_msg_handler_t handler);

#endif /* SUBUTAI_ZEPHYR_H */
