/*
 * hello: every core writes its tile id and a per-core counter into shared RAM; core 0 waits for
 * all of them and prints one line per tile.
 */
#include <stdio.h>

#include <subutai/soc.h>

struct hello_entry {
	volatile uint32_t done;
	uint32_t tile;
	uint32_t x, y;
	uint32_t counter;
	uint32_t start_cycle;
};

static struct hello_entry entries[N_TILES];

/* Each core counts on its own stack: the count depends on the tile. */
static uint32_t count_for(unsigned int tile)
{
	volatile uint32_t counter = 0;

	for (unsigned int i = 0; i < 100 * (tile + 1); i++) {
		counter++;
	}
	return counter;
}

static void report(unsigned int tile)
{
	struct hello_entry *e = &entries[tile];

	e->start_cycle = (uint32_t)subutai_cycles();
	e->tile = subutai_tile_id();
	e->x = subutai_tile_x();
	e->y = subutai_tile_y();
	e->counter = count_for(tile);
	e->done = 1;
}

void tile_main(unsigned int tile)
{
	report(tile);
}

int main(void)
{
	unsigned int n = subutai_num_tiles();

	report(0);
	for (unsigned int t = 0; t < n; t++) {
		while (!entries[t].done) {
			subutai_dcache_invalidate();
		}
	}
	for (unsigned int t = 0; t < n; t++) {
		struct hello_entry *e = &entries[t];

		printf("hello from tile %lu of %u (x=%lu, y=%lu) counter=%lu cycle=%lu\n",
		       (unsigned long)e->tile, n, (unsigned long)e->x, (unsigned long)e->y,
		       (unsigned long)e->counter, (unsigned long)e->start_cycle);
	}
	printf("cores released at cycle %lu\n", (unsigned long)subutai_release_cycle);
	return 0;
}
