/*
 * Start-up of the Subutai SoC under Zephyr: one kernel per tile from one image.
 *
 * Every core runs the same image from main RAM (code and the data images of the kernels); each
 * kernel's own data is in its tile's private RAM, where Zephyr's start-up copies and zeroes it on
 * every core. What the cores share (the application's data, the heap, thread stacks) is in the
 * shared part of main RAM (linker/shared.ld): core 0 prepares it before it releases the others,
 * which then boot their own kernels.
 *
 * Also here: the console, whose lines from different cores never mix, exit(), and the state of
 * the library's internal locks a core's running thread holds (subutai_port.h).
 */
#include <string.h>

#include <zephyr/device.h>
#include <zephyr/drivers/uart.h>
#include <zephyr/init.h>
#include <zephyr/kernel.h>
#include <zephyr/sys/libc-hooks.h>
#include <zephyr/sys/printk-hooks.h>

#include <subutai/atomic.h>
#include <subutai/soc.h>

#include "rt.h"

#define CONSOLE_LINE 160

extern char __subutai_shared_bss_start[], __subutai_shared_bss_end[];
extern char __subutai_tile_bss_start[], __subutai_tile_bss_end[];

static const struct device *const console = DEVICE_DT_GET(DT_CHOSEN(zephyr_console));

/* Kernel data: the holds of internal locks by this core's running thread, and the interrupt
 * lock's key of the outermost (subutai_port_spin_enter()). */
unsigned int subutai_spins_held;
unsigned int subutai_spins_key;

/* This core's console line (kernel data: private to the core). */
static char line[CONSOLE_LINE];
static size_t line_len;

static int subutai_boot_shared(void)
{
	/* Every core: its per-core variables (__tile_bss). */
	memset(__subutai_tile_bss_start, 0,
	       (uintptr_t)__subutai_tile_bss_end - (uintptr_t)__subutai_tile_bss_start);
	if (subutai_tile_id() != 0) {
		/* Core 0 wrote shared memory before it released this core. */
		subutai_dcache_invalidate();
		return 0;
	}
	memset(__subutai_shared_bss_start, 0,
	       (uintptr_t)__subutai_shared_bss_end - (uintptr_t)__subutai_shared_bss_start);
	/* Shared atomic variables start from zero, also when an image is reloaded without reset. */
	for (unsigned int i = 0; i < ATOMIC_WORDS; i++) {
		subutai_atomic_store(i, 0);
	}
	return 0;
}

SYS_INIT(subutai_boot_shared, PRE_KERNEL_1, 0);

/* Lines go out whole, one core at a time. Called with interrupts locked. */
static void console_flush(void)
{
	rt_spin_lock(RT_CONSOLE_LOCK);
	for (size_t i = 0; i < line_len; i++) {
		if (line[i] == '\n') {
			uart_poll_out(console, '\r');
		}
		uart_poll_out(console, line[i]);
	}
	rt_spin_unlock(RT_CONSOLE_LOCK);
	line_len = 0;
}

static int console_putc(int c)
{
	unsigned int key = irq_lock();

	line[line_len++] = (char)c;
	if (c == '\n' || line_len == sizeof(line)) {
		console_flush();
	}
	irq_unlock(key);
	return c;
}

static int subutai_console_init(void)
{
	if (!device_is_ready(console)) {
		return -ENODEV;
	}
	__stdout_hook_install(console_putc);
	__printk_hook_install(console_putc);
	return 0;
}

SYS_INIT(subutai_console_init, POST_KERNEL, 99);

/* Core 0 starts the others once its kernel serves (their kernels then boot on their own). */
static int subutai_release(void)
{
	if (subutai_tile_id() == 0) {
		subutai_release_cores(SUBUTAI_ALL_CORES);
	}
	return 0;
}

SYS_INIT(subutai_release, APPLICATION, 99);

FUNC_NORETURN void subutai_exit(int code)
{
	unsigned int key = irq_lock();

	if (line_len != 0) {
		console_flush();
	}
	irq_unlock(key);
	while (!uart_txempty_read()) {
	}
#ifdef CSR_SIM_CTRL_BASE
	sim_ctrl_exit_write(code & 0xff);
#else
	printk("@exit %d\n", code);
#endif
	/* The other kernels go on; this one stops here. */
	(void)irq_lock();
	for (;;) {
		arch_cpu_idle();
	}
}

/* exit() of the application ends the program, not one kernel: the C library's exit() calls
 * _exit(), linked with --wrap=_exit.
 */
FUNC_NORETURN void __wrap__exit(int code)
{
	subutai_exit(code);
}
