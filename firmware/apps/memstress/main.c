/*
 * memstress: every core writes and reads back pseudo-random data over every bank of main RAM,
 * mixing cached refills (bursts), write-through stores of every width and uncached accesses to
 * the atomic unit.
 *
 * A 32 KiB buffer (every bank many times over) is split word by word among the cores: word i
 * belongs to core i % n (up to a power of two words a core). In each round every core writes all
 * its words in a pseudo-random order (fixed seed), each word as one 32-bit store, two 16-bit stores
 * or four byte stores, reads back an earlier word of its own through the data cache now and then,
 * and adds to an atomic counter every few stores. After a barrier every core invalidates its data
 * cache and checks every word written, its own and everybody else's, against the value the round
 * gave it.
 *
 * Core 0 prints one "@subutai" JSON line per core with its error counts, then the counter.
 */
#include <stdio.h>

#include <subutai/atomic.h>
#include <subutai/soc.h>

#define WORDS        (8 * 1024)
#define ROUNDS       2
#define ATOMIC_EVERY 16 /* Stores between two uncached fetch-and-adds. */
#define VAR_COUNTER  0  /* Atomic words: the shared counter and the barrier. */
#define VAR_BARRIER  1

static uint32_t buffer[WORDS] __attribute__((aligned(32)));

struct core_report {
	uint32_t own_errors;   /* Read-backs of its own words during the writes. */
	uint32_t check_errors; /* Words of the buffer that differ after the barrier. */
	uint32_t first_bad;    /* Index of the first such word, or WORDS. */
	uint32_t adds;
} __attribute__((aligned(32)));

static struct core_report reports[N_TILES];
static volatile uint32_t finished[N_TILES] __attribute__((aligned(32)));

static uint32_t value_of(uint32_t round, uint32_t index)
{
	uint32_t x = (index + 1u) * 2654435761u ^ (round + 1u) * 0x9e3779b9u;

	x ^= x >> 15;
	x *= 0x85ebca6bu;
	return x ^ (x >> 13);
}

static void store_word(uint32_t *p, uint32_t v, uint32_t how)
{
	switch (how % 3) {
	case 0:
		*(volatile uint32_t *)p = v;
		break;
	case 1:
		((volatile uint16_t *)p)[1] = (uint16_t)(v >> 16);
		((volatile uint16_t *)p)[0] = (uint16_t)v;
		break;
	default:
		((volatile uint8_t *)p)[2] = (uint8_t)(v >> 16);
		((volatile uint8_t *)p)[0] = (uint8_t)v;
		((volatile uint8_t *)p)[3] = (uint8_t)(v >> 24);
		((volatile uint8_t *)p)[1] = (uint8_t)(v >> 8);
		break;
	}
}

/* The atomic unit's words are zero at reset; barrier g waits for the g-th arrival of all. */
static void barrier(uint32_t generation, unsigned int n)
{
	subutai_atomic_fetch_add(VAR_BARRIER, 1);
	while (subutai_atomic_load(VAR_BARRIER) < generation * n) {
	}
}

static void stress(unsigned int tile)
{
	unsigned int n = subutai_num_tiles();
	/* Each core's share, a power of two (3 or 6 tiles leave the buffer's last words unused). */
	uint32_t owned = WORDS / n;

	while (owned & (owned - 1)) {
		owned &= owned - 1;
	}
	uint32_t used = owned * n;
	struct core_report r = {0, 0, WORDS, 0};
	uint32_t rng = 0x1234567u + tile * 7919u;

	for (uint32_t round = 0; round < ROUNDS; round++) {
		uint32_t start = rng % owned;

		for (uint32_t j = 0; j < owned; j++) {
			/* An odd stride visits every owned word once (owned is a power of two). */
			uint32_t index = ((start + j * 40503u) % owned) * n + tile;

			rng = rng * 1664525u + 1013904223u;
			store_word(&buffer[index], value_of(round, index), rng >> 24);
			if ((rng >> 8) % 4 == 0 && j > 0) {
				uint32_t back = ((start + (j - 1) * 40503u) % owned) * n + tile;

				if (((volatile uint32_t *)buffer)[back] != value_of(round, back)) {
					r.own_errors++;
				}
			}
			if (j % ATOMIC_EVERY == 0) {
				subutai_atomic_fetch_add(VAR_COUNTER, 1);
				r.adds++;
			}
		}
		barrier(2 * round + 1, n);
		subutai_dcache_invalidate();
		for (uint32_t i = 0; i < used; i++) {
			if (((volatile uint32_t *)buffer)[i] != value_of(round, i)) {
				if (r.check_errors++ == 0) {
					r.first_bad = i;
				}
			}
		}
		/* Nobody writes the next round before everybody has checked this one. */
		barrier(2 * round + 2, n);
	}
	reports[tile] = r;
	finished[tile] = 1;
}

void tile_main(unsigned int tile)
{
	stress(tile);
}

int main(void)
{
	unsigned int n = subutai_num_tiles();
	uint32_t adds = 0;

	stress(0);
	for (unsigned int t = 0; t < n; t++) {
		while (!finished[t]) {
			subutai_dcache_invalidate();
		}
	}
	subutai_dcache_invalidate();
	for (unsigned int t = 0; t < n; t++) {
		const struct core_report *r = &reports[t];

		printf("@subutai "
		       "{\"program\":\"memstress\",\"tile\":%u,\"tiles\":%u,\"own_errors\":%lu,"
		       "\"check_errors\":%lu,\"first_bad\":%lu,\"adds\":%lu}\n",
		       t, n, (unsigned long)r->own_errors, (unsigned long)r->check_errors,
		       (unsigned long)r->first_bad, (unsigned long)r->adds);
		adds += r->adds;
	}
	printf("@subutai {\"program\":\"memstress\",\"counter\":%lu,\"expected\":%lu}\n",
	       (unsigned long)subutai_atomic_load(VAR_COUNTER), (unsigned long)adds);
	return 0;
}
