/*
 * stdin/stdout/stderr of picolibc on the SoC's UART.
 */
#include <stdio.h>

#include <generated/csr.h>

static int uart_putc(char c, FILE *file)
{
	(void)file;
	if (c == '\n') {
		uart_putc('\r', file);
	}
	while (uart_txfull_read()) {
	}
	uart_rxtx_write(c);
	return (unsigned char)c;
}

static int uart_getc(FILE *file)
{
	(void)file;
	while (uart_rxempty_read()) {
	}
	int c = uart_rxtx_read();
	uart_ev_pending_write(1 << CSR_UART_EV_PENDING_RX_OFFSET);
	return c;
}

static int uart_flush(FILE *file)
{
	(void)file;
	return 0;
}

static FILE uart_stdio = FDEV_SETUP_STREAM(uart_putc, uart_getc, uart_flush, _FDEV_SETUP_RW);

FILE *const stdin = &uart_stdio;
FILE *const stdout = &uart_stdio;
FILE *const stderr = &uart_stdio;
