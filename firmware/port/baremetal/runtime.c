/*
 * Bare-metal start-up of the Subutai SoC: core 0 prepares shared memory, releases the other
 * cores and runs main(); every other core runs tile_main().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <picotls.h> /* after a libc header: needs PICOLIBC_TLS from picolibc.h */

#include <irq.h>
#include <subutai/atomic.h>
#include <subutai/soc.h>

#include "rt.h" /* the PThreads runtime's fatal error, which every port reports its way */

extern char _fbss[], _ebss[], _tile_tls[], __stacks_end[], __stack_size[];

/* Global cycle count at which core 0 released the other cores. */
uint64_t subutai_release_cycle;

#ifndef SUBUTAI_APP_NAME
#define SUBUTAI_APP_NAME "app" /* the build names the application (firmware/Makefile) */
#endif
#ifndef SUBUTAI_APP_ARGS
#define SUBUTAI_APP_ARGS "" /* and its arguments (ARGS) */
#endif
#define APP_ARGV_MAX 16

/* As in hosted C, main may take no arguments or (argc, argv): its name, then the words of the
 * build's ARGS. */
int main(int argc, char **argv);

/* argv from the words of SUBUTAI_APP_ARGS (split at spaces, in place). */
static int app_argv(char **argv)
{
	static char words[] = SUBUTAI_APP_ARGS;
	int argc = 0;

	argv[argc++] = SUBUTAI_APP_NAME;
	for (char *p = words; *p && argc < APP_ARGV_MAX;) {
		while (*p == ' ') {
			*p++ = '\0';
		}
		if (*p) {
			argv[argc++] = p;
			while (*p && *p != ' ') {
				p++;
			}
		}
	}
	argv[argc] = NULL;
	return argc;
}

/* Set-up of the PThreads runtime, linked in when the program uses it. */
void subutai_pthread_init(void) __attribute__((weak));

static void halt(void)
{
	irq_setie(0);
	for (;;) {
		__asm__ volatile("wfi");
	}
}

__attribute__((weak)) void tile_main(unsigned int tile)
{
	(void)tile;
}

void subutai_exit(int code)
{
	fflush(stdout);
	while (!uart_txempty_read()) {
	}
#ifdef CSR_SIM_CTRL_BASE
	sim_ctrl_exit_write(code & 0xff);
#else
	printf("@exit %d\n", code);
#endif
	halt();
	__builtin_unreachable();
}

void _exit(int code)
{
	subutai_exit(code);
}

void subutai_ni_isr(void);

/* Interrupt sources of this core, dispatched by number. */
SUBUTAI_SYNC_PATH __attribute__((weak)) void subutai_isr(uint32_t pending)
{
	if (pending & (1u << NI_INTERRUPT)) {
		subutai_ni_isr();
	}
	if (pending & (1u << TIMER0_INTERRUPT)) {
		/* Only a sleep (rt_nap_until()) arms the timer: its wake-up is done, the line
		 * drops. */
		timer0_ev_enable_write(0);
	}
}

SUBUTAI_SYNC_PATH void subutai_trap(void)
{
	uint32_t mcause = csrr(mcause);

	if (mcause & 0x80000000u) {
		subutai_isr(irq_pending() & irq_getmask());
		return;
	}
	printf("\n*** trap on tile %u: mcause=%lu mepc=0x%08lx mtval=0x%08lx\n", subutai_tile_id(),
	       (unsigned long)mcause, csrr(mepc), csrr(mtval));
	subutai_exit(3);
}

/* Top of this core's stack in shared main RAM (called on the boot stack). */
uintptr_t subutai_stack_top(void)
{
	return (uintptr_t)__stacks_end - subutai_tile_id() * (uintptr_t)__stack_size;
}

void subutai_start(void)
{
	unsigned int tile = subutai_tile_id();

	_init_tls(_tile_tls);
	_set_tls(_tile_tls);

	if (tile != 0) {
		/* Core 0 wrote shared memory before releasing this core. */
		subutai_dcache_invalidate();
		tile_main(tile);
		halt();
	}

	memset(_fbss, 0, (uintptr_t)_ebss - (uintptr_t)_fbss);
	/* Shared atomic variables start from zero, also when a program is reloaded without a reset.
	 */
	for (unsigned int i = 0; i < ATOMIC_WORDS; i++) {
		subutai_atomic_store(i, 0);
	}
	if (subutai_pthread_init) {
		subutai_pthread_init();
	}
	subutai_release_cycle = subutai_cycles();
	subutai_release_cores(SUBUTAI_ALL_CORES);
	/* On this frame, which lives as long as main() runs: no static data that would move the
	 * program's own. */
	char *argv[APP_ARGV_MAX + 1];
	int argc = app_argv(argv);

	exit(main(argc, argv));
}

void rt_fatal(const char *what)
{
	printf("\n*** pthread runtime on tile %u: %s\n", subutai_tile_id(), what);
	subutai_exit(4);
}
