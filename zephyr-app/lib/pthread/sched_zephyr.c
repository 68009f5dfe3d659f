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

const char *subutai_barrier_policy(void)
{
	if (IS_ENABLED(CONFIG_SUBUTAI_BARRIER_WAIT_SPIN)) {
		return "spin";
	}
	if (IS_ENABLED(CONFIG_SUBUTAI_BARRIER_WAIT_BLOCK)) {
		return "block";
	}
	return IS_ENABLED(CONFIG_SUBUTAI_BARRIER_WAIT_TIDON) ? "tidon" : "spin-then-block";
}

#ifdef CONFIG_SUBUTAI_SCHED_STATS
/* Cores whose counts fit (a 8x8 mesh). */
#define SCHED_CORES_MAX 64

/* A cache line per core (two with Tidon's counts), written by its core only (write-through),
 * read after an invalidation. */
#define CORE_COUNTS_WORDS (sizeof(struct subutai_sched_counts) / 4 < 8 ? 8 : 16)

struct core_counts {
	struct subutai_sched_counts counts;
	uint32_t idle_since; /* subutai_cycles32() when its wfi began, 0 when not asleep */
	uint32_t pad[CORE_COUNTS_WORDS - 1 - sizeof(struct subutai_sched_counts) / 4];
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

/* Adds to a count of this core's (interrupts locked or in an interrupt). */
#define count_add(field, n) (shared_counts[rt_core()].counts.field += (n))
#else
#define count(kind)         ((void)0)
#define count_add(field, n) ((void)0)
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
#ifdef CONFIG_SUBUTAI_BARRIER_WAIT_TIDON
		sum->donated_local += c->donated_local;
		sum->donated_remote += c->donated_remote;
		sum->laggard_messages += c->laggard_messages;
#endif
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
#ifdef CONFIG_SUBUTAI_BARRIER_WAIT_TIDON
	/* Time donated to it ends with its block. */
	bool donated = cs->donated;

	cs->donated = false;
#else
	const bool donated = false;
#endif
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
	} else if (donated && !cs->boosted) {
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

#ifdef CONFIG_SUBUTAI_BARRIER_TRACK
/* The BAPS key of a barrier: its address in 32-byte lines (objects are line-aligned), 24 bits. */
static inline uint32_t barrier_key(const void *barrier)
{
	return ((uintptr_t)barrier >> 5) & 0xffffffu;
}

SUBUTAI_SYNC_PATH void rt_barrier_arrive(const void *barrier)
{
	struct subutai_waiter *waiter = k_current_get()->custom_data;

	if (waiter != NULL) {
		uint32_t seq = (subutai_baps[waiter->id] + 2u) & SUBUTAI_BAPS_SEQ_MASK;

		subutai_baps[waiter->id] = barrier_key(barrier) << 8 | seq | SUBUTAI_BAPS_ARRIVED;
	}
}

SUBUTAI_SYNC_PATH void rt_barrier_leave(void)
{
	struct subutai_waiter *waiter = k_current_get()->custom_data;

	if (waiter != NULL) {
		subutai_baps[waiter->id] &= ~SUBUTAI_BAPS_ARRIVED;
	}
}
#endif

#ifdef CONFIG_SUBUTAI_BARRIER_WAIT_TIDON
/*
 * Tidon (seed 002, Time donating barrier), on cores that each run their own kernel: a thread
 * cannot move to another core, so a waiter donates its own core's time to the laggards there,
 * and gives the laggards of other cores priority on theirs.
 *
 * A laggard of a barrier is a thread whose BAPS names the barrier and that has not arrived in the
 * waiter's round: on the waiter's core also one the previous round released and that has not run
 * since (seed 002 resets every sibling's BAPS at the release); on other cores only one that has
 * not arrived (messages for released threads too raised every released thread of a shared core
 * over the other application's, and lost more than they won: docs/architecture.md). It is run at
 * once, raised one priority
 * above the application threads (PRIO_CS: the raise CSA uses, so the timeslot's end treats it the
 * same), until its timeslot ends (timeslot_end()) or it blocks (subutai_sched_waking() drops the
 * raise when it is woken): the rest of the timeslot, as seed 002 donates it.
 */
/* Noticed BAPS of each thread: the value another core's waiter last sent its core a message for,
 * so that each laggard's core hears once per barrier wait (benign races: a second message). */
static volatile uint32_t baps_noticed[CONFIG_SUBUTAI_THREADS_MAX]
	__attribute__((section(".subutai_shared_bss.baps_noticed"), aligned(32)));

/*
 * Whether a thread of this BAPS is a laggard of the round a waiter of BAPS waiting waits in: it
 * has not arrived, or (released_too) the previous round released it and it has not run since
 * (its BAPS says arrived with another count: programs wait at their barriers in the same order,
 * so every thread's count of arrivals is the round's; seed 002 resets the siblings' BAPS at the
 * release instead).
 */
static inline bool lags(uint32_t baps, uint32_t waiting, bool released_too)
{
	return SUBUTAI_BAPS_KEY(baps) == SUBUTAI_BAPS_KEY(waiting) &&
	       (released_too ? baps != waiting : !(baps & SUBUTAI_BAPS_ARRIVED));
}

/* Raises this core's laggards of the round that do not run raised already and are not asleep
 * (a preempted laggard, or the one the interrupt came in); how many. Interrupts locked or in an
 * interrupt. */
static unsigned int run_laggards(uint32_t waiting, bool released_too)
{
	unsigned int raised = 0;

	for (unsigned int id = 0; id < CONFIG_SUBUTAI_THREADS_MAX; id++) {
		uint32_t baps = subutai_baps[id];
		struct subutai_waiter *waiter;

		if (!lags(baps, waiting, released_too)) {
			continue;
		}
		waiter = subutai_waiter_local(id);
		if (waiter == NULL || waiter->asleep || waiter->cs.donated) {
			continue;
		}
		waiter->cs.donated = true;
		if (k_thread_priority_get(waiter->thread) != PRIO_CS) {
			k_thread_priority_set(waiter->thread, PRIO_CS);
		}
		raised++;
	}
	return raised;
}

static void on_laggards(const struct subutai_ni_msg *msg)
{
	/* The interrupt's exit switches to a raised laggard. */
	unsigned int raised = run_laggards(msg->payload[0], false);

	ARG_UNUSED(raised);
	count_add(donated_remote, raised);
}

/*
 * Sends a message to each core where a laggard of the barrier not noticed yet may be preempted:
 * another core with more than one thread that can run (alone there, a laggard runs already);
 * how many.
 */
static unsigned int notify_laggards(uint32_t waiting)
{
	unsigned int messages = 0;
	uint64_t sent = BIT64(rt_core());
	bool shared = false;

	subutai_dcache_invalidate(); /* the other cores' BAPS, counts and notices */
	for (unsigned int core = 0; core < subutai_num_tiles() && !shared; core++) {
		shared = core != rt_core() && subutai_core_runnable[core] > 1;
	}
	if (!shared) {
		return 0; /* no laggard elsewhere can be preempted */
	}
	for (unsigned int id = 0; id < CONFIG_SUBUTAI_THREADS_MAX; id++) {
		uint32_t baps = subutai_baps[id];

		if (!lags(baps, waiting, false) || baps_noticed[id] == baps) {
			continue;
		}
		unsigned int core = subutai_atomic_load(RT_THREAD_CORE + id);

		if (core >= SUBUTAI_CORES_MAX || subutai_core_runnable[core] <= 1) {
			continue;
		}
		baps_noticed[id] = baps;
		if (!(sent & BIT64(core))) {
			sent |= BIT64(core);
			uint32_t payload = waiting;

			if (subutai_ni_send(core, SUBUTAI_NI_NORMAL, RT_MSG_LAGGARDS, &payload,
					    1) != 0) {
				rt_fatal("cannot send a laggards message");
			}
			messages++;
		}
	}
	return messages;
}

void subutai_sched_barrier_notify(struct subutai_waiter *waiter)
{
	unsigned int messages = notify_laggards(subutai_baps[waiter->id]);
	unsigned int irq = irq_lock();

	ARG_UNUSED(messages);
	count_add(laggard_messages, messages);
	irq_unlock(irq);
}

void subutai_sched_barrier_sleeping(struct subutai_waiter *waiter)
{
	uint32_t waiting = subutai_baps[waiter->id];

	/* Donate: while the barrier has not opened, run this core's laggards, then look again. */
	while (k_sem_count_get(&waiter->sem) == 0) {
		unsigned int irq = irq_lock();
		unsigned int raised = run_laggards(waiting, true);

		count_add(donated_local, raised);
		irq_unlock(irq);
		if (raised == 0) {
			break;
		}
		k_yield();
	}
	if (k_sem_count_get(&waiter->sem) == 0) {
		subutai_sched_barrier_notify(waiter);
	}
}
#endif

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
#ifdef CONFIG_SUBUTAI_BARRIER_WAIT_TIDON
	waiter->cs.donated = false;
#endif
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
#ifdef CONFIG_SUBUTAI_BARRIER_WAIT_TIDON
	if (subutai_num_tiles() > SUBUTAI_CORES_MAX) {
		rt_fatal("more cores than Tidon's tables hold");
	}
#endif
#if TS_US > 0
	k_timer_start(&timeslot, K_USEC(TS_US), K_USEC(TS_US));
#endif
#ifdef CONFIG_SUBUTAI_BARRIER_WAIT_TIDON
	subutai_ni_add_handler(RT_MSG_LAGGARDS, on_laggards);
#endif
	return 0;
}

SYS_INIT(subutai_sched_init, APPLICATION, 91);
