/*
 * memcheck: checks the memory system of the SoC from every core.
 *
 * - private RAM is private: every core writes a different value at the same local address, and
 *   reads its own value back after all cores have written;
 * - shared RAM is shared: every core writes its slot, then reads every other core's slot;
 * - the cycle counter is common and monotonic: timestamps taken across a causal chain
 *   (core 0 stamps, then signals; core i sees the signal, then stamps) never go backwards.
 *
 * Core 0 prints one "@subutai" JSON line per tile.
 */
#include <stdio.h>

#include <subutai/soc.h>

#define PRIVATE_MAGIC 0xa5000000u
#define SHARED_MAGIC  0x5a000000u
#define MONO_SAMPLES  64

static volatile uint32_t private_word __tile_bss;

struct tile_report {
	volatile uint32_t arrived;
	volatile uint32_t done;
	uint32_t private_readback;
	uint32_t private_addr;
	uint32_t shared_seen;
	uint32_t monotonic;
	uint64_t t_seen;
};

static uint32_t shared_words[N_TILES];
static struct tile_report reports[N_TILES];
static volatile uint32_t go;
static volatile uint64_t t_go;

static void wait_flag(volatile uint32_t *flag)
{
	while (!*flag) {
		subutai_dcache_invalidate();
	}
	subutai_dcache_invalidate();
}

static uint32_t check_monotonic(void)
{
	uint64_t prev = subutai_cycles();

	for (int i = 0; i < MONO_SAMPLES; i++) {
		uint64_t now = subutai_cycles();

		if (now <= prev) {
			return 0;
		}
		prev = now;
	}
	return 1;
}

static void first_phase(unsigned int tile)
{
	private_word = PRIVATE_MAGIC | tile;
	shared_words[tile] = SHARED_MAGIC | tile;
	reports[tile].arrived = 1;
}

static void second_phase(unsigned int tile)
{
	struct tile_report *r = &reports[tile];
	uint32_t seen = 0;

	r->t_seen = subutai_cycles();
	r->private_readback = private_word;
	r->private_addr = (uint32_t)(uintptr_t)&private_word;
	subutai_dcache_invalidate();
	for (unsigned int t = 0; t < subutai_num_tiles(); t++) {
		if (shared_words[t] == (SHARED_MAGIC | t)) {
			seen++;
		}
	}
	r->shared_seen = seen;
	r->monotonic = check_monotonic();
	r->done = 1;
}

void tile_main(unsigned int tile)
{
	first_phase(tile);
	wait_flag(&go);
	second_phase(tile);
}

int main(void)
{
	unsigned int n = subutai_num_tiles();

	first_phase(0);
	for (unsigned int t = 0; t < n; t++) {
		wait_flag(&reports[t].arrived);
	}
	t_go = subutai_cycles();
	go = 1;
	second_phase(0);
	for (unsigned int t = 0; t < n; t++) {
		wait_flag(&reports[t].done);
	}
	uint64_t t_end = subutai_cycles();

	for (unsigned int t = 0; t < n; t++) {
		struct tile_report *r = &reports[t];

		printf("@subutai {\"program\":\"memcheck\",\"tile\":%u,\"tiles\":%u,"
		       "\"private_addr\":%lu,\"private\":%lu,\"shared_seen\":%lu,\"monotonic\":%lu,"
		       "\"t_go\":%llu,\"t_seen\":%llu,\"t_end\":%llu}\n",
		       t, n, (unsigned long)r->private_addr, (unsigned long)r->private_readback,
		       (unsigned long)r->shared_seen, (unsigned long)r->monotonic,
		       (unsigned long long)t_go, (unsigned long long)r->t_seen,
		       (unsigned long long)t_end);
	}
	return 0;
}
