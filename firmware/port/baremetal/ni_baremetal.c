/*
 * Bare-metal part of the drivers: sleeping for a message, the NI interrupt handler, and the
 * Subutai port's per-core state and long wait for a program without the PThreads runtime.
 */
#include <irq.h>
#include <stdbool.h>

#include <subutai/ni.h>
#include <subutai_port.h>

static subutai_ni_handler_t ni_handler __tile_bss;

/* The NI raises its interrupt line while a complete message waits. */
static void ni_irq_enable(void)
{
	ni_ev_enable_write(1u << CSR_NI_EV_ENABLE_RX_OFFSET);
	irq_setmask(irq_getmask() | (1u << NI_INTERRUPT));
}

SUBUTAI_SYNC_PATH void subutai_ni_recv(enum subutai_ni_class cls, struct subutai_ni_msg *msg)
{
	/* Sleep until the NI interrupt line rises: enabled in the mask but not taken unless global
	 * interrupts are on, so wfi wakes the core either way.
	 */
	ni_irq_enable();
	while (subutai_ni_try_recv(cls, msg) != 0) {
		__asm__ volatile("wfi");
	}
}

void subutai_ni_set_handler(subutai_ni_handler_t handler)
{
	ni_handler = handler;
	if (handler) {
		ni_irq_enable();
		irq_setie(1);
	} else {
		irq_setmask(irq_getmask() & ~(1u << NI_INTERRUPT));
	}
}

SUBUTAI_SYNC_PATH void subutai_ni_isr(void)
{
	if (ni_handler) {
		ni_handler();
	}
}

/*
 * The Subutai port's per-core state (subutai_port.h), and its waits for a program without the
 * PThreads runtime, whose core has one thread: the thread scheduler (ult.c) defines
 * subutai_port_park() and subutai_port_wait_long() where it is linked.
 */
struct subutai_port_core subutai_port_core __tile_bss;

/*
 * A call from asm that keeps every register (subutai_port.h, SUBUTAI_PORT_CALL): link register
 * t0, the function in t1, its result back in t1; the ABI's caller-saved registers are saved here.
 */
__asm__(".section .text.subutai_port_call, \"ax\"\n"
	".global subutai_port_call\n"
	".align 2\n"
	"subutai_port_call:\n"
	"	addi sp, sp, -64\n"
	"	sw ra, 0(sp)\n"
	"	sw t0, 4(sp)\n"
	"	sw t2, 8(sp)\n"
	"	sw t3, 12(sp)\n"
	"	sw t4, 16(sp)\n"
	"	sw t5, 20(sp)\n"
	"	sw t6, 24(sp)\n"
	"	sw a0, 28(sp)\n"
	"	sw a1, 32(sp)\n"
	"	sw a2, 36(sp)\n"
	"	sw a3, 40(sp)\n"
	"	sw a4, 44(sp)\n"
	"	sw a5, 48(sp)\n"
	"	sw a6, 52(sp)\n"
	"	sw a7, 56(sp)\n"
	"	jalr t1\n"
	"	mv t1, a0\n"
	"	lw ra, 0(sp)\n"
	"	lw t0, 4(sp)\n"
	"	lw t2, 8(sp)\n"
	"	lw t3, 12(sp)\n"
	"	lw t4, 16(sp)\n"
	"	lw t5, 20(sp)\n"
	"	lw t6, 24(sp)\n"
	"	lw a0, 28(sp)\n"
	"	lw a1, 32(sp)\n"
	"	lw a2, 36(sp)\n"
	"	lw a3, 40(sp)\n"
	"	lw a4, 44(sp)\n"
	"	lw a5, 48(sp)\n"
	"	lw a6, 52(sp)\n"
	"	lw a7, 56(sp)\n"
	"	addi sp, sp, 64\n"
	"	jr t0\n"
	".text\n");

/* The core's one thread: nothing else to run. */
__attribute__((weak)) uint32_t subutai_port_yield(void)
{
	return 0;
}

/* The core's one thread: its reply is the next, on the bus. */
__attribute__((weak)) uint32_t subutai_port_park(void)
{
	uint32_t info = subutai_window_reply();

	subutai_window_take(info, true, 0, 0, &subutai_port_core.parked);
	return info;
}

/*
 * Polls the window in brief loads until the reply comes, the global cycle counter reaches
 * deadline (0: none) or stop says so (asked every SUBUTAI_STOP_POLL_CYCLES). An acquire
 * invalidates the data cache after its first brief load if that did not bring the reply: between
 * the invalidation and the reply the core reads the window, the cycle counter and (in stop) the
 * atomic unit, none of them cached, and its own stack, which no other core writes, so the cache is
 * as clean at the reply as if invalidated after it.
 */
__attribute__((weak)) bool subutai_port_wait_long(struct subutai_reply *reply, subutai_id_t id,
						  unsigned int how, uint64_t deadline,
						  struct subutai_stop *stop, unsigned int key,
						  bool *invalidated)
{
	uint32_t asked = subutai_cycles32();
	uint32_t info = (how & SUBUTAI_WAIT_ACQUIRE)
				? subutai_window_reply_brief_acquire(invalidated)
				: subutai_window_reply_brief();

	while (!(info & SUBUTAI_WINDOW_INFO_VALID)) {
		if (stop && stop->fn && subutai_cycles32() - asked >= SUBUTAI_STOP_POLL_CYCLES) {
			asked = subutai_cycles32();
			if ((stop->stopped = stop->fn(stop->arg))) {
				subutai_port_unlock(key);
				return false;
			}
		}
		if (deadline != 0 && subutai_cycles() >= deadline) {
			subutai_port_unlock(key);
			return false;
		}
		info = subutai_window_reply_brief();
	}
	subutai_window_take(info, (how & SUBUTAI_WAIT_FULL) != 0, id, 0, reply);
	subutai_port_unlock(key);
	return true;
}
