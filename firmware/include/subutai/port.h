/*
 * The contract between the OS-agnostic drivers (firmware/lib: ni.c, sync.c) and the runtime they
 * run under, in the manner of nrfx's nrfx_glue.h: each port provides a header named
 * subutai_port.h that includes this one and defines every primitive below, as a static inline
 * function or as a function of its own driver. The drivers call these and nothing else of the
 * runtime; a port never calls back into sync.c (it reads replies with subutai/window.h).
 *
 * Ports: bare metal (firmware/port/baremetal/subutai_port.h: the user-level threads of a core
 * share the window; a thread alone watches it for its reply, otherwise it parks in the core's
 * scheduler, ult.c) and Zephyr (zephyr-app/include/subutai_port.h: the threads of a core share
 * the window; a thread whose reply does not come at once sleeps in the scheduler).
 *
 * SUBUTAI_PORT_SHARED_WINDOW
 *     1 if the threads of a core share the window (each request names its thread, with a store
 *     of its own), 0 if the window is one thread's (a request without a value is one store).
 *
 * The lock
 *   unsigned int subutai_port_lock(void);
 *   void subutai_port_unlock(unsigned int key);
 *     Masks, then restores, this core's handlers that could issue requests, take replies or
 *     send messages, so that none comes between a request's stores or takes its reply.
 *
 * The current thread
 *   unsigned int subutai_port_thread(void);
 *     The caller's thread on its core: the thread field of its requests and their replies.
 *
 * Issue
 *   void subutai_port_issue(unsigned int op, bool want_reply, subutai_id_t id);
 *     Writes a request of the calling thread through the window (its value, if the op takes
 *     one, already written with subutai_window_set_value()), the lock held.
 *
 * Wait for the reply
 *   bool subutai_port_wait(struct subutai_reply *reply, subutai_id_t id, unsigned int how,
 *                          uint64_t deadline, struct subutai_stop *stop, unsigned int key,
 *                          bool *invalidated);
 *     Waits for the reply of the caller's request on id, just issued with the lock held (key),
 *     and releases the lock. how: SUBUTAI_WAIT_* below. deadline: the global cycle counter value
 *     that ends the wait (0: none). stop: asked while the caller waits (subutai/sync.h; NULL or
 *     without fn: none). True with the reply; false when the deadline passed or stop said so
 *     (the reply is still to come then: the caller gets itself out of the engine's queue and
 *     waits again). *invalidated says whether the data cache was invalidated while waiting,
 *     after which the caller touched nothing another core writes.
 *
 * Wake is the runtime's own business (the PThreads library's wake-up messages): the drivers
 * never wake a thread.
 *
 * What the rest of the library (PThreads, channels) asks of its runtime, beside the drivers':
 *
 * SUBUTAI_PORT_SHARED_DATA
 *     The attribute of data every core reads and writes (the thread table, the keys): empty where
 *     all data is shared, a section of shared RAM where each kernel's data is in its tile's RAM.
 *
 * SUBUTAI_PORT_SLOTS_PER_CORE
 *     Thread slots of each core, a core's being consecutive (a waker finds a waiter's core from
 *     its slot alone), or 0 when any core's thread may take any slot.
 *
 *   void subutai_port_spin_enter(void);
 *   void subutai_port_spin_exit(void);
 *     Around each hold of a short internal lock of the library, from before its first try
 *     (rt_spin_lock()) to after its release (rt_spin_unlock()); they nest. Where threads of a
 *     core preempt each other, enter masks what could preempt the holder, and a reply the
 *     holder waits for meanwhile (an object's allocation) is watched for, never slept on: a
 *     holder that lost its core would stop every core's takers of the lock until it ran again,
 *     which under a rotation of applications is the holder's next timeslot. Nothing where
 *     threads only switch when they wait.
 *
 *   void subutai_port_spin_wait(unsigned int spins);
 *     Called by a spinner on a short internal lock of the library (rt_spin_lock()) after each of
 *     its loads that found the word taken (spins: the loads so far): where the holder may be a
 *     thread of the same core, switched out while it waited, this may let it run.
 *
 *   void subutai_port_relax(void);
 *     Called by a poll of channels in memory that found nothing: lets the core's other threads
 *     run, or nothing where the poll may keep the core.
 *
 *   unsigned int subutai_port_chan_lock(void);
 *   void subutai_port_chan_unlock(unsigned int key);
 *     Held across a channel send's stores into the channel port (its staging registers are the
 *     core's): masks what could send on the core meanwhile, if anything can.
 *
 * SUBUTAI_PORT_CHAN_SLEEPS
 *     1 if a thread waiting on the channel port sleeps (subutai_port_chan_sleep()), 0 if it waits
 *     on the bus (a receive's load, a send's store that waits for its credit).
 *
 *   void subutai_port_chan_sleep(uint32_t bits);
 *     With SUBUTAI_PORT_CHAN_SLEEPS: sleeps until the channel port's interrupt may have set a bit
 *     of bits in its STATUS register (the caller looks again).
 */

/* Loads of a taken internal lock between two chances for its holder to run (ports that yield). */
#define SUBUTAI_PORT_SPINS_PER_YIELD 64
#ifndef SUBUTAI_PORT_API_H
#define SUBUTAI_PORT_API_H

/* How a subutai_port_wait() waits. */
enum {
	/* A lock, barrier or condition wait: the data cache must hold no line another core wrote
	 * when the caller goes on, so a long wait may invalidate it meanwhile. */
	SUBUTAI_WAIT_ACQUIRE = 1 << 2,
	/* The whole reply value and id are needed (an allocation's new id); otherwise the value's
	 * low bits that come with the reply's info word do, and the id on an error. */
	SUBUTAI_WAIT_FULL = 1 << 3,
};

#endif /* SUBUTAI_PORT_API_H */
