/*
 * Bare-metal port of the OS-agnostic drivers (ni.c, sync.c; the contract is subutai/port.h): the
 * user-level threads of a core (ult.c) share its direct window to the Subutai port
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

/* The bare-metal image's data is all in shared RAM. */
#define SUBUTAI_PORT_SHARED_DATA
/* SUBUTAI_PTHREAD_THREADS_PER_CORE slots of each core (limits.h). */
#define SUBUTAI_PORT_SLOTS_PER_CORE SUBUTAI_PTHREAD_THREADS_PER_CORE
/* A channel send takes no lock: the threads of a core switch only where they block, and no
 * interrupt handler sends on a channel. */
#define SUBUTAI_PORT_CHAN_SLEEPS    0

/*
 * The thread scheduler's state that the port reads (ni_baremetal.c, in tile RAM: only past the
 * fast path, when the mask's flag below says the core is shared or the caller parked).
 */
struct subutai_port_core {
	unsigned int replies_awaited; /* replies the thread scheduler will hand to parked threads */
	unsigned int ready;           /* threads ready to run besides the running one */
	unsigned int timed;           /* blocked threads with a deadline */
	uint32_t owner;               /* the running thread's handle (the PThreads runtime's) */
	struct subutai_reply parked;  /* the reply a parked caller was handed */
};
extern struct subutai_port_core subutai_port_core;

/*
 * A wait with a deadline or a stop (timed and cancellable condition waits): the thread
 * scheduler's (ult.c) where the PThreads runtime is linked, else ni_baremetal.c's for the
 * core's one thread.
 */
bool subutai_port_wait_long(struct subutai_reply *reply, subutai_id_t id, unsigned int how,
			    uint64_t deadline, struct subutai_stop *stop, unsigned int key,
			    bool *invalidated);
/*
 * Parks the caller until its reply, which goes to subutai_port_core.parked, the core running its
 * other threads meanwhile; returns the reply's info word (ult.c; ni_baremetal.c's waits on the bus
 * for the core's one thread).
 */
uint32_t subutai_port_park(void);
/* Lets the core's other ready threads run first (ult.c; none in ni_baremetal.c's). */
uint32_t subutai_port_yield(void);

/*
 * Calls fn (one of the two above) from asm through subutai_port_call (ni_baremetal.c), which keeps
 * every register but t0 (its link) and t1 (fn, then its result): the code around a wait or a spin
 * stays a leaf function without a stack frame, as the fast paths want (a return address reloaded
 * from the stack after an acquire's invalidation would be a miss).
 */
#define SUBUTAI_PORT_CALL(fn) "la t1, " #fn "\n jal t0, subutai_port_call\n"

/*
 * What every wait reads, kept where a read costs one cycle whatever the data cache holds: VexRiscv
 * has no mscratch, so the bits of the interrupt mask CSR above the SoC's interrupt lines hold it
 * (no line is wired there: a mask bit of its own does nothing). Bits 15:8 the running thread's id
 * (its requests' thread field); bit 31 set while the thread may share the core: threads are ready
 * beside it, blocked with a deadline, or parked awaiting replies (the next may not be its own);
 * bit 30 set while the running thread has wake-ups counted (the PThreads runtime's, ult.c).
 */
#define SUBUTAI_PORT_MASK_THREAD_SHIFT 8
#define SUBUTAI_PORT_MASK_THREAD       (0xffu << SUBUTAI_PORT_MASK_THREAD_SHIFT)
#define SUBUTAI_PORT_MASK_SHARED       (1u << 31)
#define SUBUTAI_PORT_MASK_WAKES        (1u << 30)
_Static_assert(UART_INTERRUPT < SUBUTAI_PORT_MASK_THREAD_SHIFT &&
		       TIMER0_INTERRUPT < SUBUTAI_PORT_MASK_THREAD_SHIFT &&
		       NI_INTERRUPT < SUBUTAI_PORT_MASK_THREAD_SHIFT &&
		       SUBUTAI_INTERRUPT < SUBUTAI_PORT_MASK_THREAD_SHIFT,
	       "the port's bits of the interrupt mask overlap an interrupt line");

/* Thread id of the caller in its requests (the reply's thread field). */
static inline unsigned int subutai_port_thread(void)
{
	return (irq_getmask() & SUBUTAI_PORT_MASK_THREAD) >> SUBUTAI_PORT_MASK_THREAD_SHIFT;
}

static inline void subutai_port_set_thread(unsigned int thread)
{
	irq_setmask((irq_getmask() & ~SUBUTAI_PORT_MASK_THREAD) |
		    (thread << SUBUTAI_PORT_MASK_THREAD_SHIFT));
}

/* The running thread's id and its "wake-ups counted" flag at once (one mask update per switch). */
static inline void subutai_port_set_running(unsigned int thread, bool wakes)
{
	irq_setmask((irq_getmask() & ~(SUBUTAI_PORT_MASK_THREAD | SUBUTAI_PORT_MASK_WAKES)) |
		    (thread << SUBUTAI_PORT_MASK_THREAD_SHIFT) |
		    (wakes ? SUBUTAI_PORT_MASK_WAKES : 0));
}

/* Sets or clears a flag bit of the mask. */
static inline void subutai_port_set_flag(unsigned int flag, bool set)
{
	unsigned int mask = irq_getmask();

	irq_setmask(set ? mask | flag : mask & ~flag);
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
 * Watches the window for the reply whose brief load gave info, in brief loads, until it comes or a
 * NoC message does (the NI's line is in the mask: a message may make another thread ready); then
 * parks (subutai_port_park()) and *parked says so.
 */
static inline uint32_t subutai_port_watch(uint32_t first, bool *parked)
{
	register uint32_t info __asm__("t1") = first;
	register uint32_t park __asm__("t2") = 0;
	uint32_t tmp;

	__asm__ volatile("1: andi %2, %0, %4\n"
			 "   bnez %2, 3f\n"
			 "   csrr %2, %5\n"
			 "   andi %2, %2, %6\n"
			 "   bnez %2, 2f\n"
			 "   lw %0, %7(%3)\n"
			 "   j 1b\n"
			 "2: " SUBUTAI_PORT_CALL(subutai_port_park) "   li %1, 1\n"
								    "3:\n"
			 : "+r"(info), "+r"(park), "=&r"(tmp)
			 : "r"(TILE_SYNC_BASE), "i"(SUBUTAI_WINDOW_INFO_VALID),
			   "i"(CSR_IRQ_PENDING), "i"(1u << NI_INTERRUPT),
			   "i"(SUBUTAI_WINDOW_REPLY_BRIEF)
			 : "t0", "memory");
	*parked = park != 0;
	return info;
}

/* Parks at once (the core is shared: the next reply may be another thread's). */
static inline uint32_t subutai_port_park_now(void)
{
	register uint32_t info __asm__("t1");

	__asm__ volatile(SUBUTAI_PORT_CALL(subutai_port_park) : "=r"(info) : : "t0", "memory");
	return info;
}

/* Lets the core's other ready threads run first (subutai_port_yield()), from a leaf function. */
static inline void subutai_port_yield_now(void)
{
	register uint32_t result __asm__("t1");

	__asm__ volatile(SUBUTAI_PORT_CALL(subutai_port_yield) : "=r"(result) : : "t0", "memory");
	(void)result;
}

/* Threads switch only when they wait: a holder of an internal lock keeps its core. */
static inline void subutai_port_spin_enter(void)
{
}

static inline void subutai_port_spin_exit(void)
{
}

/*
 * A spinner on a taken internal lock lets the core's other threads run now and then (the holder
 * may be one of them, blocked: the lazy initialization of an object holds the runtime's lock
 * across its allocation request to an engine, which may park); without a call of the compiler's,
 * so that the fast paths that take such a lock stay leaf functions.
 */
static inline void subutai_port_spin_wait(unsigned int spins)
{
	if (spins % SUBUTAI_PORT_SPINS_PER_YIELD == 0) {
		subutai_port_yield_now();
	}
}

/* A poll of channels in memory keeps the core: nothing else of its threads needs it meanwhile
 * more than the poll's answer. */
static inline void subutai_port_relax(void)
{
}

static inline unsigned int subutai_port_chan_lock(void)
{
	return 0u;
}

static inline void subutai_port_chan_unlock(unsigned int key)
{
	(void)key;
}

/* Never called (SUBUTAI_PORT_CHAN_SLEEPS is 0): the core waits on the bus. */
static inline void subutai_port_chan_sleep(uint32_t bits)
{
	(void)bits;
}

/*
 * See subutai/port.h. On a core whose thread is alone (the mask's flag clear) the next reply
 * through the window is the caller's: a brief load takes it if it comes within SPIN cycles (an
 * uncontended lock, an allocation), further brief loads if later, as long as no NoC message
 * comes. Otherwise the caller parks and the core runs its other threads; its reply comes through
 * the scheduler, and an acquire then invalidates the data cache (other threads ran meanwhile).
 * A wait with a deadline or a stop goes to subutai_port_wait_long().
 */
static inline bool subutai_port_wait(struct subutai_reply *reply, subutai_id_t id, unsigned int how,
				     uint64_t deadline, struct subutai_stop *stop, unsigned int key,
				     bool *invalidated)
{
	bool parked = true;
	uint32_t info;

	*invalidated = false;
	if (deadline != 0 || stop != NULL) {
		return subutai_port_wait_long(reply, id, how, deadline, stop, key, invalidated);
	}
	if (!(irq_getmask() & SUBUTAI_PORT_MASK_SHARED)) {
		info = (how & SUBUTAI_WAIT_ACQUIRE)
			       ? subutai_window_reply_brief_acquire(invalidated)
			       : subutai_window_reply_brief();
		info = subutai_port_watch(info, &parked);
	} else {
		info = subutai_port_park_now();
	}
	if (__builtin_expect(!parked, 1)) {
		subutai_window_take(info, (how & SUBUTAI_WAIT_FULL) != 0, id, 0, reply);
	} else {
		*reply = subutai_port_core.parked;
		if (how & SUBUTAI_WAIT_ACQUIRE) {
			subutai_dcache_invalidate();
			*invalidated = true;
		}
	}
	subutai_port_unlock(key);
	return true;
}

#endif /* SUBUTAI_PORT_H */
