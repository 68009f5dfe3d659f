/*
 * prodcons: one producer, many consumers, using a mutex, a condition variable and a barrier
 * (TPDS'21 §VIII-E, Table XI). Measures the application-visible cycles of each primitive.
 *
 * One thread per core: the producer is the main thread, the consumers the others. Each round:
 *
 *   1. lock (free), unlock: the producer locks and unlocks free mutexes, one allocated on each
 *      tile, while the consumers already wait in the barrier;
 *   2. barrier wait (released): from the last arrival (the producer) to each thread's return;
 *   3. cond broadcast, cond wait (queued): every consumer waits for items; the producer
 *      broadcasts with the mutex held, then unlocks. A woken consumer returns with the mutex
 *      held: its latency runs from the release of the mutex by its predecessor (the producer's
 *      unlock for the first one, then each consumer's unlock) to its return;
 *   4. lock (queued): the producer holds the mutex while the consumers queue on it; each grant is
 *      measured from the unlock by the previous owner to the return of the lock call. Samples of
 *      consumers not yet queued at that unlock are dropped.
 *
 * Times come from the global cycle counter, the same on every core, less the cost of reading it.
 * The first WARMUP rounds fill the caches and are not recorded. The timed code and this program's
 * data sit at fixed places in the direct-mapped caches (subutai/timed.h), so that code elsewhere
 * does not move the figures. Results are printed as "@subutai {json}" lines, with min, median, 90th
 * percentile, max and mean per case; the rest of the output does not depend on the backend.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include <subutai/soc.h>

#ifndef PRODCONS_ROUNDS
#define PRODCONS_ROUNDS 16
#endif
#define ROUNDS PRODCONS_ROUNDS
#ifndef PRODCONS_WARMUP
#define PRODCONS_WARMUP 2
#endif
#define WARMUP PRODCONS_WARMUP
#ifdef PRODCONS_DEBUG
#define DBG(...) printf(__VA_ARGS__)
#else
#define DBG(...)
#endif
#define MAX_THREADS N_TILES

static unsigned int n_threads SUBUTAI_TIMED_DATA, n_consumers SUBUTAI_TIMED_DATA;
static uint32_t stamp_cost SUBUTAI_TIMED_DATA;

static pthread_mutex_t free_mutex[MAX_THREADS] SUBUTAI_TIMED_DATA;
static pthread_mutex_t mutex SUBUTAI_TIMED_DATA;
static pthread_cond_t items_ready SUBUTAI_TIMED_DATA;
static pthread_cond_t consumers_waiting SUBUTAI_TIMED_DATA;
static pthread_barrier_t barrier SUBUTAI_TIMED_DATA;

/* Shared state, under mutex. */
static unsigned int waiting SUBUTAI_TIMED_DATA;
static unsigned int items[MAX_THREADS] SUBUTAI_TIMED_DATA;
static unsigned int n_items SUBUTAI_TIMED_DATA;
static unsigned int round_no SUBUTAI_TIMED_DATA;
static unsigned int checksum[MAX_THREADS] SUBUTAI_TIMED_DATA;

/* Per-round stamps, each written by its own thread, read by the producer after the round's last
 * barrier. Two sets: a consumer already stamps its next round's barrier arrival meanwhile.
 */
struct stamps {
	uint32_t barrier_enter, barrier_exit;
	uint32_t woke, woke_unlock;
	uint32_t lock_start, lock_got, lock_unlock;
};
static struct stamps stamps[2][MAX_THREADS] SUBUTAI_TIMED_DATA;
#define st (stamps[round_parity])
static unsigned int round_parity __tile_bss;

static inline uint32_t now(void)
{
	return subutai_cycles32();
}

/* Samples of one case (zero-initialised: timed data). */
#define MAX_SAMPLES (ROUNDS * MAX_THREADS * 2)
struct samples {
	unsigned int n, dropped;
	uint32_t v[MAX_SAMPLES];
};

enum {
	LOCK_FREE,
	UNLOCK,
	LOCK_QUEUED,
	UNLOCK_QUEUED,
	BARRIER_RELEASED,
	BARRIER_LAST,
	COND_BROADCAST,
	COND_QUEUED,
	N_CASES
};
static const char *const case_names[N_CASES][2] = {
	[LOCK_FREE] = {"mutex", "lock_free"},
	[UNLOCK] = {"mutex", "unlock"},
	[LOCK_QUEUED] = {"mutex", "lock_queued"},
	[UNLOCK_QUEUED] = {"mutex", "unlock_queued"},
	[BARRIER_RELEASED] = {"barrier", "wait_released"},
	[BARRIER_LAST] = {"barrier", "wait_last"},
	[COND_BROADCAST] = {"cond", "broadcast"},
	[COND_QUEUED] = {"cond", "wait_queued"},
};
static struct samples samples[N_CASES] SUBUTAI_TIMED_DATA;
#define lock_free        samples[LOCK_FREE]
#define unlock           samples[UNLOCK]
#define lock_queued      samples[LOCK_QUEUED]
#define unlock_queued    samples[UNLOCK_QUEUED]
#define barrier_released samples[BARRIER_RELEASED]
#define barrier_last     samples[BARRIER_LAST]
#define cond_broadcast   samples[COND_BROADCAST]
#define cond_queued      samples[COND_QUEUED]

/* Round being timed: warm-up rounds record nothing. */
static bool recording SUBUTAI_TIMED_DATA;

SUBUTAI_SYNC_PATH static void add(struct samples *s, uint32_t cycles)
{
	if (recording && s->n < MAX_SAMPLES) {
		s->v[s->n++] = cycles > stamp_cost ? cycles - stamp_cost : 0;
	}
}

/* Layout probes of the build (firmware/port/baremetal/linker.ld, firmware/Makefile), reported with
 * the results: the shift of all but the timed code, and the perturbation of the library's link. */
extern char __layout_pad[] __attribute__((weak));     /* absent under Zephyr: 0 */
extern char __layout_variant[] __attribute__((weak)); /* absent under Zephyr: 0 */

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void print_samples(unsigned int c, const char *impl)
{
	struct samples *s = &samples[c];

	if (s->n == 0) {
		return;
	}
	qsort(s->v, s->n, sizeof(s->v[0]), cmp_u32);
	uint64_t sum = 0;

	for (unsigned int i = 0; i < s->n; i++) {
		sum += s->v[i];
	}
	uint32_t median = s->n % 2
				  ? s->v[s->n / 2]
				  : (uint32_t)(((uint64_t)s->v[s->n / 2 - 1] + s->v[s->n / 2]) / 2);
	unsigned int mean10 = (unsigned int)(sum * 10 / s->n);
	/* 90th percentile, nearest rank: the smallest sample with at least 90 % at or below it. */
	uint32_t p90 = s->v[(s->n * 9 + 9) / 10 - 1];

	printf("@subutai {\"program\":\"prodcons\",\"backend\":\"%s\",\"impl\":\"%s\",\"tiles\":%u,"
	       "\"layout_pad\":%u,\"layout_variant\":%u,\"primitive\":\"%s\",\"case\":\"%s\","
	       "\"count\":%u,\"dropped\":%u,"
	       "\"min\":%lu,\"median\":%lu,\"p90\":%lu,\"max\":%lu,\"mean\":%u.%u}\n",
	       pthread_backend_np, impl, n_threads, (unsigned int)(uintptr_t)__layout_pad,
	       (unsigned int)(uintptr_t)__layout_variant, case_names[c][0], case_names[c][1], s->n,
	       s->dropped, (unsigned long)s->v[0], (unsigned long)median, (unsigned long)p90,
	       (unsigned long)s->v[s->n - 1], mean10 / 10, mean10 % 10);
}

static void check(int err, const char *what)
{
	if (err != 0) {
		printf("prodcons: %s failed: %d\n", what, err);
		exit(1);
	}
}

SUBUTAI_SYNC_PATH static void barrier_phase(unsigned int me)
{
	st[me].barrier_enter = now();
	int ret = pthread_barrier_wait(&barrier);

	st[me].barrier_exit = now();
	if (ret != 0 && ret != PTHREAD_BARRIER_SERIAL_THREAD) {
		check(ret, "pthread_barrier_wait");
	}
}

SUBUTAI_SYNC_PATH static void *consumer(void *arg)
{
	unsigned int me = (uintptr_t)arg;

	for (unsigned int r = 0; r < WARMUP + ROUNDS; r++) {
		round_parity = r % 2;
		/* 1-2: the producer measures free locks while we wait here. */
		barrier_phase(me);

		/* 3: wait for items. */
		pthread_mutex_lock(&mutex);
		if (++waiting == n_consumers) {
			pthread_cond_signal(&consumers_waiting);
		}
		while (round_no != r + 1) {
			pthread_cond_wait(&items_ready, &mutex);
		}
		st[me].woke = now();
		checksum[me] += items[--n_items];
		st[me].woke_unlock = now();
		pthread_mutex_unlock(&mutex);

		/* 4: queue on the mutex the producer holds (it takes it once phase 3 is over for
		 * all: a software mutex lets a new locker overtake sleeping ones).
		 */
		pthread_barrier_wait(&barrier);
		pthread_barrier_wait(&barrier);
		st[me].lock_start = now();
		pthread_mutex_lock(&mutex);
		st[me].lock_got = now();
		st[me].lock_unlock = now();
		pthread_mutex_unlock(&mutex);
		pthread_barrier_wait(&barrier);
	}
	return NULL;
}

/* Release order: the thread i granted next after a release at `after` (the earliest grant). */
SUBUTAI_SYNC_PATH static int next_grant(const uint32_t *got, bool *taken, uint32_t after)
{
	int best = -1;

	for (unsigned int i = 1; i < n_threads; i++) {
		if (!taken[i] && (int32_t)(got[i] - after) >= 0 &&
		    (best < 0 || (int32_t)(got[i] - got[best]) < 0)) {
			best = i;
		}
	}
	if (best >= 0) {
		taken[best] = true;
	}
	return best;
}

/* Chain of grants: each from the previous owner's unlock. */
SUBUTAI_SYNC_PATH static void chain(struct samples *s, uint32_t first_release,
				    const uint32_t *start, const uint32_t *got,
				    const uint32_t *release)
{
	bool taken[MAX_THREADS] = {false};
	uint32_t prev = first_release;

	for (unsigned int k = 1; k < n_threads; k++) {
		int i = next_grant(got, taken, prev);

		if (i < 0) {
			break;
		}
		if (start == NULL || (int32_t)(start[i] - prev) < 0) {
			add(s, got[i] - prev);
		} else {
			s->dropped++;
		}
		prev = release[i];
	}
}

/* Not inlined into main: it is timed code, main is not. */
SUBUTAI_SYNC_PATH __attribute__((noinline)) static void producer_round(unsigned int r)
{
	uint32_t t0, t1, t2, last_enter = 0;
	uint32_t start[MAX_THREADS] = {0}, got[MAX_THREADS] = {0}, release[MAX_THREADS] = {0};

	/* 1: free locks, on every host (consumers are waiting in the barrier). */
	for (unsigned int i = 0; i < n_threads; i++) {
		t0 = now();
		pthread_mutex_lock(&free_mutex[i]);
		t1 = now();
		pthread_mutex_unlock(&free_mutex[i]);
		t2 = now();
		add(&lock_free, t1 - t0);
		add(&unlock, t2 - t1);
	}

	DBG("p1 %u\n", r);
	/* 2: the producer arrives last. */
	barrier_phase(0);
	DBG("p2 %u\n", r);
	/* 3: items for every consumer, once all of them wait. */
	pthread_mutex_lock(&mutex);
	while (waiting < n_consumers) {
		pthread_cond_wait(&consumers_waiting, &mutex);
	}
	waiting = 0;
	for (unsigned int i = 0; i < n_consumers; i++) {
		items[n_items++] = r * n_consumers + i + 1;
	}
	round_no = r + 1;
	t0 = now();
	pthread_cond_broadcast(&items_ready);
	t1 = now();
	add(&cond_broadcast, t1 - t0);
	t2 = now();
	pthread_mutex_unlock(&mutex);

	DBG("p3 %u\n", r);
	/* 4: hold the mutex while the consumers queue on it. */
	pthread_barrier_wait(&barrier);
	pthread_mutex_lock(&mutex);
	pthread_barrier_wait(&barrier);
	for (t0 = now(); now() - t0 < 1000 + 400 * n_consumers;) {
	}
	t0 = now();
	pthread_mutex_unlock(&mutex);
	t1 = now();
	add(&unlock_queued, t1 - t0);
	pthread_barrier_wait(&barrier);

	DBG("p4 %u\n", r);
	/* Everyone's stamps of this round are in memory (the barrier invalidated our cache). */
	for (unsigned int i = 0; i < n_threads; i++) {
		if (i == 0 || (int32_t)(st[i].barrier_enter - last_enter) > 0) {
			last_enter = st[i].barrier_enter;
		}
	}
	for (unsigned int i = 0; i < n_threads; i++) {
		if (st[i].barrier_enter == last_enter) {
			add(&barrier_last, st[i].barrier_exit - st[i].barrier_enter);
		} else {
			add(&barrier_released, st[i].barrier_exit - last_enter);
		}
	}
	for (unsigned int i = 1; i < n_threads; i++) {
		got[i] = st[i].woke;
		release[i] = st[i].woke_unlock;
	}
	chain(&cond_queued, t2, NULL, got, release);
	for (unsigned int i = 1; i < n_threads; i++) {
		start[i] = st[i].lock_start;
		got[i] = st[i].lock_got;
		release[i] = st[i].lock_unlock;
	}
	chain(&lock_queued, t0, start, got, release);
}

/* The producer's rounds (timed code: main is not). */
SUBUTAI_SYNC_PATH __attribute__((noinline)) static void producer(void)
{
	for (unsigned int r = 0; r < WARMUP + ROUNDS; r++) {
		round_parity = r % 2;
		recording = r >= WARMUP;
		producer_round(r);
	}
}

int main(void)
{
	pthread_t t[MAX_THREADS];
	uint32_t begin = now();

	n_threads = subutai_num_tiles();
	n_consumers = n_threads - 1;
	if (n_consumers == 0) {
		printf("prodcons: needs at least 2 tiles\n");
		return 1;
	}
	/* Cost of reading the counter, taken off every duration. */
	stamp_cost = UINT32_MAX;
	for (unsigned int i = 0; i < 8; i++) {
		uint32_t a = now(), b = now();

		if (b - a < stamp_cost) {
			stamp_cost = b - a;
		}
	}
	for (unsigned int i = 0; i < n_threads; i++) {
		check(pthread_mutex_init(&free_mutex[i], NULL), "pthread_mutex_init");
	}
	check(pthread_mutex_init(&mutex, NULL), "pthread_mutex_init");
	check(pthread_cond_init(&items_ready, NULL), "pthread_cond_init");
	check(pthread_cond_init(&consumers_waiting, NULL), "pthread_cond_init");
	check(pthread_barrier_init(&barrier, NULL, n_threads), "pthread_barrier_init");
	printf("prodcons: 1 producer, %u consumers, %u rounds after %u warm-up rounds\n",
	       n_consumers, (unsigned int)ROUNDS, (unsigned int)WARMUP);

	for (unsigned int i = 1; i < n_threads; i++) {
		check(pthread_create(&t[i], NULL, consumer, (void *)(uintptr_t)i),
		      "pthread_create");
	}
	producer();
	for (unsigned int i = 1; i < n_threads; i++) {
		check(pthread_join(t[i], NULL), "pthread_join");
	}
	uint32_t end = now();

	unsigned long sum = 0, expected = 0;

	for (unsigned int i = 1; i < n_threads; i++) {
		sum += checksum[i];
	}
	for (unsigned int i = 1; i <= (WARMUP + ROUNDS) * n_consumers; i++) {
		expected += i;
	}
	bool ok = n_items == 0 && sum == expected;

	printf("prodcons: %u items consumed, checksum %lu (%s)\n", (WARMUP + ROUNDS) * n_consumers,
	       sum, ok ? "ok" : "WRONG");

	const char *mutex_impl = pthread_mutex_impl_np(&mutex);

	print_samples(LOCK_FREE, pthread_mutex_impl_np(&free_mutex[0]));
	print_samples(UNLOCK, pthread_mutex_impl_np(&free_mutex[0]));
	print_samples(LOCK_QUEUED, mutex_impl);
	print_samples(UNLOCK_QUEUED, mutex_impl);
	print_samples(BARRIER_RELEASED, pthread_barrier_impl_np(&barrier));
	print_samples(BARRIER_LAST, pthread_barrier_impl_np(&barrier));
	print_samples(COND_BROADCAST, pthread_cond_impl_np(&items_ready));
	print_samples(COND_QUEUED, pthread_cond_impl_np(&items_ready));
	printf("@subutai "
	       "{\"program\":\"prodcons\",\"backend\":\"%s\",\"tiles\":%u,\"event\":\"run\","
	       "\"layout_pad\":%u,\"layout_variant\":%u,\"cycles\":%lu,\"rounds\":%u,"
	       "\"warmup\":%u}\n",
	       pthread_backend_np, n_threads, (unsigned int)(uintptr_t)__layout_pad,
	       (unsigned int)(uintptr_t)__layout_variant, (unsigned long)(end - begin),
	       (unsigned int)ROUNDS, (unsigned int)WARMUP);
	return ok ? 0 : 1;
}
