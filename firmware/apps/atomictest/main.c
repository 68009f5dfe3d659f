/*
 * atomictest: every core hammers the atomic unit; the totals must be exact.
 *
 * N cores x M fetch-and-adds of 1 on one variable end at N*M; adds of tile+1 on another end at
 * M * sum(tile+1); a test-and-set race has exactly one winner; swaps hand a token around without
 * losing or duplicating it. Core 0 prints one "@subutai" JSON line per check.
 */
#include <stdio.h>

#include <subutai/atomic.h>

#define ITERS 200

enum {
	VAR_COUNT,
	VAR_WEIGHTED,
	VAR_FLAG,
	VAR_TOKEN,
	VAR_DONE
};

static uint32_t tas_won[N_TILES];
static uint32_t tokens_seen[N_TILES];

static void check(const char *name, int ok, unsigned long value)
{
	printf("@subutai {\"program\":\"atomictest\",\"check\":\"%s\",\"ok\":%d,\"value\":%lu}\n",
	       name, ok ? 1 : 0, value);
}

static void work(unsigned int tile)
{
	for (int i = 0; i < ITERS; i++) {
		subutai_atomic_fetch_add(VAR_COUNT, 1);
		subutai_atomic_fetch_add(VAR_WEIGHTED, tile + 1);
		/* A token (a non-zero value) circulates: whoever swaps it out owns it, puts it
		 * back. */
		uint32_t t = subutai_atomic_swap(VAR_TOKEN, 0);

		if (t != 0) {
			tokens_seen[tile]++;
			subutai_atomic_swap(VAR_TOKEN, t);
		}
	}
	tas_won[tile] = subutai_atomic_test_and_set(VAR_FLAG) == 0;
	subutai_atomic_fetch_add(VAR_DONE, 1);
}

void tile_main(unsigned int tile)
{
	work(tile);
}

int main(void)
{
	unsigned int n = subutai_num_tiles();

	/* The other cores already run: variables start at 0 (the unit's reset state). */
	subutai_atomic_swap(VAR_TOKEN, 0x7);
	work(0);
	while (subutai_atomic_load(VAR_DONE) != n) {
	}
	subutai_dcache_invalidate();

	uint32_t winners = 0, weights = 0;

	for (unsigned int t = 0; t < n; t++) {
		winners += tas_won[t];
		weights += t + 1;
	}
	check("fetch_add_count", subutai_atomic_load(VAR_COUNT) == n * ITERS,
	      subutai_atomic_load(VAR_COUNT));
	check("fetch_add_weighted", subutai_atomic_load(VAR_WEIGHTED) == weights * ITERS,
	      subutai_atomic_load(VAR_WEIGHTED));
	check("test_and_set_one_winner", winners == 1, winners);
	check("swap_token_kept", subutai_atomic_load(VAR_TOKEN) == 0x7,
	      subutai_atomic_load(VAR_TOKEN));
	return 0;
}
