/*
 * membw: bandwidth and latency of the memory system, seen from every core at once.
 *
 * Every test starts on all cores at the same moment (core 0 opens a phase that the others poll
 * for) and each core times its own part with the global cycle counter, which is a tile-local
 * register, so timing adds no bus traffic. A test's aggregate bandwidth is the bytes all cores
 * moved over the cycles from the first core's start to the last core's end.
 *
 * - read_private / write_private: each core streams over its own slice of main RAM;
 * - read_shared / write_shared: all cores stream over one slice;
 * - refill_latency: core 0 alone follows a chain of lines that all miss in its data cache (one
 *   dependent load per line), so each step costs one refill;
 * - refill_latency_loaded: the same while every other core runs read_private.
 *
 * The streams are twice the size of the data cache, so a read misses once per cache line (a
 * refill burst) and every store goes to memory (the data cache is write-through).
 *
 * Core 0 prints one "@subutai" JSON line per test.
 */
#include <stdio.h>

#include <subutai/soc.h>

#ifndef MEM_BANKS
#define MEM_BANKS 0 /* The SoC has one main RAM on the shared bus. */
#endif

#define LINE_BYTES   32 /* Cache line: one refill burst of 8 words. */
#define LINE_WORDS   (LINE_BYTES / 4)
#define STREAM_BYTES (8 * 1024) /* Per core: twice the 4 KiB data cache. */
#define STREAM_WORDS (STREAM_BYTES / 4)
#define CHASE_LINES  128  /* 4 KiB: every line misses after an invalidation. */
#define POLL_CYCLES  1024 /* A waiting core polls this seldom, to stay off the bus. */

enum test {
	READ_PRIVATE,
	WRITE_PRIVATE,
	READ_SHARED,
	WRITE_SHARED,
	REFILL_LATENCY,
	REFILL_LATENCY_LOADED,
	N_TESTS,
};

static const char *const test_names[N_TESTS] = {
	"read_private", "write_private",  "read_shared",
	"write_shared", "refill_latency", "refill_latency_loaded",
};

struct core_result {
	uint32_t start;
	uint32_t end;
	uint32_t bytes;
	uint32_t sink; /* Sum of what was read, so that no load is optimized away. */
} __attribute__((aligned(LINE_BYTES)));

static uint32_t private_slices[N_TILES][STREAM_WORDS] __attribute__((aligned(LINE_BYTES)));
static uint32_t shared_slice[STREAM_WORDS] __attribute__((aligned(LINE_BYTES)));
static uint32_t chase[CHASE_LINES * LINE_WORDS] __attribute__((aligned(LINE_BYTES)));
static struct core_result results[N_TESTS][N_TILES];

/* Phase protocol: core t sets arrived[t] = p when it waits for phase p; core 0, once all have
 * arrived, sets start_at (a cycle far enough ahead for every poller to notice) and then phase = p;
 * every core starts at cycle start_at exactly; core t sets done[t] = p once its result is stored.
 */
static volatile uint32_t phase;
static volatile uint32_t start_at;
static volatile uint32_t arrived[N_TILES] __attribute__((aligned(LINE_BYTES)));
static volatile uint32_t done[N_TILES] __attribute__((aligned(LINE_BYTES)));

static void pause_cycles(uint32_t n)
{
	uint32_t t0 = subutai_cycles32();

	while (subutai_cycles32() - t0 < n) {
	}
}

static void wait_for(volatile uint32_t *word, uint32_t value)
{
	for (;;) {
		subutai_dcache_invalidate();
		if (*word >= value) {
			return;
		}
		pause_cycles(POLL_CYCLES);
	}
}

static uint32_t read_stream(const volatile uint32_t *p)
{
	uint32_t sum = 0;

	for (unsigned int i = 0; i < STREAM_WORDS; i += 8) {
		sum += p[i] + p[i + 1] + p[i + 2] + p[i + 3] + p[i + 4] + p[i + 5] + p[i + 6] +
		       p[i + 7];
	}
	return sum;
}

static void write_stream(volatile uint32_t *p, uint32_t value)
{
	for (unsigned int i = 0; i < STREAM_WORDS; i += 8) {
		p[i] = value;
		p[i + 1] = value;
		p[i + 2] = value;
		p[i + 3] = value;
		p[i + 4] = value;
		p[i + 5] = value;
		p[i + 6] = value;
		p[i + 7] = value;
	}
}

/* One dependent load per line: the next line's index is in the current line. */
static uint32_t chase_lines(void)
{
	const volatile uint32_t *c = chase;
	uint32_t at = 0;

	for (unsigned int i = 0; i < CHASE_LINES; i++) {
		at = c[at];
	}
	return at;
}

static void run_test(enum test t, unsigned int tile)
{
	struct core_result *r = &results[t][tile];
	uint32_t sink = 0, bytes = STREAM_BYTES;
	uint32_t start = subutai_cycles32();

	switch (t) {
	case READ_PRIVATE:
		sink = read_stream(private_slices[tile]);
		break;
	case WRITE_PRIVATE:
		write_stream(private_slices[tile], tile);
		break;
	case READ_SHARED:
		sink = read_stream(shared_slice);
		break;
	case WRITE_SHARED:
		write_stream(shared_slice, tile);
		break;
	case REFILL_LATENCY:
	case REFILL_LATENCY_LOADED:
		if (tile == 0) {
			sink = chase_lines();
			bytes = CHASE_LINES * LINE_BYTES;
		} else if (t == REFILL_LATENCY_LOADED) {
			sink = read_stream(private_slices[tile]);
		} else {
			bytes = 0;
		}
		break;
	default:
		break;
	}
	r->end = subutai_cycles32();
	r->start = start;
	r->bytes = bytes;
	r->sink = sink;
}

/* Every core: wait for the phase of test t, run it from a clean data cache, report done. */
static void take_part(enum test t, unsigned int tile)
{
	uint32_t p = (uint32_t)t + 1;

	arrived[tile] = p;
	wait_for(&phase, p);
	subutai_dcache_invalidate();
	uint32_t at = start_at;
	while ((int32_t)(subutai_cycles32() - at) < 0) {
	}
	run_test(t, tile);
	done[tile] = p;
}

static int is_latency(enum test t)
{
	return t == REFILL_LATENCY || t == REFILL_LATENCY_LOADED;
}

static void report(enum test t, unsigned int n)
{
	uint32_t first = results[t][0].start, last = results[t][0].end;
	uint64_t bytes = results[t][0].bytes;

	/* A latency is core 0's own time (the others only load the memory); a bandwidth spans every
	 * core, from the first start to the last end. */
	for (unsigned int c = 1; c < n && !is_latency(t); c++) {
		const struct core_result *r = &results[t][c];

		if ((int32_t)(r->start - first) < 0) {
			first = r->start;
		}
		if ((int32_t)(r->end - last) > 0) {
			last = r->end;
		}
		bytes += r->bytes;
	}
	printf("@subutai {\"program\":\"membw\",\"test\":\"%s\",\"tiles\":%u,\"mem_banks\":%u,"
	       "\"bytes\":%llu,\"cycles\":%lu,\"lines\":%u}\n",
	       test_names[t], n, (unsigned int)MEM_BANKS, (unsigned long long)bytes,
	       (unsigned long)(last - first), is_latency(t) ? CHASE_LINES : 0u);
}

void tile_main(unsigned int tile)
{
	for (int t = 0; t < N_TESTS; t++) {
		take_part((enum test)t, tile);
	}
	for (;;) {
		pause_cycles(POLL_CYCLES);
	}
}

int main(void)
{
	unsigned int n = subutai_num_tiles();

	for (unsigned int i = 0; i < CHASE_LINES; i++) {
		chase[i * LINE_WORDS] = ((i + 1) % CHASE_LINES) * LINE_WORDS;
	}
	for (int t = 0; t < N_TESTS; t++) {
		uint32_t p = (uint32_t)t + 1;

		for (unsigned int c = 1; c < n; c++) {
			wait_for(&arrived[c], p);
		}
		start_at = subutai_cycles32() + 4 * POLL_CYCLES;
		phase = p;
		take_part((enum test)t, 0);
		for (unsigned int c = 0; c < n; c++) {
			wait_for(&done[c], p);
		}
		report((enum test)t, n);
	}
	return 0;
}
