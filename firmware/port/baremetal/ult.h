/*
 * User-level threads of the bare-metal runtime: several threads per core, multiplexed by a
 * scheduler of the core's own (ult.c), as the hybrid thread library of Seed 003 multiplexes its
 * user-level threads on each processor with QuickThreads-style context switches. A thread runs
 * until it blocks (a wake-up it sleeps for, a reply of the Subutai engine it waits for, a nap),
 * yields or exits; the core then runs its next ready thread, first in, first out, or waits in wfi
 * for what can make one ready: a NoC message (a spawn, a wake-up), a reply through the window, the
 * tile timer at the earliest deadline. No preemption: a thread that spins without calling the
 * library keeps its core (see pthread.h).
 *
 * A thread's core is fixed at its creation, and so is its slot (one of the core's
 * SUBUTAI_PTHREAD_THREADS_PER_CORE, limits.h): its context lives in the core's tile RAM, and a
 * waker finds the core of a waiter by its slot alone. Each thread has its own TLS block (errno,
 * thread-specific data): the one in tile RAM while it runs on the core's own stack, at the top of
 * its heap stack otherwise.
 */
#ifndef SUBUTAI_ULT_H
#define SUBUTAI_ULT_H

#include <stdbool.h>
#include <stdint.h>

#include <subutai/sync.h>

#include "rt.h"

/* Registers a switch keeps (the callee-saved ones of the RISC-V ABI, and tp): ult_switch.S. */
struct ult_context {
	uint32_t ra, sp, tp;
	uint32_t s[12];
};

/*
 * Switches from the calling context (saved in from) to to; on the way in, gives back the stack of
 * a thread that exited if one waits (ult_release_pending, ult_release_zombie()), so that a switch
 * needs no code after it and the functions ending in one can tail-call it.
 */
void ult_switch(struct ult_context *from, const struct ult_context *to);
extern void (*ult_release_pending)(unsigned int slot);
void ult_release_zombie(void);
/* What a thread runs, from its slot (the port's threads: its start routine, then its exit); it
 * never returns. */
typedef void (*ult_main_t)(unsigned int slot);
/* First instruction of a new thread: its main (s1) of its slot (s0). */
void ult_entry(void);

/* The thread of this core in slot (its core's), ready, on the stack whose top is given, to run
 * main (which sets its TLS pointer itself). */
void ult_create(unsigned int slot, uintptr_t stack_top, ult_main_t main);
/* The calling thread exits: the core goes on with another; release() gives back its stack once
 * the core is off it. */
void ult_exit(void (*release)(unsigned int slot)) __attribute__((noreturn));
/* Boot: the core's scheduler takes over (the other cores) or adopts the running main thread (core
 * 0). A spawn message for a slot of the core is handed to spawned(slot), which makes the thread
 * (ult_create()). */
void ult_idle(void (*spawned)(unsigned int slot)) __attribute__((noreturn));
void ult_adopt(unsigned int slot, void (*spawned)(unsigned int slot));

/* The calling thread's slot and handle. */
unsigned int ult_slot(void);
pthread_t ult_handle(void);
void ult_set_handle(pthread_t handle);

/* Wake-ups (rt_wake()): sleeps until one is there, and takes it; the same until deadline (false
 * then, none taken). */
void ult_sleep(void);
bool ult_sleep_until(uint64_t deadline);
/* A wake-up for the thread of this core in slot. */
void ult_wake(unsigned int slot);
/* Until the global cycle counter reaches deadline, whatever else comes. */
void ult_nap_until(uint64_t deadline);
/* Lets the core's other ready threads run first. */
void ult_yield(void);

#endif /* SUBUTAI_ULT_H */
