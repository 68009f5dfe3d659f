/*
 * subutai backend: synchronization objects live in the Subutai-HW engines of the NIs.
 *
 * An object is allocated on the next host of the round-robin shared by all cores; when that
 * engine's scratchpad is full the other engines are tried in turn, and only when every one is
 * full does the caller fall back to software (EAGAIN).
 */
#include <errno.h>

#include <subutai/sync.h>

#include "rt.h"

static int alloc_anywhere(int (*alloc)(unsigned int host, uint32_t arg, uint32_t *id), uint32_t arg,
			  uint32_t *id)
{
	unsigned int n = subutai_num_tiles();
	unsigned int host = subutai_next_host();
	int err = EAGAIN;

	for (unsigned int i = 0; i < n && err == EAGAIN; i++) {
		err = alloc((host + i) % n, arg, id);
	}
	return err;
}

static int alloc_mutex(unsigned int host, uint32_t errorcheck, uint32_t *id)
{
	return subutai_mutex_alloc(host, errorcheck, id);
}

static int alloc_cond(unsigned int host, uint32_t unused, uint32_t *id)
{
	(void)unused;
	return subutai_cond_alloc(host, id);
}

static int alloc_barrier(unsigned int host, uint32_t count, uint32_t *id)
{
	return subutai_barrier_alloc(host, count, id);
}

static int alloc_rwlock(unsigned int host, uint32_t unused, uint32_t *id)
{
	(void)unused;
	return subutai_rwlock_alloc(host, id);
}

int rt_hw_mutex_init(uint32_t *handle, bool errorcheck)
{
	return alloc_anywhere(alloc_mutex, errorcheck, handle);
}

int rt_hw_cond_init(uint32_t *handle)
{
	return alloc_anywhere(alloc_cond, 0, handle);
}

int rt_hw_barrier_init(uint32_t *handle, unsigned int count)
{
	return alloc_anywhere(alloc_barrier, count, handle);
}

int rt_hw_rwlock_init(uint32_t *handle)
{
	return alloc_anywhere(alloc_rwlock, 0, handle);
}

const bool rt_backend_hw SUBUTAI_TIMED_CONST = true;

const char pthread_backend_np[] = "subutai";
