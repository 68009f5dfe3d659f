/*
 * busy: every core computes forever on its private RAM, with a shared-RAM access every few
 * iterations. A steady load for measuring simulation speed (stopped by --max-cycles).
 */
#include <subutai/soc.h>

#define WORDS 256

static uint32_t local_words[WORDS] __tile_bss;
static volatile uint32_t shared_counters[N_TILES];

static void work(unsigned int tile)
{
	uint32_t x = 0x12345678u + tile;

	for (uint32_t i = 0;; i++) {
		x = x * 1103515245u + 12345u;
		local_words[i % WORDS] += x >> 7;
		if ((i & 15) == 0) {
			shared_counters[tile] += local_words[(i * 7) % WORDS];
		}
	}
}

void tile_main(unsigned int tile)
{
	work(tile);
}

int main(void)
{
	work(0);
	return 0;
}
