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
#ifdef CONFIG_SUBUTAI_BARRIER_WAIT_TIDON
	/* Tidon: laggards a barrier waiter ran on its own core, laggards raised on a message of
	 * another core's waiter, and those messages. */
	uint32_t donated_local;
	uint32_t donated_remote;
	uint32_t laggard_messages;
#endif
};

/* The policy's name as results give it: "oat", "rr", "csa" or "csa-nolimit". */
const char *subutai_sched_policy(void);
/* The barrier waiting policy (Kconfig SUBUTAI_BARRIER_WAIT): "spin", "block", "spin-then-block"
 * or "tidon". */
const char *subutai_barrier_policy(void);
/* The timeslot TS, in microseconds (0: none). */
unsigned int subutai_sched_timeslot_us(void);
/*
 * The counts of every core so far (zeros without CONFIG_SUBUTAI_SCHED_STATS). Each core counts
 * its own, in shared RAM; a caller subtracts an earlier reading to count a span of time.
 */
void subutai_sched_counts(struct subutai_sched_counts *sum);

#endif /* SUBUTAI_SCHED_H */
