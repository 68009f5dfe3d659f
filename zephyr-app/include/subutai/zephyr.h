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
/*
 * A thread's critical sections as its core's scheduling policy sees them (CONFIG_SUBUTAI_SCHED_*,
 * zephyr-app/lib/pthread/sched_zephyr.c): kept by the thread's own mutex calls and by its core's
 * timeslot interrupt and wake-ups, so never touched by another core.
 */
struct subutai_sched_cs {
	uint16_t depth; /* mutexes held */
	bool waiting;   /* blocked for a mutex (a lock, or a condition wait: holds it when woken) */
	bool boosted;   /* runs at the critical-section priority (CSA) */
	bool expired;   /* held mutexes past CSALimit: round robin until it holds none */
	bool donated;   /* runs raised on time a barrier waiter donated (Tidon), until its
			 * timeslot ends or it blocks */
	uint32_t since; /* subutai_cycles32() when its critical section began (CSA) */
};

struct subutai_waiter {
	struct k_sem sem;
	struct subutai_reply reply;
	bool replied; /* reply holds a reply not yet taken (a give of sem without it: a wake-up) */
	bool asleep;  /* in subutai_waiter_sleep() without a timeout: not runnable */
	bool awaited; /* its reply comes through the reply interrupt (counted in the driver) */
	unsigned int id;
	struct k_thread *thread;
#ifdef CONFIG_SUBUTAI_SCHED_TRACK_CS
	struct subutai_sched_cs cs;
#endif
	/* Its application, and its place in its core's rotation (sched_zephyr.c). */
	uint8_t app;
#ifdef CONFIG_SUBUTAI_SCHED_ROTATION
	sys_dnode_t rotation;
#endif
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

#ifdef CONFIG_SUBUTAI_SCHED_TRACK_CS
/* The scheduling policy's (sched_zephyr.c), called by the driver with interrupts locked: a
 * waiter's semaphore is about to be given, and its thread is about to block (a schedule
 * request). */
void subutai_sched_waking(struct subutai_waiter *waiter);
void subutai_sched_blocking(struct subutai_waiter *waiter);
#endif

/*
 * Barrier participation status (BAPS, seed 002 Tidon) of every thread, by waiter id, in shared
 * memory: written by the thread itself (pthread_barrier_wait()), read without a lock by its
 * core's scheduler and, after an invalidation, by the threads of other cores.
 *
 *   0                          it has not waited at a barrier (or its slot is free)
 *   key << 8 | seq << 1        it takes part in the barrier of that key and is not waiting at it:
 *                              a laggard while its siblings wait there
 *   key << 8 | seq << 1 | 1    it waits at that barrier (arrived)
 *
 * seq counts the thread's arrivals (7 bits), so that every wait gives a new value.
 */
#define SUBUTAI_BAPS_ARRIVED   1u
#define SUBUTAI_BAPS_SEQ_MASK  0xfeu
#define SUBUTAI_BAPS_KEY(baps) ((baps) >> 8)

#ifdef CONFIG_SUBUTAI_BARRIER_TRACK
extern volatile uint32_t subutai_baps[CONFIG_SUBUTAI_THREADS_MAX];

/* Whether the waiter's thread waits at a barrier now. */
static inline bool subutai_waiter_at_barrier(const struct subutai_waiter *waiter)
{
	return (subutai_baps[waiter->id] & SUBUTAI_BAPS_ARRIVED) != 0;
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

#if defined(CONFIG_SUBUTAI_BARRIER_WAIT_TIDON) || defined(CONFIG_SUBUTAI_SCHED_MIGRATION)
/* Cores whose counts the shared tables hold (an 8x8 mesh). */
#define SUBUTAI_CORES_MAX 64
/* subutai_threads_runnable() of every core, in shared memory (each core writes its own). */
extern volatile uint8_t subutai_core_runnable[SUBUTAI_CORES_MAX];
#endif

#ifdef CONFIG_SUBUTAI_BARRIER_WAIT_TIDON

/* Tidon's step (sched_zephyr.c), before a barrier waiter of this core sleeps: it donates its
 * core to preempted laggards of its barrier here, and asks the other cores to run theirs. */
void subutai_sched_barrier_sleeping(struct subutai_waiter *waiter);
/* Its messages to the other cores alone (a waiter alone on its core: no laggard is preempted
 * there), with interrupts locked or not; it never switches threads. */
void subutai_sched_barrier_notify(struct subutai_waiter *waiter);
#endif

/*
 * Handler of the NoC messages of one type arriving at this core (normal class), called in the NI
 * interrupt. Types 0xf0 and above belong to the PThreads library.
 */
typedef void (*subutai_msg_handler_t)(const struct subutai_ni_msg *msg);
int subutai_ni_add_handler(unsigned int type, subutai_msg_handler_t handler);

#endif /* SUBUTAI_ZEPHYR_H */
