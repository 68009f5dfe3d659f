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
	unsigned int id;
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

/*
 * Handler of the NoC messages of one type arriving at this core (normal class), called in the NI
 * interrupt. Types 0xf0 and above belong to the PThreads library.
 */
typedef void (*subutai_msg_handler_t)(const struct subutai_ni_msg *msg);
int subutai_ni_add_handler(unsigned int type, subutai_msg_handler_t handler);

#endif /* SUBUTAI_ZEPHYR_H */
