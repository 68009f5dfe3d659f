/*
 * Where timed code and data land in the caches.
 *
 * The shipped VexRiscv variants have direct-mapped 4 KiB instruction and data caches: which lines
 * evict each other depends on where code and data land, so a change anywhere in an image could
 * move a timed figure by tens of percent. Code on the synchronization paths that the benchmarks
 * time is marked SUBUTAI_SYNC_PATH (gcc's "hot": it goes to .text.hot.*), a timed program's own
 * data SUBUTAI_TIMED_DATA (.bss.timed, zero-initialised) and constants those paths read
 * SUBUTAI_TIMED_CONST (.rodata.timed): the bare-metal linker script (lib/linker.ld) places each
 * first among its kind at a fixed address (the code right after the start-up code, the data at
 * 4 KiB boundaries), so that only a change to them moves them in the caches. Under Zephyr they are
 * ordinary code and data.
 */
#ifndef SUBUTAI_TIMED_H
#define SUBUTAI_TIMED_H

#define SUBUTAI_SYNC_PATH   __attribute__((hot))
#define SUBUTAI_TIMED_DATA  __attribute__((section(".bss.timed")))
#define SUBUTAI_TIMED_CONST __attribute__((section(".rodata.timed")))

#endif /* SUBUTAI_TIMED_H */
