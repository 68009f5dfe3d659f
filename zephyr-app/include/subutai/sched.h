/*
 * Scheduling policy of the application threads of every core (zephyr-app/lib/pthread/
 * sched_zephyr.c, Kconfig SUBUTAI_SCHED): what applications and launchers can ask of it.
 */
#ifndef SUBUTAI_SCHED_H
#define SUBUTAI_SCHED_H

#include <stdint.h>

/* Schedule requests of application threads (TPDS'21 Table VII): a timeslot's end while one runs
 * and each time one blocks, by what the thread held then. */
struct subutai_sched_counts {
	uint32_t outside_cs; /* it held no mutex */
	uint32_t cs_csa; /* it held one, under the critical-section-aware policy (kept its core) */
	uint32_t cs_rr;  /* it held one, under round robin (CSA's limit passed, or rr/oat) */
	uint32_t requests; /* all of them, counted apart (each is in exactly one of the above) */
	uint32_t idle;     /* cycles the cores slept in their idle threads (wfi), to the reading */
#ifdef CONFIG_SUBUTAI_SCHED_MIGRATION
	/* Threads that moved between kernels (counted where they arrived: donated laggards, their
	 * returns home and the baseline's steals), and steals asked that found nothing to move. */
	uint32_t moved_in;
	uint32_t steal_misses;
	/* What the moves cost, summed: cycles from a move's start on its source core to the thread
	 * ready on its target (counted where it arrived), and cycles both kernels spent on it (the
	 * source's suspend and message, the target's handler). */
	uint32_t move_latency;
	uint32_t move_work;
#endif
#ifdef CONFIG_SUBUTAI_BARRIER_WAIT_TIDON
	/* Tidon: laggards a barrier waiter ran on its own core, laggards raised on a message of
	 * another core's waiter (where they could not move), and those messages. */
	uint32_t donated_local;
	uint32_t donated_remote;
	uint32_t laggard_messages;
#endif
};

/* The policy's name as results give it: "oat", "rr", "rr-core", "csa" or "csa-nolimit". */
const char *subutai_sched_policy(void);
/* The barrier waiting policy (Kconfig SUBUTAI_BARRIER_WAIT): "spin", "block", "spin-then-block"
 * or "tidon". */
const char *subutai_barrier_policy(void);
/*
 * The applications of the rotation (rr, csa and oat; not rr-core): applications 1 to apps, in
 * that order, one timeslot each, aligned on every core (TPDS'21 section VII). A launcher declares
 * them before it starts them; with none declared (0) every thread is application 0 and a core's
 * threads rotate together. At most SUBUTAI_SCHED_APPS_MAX.
 */
#define SUBUTAI_SCHED_APPS_MAX 32
void subutai_sched_set_applications(unsigned int apps);
/* The calling thread becomes application app's (0 to the number declared), and so do the
 * threads it creates from then on. */
void subutai_sched_join_application(unsigned int app);

/* How threads move between kernels: "steal" (idle kernels take ready threads: the migrating
 * baseline), "tidon" (a barrier waiter's core runs a preempted laggard), or "none". */
const char *subutai_sched_migration(void);

/* The timeslot TS, in microseconds (0: none). */
unsigned int subutai_sched_timeslot_us(void);
/*
 * The counts of every core so far (zeros without CONFIG_SUBUTAI_SCHED_STATS). Each core counts
 * its own, in shared RAM; a caller subtracts an earlier reading to count a span of time.
 */
void subutai_sched_counts(struct subutai_sched_counts *sum);

/* Prints each core's slot log (CONFIG_SUBUTAI_SCHED_SLOT_LOG; nothing without it): a "slot_log"
 * record per core, its timeslot ends as [cycle, application of the thread that ran, mask of the
 * applications with a thread of the core that could run] (cycle: the low 32 bits of the global
 * counter; application 255: none's, the idle or a kernel thread). */
void subutai_sched_print_slot_log(void);

#endif /* SUBUTAI_SCHED_H */
