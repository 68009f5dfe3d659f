/*
 * The direct window of a core to its tile's Subutai port (gateware/ni/subutai_window.py): a
 * request is one store, its reply one load, on the tile's local bus. It is the port's only
 * register interface. OS-agnostic: the bare-metal port sends every request through it; the Zephyr
 * port shares it among the threads of a core (zephyr-app/include/subutai_port.h).
 */
#ifndef SUBUTAI_WINDOW_ACCESS_H
#define SUBUTAI_WINDOW_ACCESS_H

#include <stdbool.h>
#include <stdint.h>

#include <generated/mem.h>
#include <generated/subutai_status.h>
#include <generated/subutai_window.h>
#include <subutai/soc.h>
#include <subutai/sync.h>

#define SUBUTAI_WINDOW_REG(offset) (*(volatile uint32_t *)(TILE_SYNC_BASE + (offset)))

/* A request: one store of the id to the op's address (its value is the VALUE register's). */
static inline void subutai_window_issue(unsigned int op, bool want_reply, subutai_id_t id)
{
	SUBUTAI_WINDOW_REG((want_reply ? SUBUTAI_WINDOW_OP_REPLY_BASE : SUBUTAI_WINDOW_OP_BASE) +
			   4 * op) = id;
}

static inline void subutai_window_set_value(uint32_t value)
{
	SUBUTAI_WINDOW_REG(SUBUTAI_WINDOW_VALUE) = value;
}

/* The thread field of the next requests (their replies' thread). */
static inline void subutai_window_set_thread(unsigned int thread)
{
	SUBUTAI_WINDOW_REG(SUBUTAI_WINDOW_THREAD) = thread;
}

/* The info word of the next reply: the core waits on the bus until it comes. */
static inline uint32_t subutai_window_reply(void)
{
	return SUBUTAI_WINDOW_REG(SUBUTAI_WINDOW_REPLY);
}

/* As subutai_window_reply(), but gives up after SPIN cycles (SUBUTAI_WINDOW_INFO_VALID clear). */
static inline uint32_t subutai_window_reply_brief(void)
{
	return SUBUTAI_WINDOW_REG(SUBUTAI_WINDOW_REPLY_BRIEF);
}

/* A reply waits: a subutai_window_reply() now returns at once. */
static inline bool subutai_window_reply_waits(void)
{
	return (SUBUTAI_WINDOW_REG(SUBUTAI_WINDOW_STATUS) & 1u) != 0;
}

/* Thread of the last reply taken. */
static inline unsigned int subutai_window_reply_thread(void)
{
	return SUBUTAI_WINDOW_REG(SUBUTAI_WINDOW_REPLY_THREAD);
}

/* Id and value of the last reply taken. */
static inline subutai_id_t subutai_window_reply_id(void)
{
	return SUBUTAI_WINDOW_REG(SUBUTAI_WINDOW_ID);
}

static inline uint32_t subutai_window_reply_value(void)
{
	return SUBUTAI_WINDOW_REG(SUBUTAI_WINDOW_VALUE);
}

/* Takes the oldest reply of this tile whole (one must wait: subutai_window_reply_waits()); the
 * load returns at once. */
static inline void subutai_window_pop(struct subutai_reply *reply)
{
	uint32_t info = subutai_window_reply();

	reply->status = info & SUBUTAI_WINDOW_INFO_STATUS_MASK;
	reply->id = subutai_window_reply_id();
	reply->value = subutai_window_reply_value();
	reply->thread = subutai_window_reply_thread();
}

/*
 * The reply of thread's request on id from the info word of its load. Only the low 24 bits of the
 * value come with the info word (enough for a grant's GRANT_LOCAL and a barrier's serial bit):
 * the whole value and id are read when full or on an error.
 */
static inline void subutai_window_take(uint32_t info, bool full, subutai_id_t id,
				       unsigned int thread, struct subutai_reply *reply)
{
	reply->status = info & SUBUTAI_WINDOW_INFO_STATUS_MASK;
	reply->value = info >> SUBUTAI_WINDOW_INFO_VALUE_SHIFT;
	reply->thread = thread;
	reply->id = id;
	if (full || reply->status != SUBUTAI_STATUS_OK) {
		reply->value = subutai_window_reply_value();
		reply->id = subutai_window_reply_id();
	}
}

/*
 * The info word of the reply to an acquire: waits SPIN cycles for it; if it has not come by
 * then, the wait is a long one, and the data cache is invalidated while the core waits for the
 * rest (*invalidated then says so). Both loads and the invalidation are one asm block: between
 * the invalidation and the reply the core touches no memory that could bring back a stale line
 * (no spill, no call), so the cache is as clean at the grant as if invalidated after it.
 */
static inline uint32_t subutai_window_reply_acquire(bool *invalidated)
{
	uint32_t info, brief;

	__asm__ volatile("lw %0, %3(%2)\n"
			 "andi %1, %0, %4\n"
			 "bnez %1, 1f\n" SUBUTAI_INVALIDATE_SHADOW SUBUTAI_INVALIDATE_INSN
			 "lw %0, %5(%2)\n"
			 "1:\n"
			 : "=&r"(info), "=&r"(brief)
			 : "r"(TILE_SYNC_BASE), "i"(SUBUTAI_WINDOW_REPLY_BRIEF),
			   "i"(SUBUTAI_WINDOW_INFO_VALID), "i"(SUBUTAI_WINDOW_REPLY)
			 : "memory");
	*invalidated = brief == 0;
	return info;
}

/*
 * As subutai_window_reply_acquire(), but the wait after the invalidation is the caller's: the
 * info word of the reply if it came within SPIN cycles, else (the data cache invalidated, and
 * *invalidated set) one without SUBUTAI_WINDOW_INFO_VALID.
 */
static inline uint32_t subutai_window_reply_brief_acquire(bool *invalidated)
{
	uint32_t info, brief;

	__asm__ volatile("lw %0, %3(%2)\n"
			 "andi %1, %0, %4\n"
			 "bnez %1, 1f\n" SUBUTAI_INVALIDATE_SHADOW SUBUTAI_INVALIDATE_INSN "1:\n"
			 : "=&r"(info), "=&r"(brief)
			 : "r"(TILE_SYNC_BASE), "i"(SUBUTAI_WINDOW_REPLY_BRIEF),
			   "i"(SUBUTAI_WINDOW_INFO_VALID)
			 : "memory");
	*invalidated = brief == 0;
	return info;
}

#endif /* SUBUTAI_WINDOW_ACCESS_H */
