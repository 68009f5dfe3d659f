/*
 * ep: embarrassingly parallel Gaussian pairs, a scaled-down NAS Parallel Benchmarks EP.
 *
 * Mirrors NPB's EP (ep.f): N pairs (x, y) of uniform random numbers in [-1, 1) are drawn; a pair
 * with t = x^2 + y^2 <= 1 is accepted and gives two Gaussian deviates by the Marsaglia polar
 * method, X = x sqrt(-2 ln t / t) and Y = y sqrt(-2 ln t / t); each accepted pair is counted in
 * the annulus l = floor(max(|X|, |Y|)), l in 0..9 (EP's q(0:9)). The threads split the pairs into
 * contiguous ranges (EP's batches, one range per thread, the main thread's included), count
 * them in private counters and add those to the global ones under one mutex at the end: the
 * only synchronization, so the program runs as fast as its cores do whatever else shares them.
 * It is the embarrassingly parallel partner of the barrier-intensive programs in co-running
 * workloads (Tidon, IEEE TPDS: NAS EP beside NAS BT and PARSEC's bodytrack and streamcluster).
 *
 * Integer arithmetic, as every program here (workload.h): the checksum must be the same on the
 * host, bare metal and Zephyr, with or without a floating-point unit or a libm. Pair i comes from
 * a per-index hash of the seed, so which thread draws it does not matter. The annulus test needs
 * no square root or division: max(|X|, |Y|)^2 = m^2 (-2 ln t) / t with m = max(|x|, |y|), so
 * l^2 <= max(|X|, |Y|)^2 exactly when l^2 t <= m^2 (-2 ln t), compared in fixed point; -ln t is
 * e ln 2 - ln f for t = f 2^-e, f in [1/2, 1), and ln f = -2 atanh(w) with w = (1 - f) / (1 + f)
 * in (0, 1/3], its series summed to 2^-30 (fixed point Q30). The checksum is the FNV-1a of the
 * accepted count and the ten annulus counts.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "workload.h"

#ifdef ENABLE_PARSEC_HOOKS
#include <hooks.h>
#endif

#define N_ANNULI 10 /* EP's NQ */
#define Q30      (1u << 30)
#define LN2_Q30  744261118u /* ln 2 in Q30: 0.693147180... x 2^30, rounded */

/* Pairs of each input class (NPB's classes go from 2^24 pairs for S to 2^40 for E). */
static const uint32_t n_pairs_of_input[WL_N_INPUTS] = {
	[WL_INPUT_TEST] = 512,
	[WL_INPUT_SIMSMALL] = 8192,
	[WL_INPUT_SIMMEDIUM] = 65536,
};

static struct {
	uint32_t n_pairs, n_threads, seed, next_id;
	uint32_t accepted, q[N_ANNULI];
	pthread_mutex_t lock;
} g;

/* -ln t in Q30 for t in (0, 1] given in Q30 (t30 in 1 .. 2^30). */
static uint64_t neg_ln_q30(uint32_t t30)
{
	unsigned int e = 0;
	uint32_t f = t30;

	/* t = f 2^-e with f in [2^29, 2^30): [1/2, 1) in Q30 (t = 1 stays 1: ln 1 = 0). */
	if (f == Q30) {
		return 0;
	}
	while (f < Q30 / 2) {
		f <<= 1;
		e++;
	}
	/* w = (1 - f) / (1 + f) in (0, 1/3] (Q30); -ln f = 2 (w + w^3/3 + w^5/5 + ...). */
	uint32_t w = (uint32_t)(((uint64_t)(Q30 - f) << 30) / (Q30 + f));
	uint32_t w2 = (uint32_t)(((uint64_t)w * w) >> 30);
	uint32_t power = w;
	uint64_t series = 0;

	for (uint32_t k = 1; power != 0; k += 2) {
		series += power / k;
		power = (uint32_t)(((uint64_t)power * w2) >> 30);
	}
	return (uint64_t)e * LN2_Q30 + 2 * series;
}

/* The annulus of an accepted pair (x, y in Q31, t = x^2 + y^2 in Q62, 0 < t <= 1), or -1 when t
 * is below EP's resolution here (t < 2^-30: a pair in 2^31, dropped). */
static int annulus(int32_t x, int32_t y, uint64_t t62)
{
	uint64_t x2 = (uint64_t)((int64_t)x * x), y2 = (uint64_t)((int64_t)y * y);
	uint32_t t30 = (uint32_t)(t62 >> 32);
	uint32_t m30 = (uint32_t)((x2 > y2 ? x2 : y2) >> 32); /* m^2 in Q30 */

	if (t30 == 0) {
		return -1;
	}
	/* -2 ln t in Q24: at most 2 x 30 ln 2 < 42, so below 2^30. */
	uint32_t g24 = (uint32_t)((2 * neg_ln_q30(t30)) >> 6);
	uint64_t r = (uint64_t)m30 * g24; /* m^2 (-2 ln t), Q54, below 2^60 */
	int l = 0;

	/* (l + 1)^2 t <= m^2 (-2 ln t): 100 x 2^30 x 2^24 < 2^61. */
	while (l < N_ANNULI - 1 && ((uint64_t)(l + 1) * (l + 1) * t30 << 24) <= r) {
		l++;
	}
	return l;
}

static void *ep_thread(void *arg)
{
	uint32_t q[N_ANNULI] = {0}, accepted = 0;
	uint32_t id;

	(void)arg;
	WL_CHECK(pthread_mutex_lock(&g.lock));
	id = g.next_id++;
	WL_CHECK(pthread_mutex_unlock(&g.lock));

	/* This thread's range of pairs (EP's batches, one per thread). */
	uint32_t first = (uint32_t)((uint64_t)g.n_pairs * id / g.n_threads);
	uint32_t last = (uint32_t)((uint64_t)g.n_pairs * (id + 1) / g.n_threads);

	for (uint32_t i = first; i < last; i++) {
		int32_t x = (int32_t)wl_hash32(g.seed, 2 * i);
		int32_t y = (int32_t)wl_hash32(g.seed, 2 * i + 1);
		uint64_t t62 = (uint64_t)((int64_t)x * x) + (uint64_t)((int64_t)y * y);

		if (t62 > (1ull << 62)) {
			continue; /* outside the unit disc: rejected, as in EP */
		}
		int l = annulus(x, y, t62);

		if (l >= 0) {
			q[l]++;
			accepted++;
		}
	}

	/* The one reduction: this thread's counts into the global ones. */
	WL_CHECK(pthread_mutex_lock(&g.lock));
	g.accepted += accepted;
	for (int l = 0; l < N_ANNULI; l++) {
		g.q[l] += q[l];
	}
	WL_CHECK(pthread_mutex_unlock(&g.lock));
	return NULL;
}

int main(int argc, char **argv)
{
	static pthread_t threads[WL_MAX_THREADS];
	struct wl_options opt;
	uint32_t checksum = WL_FNV_INIT, total = 0;

#ifdef ENABLE_PARSEC_HOOKS
	__parsec_bench_begin(__npb_ep);
#endif
	if (wl_parse_options(argc, argv, &opt) != 0) {
		return 1;
	}
	g.n_pairs = n_pairs_of_input[opt.input];
	g.n_threads = opt.threads;
	g.seed = opt.seed;
	g.next_id = 0;
	g.accepted = 0;
	for (int l = 0; l < N_ANNULI; l++) {
		g.q[l] = 0;
	}
	WL_CHECK(pthread_mutex_init(&g.lock, NULL));
	printf("ep: %lu pairs, %d annuli, %u threads\n", (unsigned long)g.n_pairs, N_ANNULI,
	       opt.threads);

#ifdef ENABLE_PARSEC_HOOKS
	__parsec_roi_begin();
#endif
	for (unsigned int t = 1; t < opt.threads; t++) {
		WL_CHECK(pthread_create(&threads[t], NULL, ep_thread, NULL));
	}
	ep_thread(NULL);
	for (unsigned int t = 1; t < opt.threads; t++) {
		WL_CHECK(pthread_join(threads[t], NULL));
	}
#ifdef ENABLE_PARSEC_HOOKS
	__parsec_roi_end();
#endif

	for (int l = 0; l < N_ANNULI; l++) {
		total += g.q[l];
	}
	/* About pi/4 of the pairs fall in the disc; EP's counts fall off with the annulus (a
	 * Gaussian's mass beyond 4 is below 1e-4 a deviate). */
	if (total != g.accepted || g.accepted == 0 || g.accepted > g.n_pairs) {
		printf("ep: ERROR: %lu pairs counted in the annuli, %lu accepted of %lu\n",
		       (unsigned long)total, (unsigned long)g.accepted, (unsigned long)g.n_pairs);
		return 1;
	}
	printf("ep: %lu of %lu pairs accepted; annuli", (unsigned long)g.accepted,
	       (unsigned long)g.n_pairs);
	checksum = wl_fnv1a_u32(checksum, g.accepted);
	for (int l = 0; l < N_ANNULI; l++) {
		printf(" %lu", (unsigned long)g.q[l]);
		checksum = wl_fnv1a_u32(checksum, g.q[l]);
	}
	printf("\n");
	wl_print_checksum("ep", checksum);

	WL_CHECK(pthread_mutex_destroy(&g.lock));
#ifdef ENABLE_PARSEC_HOOKS
	__parsec_bench_end();
#endif
	return 0;
}
