/*
 * radix: parallel radix sort of integer keys, a scaled-down SPLASH-2 RADIX.
 *
 * Mirrors SPLASH-2 kernels/radix (radix.C, slave_sort()): N keys of KEY_BITS bits, generated from
 * the seed, are sorted by a least-significant-digit radix sort with radix 2^RADIX_BITS, one pass
 * per digit. Every thread owns a contiguous slice of the keys, as a SPLASH process does, and the
 * main thread sorts its share too (T threads in all, T-1 created).
 *
 * Synchronization (exactly one mutex and one barrier, as SPLASH's lock_Index and barrier_rank):
 *  - lock_index: each thread, the main one included, takes its process id from a global counter
 *    under this mutex (SPLASH's LOCK(global->lock_Index); MyNum = global->Index++). The id only
 *    selects the slices a thread works on, so which thread gets which id does not change the
 *    result.
 *  - barrier (T threads), three waits per pass:
 *      1. each thread clears its own row hist[id][] and histograms the current digit of its keys
 *         into it;
 *         barrier: every row is complete;
 *      2. prefix sums, split by digit: thread id owns the digits [RADIX*id/T, RADIX*(id+1)/T).
 *         Walking its digits in order and, for each, the threads in order, it replaces
 *         hist[t][d] by the number of keys that precede thread t's first key of digit d among
 *         the keys of its own digits (smaller digits of the slice, then digit d in threads
 *         0..t-1), and stores the number of keys of its digits in slice_total[id];
 *         barrier: all columns and slice totals are complete;
 *      3. each thread adds to its own row the keys of all the digit slices before each digit's
 *         slice (a T-long prefix of slice_total[]): hist[id][d] is now the first destination
 *         of its keys of digit d; it then permutes its keys into the destination array;
 *         barrier: the destination array is complete; every thread then swaps its source and
 *         destination pointers (private, like SPLASH's key_from/key_to swap).
 *
 * Why this prefix and not SPLASH's: SPLASH builds a binary tree of the per-process histograms and
 * synchronizes its levels with spinning pause flags (SETPAUSE/WAITPAUSE), which the target cannot
 * do (no cache coherence: a flag spun on in a stale cache never changes), so it would need one
 * barrier per tree level instead. Having every thread compute its offsets from all histograms alone
 * makes each thread read all T * RADIX counters, a phase that grows with the thread count (and is
 * all cache misses here). Splitting the columns by digit keeps exactly one barrier per phase,
 * divides the T * RADIX counters evenly (each read and written once, by one thread, in a fixed
 * order), and leaves every thread only a T-long scan of the slice totals before fixing its own row:
 * a two-level prefix (digits within a slice, then slices) with one barrier after each of the
 * histogram, prefix and permutation phases.
 *
 * Memory layout: rows are RADIX + 8 words apart. With a 4 KiB direct-mapped data cache and
 * 32-byte lines, rows exactly 1 KiB apart map to the same cache lines every 4 rows, and the
 * column walk of phase 2 would miss on every counter; one line of padding gives every row of a
 * column its own cache line.
 *
 * Determinism: thread t's keys land after all smaller digits, after the same digit of threads
 * 0..t-1 and in their own order, so every pass is the stable counting sort whatever T is; the
 * sorted key sequence is unique anyway. Main checks that the result is sorted and a permutation
 * of the input (sum and sum of squares of the keys), then prints the FNV-1a checksum of the
 * sorted keys.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "workload.h"

#ifdef ENABLE_PARSEC_HOOKS
#include <hooks.h>
#endif

#define KEY_BITS   20 /* keys in [0, 2^20) */
#define RADIX_BITS 8  /* radix 256: 3 passes over 20-bit keys */
#define RADIX      (1u << RADIX_BITS)
#define DIGIT_MASK (RADIX - 1u)
#define N_PASSES   ((KEY_BITS + RADIX_BITS - 1) / RADIX_BITS)
#define ROW_STRIDE (RADIX + 8u) /* words from one thread's row of counters to the next */

/* pthread_barrier_wait returns PTHREAD_BARRIER_SERIAL_THREAD to one thread: not an error. */
#define CHECK_BARRIER(call)                                                                        \
	do {                                                                                       \
		int err_ = (call);                                                                 \
		if (err_ != 0 && err_ != PTHREAD_BARRIER_SERIAL_THREAD) {                          \
			printf("%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, err_);         \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

/*
 * Keys per input class: test, simsmall, simmedium (SPLASH's default is 256 K keys, radix 1024).
 * On one simulated core the whole run (generation, sort, check) takes about 0.2 M, 2.2 M and
 * 6.3 M cycles, the sort itself about half of it; the largest uses about 260 KiB at 64 threads.
 */
static const uint32_t n_keys_of_input[WL_N_INPUTS] = {512, 8192, 24576};

struct global {
	pthread_mutex_t lock_index; /* guards next_id */
	pthread_barrier_t barrier;  /* separates the phases of each pass */
	unsigned int next_id;
	unsigned int n_threads;
	uint32_t n_keys;
	uint32_t *key[2];      /* source and destination of the first pass (each thread swaps) */
	uint32_t *hist;        /* n_threads rows of RADIX counters: histogram, then offsets */
	uint32_t *slice_total; /* n_threads: keys of each thread's slice of digits */
};

static struct global g;

/* First digit of thread id's slice of the digits, the columns it sums up in phase 2. */
static inline uint32_t digit_start(unsigned int id, unsigned int nt)
{
	return RADIX * id / nt;
}

static void *slave_sort(void *arg)
{
	uint32_t *from = g.key[0];
	uint32_t *to = g.key[1];
	unsigned int nt = g.n_threads;
	unsigned int id, pass, t;
	uint32_t key_start, key_stop, d_start, d_stop, i, d;
	uint32_t *row;

	(void)arg;
	WL_CHECK(pthread_mutex_lock(&g.lock_index));
	id = g.next_id++;
	WL_CHECK(pthread_mutex_unlock(&g.lock_index));

	key_start = (uint32_t)((uint64_t)g.n_keys * id / nt);
	key_stop = (uint32_t)((uint64_t)g.n_keys * (id + 1) / nt);
	d_start = digit_start(id, nt);
	d_stop = digit_start(id + 1, nt);
	row = &g.hist[id * ROW_STRIDE];

	for (pass = 0; pass < N_PASSES; pass++) {
		unsigned int shift = pass * RADIX_BITS;
		uint32_t *tmp, sum;

		/* 1. Histogram of this digit over my keys, in my own row. */
		for (d = 0; d < RADIX; d++) {
			row[d] = 0;
		}
		for (i = key_start; i < key_stop; i++) {
			row[(from[i] >> shift) & DIGIT_MASK]++;
		}
		CHECK_BARRIER(pthread_barrier_wait(&g.barrier));

		/* 2. Prefix over my slice of digits, digit by digit and within a digit thread by
		 * thread: the order of the keys in the destination.
		 */
		sum = 0;
		for (d = d_start; d < d_stop; d++) {
			for (t = 0; t < nt; t++) {
				uint32_t c = g.hist[t * ROW_STRIDE + d];

				g.hist[t * ROW_STRIDE + d] = sum;
				sum += c;
			}
		}
		g.slice_total[id] = sum;
		CHECK_BARRIER(pthread_barrier_wait(&g.barrier));

		/* 3. Add the keys of the slices of digits before each of mine: my first destination
		 * of each digit. Then the stable permutation of my keys.
		 */
		sum = 0;
		for (t = 0; t < nt; t++) {
			uint32_t d_end = digit_start(t + 1, nt);

			for (d = digit_start(t, nt); d < d_end; d++) {
				row[d] += sum;
			}
			sum += g.slice_total[t];
		}
		for (i = key_start; i < key_stop; i++) {
			uint32_t k = from[i];

			to[row[(k >> shift) & DIGIT_MASK]++] = k;
		}
		/* The next pass reads what every thread wrote into 'to'. */
		CHECK_BARRIER(pthread_barrier_wait(&g.barrier));
		tmp = from;
		from = to;
		to = tmp;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static pthread_t threads[WL_MAX_THREADS];
	struct wl_options opt;
	uint32_t n, i, sum_in = 0, sq_in = 0, sum_out = 0, sq_out = 0, checksum = WL_FNV_INIT;
	const uint32_t *sorted;
	unsigned int t;

#ifdef ENABLE_PARSEC_HOOKS
	__parsec_bench_begin(__splash2_radix);
#endif
	if (wl_parse_options(argc, argv, &opt) != 0) {
		return 1;
	}
	n = n_keys_of_input[opt.input];
	g.n_threads = opt.threads;
	g.n_keys = n;
	g.next_id = 0;
	g.key[0] = malloc(n * sizeof(uint32_t));
	g.key[1] = malloc(n * sizeof(uint32_t));
	g.hist = malloc(opt.threads * ROW_STRIDE * sizeof(uint32_t));
	g.slice_total = malloc(opt.threads * sizeof(uint32_t));
	if (g.key[0] == NULL || g.key[1] == NULL || g.hist == NULL || g.slice_total == NULL) {
		printf("radix: out of memory\n");
		return 1;
	}

	/* Keys from a per-index hash of the seed; sum and sum of squares to check the result is a
	 * permutation of them (wrapping arithmetic: only compared, never interpreted).
	 */
	for (i = 0; i < n; i++) {
		uint32_t k = wl_hash32(opt.seed, i) & ((1u << KEY_BITS) - 1u);

		g.key[0][i] = k;
		sum_in += k;
		sq_in += k * k;
	}
	WL_CHECK(pthread_mutex_init(&g.lock_index, NULL));
	WL_CHECK(pthread_barrier_init(&g.barrier, NULL, opt.threads));
	printf("radix: %lu keys of %d bits, radix %u, %d passes, %u threads\n", (unsigned long)n,
	       KEY_BITS, RADIX, N_PASSES, opt.threads);

#ifdef ENABLE_PARSEC_HOOKS
	__parsec_roi_begin();
#endif
	for (t = 1; t < opt.threads; t++) {
		WL_CHECK(pthread_create(&threads[t], NULL, slave_sort, NULL));
	}
	slave_sort(NULL);
	for (t = 1; t < opt.threads; t++) {
		WL_CHECK(pthread_join(threads[t], NULL));
	}
#ifdef ENABLE_PARSEC_HOOKS
	__parsec_roi_end();
#endif

	/* After an odd number of passes the keys end in the second array. */
	sorted = g.key[N_PASSES % 2];
	for (i = 0; i < n; i++) {
		uint32_t k = sorted[i];

		if (i > 0 && sorted[i - 1] > k) {
			printf("radix: ERROR: keys not sorted at index %lu (%lu > %lu)\n",
			       (unsigned long)i, (unsigned long)sorted[i - 1], (unsigned long)k);
			return 1;
		}
		sum_out += k;
		sq_out += k * k;
		checksum = wl_fnv1a_u32(checksum, k);
	}
	if (sum_out != sum_in || sq_out != sq_in) {
		printf("radix: ERROR: sorted keys are not a permutation of the input\n");
		return 1;
	}
	wl_print_checksum("radix", checksum);

	WL_CHECK(pthread_barrier_destroy(&g.barrier));
	WL_CHECK(pthread_mutex_destroy(&g.lock_index));
	free(g.key[0]);
	free(g.key[1]);
	free(g.hist);
	free(g.slice_total);
#ifdef ENABLE_PARSEC_HOOKS
	__parsec_bench_end();
#endif
	return 0;
}
