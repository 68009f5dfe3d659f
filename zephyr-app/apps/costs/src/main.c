/*
 * costs under Zephyr: what the paths of a blocking PThreads call cost on one kernel, in cycles of
 * the global counter (the smallest of REPEAT tries, less the counter read), as firmware/apps/costs
 * does bare-metal. A sleeping wait pays an interrupt (its wake-up is a reply or a NoC message), a
 * semaphore give, the scheduler and a context switch, with the kernel's code fetched from shared
 * main RAM; these are those pieces, each alone:
 *
 *   interrupt entry            a NoC message to the own tile, from the send to its handler
 *   interrupt exit             from the handler to the interrupted thread going on
 *   k_sem give/take            no waiter / available: the semaphore alone
 *   k_yield, nothing to run    the scheduler alone
 *   context switch             k_yield to another thread of the core and back, per switch
 *   hand-off                   a give to a thread waiting on the core, then block: until it runs
 *   ... cold                   the same after fence.i: the kernel code's instruction-cache misses
 *   32 stores                  to the thread's stack (shared heap, main RAM, through the
 *                              write-through data cache) and to the tile's private RAM: what
 *                              saving a context costs where it is saved
 *   dcache invalidate          what an acquire adds
 *   pthread lock+unlock        the library's uncontended pair (the port's CSRs under subutai)
 *
 * Prints one "@subutai" line per item ({"program":"costs","os":"zephyr","what":...,"min":N}).
 */
#include <pthread.h>
#include <stdio.h>

#include <zephyr/kernel.h>

#include <subutai/ni.h>
#include <subutai/soc.h>
#include <subutai/zephyr.h>

#define REPEAT    16
/* A NoC message type of this program (the PThreads library's are 0xf0 and above). */
#define MSG_PROBE 0x10

static uint32_t overhead;

static void report(const char *what, uint32_t cycles)
{
	printf("@subutai "
	       "{\"program\":\"costs\",\"os\":\"zephyr\",\"backend\":\"%s\",\"what\":\"%s\","
	       "\"min\":%u}\n",
	       pthread_backend_np, what, (unsigned int)cycles);
}

#define MEASURE(what, stmt)                                                                        \
	do {                                                                                       \
		uint32_t best = UINT32_MAX;                                                        \
		for (int i = 0; i < REPEAT; i++) {                                                 \
			uint32_t t0 = subutai_cycles32();                                          \
			stmt;                                                                      \
			uint32_t dt = subutai_cycles32() - t0;                                     \
			best = dt < best ? dt : best;                                              \
		}                                                                                  \
		report(what, best - overhead);                                                     \
	} while (0)

/* Interrupt entry and exit: the handler stamps the cycle it runs at. */
static volatile uint32_t probe_at;
static volatile bool probe_seen;

static void on_probe(const struct subutai_ni_msg *msg)
{
	ARG_UNUSED(msg);
	probe_at = subutai_cycles32();
	probe_seen = true;
}

static void measure_interrupt(void)
{
	uint32_t entry = UINT32_MAX, leave = UINT32_MAX;

	subutai_ni_add_handler(MSG_PROBE, on_probe);
	for (int i = 0; i < REPEAT; i++) {
		uint32_t payload = i;

		probe_seen = false;
		uint32_t t0 = subutai_cycles32();

		subutai_ni_send(subutai_tile_id(), SUBUTAI_NI_NORMAL, MSG_PROBE, &payload, 1);
		while (!probe_seen) {
		}
		uint32_t t1 = subutai_cycles32();

		entry = MIN(entry, probe_at - t0);
		leave = MIN(leave, t1 - probe_at);
	}
	report("interrupt entry (own NoC message, send to handler)", entry - overhead);
	report("interrupt exit (handler to the thread going on)", leave - overhead);
}

/* A second thread on this core: yields back, or waits on sem_go and gives sem_back. */
static struct k_sem sem_go, sem_back, sem_alone;
static volatile bool partner_stop;
static volatile uint32_t partner_woke_at;
static volatile enum {
	PARTNER_YIELD,
	PARTNER_HANDOFF
} partner_mode;

static void *partner(void *arg)
{
	ARG_UNUSED(arg);
	while (!partner_stop) {
		if (partner_mode == PARTNER_YIELD) {
			k_yield();
		} else {
			k_sem_take(&sem_go, K_FOREVER);
			partner_woke_at = subutai_cycles32();
			k_sem_give(&sem_back);
		}
	}
	return NULL;
}

/* A give to the waiting partner, this thread blocking until it answers: give to the partner's
 * first instruction after its take. */
static uint32_t handoff(bool cold)
{
	uint32_t best = UINT32_MAX;

	for (int i = 0; i < REPEAT; i++) {
		if (cold) {
			__asm__ volatile("fence.i" ::: "memory");
		}
		uint32_t t0 = subutai_cycles32();

		k_sem_give(&sem_go);
		k_sem_take(&sem_back, K_FOREVER);
		best = MIN(best, partner_woke_at - t0);
	}
	return best - overhead;
}

static uint32_t yield_round(bool cold)
{
	uint32_t best = UINT32_MAX;

	for (int i = 0; i < REPEAT; i++) {
		if (cold) {
			__asm__ volatile("fence.i" ::: "memory");
		}
		uint32_t t0 = subutai_cycles32();

		k_yield();
		best = MIN(best, subutai_cycles32() - t0);
	}
	return best - overhead;
}

static void measure_kernel(void)
{
	pthread_attr_t attr;
	pthread_t t;

	k_sem_init(&sem_go, 0, 1);
	k_sem_init(&sem_back, 0, 1);
	k_sem_init(&sem_alone, 0, K_SEM_MAX_LIMIT);
	MEASURE("k_sem_give, no waiter", k_sem_give(&sem_alone));
	MEASURE("k_sem_take, available", k_sem_take(&sem_alone, K_NO_WAIT));
	MEASURE("k_yield, nothing else to run", k_yield());

	partner_mode = PARTNER_YIELD;
	pthread_attr_init(&attr);
	pthread_attr_setcore_np(&attr, (int)pthread_core_np());
	if (pthread_create(&t, &attr, partner, NULL) != 0) {
		printf("costs: cannot create a thread on core %u\n", pthread_core_np());
		subutai_exit(1);
	}
	pthread_attr_destroy(&attr);
	report("context switch (k_yield to another thread and back, half)", yield_round(false) / 2);
	report("context switch, kernel code not cached (half)", yield_round(true) / 2);
	/* The partner goes to its semaphore: it takes sem_go from now on. */
	partner_mode = PARTNER_HANDOFF;
	k_yield();
	report("hand-off: give to a waiting thread, block, until it runs", handoff(false));
	report("hand-off, kernel code not cached", handoff(true));
	partner_stop = true;
	k_sem_give(&sem_go);
	pthread_join(t, NULL);
}

#define STORES 32
static volatile uint32_t tile_words[STORES] __tile_bss;

static void measure_stores(void)
{
	volatile uint32_t stack_words[STORES];

	MEASURE(
		"32 stores to the thread's stack (main RAM)",
		for (int k = 0; k < STORES; k++) { stack_words[k] = k; });
	MEASURE(
		"32 stores to the tile's RAM",
		for (int k = 0; k < STORES; k++) { tile_words[k] = k; });
}

int main(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	uint32_t best = UINT32_MAX;

	for (int i = 0; i < REPEAT; i++) {
		uint32_t t0 = subutai_cycles32();

		best = MIN(best, subutai_cycles32() - t0);
	}
	overhead = best;
	report("cycle counter read", overhead);
	measure_interrupt();
	measure_kernel();
	measure_stores();
	MEASURE("dcache invalidate", subutai_dcache_invalidate());
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	MEASURE("pthread lock+unlock, uncontended", pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m));
	best = UINT32_MAX;
	for (int i = 0; i < REPEAT; i++) {
		pthread_mutex_lock(&m);
		uint32_t t0 = subutai_cycles32();

		pthread_mutex_unlock(&m);
		best = MIN(best, subutai_cycles32() - t0);
	}
	report("pthread unlock", best - overhead);
	return 0;
}
