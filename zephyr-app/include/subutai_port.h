/*
 * Zephyr port of the OS-agnostic drivers (firmware/lib/ni.c, sync.c; the contract is
 * subutai/port.h): several threads per core. A request carries the caller's thread slot.
 * Requests go through the direct window, shared by the threads of the core; a reply is taken
 * through the window by its thread, spinning, while no other thread of the core waits for one,
 * and otherwise the reply interrupt hands each reply to its thread, which sleeps in the scheduler
 * meanwhile (drivers/subutai/subutai_ni.c), as it does in timed condition waits.
 */
#ifndef SUBUTAI_PORT_H
#define SUBUTAI_PORT_H

#include <stdbool.h>
#include <stdint.h>

#include <zephyr/irq.h>
#include <zephyr/kernel.h>
#include <subutai/port.h>
#include <subutai/sync.h>
#include <subutai/zephyr.h>
#include <subutai/window.h>

/* The threads of a core share the window. */
#define SUBUTAI_PORT_SHARED_WINDOW 1

/* Each kernel's data is in its tile's RAM: shared data is marked (zephyr-app/linker). */
#define SUBUTAI_PORT_SHARED_DATA    __attribute__((section(".subutai_shared_bss")))
/* A thread of any core may take any slot. */
#define SUBUTAI_PORT_SLOTS_PER_CORE 0
/* A thread waiting on the channel port spins, then sleeps until the port's interrupt. */
#define SUBUTAI_PORT_CHAN_SLEEPS    1

/* Calls of the NI from a thread without a waiter id: a fatal error. */
FUNC_NORETURN void subutai_port_no_waiter(void);

/* Thread slot of the calling thread (the PThreads library's, or a kernel thread's own). */
static inline unsigned int subutai_port_thread(void)
{
	const struct subutai_waiter *waiter = k_current_get()->custom_data;

	if (waiter == NULL) {
		subutai_port_no_waiter();
	}
	return waiter->id;
}

/* Replies of this core's requests the reply interrupt will hand over (drivers/subutai). */
extern unsigned int subutai_replies_awaited;

static inline unsigned int subutai_port_lock(void)
{
	return irq_lock();
}

static inline void subutai_port_unlock(unsigned int key)
{
	irq_unlock(key);
}

/* A request of the calling thread: its thread field, then the request. */
static inline void subutai_port_issue(unsigned int op, bool want_reply, subutai_id_t id)
{
	subutai_window_set_thread(subutai_port_thread());
	subutai_window_issue(op, want_reply, id);
}

/*
 * The driver's wait (drivers/subutai/subutai_ni.c), as subutai_port_wait(): spins on the window
 * while the caller is the only thread of its core that can run and no other thread's reply can
 * come first, sleeps in the scheduler otherwise or past a deadline-bound spin.
 */
bool subutai_ni_wait_reply(struct subutai_reply *reply, subutai_id_t id, unsigned int how,
			   uint64_t deadline, struct subutai_stop *stop, unsigned int key,
			   bool *invalidated);

/*
 * See subutai/port.h. An immediate answer (an uncontended lock) comes within a brief load, as on
 * bare metal, when no other thread of the core waits for a reply (the next one through the
 * window is then the caller's); otherwise the driver waits.
 */
static inline bool subutai_port_wait(struct subutai_reply *reply, subutai_id_t id, unsigned int how,
				     uint64_t deadline, struct subutai_stop *stop, unsigned int key,
				     bool *invalidated)
{
	*invalidated = false;
	if (deadline == 0 && subutai_replies_awaited == 0) {
		uint32_t info = (how & SUBUTAI_WAIT_ACQUIRE)
					? subutai_window_reply_brief_acquire(invalidated)
					: subutai_window_reply_brief();

		if (info & SUBUTAI_WINDOW_INFO_VALID) {
			subutai_window_take(info, (how & SUBUTAI_WAIT_FULL) != 0, id,
					    subutai_port_thread(), reply);
			irq_unlock(key);
			return true;
		}
	}
	return subutai_ni_wait_reply(reply, id, how, deadline, stop, key, invalidated);
}

/* Lets the other ready threads of this core run first (lib/pthread/thread_zephyr.c). */
void rt_yield(void);

/* Internal locks this core's running thread holds (subutai_port_spin_enter()), and the
 * interrupt lock's key of the outermost hold. Kernel data: only the holder touches them, with
 * interrupts masked. */
extern unsigned int subutai_spins_held;
extern unsigned int subutai_spins_key;

/*
 * A holder of an internal lock runs with interrupts masked, as a holder of Zephyr's k_spinlock
 * does: preempted (a timeslot's end, the wake-up of a thread of the slot's application) it would
 * stop every core's takers of the lock until its application's next timeslot, up to a whole
 * rotation later. The driver watches for a reply the holder waits for meanwhile (the allocation
 * of a lazily set-up object) instead of sleeping (subutai_ni_wait_reply()).
 */
static inline void subutai_port_spin_enter(void)
{
	unsigned int key = irq_lock();

	if (subutai_spins_held++ == 0) {
		subutai_spins_key = key;
	}
}

static inline void subutai_port_spin_exit(void)
{
	if (--subutai_spins_held == 0) {
		irq_unlock(subutai_spins_key);
	}
}

/* The holder is never a thread of the spinner's core (it keeps its core until it releases). */
static inline void subutai_port_spin_wait(unsigned int spins)
{
	ARG_UNUSED(spins);
}

/* A poll of channels in memory that found nothing lets the core's other threads run. */
static inline void subutai_port_relax(void)
{
	k_yield();
}

/* The channel port's staging registers are the core's, and threads of a core preempt each
 * other: a send's stores are made with interrupts off. */
static inline unsigned int subutai_port_chan_lock(void)
{
	return irq_lock();
}

static inline void subutai_port_chan_unlock(unsigned int key)
{
	irq_unlock(key);
}

/* Sleeps until the channel port's interrupt (drivers/subutai/subutai_chan.c). */
void subutai_chan_sleep(uint32_t bits);

static inline void subutai_port_chan_sleep(uint32_t bits)
{
	subutai_chan_sleep(bits);
}

#endif /* SUBUTAI_PORT_H */
