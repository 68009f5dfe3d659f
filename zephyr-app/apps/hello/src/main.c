/*
 * One kernel per tile: every core's Zephyr prints its tile, then core 0 waits for all of them and
 * ends the simulation.
 */
#include <stdio.h>

#include <zephyr/kernel.h>

#include <subutai/atomic.h>
#include <subutai/soc.h>

/* Application data is shared by all cores. */
static volatile unsigned int hellos;

int main(void)
{
	unsigned int tile = subutai_tile_id();

	printf("Hello from tile %u of %u (%s)\n", tile, subutai_num_tiles(), CONFIG_BOARD);
	subutai_atomic_fetch_add(0, 1);
	if (tile == 0) {
		while (subutai_atomic_load(0) != subutai_num_tiles()) {
			k_sleep(K_MSEC(1));
		}
		hellos = subutai_atomic_load(0);
		printf("hellos: %u\n", hellos);
		subutai_exit(0);
	}
	return 0;
}
