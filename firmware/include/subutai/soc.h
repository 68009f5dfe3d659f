/*
 * Subutai SoC: tile identity, global cycle counter, core release, caches.
 *
 * OS-agnostic: used by the bare-metal runtime and by the Zephyr port. Every address and field
 * comes from the SoC's generated headers.
 */
#ifndef SUBUTAI_SOC_H
#define SUBUTAI_SOC_H

#include <stdbool.h>
#include <stdint.h>

/* LiteX's hw/common.h (under csr.h and system.h) defines min() and max(), as Zephyr's
 * sys/util.h does: whichever came first keeps them, whatever the order of the includes. */
#pragma push_macro("min")
#pragma push_macro("max")
#undef min
#undef max
#include <generated/csr.h>
#include <generated/mem.h>
#include <generated/soc.h>
#include <system.h>
#undef min
#undef max
#pragma pop_macro("min")
#pragma pop_macro("max")

#include <subutai/timed.h>

/* Variables private to each core (in its tile RAM), zeroed by every core at start-up. */
#define __tile_bss __attribute__((section(".tile_bss")))

static inline unsigned int subutai_tile_id(void)
{
	return tile_id_read();
}

static inline unsigned int subutai_tile_x(void)
{
	return (tile_position_read() >> CSR_TILE_POSITION_X_OFFSET) &
	       ((1u << CSR_TILE_POSITION_X_SIZE) - 1);
}

static inline unsigned int subutai_tile_y(void)
{
	return (tile_position_read() >> CSR_TILE_POSITION_Y_OFFSET) &
	       ((1u << CSR_TILE_POSITION_Y_SIZE) - 1);
}

static inline unsigned int subutai_num_tiles(void)
{
	return N_TILES;
}

/* Global cycle counter, common to all tiles. The two halves are read separately, so the high
 * half is read again and the read retried when a carry happened in between.
 */
static inline uint64_t subutai_cycles(void)
{
	uint32_t hi, lo;

	do {
		hi = csr_read_simple(CSR_TILE_CYCLES_ADDR);
		lo = csr_read_simple(CSR_TILE_CYCLES_ADDR + 4);
	} while (hi != csr_read_simple(CSR_TILE_CYCLES_ADDR));
	return ((uint64_t)hi << 32) | lo;
}

/* Low half of the global cycle counter: one register read, for durations under 2^32 cycles
 * (also between cores: the counter is the same on every tile).
 */
static inline uint32_t subutai_cycles32(void)
{
	return csr_read_simple(CSR_TILE_CYCLES_ADDR + 4);
}

/* Cores set in mask start running (bit 0, the boot core, always runs). The mask is as wide as
 * the SoC's core count (two CSR words above 32 tiles). */
static inline void subutai_release_cores(uint64_t mask)
{
	cores_release_write(mask | 1);
}

/* The mask of every core of the SoC. */
#define SUBUTAI_ALL_CORES (N_TILES >= 64 ? ~0ull : (1ull << N_TILES) - 1)

/* Data caches are write-through and not coherent: drop every cached line before reading data
 * another core may have written (the acquire side of every synchronization).
 */
static inline void subutai_dcache_invalidate(void)
{
	flush_cpu_dcache();
}

/*
 * SUBUTAI_INVALIDATE_SHADOW: VexRiscv starts a data-cache invalidation when the instruction
 * reaches its execute stage, even in the shadow of a branch that then skips it (branches resolve
 * one stage later): a flush right behind an untaken "if" still costs its ~150 cycles (measured
 * with firmware/apps/costs). A conditional invalidation therefore keeps that many instructions
 * between the branch and the flush.
 */
#define SUBUTAI_INVALIDATE_SHADOW "nop\n nop\n nop\n nop\n"
/* The invalidation itself in asm: VexRiscv's flush_cpu_dcache() instruction. */
#define SUBUTAI_INVALIDATE_INSN   ".word 0x500f\n"

/* Invalidates the data cache when needed is true, and costs a few cycles when it is false. */
static inline void subutai_dcache_invalidate_if(bool needed)
{
	__asm__ volatile("beqz %0, 1f\n" SUBUTAI_INVALIDATE_SHADOW SUBUTAI_INVALIDATE_INSN "1:\n"
			 :
			 : "r"(needed)
			 : "memory");
}

/* Global cycle count at which core 0 released the other cores (bare-metal runtime). */
extern uint64_t subutai_release_cycle;

/* Ends the program: the simulation exits with code; on hardware the core halts. */
void subutai_exit(int code) __attribute__((noreturn));

/* Entry point of every core other than 0 once released (weak: the default sleeps). */
void tile_main(unsigned int tile);

#endif /* SUBUTAI_SOC_H */
