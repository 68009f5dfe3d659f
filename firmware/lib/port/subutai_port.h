/*
 * Bare-metal port of the OS-agnostic drivers (ni.c, sync.c; the contract is subutai/port.h): the
 * user-level threads of a core (pthread/ult.c) share its direct window to the Subutai port
 * (gateware/ni/subutai_window.py). The window's THREAD register names the running thread: the
 * scheduler writes it at each switch, so a request is still one store. A reply that comes within
 * a brief load is taken at once, as with one thread per core; a longer wait continues in
 * subutai_port_wait_long(), which watches the window while the caller's reply is the next to come
 * and nothing else needs the core, and otherwise parks the caller and runs the core's other
 * threads.
 */
#ifndef SUBUTAI_PORT_H
#define SUBUTAI_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <generated/csr.h>
#include <generated/mem.h>
#include <generated/soc.h>
#include <irq.h>
#include <subutai/port.h>
#include <subutai/soc.h>
#include <subutai/sync.h>
#include <subutai/window.h>

/* The window's THREAD register is the running thread's (set at each switch): a request without a
 * value is one store. */
#define SUBUTAI_PORT_SHARED_WINDOW 0

/*
 * The running thread's slot (its requests' thread field), and the replies of this core that the
 * thread scheduler will hand to parked threads (ni_baremetal.c: per core, in tile RAM).
 */
extern unsigned int subutai_port_thread_id;
extern unsigned int subutai_port_replies_awaited;
/*
 * The rest of a wait whose reply did not come within a brief load (watched) or that has a deadline
 * or a stop: the thread scheduler's (pthread/ult.c) where the PThreads runtime is linked, else
 * ni_baremetal.c's for the core's one thread.
 */
bool subutai_port_wait_long(struct subutai_reply *reply, subutai_id_t id, unsigned int how,
			    uint64_t deadline, struct subutai_stop *stop, unsigned int key,
			    bool *invalidated, bool watched);

/* Thread id of the caller in its requests (the reply's thread field). */
static inline unsigned int subutai_port_thread(void)
{
	return subutai_port_thread_id;
}

/* Masks the interrupt handlers of this core that could issue requests or send messages. */
static inline unsigned int subutai_port_lock(void)
{
	unsigned int ie = irq_getie();

	/* Most of the time they are already masked: a CSR write costs more than this test. */
	if (__builtin_expect(ie != 0, 0)) {
		irq_setie(0);
	}
	return ie;
}

static inline void subutai_port_unlock(unsigned int key)
{
	if (__builtin_expect(key != 0, 0)) {
		irq_setie(1);
	}
}

/* A request of the core's thread: one store. */
static inline void subutai_port_issue(unsigned int op, bool want_reply, subutai_id_t id)
{
	subutai_window_issue(op, want_reply, id);
}

/*
 * See subutai/port.h. While no parked thread of the core awaits a reply, the next one through the
 * window is the caller's: a brief load takes it if it comes within SPIN cycles (an uncontended
 * lock, an allocation). Otherwise, or with a deadline or a stop, subutai_port_wait_long() goes on.
 */
static inline bool subutai_port_wait(struct subutai_reply *reply, subutai_id_t id, unsigned int how,
				     uint64_t deadline, struct subutai_stop *stop, unsigned int key,
				     bool *invalidated)
{
	*invalidated = false;
	if (deadline == 0 && stop == NULL && subutai_port_replies_awaited == 0) {
		uint32_t info = (how & SUBUTAI_WAIT_ACQUIRE)
					? subutai_window_reply_brief_acquire(invalidated)
					: subutai_window_reply_brief();

		if (info & SUBUTAI_WINDOW_INFO_VALID) {
			subutai_window_take(info, (how & SUBUTAI_WAIT_FULL) != 0, id,
					    subutai_port_thread_id, reply);
			subutai_port_unlock(key);
			return true;
		}
		return subutai_port_wait_long(reply, id, how, deadline, stop, key, invalidated,
					      true);
	}
	return subutai_port_wait_long(reply, id, how, deadline, stop, key, invalidated, false);
}

#endif /* SUBUTAI_PORT_H */
