/*
 * windowtest: the request path of the Subutai driver under conditions the other tests do not
 * make: a blocking wait of more than ten million cycles, an interrupt of another source that
 * becomes pending while the core waits, every error answer, and a full scratchpad, all through
 * the port's direct window. Needs 2 tiles or more.
 *
 * Core 1 computes for LONG_WAIT cycles, writes a value and arrives at a barrier; core 0 waits at
 * that barrier from the start, with its timer armed to fire during the wait.
 */
#include <errno.h>
#include <irq.h>
#include <stdio.h>

#include <subutai/sync.h>

#define LONG_WAIT 10500000u

struct shared {
	volatile uint32_t ready;
	subutai_id_t barrier;
	uint32_t value;  /* written by core 1 before the barrier */
	uint32_t arrive; /* cycle of core 1's arrival */
};

static struct shared sh;
static volatile uint32_t timer_fired __tile_bss;
static volatile uint32_t timer_cycle __tile_bss;

static void check(const char *name, int ok, long value)
{
	printf("@subutai {\"program\":\"windowtest\",\"check\":\"%s\",\"ok\":%d,\"value\":%ld}\n",
	       name, ok ? 1 : 0, value);
}

/* The timer's interrupt, beside the runtime's NI dispatch. */
void subutai_isr(uint32_t pending)
{
	if (pending & (1u << TIMER0_INTERRUPT)) {
		timer_fired++;
		timer_cycle = subutai_cycles32();
		timer0_en_write(0);
		timer0_ev_pending_write(timer0_ev_pending_read());
	}
}

void tile_main(unsigned int tile)
{
	while (!sh.ready) {
		subutai_dcache_invalidate();
	}
	subutai_dcache_invalidate();
	if (tile == 1) {
		uint32_t t0 = subutai_cycles32();

		while (subutai_cycles32() - t0 < LONG_WAIT) {
		}
		sh.value = 0x5a5a1234;
		sh.arrive = subutai_cycles32();
	}
	subutai_barrier_wait(sh.barrier);
}

int main(void)
{
	unsigned int n = subutai_num_tiles();
	subutai_id_t ec;
	int err;

	if (n < 2) {
		printf("windowtest: needs at least 2 tiles\n");
		return 1;
	}
	/* Error answers of requests that wait for a reply. */
	if (subutai_mutex_alloc(0, true, &ec) != 0) {
		return 2;
	}
	check("lock_ok", subutai_mutex_lock(ec) == 0, 0);
	err = subutai_mutex_lock(ec);
	check("relock_edeadlk", err == EDEADLK, err);
	err = subutai_mutex_trylock(ec);
	check("trylock_ebusy", err == EBUSY, err);
	err = subutai_free(ec);
	check("free_held_ebusy", err == EBUSY, err);
	check("unlock_ok", subutai_mutex_unlock(ec) == 0, 0);
	err = subutai_mutex_unlock(ec);
	check("unlock_not_held_eperm", err == EPERM, err);
	check("free_ok", subutai_free(ec) == 0, 0);
	err = subutai_mutex_lock(ec);
	check("lock_freed_einval", err == EINVAL, err);
	err = subutai_mutex_lock(SUBUTAI_ID_F | SUBUTAI_ALLOC_TARGET(n - 1) | 0x3ff);
	check("lock_garbage_einval", err == EINVAL, err);
	err = subutai_barrier_wait(0x12345678);
	check("barrier_garbage_einval", err == EINVAL, err);

	/* A full scratchpad: allocations end with EAGAIN, and every one is freed again. */
	static subutai_id_t all[1024];
	unsigned int count = 0;

	while (count < 1024 && (err = subutai_mutex_alloc(1, false, &all[count])) == 0) {
		count++;
	}
	check("alloc_full_eagain", err == EAGAIN && count > 0, count);
	int freed = 0;

	for (unsigned int i = 0; i < count; i++) {
		freed += subutai_free(all[i]) == 0;
	}
	check("free_all", freed == (int)count, freed);

	/* The long wait, with the timer firing in the middle of it. */
	if (subutai_barrier_alloc(n - 1, n, &sh.barrier) != 0) {
		return 2;
	}
	sh.ready = 1;
	timer0_en_write(0);
	timer0_reload_write(0);
	timer0_load_write(100000);
	timer0_ev_pending_write(timer0_ev_pending_read());
	timer0_ev_enable_write(1);
	irq_setmask(irq_getmask() | (1u << TIMER0_INTERRUPT));
	irq_setie(1);
	timer0_en_write(1);
	uint32_t t0 = subutai_cycles32();

	err = subutai_barrier_wait(sh.barrier);
	uint32_t t1 = subutai_cycles32();

	for (volatile int i = 0; i < 100; i++) {
	}
	irq_setie(0);
	check("long_wait_ok", err == 0 || err == SUBUTAI_BARRIER_SERIAL_THREAD, err);
	check("long_wait_over_10M", t1 - t0 > 10000000u, (t1 - t0) > 10000000u);
	check("long_wait_sees_data", sh.value == 0x5a5a1234, sh.value == 0x5a5a1234);
	check("timer_taken_once", timer_fired == 1, timer_fired);
	/* The timer fired 100k cycles into the wait; its handler ran once the wait was over. */
	check("timer_taken_after_the_wait", (int32_t)(timer_cycle - sh.arrive) > 0,
	      (int32_t)(timer_cycle - sh.arrive) > 0);
	subutai_free(sh.barrier);
	printf("windowtest done\n");
	return 0;
}
