/*
 * streamcluster: online k-median clustering of a stream of points.
 *
 * A scaled-down version of PARSEC streamcluster (pthreads version). A stream of DIM-dimensional
 * weighted points, generated around a few hidden cluster centres, is read in chunks (sizes per
 * input class in input_params). Each chunk is clustered by the parallel k-median local search
 * of PARSEC (pkmedian):
 *
 *   - hiz: the cost of serving every point from point 0 (partial sums per thread, one barrier);
 *     it sets the facility cost z, the price of opening a centre;
 *   - pspeedy(z): point 0 is the first centre; thread 0 walks the points in order and opens
 *     point i as a centre with probability cost(i) / z (its own sequential random generator);
 *     each opening is announced to the other threads with the mutex and a condition broadcast,
 *     every thread re-assigns its share of points to the new centre if it is closer, and all
 *     meet at the barrier before thread 0 looks at the next point. It is retried, with z
 *     halved, until at least kmin centres are open;
 *   - pFL: a series of pgain(x) calls for candidate points x drawn by thread 0; pgain costs
 *     4 barrier phases: (1) every thread computes, for its points, what switching to x would
 *     save and how much each current centre would lose if it were closed in favour of x (its
 *     "lower" field, one row per thread); (2) every thread sums the rows of its share of the
 *     centres; (3) thread 0 sums the partial gains and decides whether opening x (and closing
 *     the centres that should close) lowers the total cost; (4) if so, every thread moves its
 *     points. Between series, z is moved by binary search until kmin <= centres <= kmax.
 *
 * The centres of each chunk, each weighted with the weight of its points, are kept in a centre
 * set; at the end of the stream the centre set itself is clustered by the same parallel
 * k-median, giving the final centres.
 *
 * Every thread, the main thread included, runs the same function (worker()) on its slice
 * [k1, k2) of the points of the current set; thread 0 is PARSEC's master thread (pid 0).
 *
 * Synchronization (PARSEC Table V: 1 mutex, 1 condition, 1 barrier):
 *   - open_lock + open_cond: pspeedy's "centre opened" events. Thread 0 publishes the index of
 *     the opened point (or the end of the pass) and bumps open_seq under open_lock, then
 *     broadcasts; the other threads wait in a while loop on open_seq, reading the event under
 *     the lock.
 *   - bar (all threads): after pspeedy's first assignment and after each of its openings,
 *     between the 4 phases of every pgain, after every partial sum (hiz, pspeedy cost, centre
 *     weights) and before the centre set, written by thread 0, is clustered.
 *
 * Results do not depend on the thread count: distances and costs are integers (int32 squared
 * distances, int64 weighted costs), sums are integer, every decision is taken by thread 0 from
 * its sequential generator or by all threads from the same integer sums, and the per-point
 * decisions do not depend on which thread makes them.
 *
 * Checksum: per chunk, its cost and number of centres; the final centres (coordinates, weight)
 * and the final cost.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload.h"

#ifdef ENABLE_PARSEC_HOOKS
#include <hooks.h>
#endif

#define DIM       8    /* coordinates of a point */
#define COORD_MAX 1023 /* coordinates are 0..COORD_MAX */
#define N_HIDDEN  8    /* hidden clusters the stream is generated around */
#define SPREAD    40   /* a point lies within +-2*SPREAD of its cluster's centre per coordinate */
#define MAX_W     4    /* stream points weigh 1..MAX_W */
#define MAXC      32   /* most centres open at once in a point set (size of the "lower" rows) */
#define SP        1    /* pspeedy retries at the same z before lowering it (PARSEC's SP) */
#define FL_EPS    10   /* pFL repeats a series while it improved the cost by > 1/FL_EPS */
#define Z_DIV     128  /* the first z is (cost of a single centre) / Z_DIV: see kmedian() */

struct params {
	int chunks; /* chunks in the stream */
	int chunk;  /* points per chunk */
	int kmin;   /* centres wanted per clustering */
	int kmax;
	int iters;  /* pgain calls per pFL series */
	int series; /* most pFL series per value of z */
	int rounds; /* most values of z tried after pspeedy */
};

static const struct params input_params[WL_N_INPUTS] = {
	[WL_INPUT_TEST] = {.chunks = 2,
			   .chunk = 32,
			   .kmin = 6,
			   .kmax = 10,
			   .iters = 3,
			   .series = 1,
			   .rounds = 1},
	[WL_INPUT_SIMSMALL] = {.chunks = 3,
			       .chunk = 192,
			       .kmin = 6,
			       .kmax = 10,
			       .iters = 10,
			       .series = 2,
			       .rounds = 2},
	[WL_INPUT_SIMMEDIUM] = {.chunks = 6,
				.chunk = 256,
				.kmin = 6,
				.kmax = 10,
				.iters = 10,
				.series = 2,
				.rounds = 2},
};

/* The points one k-median clusters: a chunk of the stream or the centre set. */
struct pset {
	int n;
	const int16_t *coord; /* n * DIM */
	const int32_t *weight;
};

static unsigned int nthreads;
static struct params prm;

static pthread_mutex_t open_lock;
static pthread_cond_t open_cond;
static pthread_barrier_t bar;

/* Input and output (written before the threads start, or by thread 0 only). */
static int16_t *stream_coord; /* chunks * chunk * DIM */
static int32_t *stream_weight;
static int16_t *cset_coord; /* the centre set: chunks * MAXC points */
static int32_t *cset_weight;
static int cset_n;           /* written by thread 0 in collect(), read after a barrier */
static int16_t *final_coord; /* the final centres: MAXC points */
static int32_t *final_weight;
static int final_n;
static int64_t *chunk_cost; /* per chunk, then the final clustering */
static int *chunk_k;

/* Per point of the current set: each thread writes only its slice. */
static int64_t *pt_cost;   /* weight * distance to the assigned centre */
static uint8_t *pt_switch; /* pgain: the point is closer to the candidate than to its centre */
static int32_t *pt_assign; /* index of the point's centre */

/* Centre bookkeeping, written by thread 0 only, read by all after a barrier. */
static int32_t *ctr_slot;      /* per point that is a centre: its slot (row of "lower") */
static int32_t slot_ctr[MAXC]; /* per slot: its centre, or -1 when free */
static int nslots;             /* slots in use are below nslots */
static int ncenters;
static uint8_t *is_ctr; /* per point: is it a centre (thread 0's own view) */

/* Per-thread partial results, read by the others after a barrier. */
static int64_t *lower;         /* nthreads rows of MAXC: pgain's losses, then centre weights */
static int64_t gl_lower[MAXC]; /* per slot: saving of closing the centre (> 0: it closes) */
static int64_t *part_cost;     /* hiz and pspeedy partial costs */
static int64_t *part_gain;     /* pgain phase 1: savings of the points that switch to x */
static int64_t *part_gain2;    /* pgain phase 2: savings of the centres that close */
static int32_t *part_close;    /* pgain phase 2: centres that close */

/* pspeedy's events, under open_lock. */
static uint32_t open_seq;
static int32_t open_idx; /* the opened point, or -1: the pass is over */
static int open_k;       /* centres open at the end of the pass */

/* pgain: thread 0's candidate and decision, read by all after a barrier. */
static int32_t cand;
static int gl_open;
static int64_t gl_gain;

/* Thread 0's sequential generator (pspeedy's draws, pgain's candidates). */
static struct wl_rng rng;

static void barrier(void)
{
	int rc = pthread_barrier_wait(&bar);

	WL_CHECK(rc == PTHREAD_BARRIER_SERIAL_THREAD ? 0 : rc);
}

/* Squared distance: at most DIM * COORD_MAX^2 < 2^31. Unrolled, so that a reference point held
 * in a local array stays in registers across a loop over the points.
 */
static inline int32_t dist(const int16_t *a, const int16_t *b)
{
	int32_t d = 0;

#pragma GCC unroll 8
	for (int j = 0; j < DIM; j++) {
		int32_t t = a[j] - b[j];

		d += t * t;
	}
	return d;
}

/* The share [*k1, *k2) of n items of thread pid. */
static inline void slice(int n, int pid, int *k1, int *k2)
{
	*k1 = (int)((int64_t)n * pid / nthreads);
	*k2 = (int)((int64_t)n * (pid + 1) / nthreads);
}

/* Sum of a per-thread array, in thread order. */
static int64_t sum_parts(const int64_t *part)
{
	int64_t s = 0;

	for (unsigned int p = 0; p < nthreads; p++) {
		s += part[p];
	}
	return s;
}

/* pspeedy: the points of the slice closer to the newly opened centre c move to it. */
static void speedy_update(const struct pset *s, int c, int k1, int k2)
{
	int16_t pc[DIM];

	memcpy(pc, &s->coord[c * DIM], sizeof(pc));
	for (int k = k1; k < k2; k++) {
		int64_t d = (int64_t)s->weight[k] * dist(&s->coord[k * DIM], pc);

		if (d < pt_cost[k]) {
			pt_cost[k] = d;
			pt_assign[k] = c;
		}
	}
}

/*
 * Thread 0's draw: open a point of cost c with probability c / z. In integers: open when
 * r * z < c * 2^32 for a uniform 32-bit r, with z and c shifted right by sh so that the product
 * fits in 64 bits.
 */
static int speedy_draw(int64_t c, int64_t z, int sh)
{
	uint32_t r = wl_rng_next(&rng);

	if (c >= z) {
		return 1;
	}
	return (uint64_t)r * (uint64_t)(z >> sh) < ((uint64_t)(c >> sh) << 32);
}

/*
 * PARSEC's pspeedy(): a fast greedy solution for facility cost z. Returns the cost of the
 * solution (z per centre plus the assignment costs); *k is the number of centres.
 */
static int64_t pspeedy(const struct pset *s, int64_t z, int pid, int *k, int32_t *opened,
		       uint32_t *seen)
{
	int k1, k2, kc;

	slice(s->n, pid, &k1, &k2);
	/* Point 0 is the first centre. */
	for (int i = k1; i < k2; i++) {
		pt_cost[i] = (int64_t)s->weight[i] * dist(&s->coord[i * DIM], s->coord);
		pt_assign[i] = 0;
	}
	barrier(); /* thread 0 reads every point's cost */

	if (pid == 0) {
		int sh = 0;

		while ((z >> sh) >= (1 << 30)) {
			sh++;
		}
		kc = 1;
		opened[0] = 0;
		for (int i = 1; i < s->n && kc < MAXC; i++) {
			/* A point at cost 0 sits on a centre: opening it would change nothing. */
			if (pt_cost[i] == 0 || !speedy_draw(pt_cost[i], z, sh)) {
				continue;
			}
			opened[kc++] = i;
			WL_CHECK(pthread_mutex_lock(&open_lock));
			open_idx = i;
			open_seq++;
			WL_CHECK(pthread_mutex_unlock(&open_lock));
			WL_CHECK(pthread_cond_broadcast(&open_cond));
			speedy_update(s, i, k1, k2);
			barrier(); /* every point knows the new centre before the next draw */
		}
		WL_CHECK(pthread_mutex_lock(&open_lock));
		open_idx = -1;
		open_k = kc;
		open_seq++;
		WL_CHECK(pthread_mutex_unlock(&open_lock));
		WL_CHECK(pthread_cond_broadcast(&open_cond));
	} else {
		for (;;) {
			int32_t c;

			/* Thread 0 publishes the next event only after everyone has met at the
			 * barrier that follows the previous one, so each event is seen once.
			 */
			WL_CHECK(pthread_mutex_lock(&open_lock));
			while (open_seq == *seen) {
				WL_CHECK(pthread_cond_wait(&open_cond, &open_lock));
			}
			*seen = open_seq;
			c = open_idx;
			kc = open_k;
			WL_CHECK(pthread_mutex_unlock(&open_lock));
			if (c < 0) {
				break;
			}
			speedy_update(s, c, k1, k2);
			barrier();
		}
	}

	/* Total cost: partial sums, then every thread sums them in thread order. */
	{
		int64_t my = 0;

		for (int i = k1; i < k2; i++) {
			my += pt_cost[i];
		}
		part_cost[pid] = my;
	}
	barrier();
	*k = kc;
	return z * kc + sum_parts(part_cost);
}

/* Thread 0: the centres opened by pspeedy take slots 0..k-1. */
static void setup_slots(const struct pset *s, const int32_t *opened, int k)
{
	memset(is_ctr, 0, (size_t)s->n);
	for (int c = 0; c < MAXC; c++) {
		slot_ctr[c] = c < k ? opened[c] : -1;
	}
	for (int c = 0; c < k; c++) {
		ctr_slot[opened[c]] = c;
		is_ctr[opened[c]] = 1;
	}
	nslots = k;
	ncenters = k;
}

/* Thread 0: the next candidate, a point that is not a centre (a few draws at most). */
static int32_t draw_candidate(const struct pset *s)
{
	int32_t x = 0;

	for (int tries = 0; tries < 8; tries++) {
		x = (int32_t)wl_rng_below(&rng, (uint32_t)s->n);
		if (!is_ctr[x]) {
			break;
		}
	}
	return x;
}

/*
 * PARSEC's pgain(): would opening a centre at the candidate x (closing the centres that would
 * then save cost) lower the total cost for facility cost z? If so, do it. Returns the saving.
 */
static int64_t pgain(const struct pset *s, int64_t z, int pid)
{
	int64_t *my_lower = &lower[(size_t)pid * MAXC];
	int16_t xc[DIM];
	int64_t gain = 0;
	int32_t x, close = 0;
	int k1, k2, s1, s2, ns;

	if (pid == 0) {
		cand = draw_candidate(s);
	}
	barrier(); /* B0: the candidate and the centre slots are published */

	/* Phase 1: per point, the saving of switching to x, or else the loss its centre would
	 * suffer if it were closed and its points moved to x.
	 */
	x = cand;
	ns = nslots;
	memcpy(xc, &s->coord[x * DIM], sizeof(xc));
	memset(my_lower, 0, (size_t)ns * sizeof(*my_lower));
	slice(s->n, pid, &k1, &k2);
	for (int i = k1; i < k2; i++) {
		int64_t xcost = (int64_t)s->weight[i] * dist(&s->coord[i * DIM], xc);
		int64_t cur = pt_cost[i];

		/* One byte, not the cost: every store goes through to the shared RAM. */
		pt_switch[i] = xcost < cur;
		if (xcost < cur) {
			gain += xcost - cur;
		} else {
			my_lower[ctr_slot[pt_assign[i]]] += cur - xcost;
		}
	}
	part_gain[pid] = gain;
	barrier(); /* B1: every thread's "lower" row is complete */

	/* Phase 2: for this thread's share of the slots, the saving of closing the centre. */
	gain = 0;
	slice(ns, pid, &s1, &s2);
	for (int c = s1; c < s2; c++) {
		int64_t low = z;

		if (slot_ctr[c] < 0) {
			continue;
		}
		for (unsigned int p = 0; p < nthreads; p++) {
			low += lower[(size_t)p * MAXC + c];
		}
		gl_lower[c] = low;
		if (low > 0) {
			close++;
			gain -= low;
		}
	}
	part_gain2[pid] = gain;
	part_close[pid] = close;
	barrier(); /* B2: partial gains and closing decisions are complete */

	/* Phase 3: thread 0 sums them and decides. */
	if (pid == 0) {
		int64_t cost_x = z + sum_parts(part_gain) + sum_parts(part_gain2);
		int nclose = 0;

		for (unsigned int p = 0; p < nthreads; p++) {
			nclose += part_close[p];
		}
		/* A centre that is already open is no candidate; MAXC bounds the open centres. */
		gl_open = cost_x < 0 && !is_ctr[x] && (nclose > 0 || ncenters < MAXC);
		gl_gain = 0;
		if (gl_open) {
			int free_slot = -1;

			close = 0;
			for (int c = 0; c < ns; c++) {
				if (slot_ctr[c] >= 0 && gl_lower[c] > 0) {
					/* ctr_slot of the closed centre stays: phase 4 still
					 * finds its points' gl_lower through it.
					 */
					is_ctr[slot_ctr[c]] = 0;
					slot_ctr[c] = -1;
					close++;
				}
				if (slot_ctr[c] < 0 && free_slot < 0) {
					free_slot = c;
				}
			}
			if (free_slot < 0) {
				free_slot = nslots++; /* none closed: ncenters < MAXC */
			}
			slot_ctr[free_slot] = x;
			ctr_slot[x] = free_slot;
			is_ctr[x] = 1;
			ncenters += 1 - close;
			gl_gain = -cost_x;
		}
	}
	barrier(); /* B3: the decision is published */

	/* Phase 4: apply it. */
	if (gl_open) {
		for (int i = k1; i < k2; i++) {
			if (i == x || pt_switch[i] || gl_lower[ctr_slot[pt_assign[i]]] > 0) {
				pt_cost[i] = (int64_t)s->weight[i] * dist(&s->coord[i * DIM], xc);
				pt_assign[i] = x;
			}
		}
	}
	return gl_gain;
}

/*
 * PARSEC's pkmedian(): cluster the set s into kmin..kmax centres (as far as the binary search
 * on z gets in prm.rounds steps). Returns the cost; *k is the number of centres.
 */
static int64_t kmedian(const struct pset *s, int kmin, int kmax, int pid, int *k, int32_t *opened,
		       uint32_t *seen)
{
	int64_t hiz, loz, z, cost;
	int k1, k2, tries;

	slice(s->n, pid, &k1, &k2);
	{
		int64_t my = 0;

		for (int i = k1; i < k2; i++) {
			my += (int64_t)s->weight[i] * dist(&s->coord[i * DIM], s->coord);
		}
		part_cost[pid] = my;
	}
	barrier();
	/*
	 * PARSEC searches z in [0, hiz], hiz the cost of serving everything from point 0, and
	 * starts at hiz / 2, which opens only a centre or two; halving z until kmin centres open
	 * would cost many pspeedy passes. This scaled-down version starts the search in
	 * [0, 2 * hiz / Z_DIV] instead, whose middle opens about kmin centres at once.
	 */
	hiz = 2 * (sum_parts(part_cost) / Z_DIV);
	loz = 0;
	z = (hiz + loz) / 2;

	if (s->n <= kmax) {
		/* No more points than centres wanted: every point is a centre. */
		for (int i = k1; i < k2; i++) {
			pt_assign[i] = i;
			pt_cost[i] = 0;
		}
		if (pid == 0) {
			for (int i = 0; i < s->n; i++) {
				opened[i] = i;
			}
			setup_slots(s, opened, s->n);
		}
		barrier(); /* the slots are published */
		*k = s->n;
		return 0;
	}

	cost = pspeedy(s, z, pid, k, opened, seen);
	/* Give pspeedy SP more chances at this z, then assume z is too high. At z = 0 every point
	 * off the centres opened: there are no more centres to get.
	 */
	tries = 0;
	while (*k < kmin && z > 0) {
		if (++tries > SP) {
			hiz = z;
			z = (hiz + loz) / 2;
			tries = 0;
		}
		cost = pspeedy(s, z, pid, k, opened, seen);
	}
	if (pid == 0) {
		setup_slots(s, opened, *k);
	}

	for (int round = 0;; round++) {
		/* pFL: series of pgain calls while they improve the cost by more than 1/FL_EPS. */
		for (int series = 0; series < prm.series; series++) {
			int64_t change = 0;

			for (int it = 0; it < prm.iters; it++) {
				change += pgain(s, z, pid);
			}
			cost -= change;
			if (change * FL_EPS <= cost) {
				break;
			}
		}
		*k = ncenters; /* written by thread 0 before pgain's last barrier */
		if (*k > kmax) {
			/* Too many centres: make them dearer. */
			loz = z;
			z = (hiz + loz) / 2;
			cost += (z - loz) * *k;
		}
		if (*k < kmin) {
			/* Too few centres: make them cheaper. */
			hiz = z;
			z = (hiz + loz) / 2;
			cost += (z - hiz) * *k;
		}
		if ((*k >= kmin && *k <= kmax) || loz * 1000 >= hiz * 999 ||
		    round + 1 == prm.rounds) {
			break;
		}
	}
	return cost;
}

/*
 * The centres of the set, in the order of their indices, weighted with the weight of their
 * points, appended to (coord, weight, *n). Threads sum the weights of their points per centre,
 * thread 0 adds the rows and copies.
 */
static void collect(const struct pset *s, int pid, int16_t *coord, int32_t *weight, int *n)
{
	int64_t *my_lower = &lower[(size_t)pid * MAXC];
	int k1, k2;

	/* The "lower" rows were last read before pgain's B2: they are free again. */
	slice(s->n, pid, &k1, &k2);
	memset(my_lower, 0, (size_t)nslots * sizeof(*my_lower));
	for (int i = k1; i < k2; i++) {
		my_lower[ctr_slot[pt_assign[i]]] += s->weight[i];
	}
	barrier();
	if (pid == 0) {
		for (int i = 0; i < s->n; i++) {
			int64_t w = 0;
			int c;

			if (!is_ctr[i]) {
				continue;
			}
			c = ctr_slot[i];
			for (unsigned int p = 0; p < nthreads; p++) {
				w += lower[(size_t)p * MAXC + c];
			}
			memcpy(&coord[*n * DIM], &s->coord[i * DIM], DIM * sizeof(*coord));
			weight[*n] = (int32_t)w;
			(*n)++;
		}
	}
}

static void *worker(void *arg)
{
	int pid = (int)(intptr_t)arg;
	int32_t opened[MAXC]; /* thread 0: the centres pspeedy opened */
	uint32_t seen = 0;    /* pspeedy events seen so far */
	struct pset s;
	int k;

	for (int c = 0; c < prm.chunks; c++) {
		int64_t cost;

		s.n = prm.chunk;
		s.coord = &stream_coord[(size_t)c * prm.chunk * DIM];
		s.weight = &stream_weight[(size_t)c * prm.chunk];
		cost = kmedian(&s, prm.kmin, prm.kmax, pid, &k, opened, &seen);
		if (pid == 0) {
			chunk_cost[c] = cost;
			chunk_k[c] = k;
		}
		collect(&s, pid, cset_coord, cset_weight, &cset_n);
	}

	/* The centre set. */
	barrier(); /* thread 0 has appended the last chunk's centres */
	s.n = cset_n;
	s.coord = cset_coord;
	s.weight = cset_weight;
	{
		int64_t cost = kmedian(&s, prm.kmin, prm.kmax, pid, &k, opened, &seen);

		if (pid == 0) {
			chunk_cost[prm.chunks] = cost;
			chunk_k[prm.chunks] = k;
		}
	}
	collect(&s, pid, final_coord, final_weight, &final_n);
	return NULL;
}

/* The stream: points scattered around N_HIDDEN hidden centres, drawn in order from the seed. */
static void generate(uint32_t seed)
{
	int16_t hidden[N_HIDDEN][DIM];
	int npoints = prm.chunks * prm.chunk;
	struct wl_rng gen;

	wl_rng_seed(&gen, seed, 0x5eed);
	for (int c = 0; c < N_HIDDEN; c++) {
		for (int j = 0; j < DIM; j++) {
			hidden[c][j] = (int16_t)(128 + wl_rng_below(&gen, 768));
		}
	}
	for (int i = 0; i < npoints; i++) {
		int c = (int)wl_rng_below(&gen, N_HIDDEN);

		for (int j = 0; j < DIM; j++) {
			/* Sum of two uniforms: denser towards the centre. */
			int v = hidden[c][j] + (int)wl_rng_below(&gen, 2 * SPREAD + 1) +
				(int)wl_rng_below(&gen, 2 * SPREAD + 1) - 2 * SPREAD;

			if (v < 0) {
				v = 0;
			} else if (v > COORD_MAX) {
				v = COORD_MAX;
			}
			stream_coord[(size_t)i * DIM + j] = (int16_t)v;
		}
		stream_weight[i] = 1 + (int32_t)wl_rng_below(&gen, MAX_W);
	}
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (p == NULL) {
		printf("streamcluster: out of memory\n");
		exit(1);
	}
	return p;
}

int main(int argc, char **argv)
{
	struct wl_options opt;
	pthread_t threads[WL_MAX_THREADS];
	uint32_t sum = WL_FNV_INIT;
	size_t npoints, nwork;

#ifdef ENABLE_PARSEC_HOOKS
	__parsec_bench_begin(__parsec_streamcluster);
#endif
	if (wl_parse_options(argc, argv, &opt) != 0) {
		return 1;
	}
	nthreads = opt.threads;
	prm = input_params[opt.input];
	npoints = (size_t)prm.chunks * prm.chunk;
	/* Working arrays hold a chunk or the centre set. */
	nwork = (size_t)prm.chunks * MAXC > (size_t)prm.chunk ? (size_t)prm.chunks * MAXC
							      : (size_t)prm.chunk;

	stream_coord = xcalloc(npoints * DIM, sizeof(*stream_coord));
	stream_weight = xcalloc(npoints, sizeof(*stream_weight));
	cset_coord = xcalloc((size_t)prm.chunks * MAXC * DIM, sizeof(*cset_coord));
	cset_weight = xcalloc((size_t)prm.chunks * MAXC, sizeof(*cset_weight));
	final_coord = xcalloc(MAXC * DIM, sizeof(*final_coord));
	final_weight = xcalloc(MAXC, sizeof(*final_weight));
	chunk_cost = xcalloc((size_t)prm.chunks + 1, sizeof(*chunk_cost));
	chunk_k = xcalloc((size_t)prm.chunks + 1, sizeof(*chunk_k));
	pt_cost = xcalloc(nwork, sizeof(*pt_cost));
	pt_switch = xcalloc(nwork, sizeof(*pt_switch));
	pt_assign = xcalloc(nwork, sizeof(*pt_assign));
	ctr_slot = xcalloc(nwork, sizeof(*ctr_slot));
	is_ctr = xcalloc(nwork, sizeof(*is_ctr));
	lower = xcalloc((size_t)nthreads * MAXC, sizeof(*lower));
	part_cost = xcalloc(nthreads, sizeof(*part_cost));
	part_gain = xcalloc(nthreads, sizeof(*part_gain));
	part_gain2 = xcalloc(nthreads, sizeof(*part_gain2));
	part_close = xcalloc(nthreads, sizeof(*part_close));

	generate(opt.seed);
	wl_rng_seed(&rng, opt.seed, 0x5c);
	printf("streamcluster: input %s, %d chunks of %d points, dim %d, k %d..%d, %u threads\n",
	       wl_input_names[opt.input], prm.chunks, prm.chunk, DIM, prm.kmin, prm.kmax, nthreads);

	WL_CHECK(pthread_mutex_init(&open_lock, NULL));
	WL_CHECK(pthread_cond_init(&open_cond, NULL));
	WL_CHECK(pthread_barrier_init(&bar, NULL, nthreads));

#ifdef ENABLE_PARSEC_HOOKS
	__parsec_roi_begin();
#endif
	for (unsigned int t = 1; t < nthreads; t++) {
		WL_CHECK(pthread_create(&threads[t], NULL, worker, (void *)(intptr_t)t));
	}
	worker((void *)0);
	for (unsigned int t = 1; t < nthreads; t++) {
		WL_CHECK(pthread_join(threads[t], NULL));
	}
#ifdef ENABLE_PARSEC_HOOKS
	__parsec_roi_end();
#endif

	for (int c = 0; c <= prm.chunks; c++) {
		sum = wl_fnv1a_u32(sum, (uint32_t)chunk_cost[c]);
		sum = wl_fnv1a_u32(sum, (uint32_t)((uint64_t)chunk_cost[c] >> 32));
		sum = wl_fnv1a_u32(sum, (uint32_t)chunk_k[c]);
	}
	sum = wl_fnv1a_u32(sum, (uint32_t)cset_n);
	sum = wl_fnv1a_u32(sum, (uint32_t)final_n);
	for (int i = 0; i < final_n; i++) {
		for (int j = 0; j < DIM; j++) {
			sum = wl_fnv1a_u32(sum, (uint32_t)final_coord[i * DIM + j]);
		}
		sum = wl_fnv1a_u32(sum, (uint32_t)final_weight[i]);
	}

	WL_CHECK(pthread_barrier_destroy(&bar));
	WL_CHECK(pthread_cond_destroy(&open_cond));
	WL_CHECK(pthread_mutex_destroy(&open_lock));
	wl_print_checksum("streamcluster", sum);
#ifdef ENABLE_PARSEC_HOOKS
	__parsec_bench_end();
#endif
	return 0;
}
