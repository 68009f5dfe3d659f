/*
 * Scheduling of the application threads of each core (Kconfig SUBUTAI_SCHED), after TPDS'21
 * (Subutai) section VII: round robin by application with a timeslot TS (rr; oat, whose launcher
 * runs one application at a time, rotates the same way), the critical-section-aware policy (csa)
 * on top of it, and rr-core, each core's own round robin, to measure what the alignment does.
 *
 * Each kernel schedules its own core, and they agree through the global cycle counter. Under rr,
 * oat and csa (SUBUTAI_SCHED_ROTATION) timeslots begin at multiples of TS on that counter on
 * every core (the kernel's ticks are moved onto its multiples of a tick at start-up, and a
 * periodic timer ends each slot on the tick of a multiple of TS), and slot s belongs to
 * application 1 + s mod n of the n a launcher declared (subutai_sched_set_applications()): "the
 * same timeslot for all threads of a given application" (footnote 4), in a deterministic order,
 * the same number of slots each. A core orders its threads by application with Zephyr's
 * priorities: the slot's application's at CONFIG_SUBUTAI_PTHREAD_PRIORITY, the next one's one
 * below, and so on, so a core whose thread of the slot's application blocks runs the next
 * application's (nothing idles while something is ready). Threads of one application on a core
 * take turns: the running thread goes to the end of the core's rotation list at its slot's end,
 * and priorities are set in that order (setting a priority queues a thread behind the others of
 * its priority, the step Zephyr's own time slicing takes, without rearming a timeout at each
 * switch). The launcher's own threads (application 0) run at the slot's application's priority.
 * Under rr-core each core rotates all its threads at one priority on a timer that starts when it
 * boots, so one application's threads run at unrelated times on different cores.
 *
 * CSA uses one priority above: a thread woken while it waits for a mutex (its lock granted, or
 * a condition wait, which returns with the mutex) is raised to it before it is made ready, so it
 * preempts the core's threads that hold none and runs its critical section at once; a thread
 * that holds a mutex when its timeslot ends keeps its core. Both end when the thread has been in
 * its critical section for CSALimit = (ThrReady + ThrRun - 1) x 2 x TS (Eq. 2; ThrReady + ThrRun
 * is the core's runnable application threads at the timeslot's end): the thread then goes back
 * to round robin until it holds no mutex (SUBUTAI_SCHED_CSA_LIMIT=n removes the limit, which
 * lets a thread that never leaves its critical section keep its core for ever). A raised thread
 * goes back to its application's priority when it holds no mutex any more (its unlock requeues
 * it behind the threads of that priority, so the thread it preempted runs on), or at its next
 * timeslot's end or wake-up once it holds none (a lock that failed). The PThreads layer says when
 * a thread takes and leaves mutexes (rt.h, rt_cs_*), in both backends; the programs are not
 * changed.
 *
 * Schedule requests (Table VII) are a timeslot's end while an application thread runs and each
 * time one blocks, counted per core by what the thread held then, in shared RAM so that a
 * launcher on any core can sum them.
 */
#include <zephyr/init.h>
#include <zephyr/kernel.h>
#include <zephyr/sys/dlist.h>

#include <soc.h>

#include <subutai/sched.h>
#include <subutai/soc.h>
#include <subutai/timed.h>
#include <subutai/zephyr.h>

#include "rt.h"
#include "sched_zephyr.h"

#define PRIO      CONFIG_SUBUTAI_PTHREAD_PRIORITY
#define PRIO_CS   (CONFIG_SUBUTAI_PTHREAD_PRIORITY - 1)
#define TS_US     CONFIG_SUBUTAI_PTHREAD_TIMESLICE_US
/* TS in cycles of the global counter (the kernels' clock). */
#define TS_CYCLES ((uint64_t)CONFIG_SYS_CLOCK_HW_CYCLES_PER_SEC * TS_US / 1000000)
/* The lowest priority of an application's thread (the idle thread's is below). */
#define PRIO_LAST (CONFIG_NUM_PREEMPT_PRIORITIES - 2)
BUILD_ASSERT(PRIO_LAST >= PRIO, "no priority below the application threads' but the idle thread's");

#if TS_US > 0
BUILD_ASSERT((uint64_t)TS_US *CONFIG_SYS_CLOCK_TICKS_PER_SEC % 1000000 == 0,
	     "the kernel's tick must divide the timeslot (CONFIG_SYS_CLOCK_TICKS_PER_SEC)");
#endif
#ifdef CONFIG_SUBUTAI_SCHED_CSA
BUILD_ASSERT(PRIO_CS > CONFIG_SUBUTAI_SERVICE_PRIORITY && PRIO_CS >= 0,
	     "CSA raises threads one priority above the application's, below the service thread");
#endif

/* The policy's part of a waiter's thread (sched_zephyr.h). */
#define SCHED(w) CONTAINER_OF(w, struct subutai_sched_thread, waiter)

#if defined(CONFIG_SUBUTAI_BARRIER_WAIT_TIDON) || defined(CONFIG_SUBUTAI_SCHED_MIGRATION)
/* Cores whose counts the shared tables hold (an 8x8 mesh). */
#define SUBUTAI_CORES_MAX 64
/* subutai_threads_runnable() of every core, in shared memory (each core writes its own, through
 * the driver's hook). */
static volatile uint8_t subutai_core_runnable[SUBUTAI_CORES_MAX]
	__attribute__((section(".subutai_shared_bss.runnable"), aligned(32)));

void subutai_ni_runnable_hook(unsigned int runnable)
{
	subutai_core_runnable[subutai_tile_id()] = runnable;
}
#endif

#ifdef CONFIG_SUBUTAI_BARRIER_TRACK
/*
 * Barrier participation status (BAPS, seed 002 Tidon) of every thread, by waiter id, in shared
 * memory: written by the thread itself (pthread_barrier_wait()), read without a lock by its
 * core's scheduler and, after an invalidation, by the threads of other cores.
 *
 *   0                          it has not waited at a barrier (or its slot is free)
 *   key << 8 | seq << 1        it takes part in the barrier of that key and is not waiting at it:
 *                              a laggard while its siblings wait there
 *   key << 8 | seq << 1 | 1    it waits at that barrier (arrived)
 *
 * seq counts the thread's arrivals (7 bits), so that every wait gives a new value.
 */
#define SUBUTAI_BAPS_ARRIVED   1u
#define SUBUTAI_BAPS_SEQ_MASK  0xfeu
#define SUBUTAI_BAPS_KEY(baps) ((baps) >> 8)

static volatile uint32_t subutai_baps[CONFIG_SUBUTAI_THREADS_MAX]
	__attribute__((section(".subutai_shared_bss.baps"), aligned(32)));

/* A thread of this slot begins or ends: no laggard of any barrier. */
static inline void baps_clear(unsigned int id)
{
	subutai_baps[id] = 0;
}
#else
static inline void baps_clear(unsigned int id)
{
	ARG_UNUSED(id);
}
#endif

const char *subutai_sched_policy(void)
{
	if (IS_ENABLED(CONFIG_SUBUTAI_SCHED_OAT)) {
		return "oat";
	}
	if (IS_ENABLED(CONFIG_SUBUTAI_SCHED_CSA)) {
		return IS_ENABLED(CONFIG_SUBUTAI_SCHED_CSA_LIMIT) ? "csa" : "csa-nolimit";
	}
	return IS_ENABLED(CONFIG_SUBUTAI_SCHED_RR_CORE) ? "rr-core" : "rr";
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

/* A core's counts in cache lines of their own (the type's alignment rounds its size), written by
 * its core only (write-through), read after an invalidation. */
struct core_counts {
	struct subutai_sched_counts counts;
	uint32_t idle_since; /* subutai_cycles32() when its wfi began, 0 when not asleep */
} __aligned(32);

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

#ifdef CONFIG_SUBUTAI_SCHED_STEAL
static void try_steal(void);
#else
#define try_steal() ((void)0)
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

	try_steal();
	uint32_t since = subutai_cycles32() | 1; /* never 0: 0 means awake */

	mine->idle_since = since;
	__asm__ volatile("wfi");
	mine->counts.idle += subutai_cycles32() - since;
	mine->idle_since = 0;
	irq_unlock(MSTATUS_IEN);
}

/* Readings of a core's idle cycles before the sleep in progress is left out. */
#define IDLE_READINGS 8

/*
 * A core's idle cycles to now, its sleep in progress included. Its core ends a sleep with two
 * stores, interrupts locked (idle, then idle_since): two readings that agree, each after an
 * invalidation, are not between them. A core whose idle thread comes back at once, over and over
 * (an interrupt pending, or a wfi the core does not wait in), changes them every few dozen
 * cycles, and with its phase locked to the reader's (aligned timeslots start every core's work at
 * once) no two readings might ever agree: after IDLE_READINGS the last reading of the finished
 * sleeps is taken, short of at most the sleep in progress.
 */
static uint32_t core_idle(const volatile struct core_counts *c)
{
	uint32_t since, idle;

	for (unsigned int reading = 0;; reading++) {
		subutai_dcache_invalidate();
		since = c->idle_since;
		idle = c->counts.idle;
		subutai_dcache_invalidate();
		if (c->idle_since == since && c->counts.idle == idle) {
			break;
		}
		if (reading == IDLE_READINGS) {
			return c->counts.idle;
		}
	}
	return since != 0 ? idle + (subutai_cycles32() - since) : idle;
}
#elif defined(CONFIG_SUBUTAI_SCHED_STEAL)
/* The idle thread's wait for an interrupt, after asking for a thread to run. */
void arch_cpu_idle(void)
{
	try_steal();
	__asm__ volatile("wfi");
	irq_unlock(MSTATUS_IEN);
}
#endif

#ifdef CONFIG_SUBUTAI_SCHED_STATS
/* A core's counts as one reading: its core adds a request to two of them (interrupts locked, a
 * few cycles apart), and aligned timeslots end on every core at once, the reader's included, so
 * a reading is taken again until its columns add up to its total (at most IDLE_READINGS times). */
static void core_counts_read(const volatile struct subutai_sched_counts *c,
			     struct subutai_sched_counts *out)
{
	for (unsigned int reading = 0; reading < IDLE_READINGS; reading++) {
		subutai_dcache_invalidate();
		for (size_t w = 0; w < sizeof(*out) / sizeof(uint32_t); w++) {
			((uint32_t *)out)[w] = ((const volatile uint32_t *)c)[w];
		}
		if (out->outside_cs + out->cs_csa + out->cs_rr == out->requests) {
			return;
		}
	}
}
#endif

void subutai_sched_counts(struct subutai_sched_counts *sum)
{
	*sum = (struct subutai_sched_counts){0};
#ifdef CONFIG_SUBUTAI_SCHED_STATS
	for (unsigned int core = 0; core < subutai_num_tiles(); core++) {
		struct subutai_sched_counts one;
		const struct subutai_sched_counts *c = &one;

		core_counts_read(&shared_counts[core].counts, &one);

		sum->outside_cs += c->outside_cs;
		sum->cs_csa += c->cs_csa;
		sum->cs_rr += c->cs_rr;
		sum->requests += c->requests;
		sum->idle += core_idle(&shared_counts[core]);
#ifdef CONFIG_SUBUTAI_SCHED_MIGRATION
		sum->moved_in += c->moved_in;
		sum->steal_misses += c->steal_misses;
		sum->move_latency += c->move_latency;
		sum->move_work += c->move_work;
#endif
#ifdef CONFIG_SUBUTAI_BARRIER_WAIT_TIDON
		sum->donated_local += c->donated_local;
		sum->donated_remote += c->donated_remote;
		sum->laggard_messages += c->laggard_messages;
#endif
	}
#endif
}

/* The application of each thread slot, written by its creator (subutai_sched_thread_created()),
 * read by the core it starts on after the invalidation of its start. */
static volatile uint8_t slot_app[CONFIG_SUBUTAI_THREADS_MAX]
	__attribute__((section(".subutai_shared_bss.sched_app"), aligned(32)));
/* The applications of the rotation, as the launcher declared them. */
static volatile uint32_t rotation_apps
	__attribute__((section(".subutai_shared_bss.sched_apps"), aligned(32)));

void subutai_sched_set_applications(unsigned int apps)
{
	if (apps > SUBUTAI_SCHED_APPS_MAX) {
		rt_fatal("more applications than the rotation holds (SUBUTAI_SCHED_APPS_MAX)");
	}
	rotation_apps = apps;
}

void subutai_sched_thread_created(unsigned int slot)
{
	struct subutai_waiter *creator = subutai_waiter_current();

	slot_app[slot] = creator != NULL ? SCHED(creator)->app : 0;
}

#if CONFIG_SUBUTAI_SCHED_SLOT_LOG > 0 && TS_US > 0
#include <stdio.h>

struct slot_log {
	uint32_t count; /* timeslot ends so far (logged: the first CONFIG_SUBUTAI_SCHED_SLOT_LOG) */
	uint32_t pad[7];
	/* cycle, application of the thread that ran, applications with a thread that could run */
	uint32_t entry[CONFIG_SUBUTAI_SCHED_SLOT_LOG][3];
};

/* Each core writes its own (write-through); the printer reads them after an invalidation. */
static struct slot_log slot_logs[N_TILES]
	__attribute__((section(".subutai_shared_bss.slot_log"), aligned(32)));
/* Set by the printer: the logs end there (the printing's own slots are not the set's). */
static volatile bool slot_logs_closed __attribute__((section(".subutai_shared_bss.slot_log")));

/* A timeslot's end on this core (its interrupt): the application of the thread that ran. */
static void log_slot(const struct subutai_waiter *running)
{
	struct slot_log *log = &slot_logs[rt_core()];

	subutai_dcache_invalidate(); /* the printer's closing */
	if (slot_logs_closed) {
		return;
	}
	uint32_t n = log->count++;

	if (n < CONFIG_SUBUTAI_SCHED_SLOT_LOG) {
		uint32_t ready = 0;

		for (unsigned int id = 0; id < CONFIG_SUBUTAI_THREADS_MAX; id++) {
			const struct subutai_waiter *waiter = subutai_waiter_local(id);

			if (waiter != NULL && !waiter->asleep && SCHED(waiter)->app < 32) {
				ready |= BIT(SCHED(waiter)->app);
			}
		}
		log->entry[n][0] = subutai_cycles32();
		log->entry[n][1] = running != NULL ? SCHED(running)->app : 255;
		log->entry[n][2] = ready;
	}
}

void subutai_sched_print_slot_log(void)
{
	slot_logs_closed = true;
	subutai_dcache_invalidate();
	for (unsigned int core = 0; core < subutai_num_tiles(); core++) {
		const struct slot_log *log = &slot_logs[core];
		uint32_t n = MIN(log->count, CONFIG_SUBUTAI_SCHED_SLOT_LOG);

		printf("@subutai {\"event\":\"slot_log\",\"core\":%u,\"slots\":%lu,"
		       "\"ts_cycles\":%lu,\"log\":[",
		       core, (unsigned long)log->count, (unsigned long)TS_CYCLES);
		for (uint32_t k = 0; k < n; k++) {
			printf("%s[%lu,%lu,%lu]", k ? "," : "", (unsigned long)log->entry[k][0],
			       (unsigned long)log->entry[k][1], (unsigned long)log->entry[k][2]);
		}
		printf("]}\n");
	}
}
#else
#define log_slot(running) ((void)0)

void subutai_sched_print_slot_log(void)
{
}
#endif

#ifdef CONFIG_SUBUTAI_SCHED_ROTATION
/* This core's application threads in the order they take turns (kernel data: interrupts locked
 * or in the timeslot's interrupt). */
static sys_dlist_t rotation = SYS_DLIST_STATIC_INIT(&rotation);
/* The applications of the rotation, as this core read them when its last thread began, and the
 * index of the slot's one (kernel data). */
static unsigned int rotation_n;
static unsigned int rotation_lead;

/* The priority of a thread of this application in this core's slot: the slot's application's
 * first, then in the rotation's order. */
static int app_priority(unsigned int app)
{
	if (app == 0 || rotation_n == 0) {
		return PRIO;
	}
	if (app > rotation_n) {
		return PRIO_LAST;
	}
	unsigned int distance = (app - 1 + rotation_n - rotation_lead) % rotation_n;

	return MIN(PRIO + (int)distance, PRIO_LAST);
}

static inline int base_priority(const struct subutai_waiter *waiter)
{
	return app_priority(SCHED(waiter)->app);
}

void subutai_sched_join_application(unsigned int app)
{
	struct subutai_waiter *waiter = subutai_waiter_current();

	if (waiter == NULL || app > SUBUTAI_SCHED_APPS_MAX) {
		rt_fatal(
			"an application joined by a thread that is not a pthread, or out of range");
	}
	SCHED(waiter)->app = app;
	k_thread_priority_set(waiter->thread, base_priority(waiter));
}

/* A thread joins this core's rotation (interrupts locked or in an interrupt), after an
 * invalidation: the launcher declares the applications before it starts their threads. */
static void join_rotation(struct subutai_waiter *waiter)
{
	rotation_n = MIN(rotation_apps, SUBUTAI_SCHED_APPS_MAX);
	sys_dlist_append(&rotation, &SCHED(waiter)->rotation);
}

void subutai_sched_thread_begins(struct subutai_waiter *waiter)
{
	unsigned int key = irq_lock();

	baps_clear(waiter->id);
	SCHED(waiter)->app = slot_app[waiter->id];
	join_rotation(waiter);
	irq_unlock(key);
	k_thread_priority_set(waiter->thread, base_priority(waiter));
}

void subutai_sched_thread_ends(struct subutai_waiter *waiter)
{
	unsigned int key = irq_lock();

	baps_clear(waiter->id);

	if (sys_dnode_is_linked(&SCHED(waiter)->rotation)) {
		sys_dlist_remove(&SCHED(waiter)->rotation);
	}
	irq_unlock(key);
}

/* Whether a thread runs raised at a timeslot's end (CSA's critical section, Tidon's donation)
 * and keeps that priority. */
static inline bool raised(const struct subutai_waiter *waiter)
{
#ifdef CONFIG_SUBUTAI_SCHED_TRACK_CS
	if (SCHED(waiter)->cs.boosted) {
		return true;
	}
#endif
#ifdef CONFIG_SUBUTAI_BARRIER_WAIT_TIDON
	if (SCHED(waiter)->cs.donated) {
		return true;
	}
#endif
	ARG_UNUSED(waiter);
	return false;
}

#if defined(CONFIG_SUBUTAI_BARRIER_WAIT_TIDON) && defined(CONFIG_SUBUTAI_SCHED_ROTATION)
/* The thread whose slot ends, in the timeslot's interrupt: the waiter that donated it, if the
 * thread that ran was its laggard and the donor is still a thread of this core's rotation, else
 * the thread that ran. */
static struct subutai_waiter *slot_owner(struct subutai_waiter *ran)
{
	if (ran == NULL || SCHED(ran)->cs.donor == 0) {
		return ran;
	}
	struct subutai_waiter *donor = subutai_waiter_local(SCHED(ran)->cs.donor - 1);

	SCHED(ran)->cs.donor = 0;
	return donor != NULL && sys_dnode_is_linked(&SCHED(donor)->rotation) ? donor : ran;
}
#else
static inline struct subutai_waiter *slot_owner(struct subutai_waiter *ran)
{
	return ran;
}
#endif

/*
 * A new slot on this core, in the timeslot's interrupt: its application from the global counter,
 * the thread whose slot ended (behind, unless it keeps its core) to the end of the rotation, and
 * every thread's priority in the rotation's order.
 *
 * Under Tidon every thread's priority is set again, in the rotation's order: a donation reorders
 * Zephyr's queue (the donor yields, which queues it behind the threads of its priority, and its
 * laggard runs the rest of the donor's slot), and setting them all queues the threads of each
 * priority in the rotation's order again, so the laggard, which keeps its place, runs its own
 * slot when its turn comes (seed 002, Algorithm 3: the laggard runs on "the remaining timeslice
 * of T", not on its own).
 */
static void rotate(struct subutai_waiter *behind)
{
	struct subutai_sched_thread *thread;

	rotation_lead =
		rotation_n != 0 ? (subutai_cycles() + TS_CYCLES / 2) / TS_CYCLES % rotation_n : 0;
	/* A thread between its waiter's registration and its first steps, or past its end, runs
	 * outside the rotation. */
	if (behind != NULL && sys_dnode_is_linked(&SCHED(behind)->rotation)) {
		sys_dlist_remove(&SCHED(behind)->rotation);
		sys_dlist_append(&rotation, &SCHED(behind)->rotation);
	}
	/* A thread whose priority stays keeps its place among its priority's, but the one that
	 * ran goes behind them. */
	SYS_DLIST_FOR_EACH_CONTAINER(&rotation, thread, rotation)
	{
		struct subutai_waiter *waiter = &thread->waiter;
		int prio = base_priority(waiter);

		if (!raised(waiter) &&
		    (IS_ENABLED(CONFIG_SUBUTAI_BARRIER_WAIT_TIDON) || waiter == behind ||
		     k_thread_priority_get(waiter->thread) != prio)) {
			k_thread_priority_set(waiter->thread, prio);
		}
	}
}
#else
static inline int base_priority(const struct subutai_waiter *waiter)
{
	ARG_UNUSED(waiter);
	return PRIO;
}

void subutai_sched_join_application(unsigned int app)
{
	struct subutai_waiter *waiter = subutai_waiter_current();

	if (waiter != NULL) {
		SCHED(waiter)->app = app; /* inherited; rr-core does not rotate by it */
	}
}

static inline void join_rotation(struct subutai_waiter *waiter)
{
	ARG_UNUSED(waiter);
}

void subutai_sched_thread_begins(struct subutai_waiter *waiter)
{
	baps_clear(waiter->id);
	SCHED(waiter)->app = slot_app[waiter->id];
}

void subutai_sched_thread_ends(struct subutai_waiter *waiter)
{
	baps_clear(waiter->id);
}
#endif

const char *subutai_sched_migration(void)
{
	if (IS_ENABLED(CONFIG_SUBUTAI_SCHED_STEAL)) {
		return "steal";
	}
	return IS_ENABLED(CONFIG_SUBUTAI_BARRIER_WAIT_TIDON) ? "tidon" : "none";
}

#ifdef CONFIG_SUBUTAI_SCHED_MIGRATION
/* A thread holding a mutex stays: an engine knows its holder by core and thread, and would
 * refuse the unlock from another core (and CSA wants it to run on). */
bool subutai_sched_may_move(const struct subutai_waiter *waiter)
{
	const struct subutai_sched_cs *cs = &SCHED(waiter)->cs;

	return cs->depth == 0 && !cs->waiting && !cs->boosted;
}

#ifdef CONFIG_SUBUTAI_SCHED_STEAL
/* This core's steal: asked and not answered yet, when it may ask again, and how long it waits
 * after a "none" (kernel data). */
static bool steal_asked;
static uint32_t steal_after;
static uint32_t steal_backoff = CONFIG_SUBUTAI_SCHED_STEAL_BACKOFF_CYCLES;
#endif

void subutai_sched_move_cost(uint32_t work, uint32_t latency)
{
	ARG_UNUSED(work);
	ARG_UNUSED(latency);
	count_add(move_work, work);
	count_add(move_latency, latency);
}

void subutai_sched_thread_arrives(struct subutai_waiter *waiter, uint32_t how)
{
	join_rotation(waiter);
	bool donated = (how & SUBUTAI_MOVE_DONATED) != 0;

	SCHED(waiter)->cs.donated = donated;
#ifdef CONFIG_SUBUTAI_BARRIER_WAIT_TIDON
	SCHED(waiter)->cs.donor = 0;
#endif
	k_thread_priority_set(waiter->thread, donated ? PRIO_CS : base_priority(waiter));
	count_add(moved_in, 1);
#ifdef CONFIG_SUBUTAI_SCHED_STEAL
	if (how & SUBUTAI_MOVE_STAY) {
		steal_asked = false;
		steal_backoff = CONFIG_SUBUTAI_SCHED_STEAL_BACKOFF_CYCLES;
	}
#endif
}

/* This core's ready threads, from after the last one given away, for a fair share of steals. */
static unsigned int steal_from;

/* A thread of this core that can move to the asking core, by slot: a moved one's slot, or
 * CONFIG_SUBUTAI_THREADS_MAX. Interrupts locked or in an interrupt. */
static unsigned int give_any(unsigned int to)
{
	for (unsigned int k = 1; k <= CONFIG_SUBUTAI_THREADS_MAX; k++) {
		unsigned int id = (steal_from + k) % CONFIG_SUBUTAI_THREADS_MAX;
		struct subutai_waiter *waiter = subutai_waiter_local(id);

		if (waiter != NULL && SCHED(waiter)->app != 0 &&
		    subutai_thread_move(waiter, to, SUBUTAI_MOVE_STAY)) {
			steal_from = id;
			return id;
		}
	}
	return CONFIG_SUBUTAI_THREADS_MAX;
}

#ifdef CONFIG_SUBUTAI_BARRIER_WAIT_TIDON
static bool give_laggard(unsigned int id, unsigned int to, uint32_t waiting);
#endif

/* Another core asks for a thread: any ready one (a steal), or a barrier's laggard (Tidon). */
static void on_steal(const struct subutai_ni_msg *msg)
{
	unsigned int to = msg->payload[0];

	if (msg->payload[1] == RT_STEAL_ANY) {
		if (give_any(to) == CONFIG_SUBUTAI_THREADS_MAX) {
			uint32_t me = rt_core();

			count_add(steal_misses, 1);
			if (subutai_ni_send(to, SUBUTAI_NI_NORMAL, RT_MSG_NONE, &me, 1) != 0) {
				rt_fatal("cannot answer a steal");
			}
		}
		return;
	}
#ifdef CONFIG_SUBUTAI_BARRIER_WAIT_TIDON
	(void)give_laggard(msg->payload[1], to, msg->payload[2]);
#endif
}

#ifdef CONFIG_SUBUTAI_SCHED_STEAL
/*
 * A "none": the next question waits, twice as long as the last after each "none" in a row (a
 * Linux domain's balance interval doubles while its balancing fails, up to its maximum). A core
 * can count runnable threads none of which may move (holding a mutex, or not in an application
 * yet): asked by every idle kernel at a fixed pace, its answers took all its time, so its NI
 * interrupt never returned and nothing else ran on it (8 tiles, streamcluster*8 beside ep:2*8).
 */
static void on_none(const struct subutai_ni_msg *msg)
{
	ARG_UNUSED(msg);
	steal_asked = false;
	steal_after = subutai_cycles32() + steal_backoff;
	steal_backoff = MIN(2 * steal_backoff, CONFIG_SUBUTAI_SCHED_STEAL_BACKOFF_MAX_CYCLES);
}

/*
 * The migrating baseline, in the idle thread (interrupts locked): a kernel with nothing to run
 * asks the core with the most runnable application threads, if it has more than the one it
 * runs, for one of its ready threads, which then lives here (as a Linux kernel's idle balancing
 * pulls a task; seed 002's runs are Linux's). One question at a time; after a "none", a pause.
 */
static void try_steal(void)
{
	unsigned int me = rt_core(), victim = me;
	unsigned int most = 1;

	if (steal_asked || (int32_t)(subutai_cycles32() - steal_after) < 0) {
		return;
	}
	subutai_dcache_invalidate(); /* the other cores' runnable counts */
	for (unsigned int core = 0; core < subutai_num_tiles(); core++) {
		if (core != me && subutai_core_runnable[core] > most) {
			most = subutai_core_runnable[core];
			victim = core;
		}
	}
	if (victim == me) {
		steal_after = subutai_cycles32() + CONFIG_SUBUTAI_SCHED_STEAL_BACKOFF_CYCLES;
		return;
	}
	uint32_t payload[3] = {me, RT_STEAL_ANY, 0};

	if (subutai_ni_send(victim, SUBUTAI_NI_NORMAL, RT_MSG_STEAL, payload, 3) != 0) {
		rt_fatal("cannot ask for a thread");
	}
	steal_asked = true;
}
#endif
#endif /* CONFIG_SUBUTAI_SCHED_MIGRATION */

#ifdef CONFIG_SUBUTAI_SCHED_TRACK_CS
/* The calling thread's critical sections (a pthread's; another thread's are a dummy). */
SUBUTAI_SYNC_PATH static struct subutai_sched_cs *current_cs(void)
{
	static struct subutai_sched_cs none;
	struct subutai_waiter *waiter = k_current_get()->custom_data;

	return waiter != NULL ? &SCHED(waiter)->cs : &none;
}

SUBUTAI_SYNC_PATH void rt_cs_wait(void)
{
	current_cs()->waiting = true;
}

SUBUTAI_SYNC_PATH void rt_cs_enter(int err)
{
	struct subutai_sched_cs *cs = current_cs();

	if (err == 0 && cs->depth++ == 0 && !cs->boosted) {
		cs->since = subutai_cycles32();
		cs->expired = false;
	}
	/* Held before no longer waiting: an interrupt between the two never finds a holder that
	 * looks free to move (subutai_sched_may_move()). */
	compiler_barrier();
	cs->waiting = false;
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
			k_thread_priority_set(k_current_get(),
					      base_priority(k_current_get()->custom_data));
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

void subutai_ni_waking_hook(struct subutai_waiter *waiter)
{
	struct subutai_sched_cs *cs = &SCHED(waiter)->cs;
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
		k_thread_priority_set(waiter->thread, base_priority(waiter));
	} else if (donated && !cs->boosted) {
		k_thread_priority_set(waiter->thread, base_priority(waiter));
	}
}

void subutai_ni_blocking_hook(struct subutai_waiter *waiter)
{
	enum request_kind kind = classify(&SCHED(waiter)->cs);

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

#ifdef CONFIG_SUBUTAI_BARRIER_WAIT_TIDON
/*
 * A laggard that ran on a waiter of its core's timeslot has left its donor's round (one the
 * previous round released leaves that round first, then arrives at the donor's): the rest of the
 * slot is its donor's again (seed 002 donates time to bring laggards to the barrier), so it goes
 * back to its application's priority, behind the threads of that priority, and the donor, which
 * its arrival released, runs on. A laggard moved here for a waiter of another core runs on until
 * the slot's end, which sends it home.
 */
static void leave_donation(struct subutai_waiter *waiter, uint32_t left)
{
	unsigned int key = irq_lock();
	bool donated = SCHED(waiter)->cs.donated && SCHED(waiter)->cs.donor != 0 &&
		       SCHED(waiter)->cs.round == left;

	if (donated) {
		SCHED(waiter)->cs.donated = false;
		SCHED(waiter)->cs.donor = 0;
	}
	irq_unlock(key);
	if (donated && !SCHED(waiter)->cs.boosted) {
		k_thread_priority_set(waiter->thread, base_priority(waiter));
	}
}
#endif

SUBUTAI_SYNC_PATH void rt_barrier_arrive(const void *barrier)
{
	struct subutai_waiter *waiter = k_current_get()->custom_data;

	if (waiter != NULL) {
		uint32_t seq = (subutai_baps[waiter->id] + 2u) & SUBUTAI_BAPS_SEQ_MASK;

		subutai_baps[waiter->id] = barrier_key(barrier) << 8 | seq | SUBUTAI_BAPS_ARRIVED;
		subutai_waiter_mark_barrier(waiter, true);
	}
}

SUBUTAI_SYNC_PATH void rt_barrier_leave(void)
{
	struct subutai_waiter *waiter = k_current_get()->custom_data;

	if (waiter != NULL) {
		uint32_t left = subutai_baps[waiter->id];

		subutai_baps[waiter->id] = left & ~SUBUTAI_BAPS_ARRIVED;
		subutai_waiter_mark_barrier(waiter, false);
#ifdef CONFIG_SUBUTAI_BARRIER_WAIT_TIDON
		leave_donation(waiter, left);
#endif
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
 * same), until it leaves the round its donor waits in (leave_donation()), its timeslot ends
 * (timeslot_end(); the slot stays the donor's: slot_owner()) or it blocks
 * (subutai_ni_waking_hook() drops the raise when it is woken): the rest of the timeslot, as seed
 * 002 donates it.
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

/* Whether a thread of this core is a laggard of the round that does not run raised already and
 * is not asleep. */
static inline bool may_raise(const struct subutai_waiter *waiter, uint32_t waiting,
			     bool released_too)
{
	return !waiter->asleep && !SCHED(waiter)->cs.donated &&
	       lags(subutai_baps[waiter->id], waiting, released_too);
}

/* Raises one of this core's threads if it is a laggard of the round that does not run raised
 * already and is not asleep, on the timeslot of donor (a waiter of this core, or NULL: another
 * core's); whether it did. Interrupts locked or in an interrupt. */
static bool raise_laggard(struct subutai_waiter *waiter, uint32_t waiting, bool released_too,
			  const struct subutai_waiter *donor)
{
	if (!may_raise(waiter, waiting, released_too)) {
		return false;
	}
	SCHED(waiter)->cs.donated = true;
	SCHED(waiter)->cs.donor = donor != NULL ? donor->id + 1 : 0;
	SCHED(waiter)->cs.round = waiting;
	if (k_thread_priority_get(waiter->thread) != PRIO_CS) {
		k_thread_priority_set(waiter->thread, PRIO_CS);
	}
	return true;
}

/* This core's laggards of the round: raised (raise: a preempted laggard, or the one the
 * interrupt came in; raise_laggard()) or only counted (may_raise()); how many. Interrupts locked
 * or in an interrupt. Under the rotation it walks the core's own threads: a walk of every waiter
 * slot took 2,000-2,300 cycles, most of a donation's delay. */
static unsigned int core_laggards(uint32_t waiting, bool released_too,
				  const struct subutai_waiter *donor, bool raise)
{
	unsigned int found = 0;
#ifdef CONFIG_SUBUTAI_SCHED_ROTATION
	struct subutai_sched_thread *thread;

	SYS_DLIST_FOR_EACH_CONTAINER(&rotation, thread, rotation)
	{
		struct subutai_waiter *waiter = &thread->waiter;
#else
	for (unsigned int id = 0; id < CONFIG_SUBUTAI_THREADS_MAX; id++) {
		struct subutai_waiter *waiter = subutai_waiter_local(id);

		if (waiter == NULL) {
			continue;
		}
#endif
		found += raise ? raise_laggard(waiter, waiting, released_too, donor)
			       : may_raise(waiter, waiting, released_too);
	}
	return found;
}

static unsigned int run_laggards(uint32_t waiting, bool released_too,
				 const struct subutai_waiter *donor)
{
	return core_laggards(waiting, released_too, donor, true);
}

bool subutai_ni_barrier_laggard_here_hook(const struct subutai_waiter *waiter)
{
	uint32_t waiting = subutai_baps[waiter->id];
	unsigned int key = irq_lock();
	bool here = core_laggards(waiting, true, NULL, false) != 0;

	irq_unlock(key);
	return here;
}

static void on_laggards(const struct subutai_ni_msg *msg)
{
	/* The interrupt's exit switches to a raised laggard. */
	unsigned int raised = run_laggards(msg->payload[0], false, NULL);

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
	bool asked = false; /* for a laggard to run here */
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
		if (!asked) {
			/* Seed 002, Algorithm 3: the waiter's core runs the laggard. */
			uint32_t payload[3] = {rt_core(), id, waiting};

			if (subutai_ni_send(core, SUBUTAI_NI_NORMAL, RT_MSG_STEAL, payload, 3) !=
			    0) {
				rt_fatal("cannot ask for a laggard");
			}
			asked = true;
			sent |= BIT64(core);
			messages++;
		} else if (!(sent & BIT64(core))) {
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

/* A laggard of this core another core's barrier waiter asked for: sent there to run for the rest
 * of the waiter's slot if it can move, else raised here (running, holding a mutex, or waiting).
 * Interrupts locked or in an interrupt. */
static bool give_laggard(unsigned int id, unsigned int to, uint32_t waiting)
{
	struct subutai_waiter *waiter = subutai_waiter_local(id);

	if (waiter == NULL || !lags(subutai_baps[id], waiting, false)) {
		return false; /* it arrived, or it is not here */
	}
	if (subutai_thread_move(waiter, to, SUBUTAI_MOVE_DONATED)) {
		return true;
	}
	unsigned int raised = run_laggards(waiting, false, NULL);

	ARG_UNUSED(raised);
	count_add(donated_remote, raised);
	return false;
}

/* Tells the cores of the waiter's barrier's preempted laggards, and counts the messages. */
static void notify(struct subutai_waiter *waiter)
{
	unsigned int messages = notify_laggards(subutai_baps[waiter->id]);
	unsigned int irq = irq_lock();

	ARG_UNUSED(messages);
	count_add(laggard_messages, messages);
	irq_unlock(irq);
}

void subutai_ni_barrier_notify_hook(struct subutai_waiter *waiter)
{
	notify(waiter);
}

void subutai_ni_barrier_sleeping_hook(struct subutai_waiter *waiter)
{
	uint32_t waiting = subutai_baps[waiter->id];

	/* Donate: while the barrier has not opened, run this core's laggards, then look again. */
	while (k_sem_count_get(&waiter->sem) == 0) {
		unsigned int irq = irq_lock();
		unsigned int raised = run_laggards(waiting, true, waiter);

		count_add(donated_local, raised);
		irq_unlock(irq);
		if (raised == 0) {
			break;
		}
		k_yield();
	}
	if (k_sem_count_get(&waiter->sem) == 0) {
		notify(waiter);
	}
}
#endif

#if TS_US > 0
static void timeslot_end(struct k_timer *timer);
static K_TIMER_DEFINE(timeslot, timeslot_end, NULL);

#ifdef CONFIG_SUBUTAI_SCHED_ROTATION
#define TIMER_NODE DT_NODELABEL(timer0)

/*
 * Moves this kernel's ticks onto the multiples of a tick on the global cycle counter (the LiteX
 * timer's uptime): the timer counts down from its load once enabled, so the first tick comes at
 * the next multiple (a few cycles late, the same on every core) and the others every tick after.
 * Zephyr's LiteX driver starts its ticks when the kernel boots, at an unrelated time on each core.
 */
static void align_ticks(void)
{
	const uint32_t per_tick = k_ticks_to_cyc_floor32(1);
	unsigned int key = irq_lock();

	litex_write8(0, DT_REG_ADDR_BY_NAME(TIMER_NODE, en));
	litex_write32(per_tick - (uint32_t)(subutai_cycles() % per_tick),
		      DT_REG_ADDR_BY_NAME(TIMER_NODE, load));
	litex_write8(1, DT_REG_ADDR_BY_NAME(TIMER_NODE, en));
	irq_unlock(key);
}

/* The tick of the next multiple of TS on the global counter, as an absolute timeout: ticks
 * come at the multiples of a tick (align_ticks()), the kernel's count naming the last one. */
static k_timeout_t next_slot(void)
{
	const uint32_t per_tick = k_ticks_to_cyc_floor32(1);
	int64_t tick;
	uint64_t now;

	do {
		tick = sys_clock_tick_get();
		now = subutai_cycles();
	} while (sys_clock_tick_get() != tick);
	uint64_t last = now / per_tick * per_tick;
	uint64_t next = (now / TS_CYCLES + 1) * TS_CYCLES;

	return K_TIMEOUT_ABS_TICKS(tick + (int64_t)((next - last) / per_tick));
}

/* Starts the slots; a slot's end that finds itself off a multiple of TS (by whole ticks: the
 * count read at the start lagged a tick not yet announced) starts them again. */
static void start_slots(void)
{
	k_timer_start(&timeslot, next_slot(), K_USEC(TS_US));
}

static void keep_aligned(void)
{
	uint64_t off = subutai_cycles() % TS_CYCLES;
	const uint32_t slack = k_ticks_to_cyc_floor32(1) / 2;

	if (off > slack && off < TS_CYCLES - slack) {
		start_slots();
	}
}
#endif

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
	if (waiter == NULL || prio < PRIO_CS || prio > PRIO_LAST) {
		waiter = NULL; /* idle, or a kernel thread: not an application's */
	}
	log_slot(waiter);
#ifdef CONFIG_SUBUTAI_SCHED_TRACK_CS
	if (waiter != NULL) {
		enum request_kind kind = classify(&SCHED(waiter)->cs);

		count(kind);
		if (kind == REQUEST_CS_CSA) {
			waiter = NULL; /* CSA: it keeps the core */
		} else {
			SCHED(waiter)->cs.boosted = false;
#ifdef CONFIG_SUBUTAI_BARRIER_WAIT_TIDON
			if (!SCHED(waiter)->cs.donated) {
				/* Its donated time ended with a block: its own slot ends. */
				SCHED(waiter)->cs.donor = 0;
			}
			SCHED(waiter)->cs.donated = false;
#endif
		}
	}
#endif
#ifdef CONFIG_SUBUTAI_SCHED_MIGRATION
	/* A laggard ran its donated time here: home once the service thread has preempted it. */
	if (waiter != NULL && subutai_thread_away(waiter)) {
		subutai_thread_send_home_later(waiter);
	}
#endif
#ifdef CONFIG_SUBUTAI_SCHED_ROTATION
	keep_aligned();
	rotate(slot_owner(waiter));
#else
	if (waiter != NULL) {
		k_thread_priority_set(running, PRIO);
	}
#endif
}
#endif

static int subutai_sched_init(void)
{
#ifdef CONFIG_SUBUTAI_SCHED_STATS
	if (subutai_num_tiles() > SCHED_CORES_MAX) {
		rt_fatal("more cores than the scheduler's counts hold");
	}
#endif
#if defined(CONFIG_SUBUTAI_BARRIER_WAIT_TIDON) || defined(CONFIG_SUBUTAI_SCHED_MIGRATION)
	if (subutai_num_tiles() > SUBUTAI_CORES_MAX) {
		rt_fatal("more cores than the shared runnable counts hold");
	}
#endif
#if TS_US > 0 && defined(CONFIG_SUBUTAI_SCHED_ROTATION)
	align_ticks();
	start_slots();
#elif TS_US > 0
	k_timer_start(&timeslot, K_USEC(TS_US), K_USEC(TS_US));
#endif
#ifdef CONFIG_SUBUTAI_BARRIER_WAIT_TIDON
	subutai_ni_add_handler(RT_MSG_LAGGARDS, on_laggards);
#endif
#ifdef CONFIG_SUBUTAI_SCHED_MIGRATION
	subutai_ni_add_handler(RT_MSG_STEAL, on_steal);
#endif
#ifdef CONFIG_SUBUTAI_SCHED_STEAL
	subutai_ni_add_handler(RT_MSG_NONE, on_none);
#endif
	return 0;
}

SYS_INIT(subutai_sched_init, APPLICATION, 91);
