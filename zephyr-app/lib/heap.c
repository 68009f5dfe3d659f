/*
 * The heap of all cores: malloc() and friends over one sys_heap in the shared part of main RAM
 * (from the end of the shared .bss to the end of the region, linker/shared.ld), also the memory of
 * thread stacks. The C library's malloc is per kernel (CONFIG_COMMON_LIBC_MALLOC=n): this one is
 * locked across cores with a spinlock of the atomic unit, and its bookkeeping is read after a
 * data-cache invalidation, since another core may have changed it.
 *
 * It is the whole malloc family of the C libraries it goes with (Zephyr's minimal one, the
 * toolchain's picolibc): a member left to the C library would allocate from the library's own
 * per-kernel heap, and free() here would take its blocks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <zephyr/init.h>
#include <zephyr/kernel.h>
#include <zephyr/sys/sys_heap.h>

#include "rt.h"

extern char __subutai_heap_start[], __subutai_heap_end[];

static struct sys_heap heap __rt_shared;

static int subutai_heap_init(void)
{
	if (subutai_tile_id() == 0) {
		sys_heap_init(&heap, __subutai_heap_start,
			      (uintptr_t)__subutai_heap_end - (uintptr_t)__subutai_heap_start);
	}
	return 0;
}

/* After the shared .bss is zeroed (soc_boot.c, priority 0). */
SYS_INIT(subutai_heap_init, PRE_KERNEL_1, 1);

static unsigned int heap_lock(void)
{
	unsigned int key = irq_lock();

	rt_spin_lock(RT_HEAP_LOCK);
	subutai_dcache_invalidate();
	return key;
}

static void heap_unlock(unsigned int key)
{
	rt_spin_unlock(RT_HEAP_LOCK);
	irq_unlock(key);
}

void *aligned_alloc(size_t align, size_t size)
{
	unsigned int key = heap_lock();
	void *p = sys_heap_aligned_alloc(&heap, align, size);

	heap_unlock(key);
	if (!p) {
		errno = ENOMEM;
	}
	return p;
}

void *malloc(size_t size)
{
	return aligned_alloc(sizeof(void *) * 2, size);
}

void *calloc(size_t n, size_t size)
{
	size_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes)) {
		errno = ENOMEM;
		return NULL;
	}
	void *p = malloc(bytes);

	if (p) {
		memset(p, 0, bytes);
	}
	return p;
}

void *realloc(void *ptr, size_t size)
{
	unsigned int key = heap_lock();
	void *p = sys_heap_aligned_realloc(&heap, ptr, sizeof(void *) * 2, size);

	heap_unlock(key);
	if (!p && size) {
		errno = ENOMEM;
	}
	return p;
}

void free(void *ptr)
{
	if (!ptr) {
		return;
	}
	unsigned int key = heap_lock();

	sys_heap_free(&heap, ptr);
	heap_unlock(key);
}

void *memalign(size_t align, size_t size)
{
	return aligned_alloc(align, size);
}

int posix_memalign(void **ptr, size_t align, size_t size)
{
	/* A power of two and a multiple of sizeof(void *) (POSIX). */
	if (align < sizeof(void *) || (align & (align - 1)) != 0) {
		return EINVAL;
	}
	void *p = aligned_alloc(align, size);

	if (!p) {
		return ENOMEM;
	}
	*ptr = p;
	return 0;
}

/* A page is what sysconf(_SC_PAGESIZE) says. */
#define HEAP_PAGE_SIZE RT_PAGE_SIZE

void *valloc(size_t size)
{
	return aligned_alloc(HEAP_PAGE_SIZE, size);
}

void *pvalloc(size_t size)
{
	return aligned_alloc(HEAP_PAGE_SIZE,
			     (size + HEAP_PAGE_SIZE - 1) & ~(size_t)(HEAP_PAGE_SIZE - 1));
}

void *reallocarray(void *ptr, size_t n, size_t size)
{
	size_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(ptr, bytes);
}

void cfree(void *ptr)
{
	free(ptr);
}

size_t malloc_usable_size(void *ptr)
{
	if (!ptr) {
		return 0;
	}
	unsigned int key = heap_lock();
	size_t size = sys_heap_usable_size(&heap, ptr);

	heap_unlock(key);
	return size;
}
