/*
 * What the Zephyr port's threads (thread_zephyr.c) tell its scheduling policy (sched_zephyr.c)
 * about the life of each application thread of a core.
 */
#ifndef SUBUTAI_SCHED_ZEPHYR_H
#define SUBUTAI_SCHED_ZEPHYR_H

#include <zephyr/sys/dlist.h>
#include <subutai/zephyr.h>

/*
 * A thread's critical sections as its core's scheduling policy sees them (CONFIG_SUBUTAI_SCHED_*):
 * kept by the thread's own mutex calls and by its core's timeslot interrupt and wake-ups, so never
 * touched by another core.
 */
struct subutai_sched_cs {
	uint16_t depth; /* mutexes held */
	bool waiting;   /* blocked for a mutex (a lock, or a condition wait: holds it when woken) */
	bool boosted;   /* runs at the critical-section priority (CSA) */
	bool expired;   /* held mutexes past CSALimit: round robin until it holds none */
	bool donated;   /* runs raised on time a barrier waiter donated (Tidon), until its
			 * timeslot ends or it blocks */
#ifdef CONFIG_SUBUTAI_BARRIER_WAIT_TIDON
	/* 1 + the waiter id of the thread of this core whose timeslot a donated thread runs in;
	 * 0 for none (a raise by another core's message, a thread not donated to). */
	uint16_t donor;
	uint32_t round; /* the donor's BAPS as it waits: the donation ends when it leaves that round
			 */
#endif
	uint32_t since; /* subutai_cycles32() when its critical section began (CSA) */
};

/*
 * An application thread as the policy sees it: its NI waiter, then the policy's own data. Every
 * waiter is one of these (thread_zephyr.c registers them all), so the waiter the driver's hooks
 * and subutai_waiter_local() hand the policy leads to its data; zeroed with its thread's block
 * when the thread is created.
 */
struct subutai_sched_thread {
	struct subutai_waiter waiter;
#ifdef CONFIG_SUBUTAI_SCHED_TRACK_CS
	struct subutai_sched_cs cs;
#endif
	/* Its application, and its place in its core's rotation. */
	uint8_t app;
#ifdef CONFIG_SUBUTAI_SCHED_ROTATION
	sys_dnode_t rotation;
#endif
};

/* The calling thread creates the thread of this slot (before it exists on any core): the new
 * thread is the creator's application's. */
void subutai_sched_thread_created(unsigned int slot);
/* A thread of this core begins (its waiter just registered, its own first steps) or ends (before
 * its waiter is forgotten). */
void subutai_sched_thread_begins(struct subutai_waiter *waiter);
void subutai_sched_thread_ends(struct subutai_waiter *waiter);

#ifdef CONFIG_SUBUTAI_SCHED_MIGRATION
/* NoC messages of the moves (the PThreads library's types, beside rt.h's). */
#define RT_MSG_MOVE  0xf3 /* payload: thread slot, its block, SUBUTAI_MOVE_*, its start cycle */
#define RT_MSG_STEAL 0xf4 /* payload: the asking core, a thread slot or RT_STEAL_ANY, why */
#define RT_MSG_NONE  0xf5 /* payload: the asked core (nothing to move) */
#define RT_STEAL_ANY 0xffffffffu

/* Why a thread moves (a move's flags). */
#define SUBUTAI_MOVE_DONATED BIT(0) /* a laggard its barrier waiter's core runs (Tidon) */
#define SUBUTAI_MOVE_STAY    BIT(1) /* the new core is its home (the migrating baseline) */
#define SUBUTAI_MOVE_HOME    BIT(2) /* back home after a donation */

/*
 * Moves a thread of this core to another core's kernel (thread_zephyr.c), interrupts locked or
 * in an interrupt: only a thread that is ready and not running, that waits for nothing of this
 * core's and that the policy lets move; false if it cannot.
 */
bool subutai_thread_move(struct subutai_waiter *waiter, unsigned int to, uint32_t how);
/* Whether a thread of this core is away from its home core (moved for a donation). */
bool subutai_thread_away(const struct subutai_waiter *waiter);
/* Asks this core's service thread to send a thread home once it has preempted it. */
void subutai_thread_send_home_later(struct subutai_waiter *waiter);

/* The policy's part of a move: whether a thread may move now (it holds no mutex), and a thread
 * that arrives on this core (interrupts locked or in an interrupt, before it is made ready). */
bool subutai_sched_may_move(const struct subutai_waiter *waiter);
void subutai_sched_thread_arrives(struct subutai_waiter *waiter, uint32_t how);
/* What a move cost this core (cycles of its kernel's work on it), and, where it arrived, its
 * latency (cycles from its start on the source core to the thread ready here). */
void subutai_sched_move_cost(uint32_t work, uint32_t latency);
#endif

#endif /* SUBUTAI_SCHED_ZEPHYR_H */
