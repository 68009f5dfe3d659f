/*
 * Atomic unit (software-only baseline): read-modify-write operations performed at the memory
 * side, atomic across all cores. Variables are words 0..ATOMIC_WORDS-1 of the unit; each
 * operation has its own window of the region, and the operand travels with the read.
 */
#ifndef SUBUTAI_ATOMIC_H
#define SUBUTAI_ATOMIC_H

#include <stdint.h>

#include <subutai/soc.h>
#include <subutai_port.h>

static inline volatile uint32_t *subutai_atomic_word(unsigned int window, unsigned int var)
{
	return (volatile uint32_t *)(ATOMIC_BASE + 4u * (window * ATOMIC_WORDS + var));
}

/* Operand register and read form one operation: no handler may run in between (the port lock). */
static inline uint32_t subutai_atomic_rmw(unsigned int window, unsigned int var, uint32_t operand)
{
	unsigned int key = subutai_port_lock();

	atomic_operand_write(operand);
	uint32_t old = *subutai_atomic_word(window, var);

	subutai_port_unlock(key);
	return old;
}

static inline uint32_t subutai_atomic_load(unsigned int var)
{
	return *subutai_atomic_word(ATOMIC_WINDOW_LOAD_STORE, var);
}

static inline void subutai_atomic_store(unsigned int var, uint32_t value)
{
	*subutai_atomic_word(ATOMIC_WINDOW_LOAD_STORE, var) = value;
}

/* Each returns the value before the operation. */
static inline uint32_t subutai_atomic_swap(unsigned int var, uint32_t value)
{
	return subutai_atomic_rmw(ATOMIC_WINDOW_SWAP, var, value);
}

static inline uint32_t subutai_atomic_fetch_add(unsigned int var, uint32_t value)
{
	return subutai_atomic_rmw(ATOMIC_WINDOW_FETCH_ADD, var, value);
}

static inline uint32_t subutai_atomic_test_and_set(unsigned int var)
{
	return *subutai_atomic_word(ATOMIC_WINDOW_TEST_AND_SET, var);
}

#endif /* SUBUTAI_ATOMIC_H */
