/*
 * Subutai network interface driver for Zephyr.
 *
 * Each core runs its own kernel and drives its own tile's NI (every core sees it at the same
 * addresses). The register-level work is the OS-agnostic driver of firmware/lib (ni.c, sync.c,
 * built here); this file adds what Zephyr needs around it:
 *
 * - replies of the Subutai-HW engine are popped in the "reply" interrupt and handed to the waiting
 *   thread, found by the thread field of its request, which sleeps on its semaphore meanwhile
 *   (so a core runs its other threads while one waits for a lock, a barrier or a condition);
 * - NoC messages are popped in the "rx" interrupt and dispatched by type to handlers (the PThreads
 *   library's spawn and wake-up messages).
 */
#define DT_DRV_COMPAT subutai_ni

#include <zephyr/device.h>
#include <zephyr/irq.h>
#include <zephyr/kernel.h>
#include <zephyr/logging/log.h>

#include <subutai/soc.h>
#include <subutai/timed.h>
#include <subutai/zephyr.h>
#include <subutai_port.h>

LOG_MODULE_REGISTER(subutai_ni, CONFIG_SUBUTAI_NI_LOG_LEVEL);

#define HANDLER_TYPES 256
#define ENGINE_NODE   DT_INST_PHANDLE(0, engine)
#define INTC_NODE     DT_IRQ_INTC(ENGINE_NODE)
/* How long a spinning thread unmasks a pending interrupt at most (one whose source a handler
 * does not clear must not keep it there). */
#define LET_IN_CYCLES 64

struct subutai_ni_data {
	/* Waiters of this core by id (kernel data: private to the core). */
	struct subutai_waiter *waiters[CONFIG_SUBUTAI_THREADS_MAX];
	/* Application threads of this core that can run: created and not ended, less those asleep
	 * in an untimed wait that only a give of this file ends. A thread alone may spin. */
	volatile unsigned int runnable;
	subutai_msg_handler_t handlers[HANDLER_TYPES];
	uint32_t lost_replies;
	uint32_t lost_messages;
};

static struct subutai_ni_data ni_data;

#ifdef CONFIG_SUBUTAI_NI_RUNNABLE_HOOK
/* Interrupts locked or in an interrupt. */
static inline void runnable_add(int change)
{
	ni_data.runnable += change;
	subutai_ni_runnable_hook(ni_data.runnable);
}
#else
static inline void runnable_add(int change)
{
	ni_data.runnable += change;
}
#endif

/*
 * Whether a waiter may spin before it sleeps (CONFIG_SUBUTAI_BARRIER_WAIT_*): at a barrier under
 * the block policy it sleeps at once, even alone on its core; every other wait spins first.
 */
SUBUTAI_SYNC_PATH static inline bool may_spin(const struct subutai_waiter *waiter)
{
	return !IS_ENABLED(CONFIG_SUBUTAI_BARRIER_WAIT_BLOCK) || !subutai_waiter_at_barrier(waiter);
}

/*
 * Whether a waiter alone on its core spins until its wait ends: not at a barrier under Tidon,
 * whose step comes first (alone, after the brief spin; then it spins on).
 *
 * Tidon's step first: where a laggard of its round is preempted on its core, a barrier waiter
 * under Tidon does not spin before its step. Seed 002 checks the barrier once, then donates
 * (Algorithm 2), and that laggard cannot arrive while it spins: spinning first delayed the
 * donation past the end of the waiter's slot in a tenth of the rounds of
 * tests/programs/tidon_laggard (TS = 100 us), the laggard then waiting a slot more. Where no
 * laggard is here, the brief spin stays: with the step first at every shared core, bodytrack
 * beside ep:2 (8 tiles, Subutai, TS = 0.5 ms) took 2.85 M cycles, against 2.74 M with the spin
 * kept there (its short barrier waits slept and were woken).
 */
SUBUTAI_SYNC_PATH static inline bool spins_alone(const struct subutai_waiter *waiter)
{
	return !IS_ENABLED(CONFIG_SUBUTAI_NI_BARRIER_HOOKS) || !subutai_waiter_at_barrier(waiter);
}

/* Threads of this core whose reply deliver() will hand over (they stopped watching for it).
 * While there are none, the next reply of this core is the one of the thread that runs. Kernel
 * data (tile RAM), read by the request path (subutai_port_wait()). */
unsigned int subutai_replies_awaited;

void subutai_waiter_register(struct subutai_waiter *waiter, unsigned int id)
{
	__ASSERT(id < CONFIG_SUBUTAI_THREADS_MAX, "waiter id %u out of range", id);
	k_sem_init(&waiter->sem, 0, K_SEM_MAX_LIMIT);
	waiter->id = id;
	waiter->thread = k_current_get();
#ifdef CONFIG_SUBUTAI_NI_BARRIER_MARKS
	waiter->at_barrier = false;
#endif
	k_current_get()->custom_data = waiter;
	ni_data.waiters[id] = waiter;
}

void subutai_waiter_unregister(struct subutai_waiter *waiter)
{
	unsigned int key = irq_lock();

	if (waiter->id < CONFIG_SUBUTAI_THREADS_MAX && ni_data.waiters[waiter->id] == waiter) {
		ni_data.waiters[waiter->id] = NULL;
	}
	irq_unlock(key);
}

struct subutai_waiter *subutai_waiter_local(unsigned int id)
{
	return id < CONFIG_SUBUTAI_THREADS_MAX ? ni_data.waiters[id] : NULL;
}

bool subutai_waiter_leave(struct subutai_waiter *waiter)
{
	if (waiter->asleep || waiter->awaited || ni_data.waiters[waiter->id] != waiter) {
		return false;
	}
	ni_data.waiters[waiter->id] = NULL;
	runnable_add(-1);
	return true;
}

void subutai_waiter_arrive(struct subutai_waiter *waiter)
{
	ni_data.waiters[waiter->id] = waiter;
	runnable_add(1);
}

SUBUTAI_SYNC_PATH struct subutai_waiter *subutai_waiter_current(void)
{
	return k_current_get()->custom_data;
}

void subutai_thread_runs(int change)
{
	unsigned int key = irq_lock();

	runnable_add(change);
	irq_unlock(key);
}

unsigned int subutai_threads_runnable(void)
{
	return ni_data.runnable;
}

/* Gives the waiter's semaphore; it can run again. Interrupts locked or in an interrupt. */
SUBUTAI_SYNC_PATH static void give(struct subutai_waiter *waiter)
{
	if (waiter->asleep) {
		waiter->asleep = false;
		runnable_add(1);
	}
#ifdef CONFIG_SUBUTAI_NI_THREAD_HOOKS
	subutai_ni_waking_hook(waiter);
#endif
	k_sem_give(&waiter->sem);
}

SUBUTAI_SYNC_PATH int subutai_waiter_sleep(struct subutai_waiter *waiter, k_timeout_t timeout)
{
	if (K_TIMEOUT_EQ(timeout, K_FOREVER) && subutai_waiter_at_barrier(waiter)) {
		if (IS_ENABLED(CONFIG_SUBUTAI_BARRIER_WAIT_SPIN)) {
			/* Spin: poll, interrupts on (the wake-up or the reply gives the semaphore;
			 * the timeslot's end preempts), so the take below does not block. */
			while (k_sem_count_get(&waiter->sem) == 0) {
			}
		}
#ifdef CONFIG_SUBUTAI_NI_BARRIER_HOOKS
		/* Tidon's step, if the wait came here without it (replies of other threads were
		 * awaited); at most a message per laggard and round. */
		subutai_ni_barrier_sleeping_hook(waiter);
#endif
	}
	unsigned int key = irq_lock();

	/* Only an untimed wait is sure to end with a give of this file (a timeout would not say).
	 */
	if (K_TIMEOUT_EQ(timeout, K_FOREVER) && k_sem_count_get(&waiter->sem) == 0) {
		waiter->asleep = true;
		runnable_add(-1);
	}
#ifdef CONFIG_SUBUTAI_NI_THREAD_HOOKS
	if (k_sem_count_get(&waiter->sem) == 0) {
		subutai_ni_blocking_hook(waiter);
	}
#endif
	irq_unlock(key);
	return k_sem_take(&waiter->sem, timeout);
}

SUBUTAI_SW_PATH void subutai_waiter_spin(struct subutai_waiter *waiter)
{
	uint32_t start = subutai_cycles32();

	if (!may_spin(waiter)) {
		return;
	}
	bool alone_spins = spins_alone(waiter);
	uint32_t spin_cycles = CONFIG_SUBUTAI_REPLY_SPIN_CYCLES;

#ifdef CONFIG_SUBUTAI_NI_BARRIER_HOOKS
	if (!alone_spins && ni_data.runnable > 1 && subutai_ni_barrier_laggard_here_hook(waiter)) {
		spin_cycles = 0; /* Tidon's step first (spins_alone()) */
	}
#endif
	while (k_sem_count_get(&waiter->sem) == 0 && ((alone_spins && ni_data.runnable <= 1) ||
						      subutai_cycles32() - start < spin_cycles)) {
	}
#ifdef CONFIG_SUBUTAI_NI_BARRIER_HOOKS
	if (!alone_spins && k_sem_count_get(&waiter->sem) == 0) {
		/* Tidon's step; alone on its core, it spins on. */
		subutai_ni_barrier_sleeping_hook(waiter);
		while (k_sem_count_get(&waiter->sem) == 0 && ni_data.runnable <= 1) {
		}
	}
#endif
}

SUBUTAI_SW_PATH void subutai_waiter_wake(unsigned int id)
{
	struct subutai_waiter *waiter =
		id < CONFIG_SUBUTAI_THREADS_MAX ? ni_data.waiters[id] : NULL;

	if (waiter == NULL) {
		LOG_ERR("wake-up for unknown waiter %u on tile %u", id, subutai_tile_id());
		return;
	}
	unsigned int key = irq_lock();

	give(waiter);
	irq_unlock(key);
}

void subutai_port_no_waiter(void)
{
	LOG_ERR("a thread without a waiter id uses the Subutai NI");
	k_panic();
	CODE_UNREACHABLE;
}

/* The waiter's reply will come through deliver(): counted once, however often it sleeps. */
SUBUTAI_HW_PATH static void awaits_delivery(struct subutai_waiter *waiter)
{
	if (!waiter->awaited) {
		waiter->awaited = true;
		subutai_replies_awaited++;
	}
}

SUBUTAI_HW_PATH static void delivered(struct subutai_waiter *waiter)
{
	if (waiter->awaited) {
		waiter->awaited = false;
		subutai_replies_awaited--;
	}
}

/* Hands a popped reply to its waiter. Called with interrupts locked or in the reply interrupt. */
SUBUTAI_HW_PATH static void deliver(const struct subutai_reply *reply)
{
	struct subutai_waiter *waiter =
		reply->thread < CONFIG_SUBUTAI_THREADS_MAX ? ni_data.waiters[reply->thread] : NULL;
	if (waiter == NULL) {
		ni_data.lost_replies++;
		LOG_ERR("reply for unknown thread %u (id 0x%08x)", reply->thread, reply->id);
		return;
	}
	delivered(waiter);
	waiter->reply = *reply;
	waiter->replied = true;
	give(waiter);
}

/* Takes a give of the waiter's semaphore: its reply (true) or a wake-up (*woken). */
SUBUTAI_HW_PATH static bool take_given(struct subutai_waiter *waiter, struct subutai_reply *reply,
				       bool *woken)
{
	if (!waiter->replied) {
		*woken = true;
		return false;
	}
	waiter->replied = false;
	*reply = waiter->reply;
	return true;
}

/*
 * An answer the engine gives at once (an uncontended lock, an allocation) comes within a few
 * hundred cycles: the caller watches the reply queue that long with interrupts off (held since
 * the request was written), so it goes on without an interrupt and two context switches. Replies
 * for other threads met meanwhile go to them. Past the spin (a queued lock, a barrier, a
 * condition) the caller sleeps.
 */
SUBUTAI_HW_PATH static bool spin_for_reply(struct subutai_waiter *waiter,
					   struct subutai_reply *reply, bool *woken,
					   bool until_mine)
{
	uint32_t start = subutai_cycles32();
	/* A reply or a wake-up the handler gave before this request: take it first. */
	bool mine = k_sem_count_get(&waiter->sem) != 0 &&
		    k_sem_take(&waiter->sem, K_NO_WAIT) == 0 && take_given(waiter, reply, woken);

	uint32_t spin = may_spin(waiter) ? CONFIG_SUBUTAI_REPLY_SPIN_CYCLES : 0;

	while (!mine && (until_mine || subutai_cycles32() - start < spin)) {
		if (!subutai_window_reply_waits()) {
			continue;
		}
		subutai_window_pop(reply);
		if (reply->thread == waiter->id) {
			mine = true;
		} else {
			deliver(reply);
		}
	}
	return mine;
}

/*
 * The rest of a wait whose caller stopped watching for its reply, with interrupts locked (key):
 * the reply comes from deliver(), asleep.
 */
SUBUTAI_HW_PATH static bool sleep_for_reply(struct subutai_waiter *waiter,
					    struct subutai_reply *reply, uint64_t deadline,
					    unsigned int key, struct subutai_stop *stop, bool mine,
					    bool woken)
{
	if (!mine) {
		awaits_delivery(waiter);
	}
	irq_unlock(key);
	for (;;) {
		/* A wake-up is noted in stop, and ends the wait if its fn says so; without stop it
		 * is ignored. */
		if (woken && stop) {
			stop->stopped = true;
			if (!mine && stop->fn && stop->fn(stop->arg)) {
				return false;
			}
		}
		if (mine) {
			return true;
		}
		k_timeout_t timeout = K_FOREVER;

		if (deadline != 0) {
			uint64_t now = subutai_cycles();

			timeout = deadline > now ? K_CYC(deadline - now) : K_NO_WAIT;
		}
		if (subutai_waiter_sleep(waiter, timeout) != 0) {
			return false;
		}
		woken = false;
		mine = take_given(waiter, reply, &woken);
	}
}

/*
 * Sleeps until the caller's reply arrives, the global cycle counter reaches deadline (0: none) or,
 * woken without its reply (subutai_waiter_wake()), stop's fn says so; false then. A wake-up taken
 * is noted in stop (NULL: ignored). Called with interrupts locked (key, taken before the request
 * was written, so a quick reply is not taken by the interrupt handler first), which it releases.
 */
SUBUTAI_HW_PATH static bool wait_asleep(struct subutai_reply *reply, uint64_t deadline,
					unsigned int key, struct subutai_stop *stop)
{
	struct subutai_waiter *waiter = subutai_waiter_current();
	bool woken = false;
	bool mine = spin_for_reply(waiter, reply, &woken, false);

	return sleep_for_reply(waiter, reply, deadline, key, stop, mine, woken);
}

/*
 * The wait of a holder of an internal lock (subutai_port_spin_enter(): interrupts masked): it
 * keeps its core and watches the window until its reply, handing the others' to their threads.
 * Only replies the engine gives at once are waited for so (an allocation, a free).
 */
SUBUTAI_HW_PATH static bool watch_for_reply(struct subutai_reply *reply, unsigned int key)
{
	bool woken = false;

	spin_for_reply(subutai_waiter_current(), reply, &woken, true);
	irq_unlock(key);
	return true;
}

/* An interrupt other than the reply's waits: the spinning thread lets it in. */
static inline bool other_interrupt_pending(void)
{
	uint32_t pending, mask;

	__asm__ volatile("csrr %0, %1"
			 : "=r"(pending)
			 : "i"(DT_REG_ADDR_BY_NAME(INTC_NODE, irq_pending)));
	__asm__ volatile("csrr %0, %1"
			 : "=r"(mask)
			 : "i"(DT_REG_ADDR_BY_NAME(INTC_NODE, irq_mask)));
	return (pending & mask & ~BIT(DT_IRQN(ENGINE_NODE))) != 0;
}

/*
 * Unmasks interrupts (key) until the pending ones have been taken: VexRiscv takes an interrupt a
 * few instructions after its enable, so an unmask followed at once by a mask would let none in.
 */
SUBUTAI_HW_PATH static void let_interrupts_in(unsigned int key)
{
	uint32_t start = subutai_cycles32();

	irq_unlock(key);
	while (other_interrupt_pending() && subutai_cycles32() - start < LET_IN_CYCLES) {
	}
}

/*
 * Takes what was given the caller meanwhile: true with its reply; a wake-up is noted in *woken.
 */
SUBUTAI_HW_PATH static bool take_delivered(struct subutai_waiter *waiter,
					   struct subutai_reply *reply, bool *woken)
{
	while (k_sem_count_get(&waiter->sem) != 0 && k_sem_take(&waiter->sem, K_NO_WAIT) == 0) {
		if (take_given(waiter, reply, woken)) {
			return true;
		}
	}
	return false;
}

/*
 * Spin, then block. While no other thread of the core waits for a reply, the next reply is the
 * caller's: it watches the window for it, as bare metal does, for as long as it is the only
 * thread of its core that can run, or else for CONFIG_SUBUTAI_REPLY_SPIN_CYCLES (about what
 * sleeping and being woken costs), and then sleeps. A wait that ends within the spin costs no
 * interrupt and no context switch. Another interrupt is let in as if the caller slept (its
 * handler may deliver the reply, wake the caller or switch threads), and the watch goes on if the
 * reply is still to come. A wake-up (rt_wake()) ends a wait that stop can end, as in
 * wait_asleep(). An acquire invalidates the data cache once its brief load has not
 * brought the reply: the loop then touches the window, CSRs, kernel data in tile RAM and its own
 * stack, so the cache is as clean at the grant as if invalidated after it.
 */
SUBUTAI_HW_PATH static bool window_wait(struct subutai_reply *reply, subutai_id_t id, bool acquire,
					bool full, bool *invalidated, unsigned int key,
					struct subutai_stop *stop)
{
	struct subutai_waiter *waiter = subutai_waiter_current();
	/* Read before an invalidation: the waiter is in the shared heap. */
	unsigned int thread = waiter->id;
	uint32_t start = subutai_cycles32();
	bool spins = may_spin(waiter);
	bool alone_spins = spins_alone(waiter);
	uint32_t spin_cycles = CONFIG_SUBUTAI_REPLY_SPIN_CYCLES;

#ifdef CONFIG_SUBUTAI_NI_BARRIER_HOOKS
	if (!alone_spins && ni_data.runnable > 1 && subutai_ni_barrier_laggard_here_hook(waiter)) {
		spin_cycles = 0; /* Tidon's step first (spins_alone()) */
	}
#endif
	*invalidated = false;
	for (;;) {
		if (subutai_replies_awaited != 0) {
			/* Replies of other threads may come first: each says whose it is. */
			return wait_asleep(reply, 0, key, stop);
		}
		uint32_t info = acquire ? subutai_window_reply_brief_acquire(invalidated)
					: subutai_window_reply_brief();

		while (!(info & SUBUTAI_WINDOW_INFO_VALID) && !other_interrupt_pending() && spins &&
		       ((alone_spins && ni_data.runnable <= 1) ||
			subutai_cycles32() - start < spin_cycles)) {
			info = subutai_window_reply_brief();
		}
		if (info & SUBUTAI_WINDOW_INFO_VALID) {
			subutai_window_take(info, full, id, thread, reply);
			irq_unlock(key);
			return true;
		}
		/* Other code runs before the reply: the cache is invalidated after it. */
		*invalidated = false;
		bool step = IS_ENABLED(CONFIG_SUBUTAI_NI_BARRIER_HOOKS) && !alone_spins;

		if (!other_interrupt_pending() && !step) {
			return sleep_for_reply(waiter, reply, 0, key, stop, false, false);
		}
#ifdef CONFIG_SUBUTAI_NI_BARRIER_HOOKS
		if (step && ni_data.runnable <= 1 && !other_interrupt_pending()) {
			/* Alone on its core: only other cores' laggards may be preempted. It tells
			 * them and watches on, interrupts still locked (its reply comes as without
			 * the step). */
			subutai_ni_barrier_notify_hook(waiter);
			alone_spins = true;
			continue;
		}
#endif
		awaits_delivery(waiter);
#ifdef CONFIG_SUBUTAI_NI_BARRIER_HOOKS
		if (step) {
			/* Tidon's step (its donations run other threads, so the reply is
			 * delivered meanwhile); then, alone on its core, it watches on. */
			irq_unlock(key);
			subutai_ni_barrier_sleeping_hook(waiter);
			alone_spins = true;
			spin_cycles = CONFIG_SUBUTAI_REPLY_SPIN_CYCLES;
		} else {
			let_interrupts_in(key);
		}
#else
		let_interrupts_in(key);
#endif
		key = irq_lock();
		bool woken = false;
		bool mine = take_delivered(waiter, reply, &woken);

		if (mine || (woken && stop)) {
			/* Its reply (deliver() counted it), or a wake-up: as asleep. */
			return sleep_for_reply(waiter, reply, 0, key, stop, mine, woken);
		}
		/* Still to come (deliver() would have counted it): watch again. */
		delivered(waiter);
	}
}

/* The port's wait (subutai_port.h): a wait with a deadline sleeps, any other watches first. */
SUBUTAI_HW_PATH bool subutai_ni_wait_reply(struct subutai_reply *reply, subutai_id_t id,
					   unsigned int how, uint64_t deadline,
					   struct subutai_stop *stop, unsigned int key,
					   bool *invalidated)
{
	*invalidated = false;
	if (subutai_spins_held != 0) {
		return watch_for_reply(reply, key);
	}
	if (deadline != 0) {
		return wait_asleep(reply, deadline, key, stop);
	}
	return window_wait(reply, id, (how & SUBUTAI_WAIT_ACQUIRE) != 0,
			   (how & SUBUTAI_WAIT_FULL) != 0, invalidated, key, stop);
}

int subutai_ni_add_handler(unsigned int type, subutai_msg_handler_t handler)
{
	if (type >= HANDLER_TYPES) {
		return -EINVAL;
	}
	ni_data.handlers[type] = handler;
	return 0;
}

SUBUTAI_HW_PATH static void subutai_reply_isr(const void *arg)
{
	ARG_UNUSED(arg);
	while (subutai_window_reply_waits()) {
		struct subutai_reply reply;

		subutai_window_pop(&reply);
		deliver(&reply);
	}
}

SUBUTAI_SYNC_PATH static void subutai_rx_isr(const void *arg)
{
	struct subutai_ni_msg msg;

	ARG_UNUSED(arg);
	while (subutai_ni_try_recv(SUBUTAI_NI_NORMAL, &msg) == 0) {
		subutai_msg_handler_t handler = ni_data.handlers[msg.type];

		if (handler == NULL) {
			ni_data.lost_messages++;
			LOG_ERR("NoC message of unknown type 0x%02x from tile %u", msg.type,
				msg.src);
			continue;
		}
		handler(&msg);
	}
}

static int subutai_ni_init(const struct device *dev)
{
	ARG_UNUSED(dev);
	IRQ_CONNECT(DT_INST_IRQN(0), DT_INST_IRQ(0, priority), subutai_rx_isr, NULL, 0);
	IRQ_CONNECT(DT_IRQN(ENGINE_NODE), DT_IRQ(ENGINE_NODE, priority), subutai_reply_isr, NULL,
		    0);
	/* The NI's event lines stay high while a message or a reply waits. */
	ni_ev_enable_write(1u << CSR_NI_EV_ENABLE_RX_OFFSET);
	subutai_ev_enable_write(1u << CSR_SUBUTAI_EV_ENABLE_REPLY_OFFSET);
	irq_enable(DT_INST_IRQN(0));
	irq_enable(DT_IRQN(ENGINE_NODE));
	LOG_DBG("tile %u: NI at (%u, %u) of a %ux%u mesh", subutai_tile_id(), subutai_tile_x(),
		subutai_tile_y(), DT_INST_PROP(0, mesh_x), DT_INST_PROP(0, mesh_y));
	return 0;
}

BUILD_ASSERT(DT_INST_PROP(0, mesh_x) * DT_INST_PROP(0, mesh_y) == N_TILES,
	     "devicetree and generated headers describe different SoCs");

DEVICE_DT_INST_DEFINE(0, subutai_ni_init, NULL, &ni_data, NULL, PRE_KERNEL_2,
		      CONFIG_SUBUTAI_NI_INIT_PRIORITY, NULL);
