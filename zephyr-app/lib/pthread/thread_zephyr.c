/*
 * Zephyr port of the PThreads library's threads: several Zephyr threads per core, on every core.
 *
 * pthread_create() places a thread on a core (pinned by pthread_attr_setcore_np(), otherwise by
 * the placement policy: round-robin or least-loaded). On its own core the thread is created at
 * once; on another core the creator sends a spawn message and that core's service thread creates
 * it. A thread's k_thread, stack and thread-specific data are one block of the shared heap,
 * allocated and freed by its own core (a kernel only ever touches its own threads).
 *
 * Waiters of the software objects and of joins are thread slots: rt_wake() gives the semaphore
 * of the slot's thread, directly on the same core, by a NoC wake-up message on another. The
 * Subutai-HW engine answers each thread by its slot too (drivers/subutai/subutai_ni.c).
 *
 * The application's main (renamed subutai_app_main at compile time) runs in the main thread,
 * slot 0, on core 0, once every kernel serves; its return ends the program.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <zephyr/init.h>
#include <zephyr/kernel.h>
#include <zephyr/logging/log.h>

#include <subutai/timed.h>
#include <subutai/zephyr.h>

#include "rt.h"
#include "sched_zephyr.h"

LOG_MODULE_REGISTER(subutai_pthread, CONFIG_SUBUTAI_NI_LOG_LEVEL);

#define SUBUTAI_APP_MAX_ARGS 32

BUILD_ASSERT(RT_THREADS_MAX == CONFIG_SUBUTAI_THREADS_MAX, "thread slots and NI waiter ids differ");

/* A thread, in one block of the shared heap with its stack behind it. */
struct zthread {
	struct k_thread thread;
	struct subutai_sched_thread sched; /* its waiter first */
	struct rt_key_value keys[SUBUTAI_PTHREAD_KEYS];
	pthread_t self;
	unsigned int slot;
	unsigned int home; /* the core it goes back to after a move for a donation */
	size_t stack_size;
	k_thread_stack_t *stack;
};

/* Requests to a core's service thread. */
struct service_msg {
	enum {
		SERVICE_SPAWN,
		SERVICE_REAP,
		SERVICE_SEND_HOME
	} op;
	unsigned int slot;
	struct zthread *z;
};

K_MSGQ_DEFINE(service_q, sizeof(struct service_msg), 2 * CONFIG_SUBUTAI_THREADS_MAX, 4);
static K_KERNEL_STACK_DEFINE(service_stack, CONFIG_SUBUTAI_SERVICE_STACK_SIZE);
static struct k_thread service_thread;

int subutai_app_main(int argc, char **argv);

void rt_fatal(const char *what)
{
	printk("\n*** pthread library on tile %u: %s\n", rt_core(), what);
	subutai_exit(4);
}

SUBUTAI_SYNC_PATH static struct zthread *current_zthread(void)
{
	struct subutai_waiter *waiter = subutai_waiter_current();

	if (waiter == NULL) {
		rt_fatal("pthread call from a thread that is not a pthread");
	}
	return CONTAINER_OF(waiter, struct zthread, sched.waiter);
}

SUBUTAI_SYNC_PATH unsigned int rt_waiter(void)
{
	return current_zthread()->slot;
}

SUBUTAI_SYNC_PATH pthread_t rt_current(void)
{
	return current_zthread()->self;
}

struct rt_key_value *rt_key_values(void)
{
	return current_zthread()->keys;
}

unsigned int pthread_core_np(void)
{
	return rt_core();
}

void rt_yield(void)
{
	k_yield();
}

size_t rt_stack_default(void)
{
	return CONFIG_SUBUTAI_PTHREAD_STACK_SIZE;
}

size_t rt_stack_max(void)
{
	return CONFIG_SUBUTAI_PTHREAD_STACK_MAX;
}

bool rt_core_can_host(unsigned int core)
{
	return core < subutai_num_tiles();
}

/* Spin, then block (the driver's subutai_waiter_spin()): a wake-up that comes within the spin
 * costs its interrupt but no context switch. */
SUBUTAI_SW_PATH void rt_sleep(void)
{
	struct subutai_waiter *waiter = &current_zthread()->sched.waiter;

	subutai_waiter_spin(waiter);
	subutai_waiter_sleep(waiter, K_FOREVER);
}

bool rt_sleep_until(uint64_t deadline)
{
	if (deadline == 0) {
		rt_sleep();
		return true;
	}
	uint64_t now = subutai_cycles();
	k_timeout_t timeout = deadline > now ? K_CYC(deadline - now) : K_NO_WAIT;

	return subutai_waiter_sleep(&current_zthread()->sched.waiter, timeout) == 0;
}

/*
 * Kernel timeouts end on a tick (CONFIG_SYS_CLOCK_TICKS_PER_SEC; 10 ms at 100 per second), so a
 * kernel sleep covers whole ticks short of the deadline and the last part yields (the core's other
 * threads run) while polling the global cycle counter: a short nap, such as a timed lock's pause
 * between tries, does not turn into a tick.
 */
void rt_nap_until(uint64_t deadline)
{
	const uint64_t tick = k_ticks_to_cyc_ceil64(1);

	for (uint64_t now = subutai_cycles(); now < deadline; now = subutai_cycles()) {
		if (deadline - now > tick) {
			k_sleep(K_CYC(deadline - now - tick));
		} else {
			k_yield();
		}
	}
}

/* A canceller wakes a thread in a nap or a hardware condition wait (the driver tells a wake-up
 * from its reply). */
uint32_t rt_wait_tag(void)
{
	return RT_WAIT_WAKE_TAG(rt_waiter());
}

/* As rt_nap_until(), but a wake-up of rt_wake() ends it (and is taken). */
bool rt_nap_cancellable(uint64_t deadline, unsigned int slot)
{
	struct k_sem *sem = &current_zthread()->sched.waiter.sem;
	const uint64_t tick = k_ticks_to_cyc_ceil64(1);

	ARG_UNUSED(slot);
	for (uint64_t now = subutai_cycles(); now < deadline; now = subutai_cycles()) {
		k_timeout_t timeout = K_NO_WAIT;

		if (deadline - now > tick) {
			timeout = K_CYC(deadline - now - tick);
		} else {
			k_yield();
		}
		if (k_sem_take(sem, timeout) == 0) {
			return true;
		}
	}
	return false;
}

SUBUTAI_SW_PATH void rt_wake(unsigned int waiter, uint32_t what)
{
	unsigned int core = subutai_atomic_load(RT_THREAD_CORE + waiter);

	ARG_UNUSED(what);
	if (core == rt_core()) {
		subutai_waiter_wake(waiter);
		return;
	}
	uint32_t payload = waiter;

	if (subutai_ni_send(core, SUBUTAI_NI_NORMAL, RT_MSG_WAKE, &payload, 1) != 0) {
		rt_fatal("cannot send a wake-up message");
	}
}

/* Live threads per core are counted in the core_busy words. */
int rt_place(const pthread_attr_t *attr)
{
	unsigned int n = subutai_num_tiles();
	unsigned int core;

	if (attr && attr->core >= 0) {
		core = attr->core;
	} else if (IS_ENABLED(CONFIG_SUBUTAI_PLACEMENT_LEAST_LOADED)) {
		core = 0;
		for (unsigned int c = 1; c < n; c++) {
			if (subutai_atomic_load(RT_CORE_BUSY + c) <
			    subutai_atomic_load(RT_CORE_BUSY + core)) {
				core = c;
			}
		}
	} else {
		core = subutai_atomic_fetch_add(RT_PLACE_RR, 1) % n;
	}
	subutai_atomic_fetch_add(RT_CORE_BUSY + core, 1);
	return core;
}

void rt_unplace(unsigned int core)
{
	subutai_atomic_fetch_add(RT_CORE_BUSY + core, (uint32_t)-1);
}

static void thread_end(struct zthread *z, void *retval)
{
	unsigned int slot = z->slot;

	rt_keys_exit();
	subutai_sched_thread_ends(&z->sched.waiter);
	/* The thread sleeps no more: forget its waiter before the slot can be reused (once
	 * rt_thread_finish() lets it be joined), so that a new thread of that slot on this core is
	 * never forgotten by a late clean-up of this one. */
	subutai_waiter_unregister(&z->sched.waiter);
	rt_thread_finish(slot, retval);
	rt_unplace(rt_core());
	/* This core's service thread frees the block once the thread is gone. */
	struct service_msg msg = {.op = SERVICE_REAP, .z = z};

	if (k_msgq_put(&service_q, &msg, K_FOREVER) != 0) {
		rt_fatal("cannot queue a thread's clean-up");
	}
	if (subutai_atomic_fetch_add(RT_LIVE, (uint32_t)-1) == 1) {
		/* The process ends with its last thread (the main thread may have exited already).
		 */
		exit(0);
	}
	subutai_thread_runs(-1);
}

static void thread_entry(void *p1, void *p2, void *p3)
{
	struct zthread *z = p1;

	ARG_UNUSED(p2);
	ARG_UNUSED(p3);
	subutai_waiter_register(&z->sched.waiter, z->slot);
	/* Thread start is an acquire: the creator's writes become visible. */
	subutai_dcache_invalidate();
	subutai_sched_thread_begins(&z->sched.waiter);
	void *retval = rt_threads[z->slot].start(rt_threads[z->slot].arg);

	thread_end(z, retval);
}

static int create_local(unsigned int slot)
{
	subutai_dcache_invalidate();
	/* Kernel threads (no user mode): the block holds the k_thread, then the aligned stack. */
	size_t stack_size = K_KERNEL_STACK_LEN(rt_threads[slot].stacksize);
	size_t head = ROUND_UP(sizeof(struct zthread), Z_KERNEL_STACK_OBJ_ALIGN);
	struct zthread *z = aligned_alloc(Z_KERNEL_STACK_OBJ_ALIGN, head + stack_size);

	if (!z) {
		return EAGAIN;
	}
	memset(z, 0, sizeof(*z));
	z->slot = slot;
	z->home = rt_core();
	z->self = RT_HANDLE(slot, subutai_atomic_load(RT_THREAD_GEN + slot));
	z->stack = (k_thread_stack_t *)((char *)z + head);
	z->stack_size = rt_threads[slot].stacksize;
	/* Counted before it can run, so no thread of this core spins while it waits to. */
	subutai_thread_runs(1);
	k_thread_create(&z->thread, z->stack, z->stack_size, thread_entry, z, NULL, NULL,
			CONFIG_SUBUTAI_PTHREAD_PRIORITY, 0, K_NO_WAIT);
	return 0;
}

int rt_spawn(unsigned int core, unsigned int slot)
{
	subutai_sched_thread_created(slot);
	if (core == rt_core()) {
		return create_local(slot);
	}
	uint32_t payload = slot;

	if (subutai_ni_send(core, SUBUTAI_NI_NORMAL, RT_MSG_SPAWN, &payload, 1) != 0) {
		return EAGAIN;
	}
	return 0;
}

void pthread_exit(void *retval)
{
	rt_exit_cleanup();
	thread_end(current_zthread(), retval);
	k_thread_abort(k_current_get());
	CODE_UNREACHABLE;
}

SUBUTAI_SW_PATH static void on_wake(const struct subutai_ni_msg *msg)
{
	unsigned int id = msg->payload[0];

#ifdef CONFIG_SUBUTAI_SCHED_MIGRATION
	/* Sent before its thread moved on: after it. */
	if (id < CONFIG_SUBUTAI_THREADS_MAX && subutai_waiter_local(id) == NULL &&
	    subutai_atomic_load(RT_THREAD_CORE + id) != rt_core()) {
		rt_wake(id, 0);
		return;
	}
#endif
	subutai_waiter_wake(id);
}

#ifdef CONFIG_SUBUTAI_SCHED_MIGRATION
/*
 * Threads that move between kernels (seed 002's laggard run on its waiter's core, and the
 * migrating baseline's steals). A thread's k_thread, stack, keys and waiter are one block of
 * the shared heap and its other state is in the atomic unit's words of its slot, so a move hands
 * over the block: the source kernel suspends the thread (out of its run queue; only a thread
 * that is ready and not running moves, its context saved on its stack), forgets its waiter,
 * names the new core in the slot's core word and sends the block in a message; the target
 * kernel takes the waiter and resumes the thread in its own run queue. Every kernel runs the same
 * code at the same addresses with its own data at the same addresses (tile RAM), so the thread
 * goes on from its saved context on the new core. It does not move while it waits for anything
 * the old core's NI would hand it (an engine's reply, a sleep), nor while it holds a mutex (an
 * engine records the holder by its core: subutai_sched_may_move()).
 */
static bool ready_not_running(const struct zthread *z)
{
	uint8_t state = z->thread.base.thread_state;

	return &z->thread != k_sched_current_thread_query() && (state & _THREAD_QUEUED) != 0 &&
	       (state & (_THREAD_DUMMY | _THREAD_PENDING | _THREAD_SLEEPING | _THREAD_DEAD |
			 _THREAD_SUSPENDED | _THREAD_ABORTING)) == 0;
}

bool subutai_thread_move(struct subutai_waiter *waiter, unsigned int to, uint32_t how)
{
	struct zthread *z = CONTAINER_OF(waiter, struct zthread, sched.waiter);

	if (to == rt_core() || !rt_core_can_host(to) || !ready_not_running(z) ||
	    !subutai_sched_may_move(waiter) || !subutai_waiter_leave(waiter)) {
		return false;
	}
	uint32_t start = subutai_cycles32();

	k_thread_suspend(&z->thread);
	subutai_sched_thread_ends(waiter);
	rt_unplace(rt_core());
	subutai_atomic_fetch_add(RT_CORE_BUSY + to, 1);
	subutai_atomic_store(RT_THREAD_CORE + z->slot, to);
	if (how & SUBUTAI_MOVE_STAY) {
		z->home = to;
	}
	uint32_t payload[4] = {z->slot, (uint32_t)(uintptr_t)z, how, start};

	if (subutai_ni_send(to, SUBUTAI_NI_NORMAL, RT_MSG_MOVE, payload, 4) != 0) {
		rt_fatal("cannot send a thread to another core");
	}
	subutai_sched_move_cost(subutai_cycles32() - start, 0);
	return true;
}

static void on_move(const struct subutai_ni_msg *msg)
{
	uint32_t arrival = subutai_cycles32();
	struct zthread *z = (struct zthread *)(uintptr_t)msg->payload[1];

	subutai_dcache_invalidate(); /* its block and stack, as its last core left them */
	subutai_waiter_arrive(&z->sched.waiter);
	subutai_sched_thread_arrives(&z->sched.waiter, msg->payload[2]);
	k_thread_resume(&z->thread);

	uint32_t ready = subutai_cycles32();

	subutai_sched_move_cost(ready - arrival, ready - msg->payload[3]);
}

bool subutai_thread_away(const struct subutai_waiter *waiter)
{
	return CONTAINER_OF(waiter, const struct zthread, sched.waiter)->home != rt_core();
}

void subutai_thread_send_home_later(struct subutai_waiter *waiter)
{
	struct service_msg msg = {.op = SERVICE_SEND_HOME,
				  .z = CONTAINER_OF(waiter, struct zthread, sched.waiter)};

	(void)k_msgq_put(&service_q, &msg, K_NO_WAIT); /* full: it stays, for now */
}

/* In the service thread, which preempted the thread (its context is saved): home if it can go
 * now, else at a later timeslot's end. */
static void send_home(struct zthread *z)
{
	unsigned int key = irq_lock();

	if (z->home != rt_core() && subutai_waiter_local(z->slot) == &z->sched.waiter) {
		(void)subutai_thread_move(&z->sched.waiter, z->home, SUBUTAI_MOVE_HOME);
	}
	irq_unlock(key);
}
#else
static void send_home(struct zthread *z)
{
	ARG_UNUSED(z);
}
#endif

static void on_spawn(const struct subutai_ni_msg *msg)
{
	struct service_msg req = {.op = SERVICE_SPAWN, .slot = msg->payload[0]};

	if (k_msgq_put(&service_q, &req, K_NO_WAIT) != 0) {
		rt_fatal("spawn queue full");
	}
}

/* Creates the threads other cores place here and frees the blocks of finished ones. */
static void service_main(void *p1, void *p2, void *p3)
{
	ARG_UNUSED(p1);
	ARG_UNUSED(p2);
	ARG_UNUSED(p3);
	for (;;) {
		struct service_msg msg;

		k_msgq_get(&service_q, &msg, K_FOREVER);
		if (msg.op == SERVICE_SPAWN) {
			if (create_local(msg.slot) != 0) {
				rt_fatal("no memory for a thread placed on this core");
			}
		} else if (msg.op == SERVICE_REAP) {
			k_thread_join(&msg.z->thread, K_FOREVER);
			free(msg.z);
		} else {
			send_home(msg.z);
		}
	}
}

/* Every kernel: serve spawns and wake-ups, then count itself ready. */
static int subutai_pthread_init(void)
{
	subutai_ni_add_handler(RT_MSG_WAKE, on_wake);
	subutai_ni_add_handler(RT_MSG_SPAWN, on_spawn);
#ifdef CONFIG_SUBUTAI_SCHED_MIGRATION
	subutai_ni_add_handler(RT_MSG_MOVE, on_move);
#endif
	k_thread_create(&service_thread, service_stack, K_KERNEL_STACK_SIZEOF(service_stack),
			service_main, NULL, NULL, NULL, CONFIG_SUBUTAI_SERVICE_PRIORITY, 0,
			K_NO_WAIT);
	k_thread_name_set(&service_thread, "subutai_service");
	subutai_atomic_fetch_add(RT_READY, 1);
	return 0;
}

SYS_INIT(subutai_pthread_init, APPLICATION, 90);

static void *main_thread(void *arg)
{
	/* The application's arguments (CONFIG_SUBUTAI_APP_ARGS), split at spaces. */
	static char args[] = CONFIG_SUBUTAI_APP_ARGS;
	static char *argv[SUBUTAI_APP_MAX_ARGS + 2] = {CONFIG_SUBUTAI_APP_NAME};
	int argc = 1;

	ARG_UNUSED(arg);
	for (char *p = args; *p != '\0';) {
		while (*p == ' ') {
			*p++ = '\0';
		}
		if (*p == '\0') {
			break;
		}
		if (argc == SUBUTAI_APP_MAX_ARGS + 1) {
			rt_fatal("too many words in CONFIG_SUBUTAI_APP_ARGS");
		}
		argv[argc++] = p;
		while (*p != ' ' && *p != '\0') {
			p++;
		}
	}
	exit(subutai_app_main(argc, argv));
	return NULL;
}

/* Zephyr's main on every core: core 0 starts the application once every kernel serves. */
int main(void)
{
	if (rt_core() != 0) {
		return 0;
	}
	while (subutai_atomic_load(RT_READY) != subutai_num_tiles()) {
		k_busy_wait(10);
	}
	/* The main thread: slot 0 on core 0, cannot be joined. */
	uint32_t gen = rt_next_gen();

	subutai_atomic_store(RT_THREAD_GEN + 0, gen);
	subutai_atomic_store(RT_THREAD_CLAIM + 0, 1);
	subutai_atomic_store(RT_THREAD_CORE + 0, 0);
	subutai_atomic_store(RT_CORE_BUSY + 0, 1);
	subutai_atomic_store(RT_LIVE, 1);
	rt_cancel_reset(0);
	/* Round-robin placement starts after the main thread's core. */
	subutai_atomic_store(RT_PLACE_RR, 1);
	rt_threads[0].start = main_thread;
	rt_threads[0].stacksize = CONFIG_SUBUTAI_MAIN_STACK_SIZE;
	if (create_local(0) != 0) {
		rt_fatal("no memory for the main thread");
	}
	return 0;
}
