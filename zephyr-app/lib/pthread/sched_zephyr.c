/*
 * Scheduling of the application threads of each core (Kconfig SUBUTAI_SCHED), after TPDS'21
 * (Subutai) section VII: round robin with a timeslot TS (rr; oat, whose launcher runs one
 * application at a time, rotates the same way), or the critical-section-aware policy (csa).
 *
 * Each kernel schedules its own core. The application threads run at one priority,
 * CONFIG_SUBUTAI_PTHREAD_PRIORITY, and a periodic timer of TS ends each timeslot: setting the
 * running thread's priority to that priority requeues it behind the others of the core (the step
 * Zephyr's own time slicing takes, without rearming a timeout at each switch), and the
 * interrupt's exit switches to the head of the queue.
 *
 * CSA uses one priority above: a thread woken while it waits for a mutex (its lock granted, or
 * a condition wait, which returns with the mutex) is raised to it before it is made ready, so it
 * preempts the core's threads that hold none and runs its critical section at once; a thread
 * that holds a mutex when its timeslot ends keeps its core. Both end when the thread has been in
 * its critical section for CSALimit = (ThrReady + ThrRun - 1) x 2 x TS (Eq. 2; ThrReady + ThrRun
 * is the core's runnable application threads at the timeslot's end): the thread then goes back
 * to round robin until it holds no mutex (SUBUTAI_SCHED_CSA_LIMIT=n removes the limit, which
 * lets a thread that never leaves its critical section keep its core for ever). A raised thread
 * goes back to the common priority when it holds no mutex any more (its unlock requeues it behind
 * the threads of that priority, so the thread it preempted runs on), or at its next timeslot's
 * end or wake-up once it holds none (a lock that failed). The PThreads layer says when a thread
 * takes and leaves mutexes (rt.h, rt_cs_*), in both backends; the programs are not changed.
 *
 * Schedule requests (Table VII) are a timeslot's end while an application thread runs and each
 * time one blocks, counted per core by what the thread held then, in shared RAM so that a
 * launcher on any core can sum them.
 */
#include <zephyr/init.h>
#include <zephyr/kernel.h>

#include <subutai/sched.h>
#include <subutai/soc.h>
#include <subutai/timed.h>
#include <subutai/zephyr.h>

#include "rt.h"

#define PRIO      CONFIG_SUBUTAI_PTHREAD_PRIORITY
#define PRIO_CS   (CONFIG_SUBUTAI_PTHREAD_PRIORITY - 1)
#define TS_US     CONFIG_SUBUTAI_PTHREAD_TIMESLICE_US
/* TS in cycles of the global counter (the kernels' clock). */
#define TS_CYCLES ((uint64_t)CONFIG_SYS_CLOCK_HW_CYCLES_PER_SEC * TS_US / 1000000)

#if TS_US > 0
BUILD_ASSERT((uint64_t)TS_US *CONFIG_SYS_CLOCK_TICKS_PER_SEC % 1000000 == 0,
	     "the kernel's tick must divide the timeslot (CONFIG_SYS_CLOCK_TICKS_PER_SEC)");
#endif
#ifdef CONFIG_SUBUTAI_SCHED_CSA
BUILD_ASSERT(PRIO_CS > CONFIG_SUBUTAI_SERVICE_PRIORITY && PRIO_CS >= 0,
	     "CSA raises threads one priority above the application's, below the service thread");
#endif

const char *subutai_sched_policy(void)
{
	if (IS_ENABLED(CONFIG_SUBUTAI_SCHED_OAT)) {
		return "oat";
	}
	if (IS_ENABLED(CONFIG_SUBUTAI_SCHED_CSA)) {
		return IS_ENABLED(CONFIG_SUBUTAI_SCHED_CSA_LIMIT) ? "csa" : "csa-nolimit";
	}
	return "rr";
}

unsigned int subutai_sched_timeslot_us(void)
{
	return TS_US;
}

#ifdef CONFIG_SUBUTAI_SCHED_STATS
/* Cores whose counts fit (a 8x8 mesh). */
#define SCHED_CORES_MAX 64

/* One cache line per core, written by its core only (write-through), read after an
 * invalidation. */
struct core_counts {
	struct subutai_sched_counts counts;
	uint32_t idle_since; /* subutai_cycles32() when its wfi began, 0 when not asleep */
	uint32_t pad[7 - sizeof(struct subutai_sched_counts) / 4];
};

static struct core_counts shared_counts[SCHED_CORES_MAX]
	__attribute__((section(".subutai_shared_bss.sched"), aligned(32)));

enum request_kind {
	REQUEST_OUTSIDE_CS,
	REQUEST_CS_CSA,
	REQUEST_CS_RR,
};

/* Interrupts locked or in an interrupt: the core's own counts. */
static void count(enum request_kind kind)
{
	struct subutai_sched_counts *c = &shared_counts[rt_core()].counts;

	c->requests++;
	if (kind == REQUEST_OUTSIDE_CS) {
		c->outside_cs++;
	} else if (kind == REQUEST_CS_CSA) {
		c->cs_csa++;
	} else {
		c->cs_rr++;
	}
}
#else
#define count(kind) ((void)0)
#endif

#ifdef CONFIG_SUBUTAI_SCHED_STATS
/*
 * The idle thread's wait for an interrupt, timed (CONFIG_ARCH_HAS_CUSTOM_CPU_IDLE replaces the
 * architecture's): what a core slept is what it had nothing to run, so a set's busy cycles are
 * the cores' cycles less these. Two reads of the tile's cycle counter a sleep; Zephyr's thread
 * usage statistics would time every context switch instead, with the LiteX timer's latch and
 * a 64-bit CSR read (two words) each.
 */
void arch_cpu_idle(void)
{
	volatile struct core_counts *mine = &shared_counts[rt_core()];
	uint32_t since = subutai_cycles32() | 1; /* never 0: 0 means awake */

	mine->idle_since = since;
	__asm__ volatile("wfi");
	mine->counts.idle += subutai_cycles32() - since;
	mine->idle_since = 0;
	irq_unlock(MSTATUS_IEN);
}

/* A core's idle cycles to now, its sleep in progress included. Its core ends a sleep with two
 * stores, interrupts locked (idle, then idle_since): two readings that agree, each after an
 * invalidation, are not between them. */
static uint32_t core_idle(const volatile struct core_counts *c)
{
	uint32_t since, idle;

	do {
		subutai_dcache_invalidate();
		since = c->idle_since;
		idle = c->counts.idle;
		subutai_dcache_invalidate();
	} while (c->idle_since != since || c->counts.idle != idle);
	return since != 0 ? idle + (subutai_cycles32() - since) : idle;
}
#endif

void subutai_sched_counts(struct subutai_sched_counts *sum)
{
	*sum = (struct subutai_sched_counts){0};
#ifdef CONFIG_SUBUTAI_SCHED_STATS
	subutai_dcache_invalidate();
	for (unsigned int core = 0; core < subutai_num_tiles(); core++) {
		const volatile struct subutai_sched_counts *c = &shared_counts[core].counts;

		sum->outside_cs += c->outside_cs;
		sum->cs_csa += c->cs_csa;
		sum->cs_rr += c->cs_rr;
		sum->requests += c->requests;
		sum->idle += core_idle(&shared_counts[core]);
	}
#endif
}

#ifdef CONFIG_SUBUTAI_SCHED_TRACK_CS
/* The calling thread's critical sections (a pthread's; another thread's are a dummy). */
SUBUTAI_SYNC_PATH static struct subutai_sched_cs *current_cs(void)
{
	static struct subutai_sched_cs none;
	struct subutai_waiter *waiter = k_current_get()->custom_data;

	return waiter != NULL ? &waiter->cs : &none;
}

SUBUTAI_SYNC_PATH void rt_cs_wait(void)
{
	current_cs()->waiting = true;
}

SUBUTAI_SYNC_PATH void rt_cs_enter(int err)
{
	struct subutai_sched_cs *cs = current_cs();

	cs->waiting = false;
	if (err == 0 && cs->depth++ == 0 && !cs->boosted) {
		cs->since = subutai_cycles32();
		cs->expired = false;
	}
}

SUBUTAI_SYNC_PATH void rt_cs_woken(void)
{
	current_cs()->waiting = false;
}

SUBUTAI_SYNC_PATH void rt_cs_exit(int err)
{
	struct subutai_sched_cs *cs = current_cs();

	if (err == 0 && cs->depth > 0 && --cs->depth == 0) {
		cs->expired = false;
		if (cs->boosted) {
			/* Its critical section is over: back to round robin, behind the threads of
			 * its priority (the one it preempted runs next). */
			cs->boosted = false;
			k_thread_priority_set(k_current_get(), PRIO);
		}
	}
}

/* CSALimit (Eq. 2) in cycles, for this core now. */
static uint32_t csa_limit(void)
{
	unsigned int runnable = subutai_threads_runnable();

	return runnable > 1 ? (uint32_t)((runnable - 1) * 2 * TS_CYCLES) : 0;
}

/* What a schedule request of this thread is, its CSA state brought up to date (end of a
 * timeslot, or a block). */
static enum request_kind classify(struct subutai_sched_cs *cs)
{
	if (cs->depth == 0) {
		return REQUEST_OUTSIDE_CS;
	}
	if (!IS_ENABLED(CONFIG_SUBUTAI_SCHED_CSA) || cs->expired) {
		return REQUEST_CS_RR;
	}
	if (IS_ENABLED(CONFIG_SUBUTAI_SCHED_CSA_LIMIT) &&
	    subutai_cycles32() - cs->since >= csa_limit()) {
		cs->expired = true;
		return REQUEST_CS_RR;
	}
	return REQUEST_CS_CSA;
}

void subutai_sched_waking(struct subutai_waiter *waiter)
{
	struct subutai_sched_cs *cs = &waiter->cs;

	if (IS_ENABLED(CONFIG_SUBUTAI_SCHED_CSA) && cs->waiting) {
		/* Its critical section begins: it holds the mutex once it runs (or takes it). */
		cs->since = subutai_cycles32();
		cs->expired = false;
		if (!cs->boosted) {
			cs->boosted = true;
			k_thread_priority_set(waiter->thread, PRIO_CS);
		}
	} else if (cs->boosted && cs->depth == 0) {
		cs->boosted = false;
		k_thread_priority_set(waiter->thread, PRIO);
	}
}

void subutai_sched_blocking(struct subutai_waiter *waiter)
{
	enum request_kind kind = classify(&waiter->cs);

	ARG_UNUSED(kind);
	count(kind);
}
#endif /* CONFIG_SUBUTAI_SCHED_TRACK_CS */

#if TS_US > 0
/*
 * The end of a timeslot on this core, in the timer interrupt. The running thread is the
 * scheduler's, not k_current_get()'s: with CONFIG_CURRENT_THREAD_USE_TLS that is a thread-local
 * copy a new thread sets in its first instructions (z_thread_entry()), so an interrupt that
 * comes before would read a null thread (a load from address 0x74: no device answers there, and
 * the core and the shared bus stalled until LiteX's bus timeout, a million cycles a word, 16 M
 * cycles in all).
 */
static void timeslot_end(struct k_timer *timer)
{
	struct k_thread *running = k_sched_current_thread_query();
	struct subutai_waiter *waiter = running->custom_data;
	int prio = k_thread_priority_get(running);

	ARG_UNUSED(timer);
	if (waiter == NULL || (prio != PRIO && prio != PRIO_CS)) {
		return; /* idle, or a kernel thread: not an application's */
	}
#ifdef CONFIG_SUBUTAI_SCHED_TRACK_CS
	enum request_kind kind = classify(&waiter->cs);

	count(kind);
	if (kind == REQUEST_CS_CSA) {
		return; /* CSA: it keeps the core */
	}
	waiter->cs.boosted = false;
#endif
	k_thread_priority_set(running, PRIO);
}

static K_TIMER_DEFINE(timeslot, timeslot_end, NULL);
#endif

static int subutai_sched_init(void)
{
#ifdef CONFIG_SUBUTAI_SCHED_STATS
	if (subutai_num_tiles() > SCHED_CORES_MAX) {
		rt_fatal("more cores than the scheduler's counts hold");
	}
#endif
#if TS_US > 0
	k_timer_start(&timeslot, K_USEC(TS_US), K_USEC(TS_US));
#endif
	return 0;
}

SYS_INIT(subutai_sched_init, APPLICATION, 91);
