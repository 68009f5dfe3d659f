/*
 * The scheduler of a core's user-level threads (see ult.h), and the bare-metal port's wait for a
 * reply of the Subutai engine when the core may have other threads to run.
 *
 * Everything here is the core's own, in tile RAM: the threads' contexts and states, the ready
 * queue, the replies handed to parked threads. Other cores reach a thread only through NoC
 * messages (a spawn, a wake-up), which the core takes when it schedules.
 *
 * The scheduler runs on the stack of the thread that blocks: a core whose only thread waits stays
 * in that thread's context (no switch until another thread is ready), so one thread per core costs
 * what it did before user-level threads. The idle context, on the boot stack in tile RAM, is made
 * afresh when a thread exits with nothing ready (its stack cannot be given back while the core is
 * on it) and when an idle core starts.
 */
#include <string.h>

#include <irq.h>
#include <subutai/ni.h>
#include <subutai/window.h>
#include <subutai_port.h>

#include "ult.h"

#define PER_CORE RT_SLOT_COUNT
_Static_assert((PER_CORE & (PER_CORE - 1)) == 0, "threads per core: a power of two");

/* Interrupt lines that end an idle wait (the NI's and the engine's stay high while a message or
 * a reply waits). */
#ifdef SUBUTAI_BACKEND_SWONLY
#define EVENT_LINES (1u << NI_INTERRUPT)
#else
#define EVENT_LINES ((1u << NI_INTERRUPT) | (1u << SUBUTAI_INTERRUPT))
#endif

/* Ready and running are one state: nothing tells them apart, and a switch stores less. */
enum ult_state {
	ULT_FREE,
	ULT_ACTIVE,
	ULT_BLOCKED
};

/* What makes a blocked thread ready, besides its deadline. */
enum {
	ULT_FOR_WAKE = 1,
	ULT_FOR_REPLY = 2
};

struct ult {
	struct ult_context ctx;
	struct ult *next; /* in the ready queue */
	pthread_t handle;
	uint64_t deadline; /* of its block (0: none) */
	uint16_t slot;
	uint8_t state;
	uint8_t waits_for;    /* ULT_FOR_* while blocked */
	uint16_t wakes;       /* wake-ups arrived and not yet taken */
	uint8_t awaits_reply; /* the scheduler is to hand it its reply */
	uint8_t replied;      /* ... and has: reply */
	struct subutai_reply reply;
};

struct ult_core {
	struct ult *current; /* NULL in the idle context */
	struct ult *head, *tail;
	unsigned int timed; /* blocked threads with a deadline */
	/* The thread that exited (its stack: ult_release_pending). */
	unsigned int zombie;
	struct ult_context idle, gone;
	/* What a spawn message does (ult_idle(), ult_adopt()). */
	void (*spawned)(unsigned int slot);
};

static struct ult ults[PER_CORE] __tile_bss;
static struct ult_core core __tile_bss;

extern char _estack[];

static inline struct ult *ult_of(unsigned int slot)
{
	return &ults[slot & (PER_CORE - 1)];
}

static inline bool slot_here(unsigned int slot)
{
	return slot < RT_THREADS_MAX && RT_SLOT_CORE(slot) == rt_core();
}

unsigned int ult_slot(void)
{
	return core.current->slot;
}

/* 0 in the idle context. */
pthread_t ult_handle(void)
{
	return core.current ? core.current->handle : 0;
}

void ult_set_handle(pthread_t handle)
{
	core.current->handle = handle;
	subutai_port_core.owner = handle;
}

/* The port's flag: whether the running thread may share the core (subutai_port.h). */
static void update_shared(void)
{
	subutai_port_set_flag(SUBUTAI_PORT_MASK_SHARED,
			      subutai_port_core.ready != 0 ||
				      subutai_port_core.replies_awaited != 0 ||
				      subutai_port_core.timed != 0);
}

/* At the tail of the ready queue (the tail's next is not read). */
static void make_ready(struct ult *t)
{
	if (t->state == ULT_BLOCKED && t->deadline != 0) {
		subutai_port_core.timed--;
		update_shared();
	}
	t->state = ULT_ACTIVE;
	if (subutai_port_core.ready++ == 0) {
		update_shared();
	}
	if (core.tail) {
		core.tail->next = t;
	} else {
		core.head = t;
	}
	core.tail = t;
}

static struct ult *take_ready(void)
{
	struct ult *t = core.head;

	if (!t) {
		return NULL;
	}
	if (--subutai_port_core.ready == 0) {
		update_shared();
	}
	if (t == core.tail) {
		core.head = core.tail = NULL;
	} else {
		core.head = t->next;
	}
	return t;
}

/* What gives back the stack of the thread that exited, until the core is off it: checked by every
 * switch (ult_switch.S), which calls ult_release_zombie() then. */
void (*ult_release_pending)(unsigned int slot) __tile_bss;

void ult_release_zombie(void)
{
	void (*release)(unsigned int) = ult_release_pending;

	ult_release_pending = NULL;
	release(core.zombie);
}

/* Where a thread's requests name it (the engine knows a mutex's owner by tile and thread). */
static inline void running(struct ult *t)
{
	core.current = t;
	subutai_port_set_running(t->slot, t->wakes != 0);
	subutai_port_core.owner = t->handle;
#ifndef SUBUTAI_BACKEND_SWONLY
	subutai_window_set_thread(t->slot);
#endif
}

static inline void switch_to(struct ult *self, struct ult *next)
{
	running(next);
	ult_switch(&self->ctx, &next->ctx);
}

void ult_create(unsigned int slot, uintptr_t stack_top, ult_main_t main)
{
	struct ult *t = ult_of(slot);

	if (!slot_here(slot) || t->state != ULT_FREE) {
		rt_fatal("spawn of a thread slot not free on this core");
	}
	memset(t, 0, sizeof(*t));
	t->slot = slot;
	t->ctx.ra = (uint32_t)(uintptr_t)ult_entry;
	t->ctx.sp = (uint32_t)stack_top;
	t->ctx.s[0] = slot;
	t->ctx.s[1] = (uint32_t)(uintptr_t)main;
	make_ready(t);
}

void ult_wake(unsigned int slot)
{
	struct ult *t = ult_of(slot);

	if (t->wakes++ == 0 && t == core.current) {
		subutai_port_set_flag(SUBUTAI_PORT_MASK_WAKES, true);
	}
	if (t->state == ULT_BLOCKED && (t->waits_for & ULT_FOR_WAKE)) {
		make_ready(t);
	}
}

/* The running thread takes one of its wake-ups. */
static void take_wake(struct ult *self)
{
	if (--self->wakes == 0) {
		subutai_port_set_flag(SUBUTAI_PORT_MASK_WAKES, false);
	}
}

static void __attribute__((noinline)) on_message(const struct subutai_ni_msg *msg)
{
	if (msg->type == RT_MSG_WAKE && msg->length == 1 && slot_here(msg->payload[0])) {
		ult_wake(msg->payload[0]);
	} else if (msg->type == RT_MSG_SPAWN && msg->length == 1) {
		core.spawned(msg->payload[0]);
	} else {
		rt_fatal("unexpected NoC message for the thread scheduler");
	}
}

#ifndef SUBUTAI_BACKEND_SWONLY
/* A reply popped from the window, to its parked thread. */
static void deliver(const struct subutai_reply *reply)
{
	struct ult *t = slot_here(reply->thread) ? ult_of(reply->thread) : NULL;

	if (!t || !t->awaits_reply) {
		rt_fatal("a Subutai reply for a thread that awaits none");
	}
	t->awaits_reply = 0;
	if (--subutai_port_core.replies_awaited == 0) {
		update_shared();
	}
	t->reply = *reply;
	t->replied = 1;
	if (t->state == ULT_BLOCKED && (t->waits_for & ULT_FOR_REPLY)) {
		make_ready(t);
	}
}
#endif

/* Takes what arrived (messages, replies of parked threads, deadlines passed): their threads are
 * ready. */
static void __attribute__((noinline)) take_events_now(void)
{
	struct subutai_ni_msg msg;

	/* The NI's line (in the mask, core_init()) says whether a message waits: one CSR read. */
	while ((irq_pending() & (1u << NI_INTERRUPT)) &&
	       subutai_ni_try_recv(SUBUTAI_NI_NORMAL, &msg) == 0) {
		on_message(&msg);
	}
#ifndef SUBUTAI_BACKEND_SWONLY
	while (subutai_port_core.replies_awaited != 0 && subutai_window_reply_waits()) {
		struct subutai_reply reply;

		subutai_window_pop(&reply);
		deliver(&reply);
	}
#endif
	if (subutai_port_core.timed != 0) {
		uint64_t now = subutai_cycles();

		for (unsigned int i = 0; i < PER_CORE; i++) {
			if (ults[i].state == ULT_BLOCKED && ults[i].deadline != 0 &&
			    now >= ults[i].deadline) {
				make_ready(&ults[i]);
			}
		}
	}
}

/*
 * take_events_now() when there may be something to take: a message (the NI's line), a reply
 * awaited, a deadline. Inline, so that a yield with nothing arrived saves no registers on the
 * stack for it (stores through the write-through cache to shared RAM).
 */
static inline bool events_may_wait(void)
{
	return (irq_pending() & (1u << NI_INTERRUPT)) || subutai_port_core.replies_awaited != 0 ||
	       subutai_port_core.timed != 0;
}

static inline void take_events(void)
{
	if (events_may_wait()) {
		take_events_now();
	}
}

/* The earliest deadline of a blocked thread (0: none). */
static uint64_t earliest_deadline(void)
{
	uint64_t until = 0;

	for (unsigned int i = 0; i < PER_CORE; i++) {
		if (ults[i].state == ULT_BLOCKED && ults[i].deadline != 0 &&
		    (until == 0 || ults[i].deadline < until)) {
			until = ults[i].deadline;
		}
	}
	return until;
}

/*
 * Nothing is ready: the core sleeps in wfi until an event line rises or the earliest deadline
 * (the tile timer, one-shot). The lines are in the mask only meanwhile, with global interrupts
 * off, so wfi wakes and no handler runs (the runtime's handler knows neither line).
 */
static void wait_for_event(void)
{
	uint64_t until = subutai_port_core.timed != 0 ? earliest_deadline() : 0;
	unsigned int mask = irq_getmask();
	unsigned int ie = irq_getie();
	unsigned int lines = EVENT_LINES;

	irq_setie(0);
	if (until != 0) {
		uint64_t now = subutai_cycles();
		uint64_t left = until > now ? until - now : 1;

		timer0_en_write(0);
		timer0_reload_write(0);
		timer0_load_write(left > 0xffffffffu ? 0xffffffffu : (uint32_t)left);
		timer0_ev_pending_write(timer0_ev_pending_read());
		timer0_ev_enable_write(1);
		timer0_en_write(1);
		lines |= 1u << TIMER0_INTERRUPT;
	}
	irq_setmask(mask | lines);
	while (!(irq_pending() & EVENT_LINES) && (until == 0 || subutai_cycles() < until)) {
		__asm__ volatile("wfi");
	}
	if (until != 0) {
		timer0_en_write(0);
		timer0_ev_enable_write(0);
		timer0_ev_pending_write(timer0_ev_pending_read());
	}
	irq_setmask(mask);
	irq_setie(ie);
}

/* Runs the core's ready threads, or waits for one, until self runs again. */
static void schedule(struct ult *self)
{
	for (;;) {
		take_events();
		struct ult *next = take_ready();

		if (next == self) {
			running(self);
			return;
		}
		if (next) {
			switch_to(self, next);
			return;
		}
		wait_for_event();
	}
}

/* Blocks the calling thread until what it waits for (ULT_FOR_*) or its deadline (0: none). */
static void block(struct ult *self, unsigned int waits_for, uint64_t deadline)
{
	self->state = ULT_BLOCKED;
	self->waits_for = waits_for;
	self->deadline = deadline;
	if (deadline != 0) {
		subutai_port_core.timed++;
		update_shared();
	}
	schedule(self);
	self->waits_for = 0;
	self->deadline = 0;
}

/*
 * A thread alone on its core (the port's flag clear: nothing ready, nothing timed, no reply to
 * hand over) with no wake-up counted (the other flag) waits for the next message in wfi itself and
 * takes it, as with one thread per core: its own wake-up ends the sleep uncounted. This path reads
 * nothing of tile RAM (after an acquire's invalidation each line would be a miss). Otherwise the
 * thread blocks.
 */
/* Out of line: the lean path of ult_sleep() keeps a small frame. */
static void __attribute__((noinline)) sleep_blocked(void)
{
	block(core.current, ULT_FOR_WAKE, 0);
}

static void __attribute__((noinline)) take_current_wake(void)
{
	take_wake(core.current);
}

SUBUTAI_SW_PATH void ult_sleep(void)
{
	for (;;) {
		unsigned int mask = irq_getmask();

		if (mask & SUBUTAI_PORT_MASK_WAKES) {
			take_current_wake();
			return;
		}
		if (mask & SUBUTAI_PORT_MASK_SHARED) {
			sleep_blocked();
			continue;
		}
		struct subutai_ni_msg msg;

		while (!(irq_pending() & (1u << NI_INTERRUPT))) {
			__asm__ volatile("wfi");
		}
		if (subutai_ni_try_recv(SUBUTAI_NI_NORMAL, &msg) == 0) {
			if (msg.type == RT_MSG_WAKE && msg.length == 1 &&
			    msg.payload[0] == subutai_port_thread()) {
				return;
			}
			on_message(&msg);
		}
	}
}

SUBUTAI_SW_PATH bool ult_sleep_until(uint64_t deadline)
{
	struct ult *self = core.current;

	while (self->wakes == 0) {
		if (subutai_cycles() >= deadline) {
			return false;
		}
		block(self, ULT_FOR_WAKE, deadline);
	}
	take_wake(self);
	return true;
}

void ult_nap_until(uint64_t deadline)
{
	struct ult *self = core.current;

	while (subutai_cycles() < deadline) {
		block(self, 0, deadline);
	}
}

uint32_t subutai_port_yield(void)
{
	ult_yield();
	return 0;
}

/*
 * The yielding thread takes the place of the ready queue's head, which runs: the ready count and
 * the port's flags stay as they are (make_ready() and take_ready() would each update them).
 */
static inline void yield_to_head(void)
{
	struct ult *self = core.current;
	struct ult *next = core.head;

	if (next) {
		if (next == core.tail) {
			core.head = self;
		} else {
			core.head = next->next;
			core.tail->next = self;
		}
		core.tail = self;
		switch_to(self, next);
	}
}

static void __attribute__((noinline)) yield_after_events(void)
{
	take_events_now();
	yield_to_head();
}

/* With nothing arrived, a yield calls nothing but the switch (a tail call): it keeps no frame. */
void ult_yield(void)
{
	if (events_may_wait()) {
		yield_after_events();
	} else {
		yield_to_head();
	}
}

/* The idle context: runs on the boot stack until a thread is ready, never to come back. */
static void idle_main(void)
{
	for (;;) {
		take_events();
		struct ult *next = take_ready();

		if (next) {
			running(next);
			ult_switch(&core.gone, &next->ctx);
		}
		wait_for_event();
	}
}

static void enter_idle(struct ult_context *from)
{
	uint32_t tp;

	__asm__ volatile("mv %0, tp" : "=r"(tp));
	core.current = NULL;
	memset(&core.idle, 0, sizeof(core.idle));
	core.idle.ra = (uint32_t)(uintptr_t)idle_main;
	core.idle.sp = (uint32_t)(uintptr_t)_estack;
	core.idle.tp = tp;
	ult_switch(from, &core.idle);
	__builtin_unreachable();
}

void ult_exit(void (*release)(unsigned int slot))
{
	struct ult *self = core.current;

	self->state = ULT_FREE;
	core.zombie = self->slot;
	ult_release_pending = release;
	take_events();
	struct ult *next = take_ready();

	if (next) {
		running(next);
		ult_switch(&core.gone, &next->ctx);
	}
	enter_idle(&core.gone);
	__builtin_unreachable();
}

/*
 * The core's events raise their lines, taken by no handler. VexRiscv's pending register shows only
 * the lines of the mask: the NI's stays in it (as subutai_ni_recv() leaves it), so that a watching
 * thread sees a message come; the engine's and the timer's are added while the core idles.
 */
static void core_init(void (*spawned)(unsigned int slot))
{
	core.spawned = spawned;
	ni_ev_enable_write(ni_ev_enable_read() | (1u << CSR_NI_EV_ENABLE_RX_OFFSET));
	irq_setmask(irq_getmask() | (1u << NI_INTERRUPT));
#ifndef SUBUTAI_BACKEND_SWONLY
	subutai_ev_enable_write(subutai_ev_enable_read() |
				(1u << CSR_SUBUTAI_EV_ENABLE_REPLY_OFFSET));
#endif
}

void ult_idle(void (*spawned)(unsigned int slot))
{
	core_init(spawned);
	enter_idle(&core.gone);
	__builtin_unreachable();
}

void ult_adopt(unsigned int slot, void (*spawned)(unsigned int slot))
{
	struct ult *t = ult_of(slot);

	core_init(spawned);
	memset(t, 0, sizeof(*t));
	t->slot = slot;
	t->state = ULT_ACTIVE;
	running(t);
}

#ifndef SUBUTAI_BACKEND_SWONLY
/* The caller's reply is to come through deliver(), from the next time the core schedules. */
static void awaits_delivery(struct ult *self)
{
	if (!self->replied && !self->awaits_reply) {
		self->awaits_reply = 1;
		if (subutai_port_core.replies_awaited++ == 0) {
			update_shared();
		}
	}
}

/* Takes the reply deliver() handed over. */
static void take_delivered(struct ult *self, struct subutai_reply *reply)
{
	self->replied = 0;
	*reply = self->reply;
}

/*
 * See subutai_port.h: the caller parks until its reply, the core running its other threads (or
 * waiting for an event) meanwhile.
 */
uint32_t subutai_port_park(void)
{
	struct ult *self = core.current;

	awaits_delivery(self);
	while (!self->replied) {
		block(self, ULT_FOR_REPLY, 0);
	}
	take_delivered(self, &subutai_port_core.parked);
	return SUBUTAI_WINDOW_INFO_VALID | subutai_port_core.parked.status |
	       (subutai_port_core.parked.value << SUBUTAI_WINDOW_INFO_VALUE_SHIFT);
}

/*
 * A wait with a deadline or a stop (subutai_port.h). While the caller's reply is the next to come
 * and nothing else is ready it watches the window in brief loads, as the bare-metal port always
 * did, until a NoC message comes (another thread may have to run), the deadline passes or stop
 * says so (asked every SUBUTAI_STOP_POLL_CYCLES); otherwise it parks, and wakes at the deadline or
 * at the next time stop is to be asked. An acquire whose caller parked invalidates the data cache
 * when it has its reply (other threads ran meanwhile).
 */
bool subutai_port_wait_long(struct subutai_reply *reply, subutai_id_t id, unsigned int how,
			    uint64_t deadline, struct subutai_stop *stop, unsigned int key,
			    bool *invalidated)
{
	struct ult *self = core.current;
	bool acquire = (how & SUBUTAI_WAIT_ACQUIRE) != 0;
	uint32_t asked = subutai_cycles32();
	bool stopped = false;

	if (!(irq_getmask() & SUBUTAI_PORT_MASK_SHARED) && !self->awaits_reply && !self->replied) {
		uint32_t info = acquire ? subutai_window_reply_brief_acquire(invalidated)
					: subutai_window_reply_brief();

		while (!(info & SUBUTAI_WINDOW_INFO_VALID) &&
		       !(irq_pending() & (1u << NI_INTERRUPT))) {
			if (stop && stop->fn &&
			    subutai_cycles32() - asked >= SUBUTAI_STOP_POLL_CYCLES) {
				asked = subutai_cycles32();
				if ((stopped = stop->stopped = stop->fn(stop->arg))) {
					break;
				}
			}
			if (deadline != 0 && subutai_cycles() >= deadline) {
				break;
			}
			info = subutai_window_reply_brief();
		}
		if (info & SUBUTAI_WINDOW_INFO_VALID) {
			subutai_window_take(info, (how & SUBUTAI_WAIT_FULL) != 0, id, 0, reply);
			subutai_port_unlock(key);
			return true;
		}
	}
	awaits_delivery(self);
	subutai_port_unlock(key);
	for (;;) {
		if (self->replied) {
			take_delivered(self, reply);
			if (acquire) {
				subutai_dcache_invalidate();
				*invalidated = true;
			}
			return true;
		}
		if (stopped || (deadline != 0 && subutai_cycles() >= deadline)) {
			return false;
		}
		uint64_t until = deadline;

		if (stop && stop->fn) {
			uint64_t poll = subutai_cycles() + SUBUTAI_STOP_POLL_CYCLES;

			until = until == 0 || poll < until ? poll : until;
		}
		block(self, ULT_FOR_REPLY, until);
		if (!self->replied && stop && stop->fn && until != deadline) {
			stopped = stop->stopped = stop->fn(stop->arg);
		}
	}
}
#endif
