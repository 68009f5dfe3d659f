/*
 * Where timed code and data land in the caches.
 *
 * The shipped VexRiscv variants have direct-mapped 4 KiB instruction and data caches: which lines
 * evict each other depends on where code and data land, so a change anywhere in an image could
 * move a timed figure by tens of percent. Code on the synchronization paths that the benchmarks
 * time is marked SUBUTAI_SYNC_PATH (gcc's "hot": it goes to .text.hot.*), a timed program's own
 * data SUBUTAI_TIMED_DATA (.bss.timed, zero-initialised) and constants those paths read
 * SUBUTAI_TIMED_CONST (.rodata.timed): the bare-metal linker script (port/baremetal/linker.ld)
 * places each first among its kind at a fixed address (the code right after the start-up code, the
 * data at 4 KiB boundaries), so that only a change to them moves them in the caches. Under Zephyr
 * the code is one block at the start of the image, and the data is ordinary data.
 */
#ifndef SUBUTAI_TIMED_H
#define SUBUTAI_TIMED_H

#ifdef SUBUTAI_SYNC_PATH_SECTIONS
/* Where the port's linker gathers the same paths into one block of its own (the Zephyr module
 * defines this: its images put them at the start, zephyr-app/linker/hot_text.ld). */
/* A section per function (__COUNTER__), so that the linker drops the ones an image does not use. */
#define SUBUTAI_SECTION_NAME(n) ".subutai_hot." #n
#define SUBUTAI_SECTION_OF(n)   SUBUTAI_SECTION_NAME(n)
#define SUBUTAI_SYNC_PATH       __attribute__((hot, section(SUBUTAI_SECTION_OF(__COUNTER__))))
#else
#define SUBUTAI_SYNC_PATH __attribute__((hot))
#endif
/*
 * Paths of one backend: hot in the images linked with that backend, ordinary code in the other's,
 * where they are only a fallback (a Subutai image's software objects, used when every scratchpad
 * is full) or never run (the engines' requests in a software-only image). So each image's hot
 * block holds the paths it times and not both backends'. The backend is known when the library is
 * compiled: SUBUTAI_BACKEND_<NAME> (firmware/Makefile), CONFIG_SUBUTAI_BACKEND_<NAME> (Kconfig).
 */
#if defined(SUBUTAI_BACKEND_SWONLY) || defined(CONFIG_SUBUTAI_BACKEND_SWONLY)
#define SUBUTAI_HW_PATH
#define SUBUTAI_SW_PATH SUBUTAI_SYNC_PATH
#else
#define SUBUTAI_HW_PATH SUBUTAI_SYNC_PATH
#define SUBUTAI_SW_PATH
#endif
#define SUBUTAI_TIMED_DATA  __attribute__((section(".bss.timed")))
#define SUBUTAI_TIMED_CONST __attribute__((section(".rodata.timed")))

#endif /* SUBUTAI_TIMED_H */
