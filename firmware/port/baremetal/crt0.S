/*
 * Start-up of every core. All cores run this code from the same address; each one starts on a
 * boot stack at the top of its own tile RAM (the same local address on every tile, so no tile
 * id is needed here), then moves to its stack in shared main RAM. The C side (runtime.c) decides
 * what core 0 and the others do.
 */
	.section .text.start, "ax"
	.global _start
_start:
	j	crt_init
	nop
	nop
	nop
	nop
	nop
	nop
	nop

	.global trap_entry
	.align 4
trap_entry:
	addi	sp, sp, -16*4
	sw	ra,  0*4(sp)
	sw	t0,  1*4(sp)
	sw	t1,  2*4(sp)
	sw	t2,  3*4(sp)
	sw	a0,  4*4(sp)
	sw	a1,  5*4(sp)
	sw	a2,  6*4(sp)
	sw	a3,  7*4(sp)
	sw	a4,  8*4(sp)
	sw	a5,  9*4(sp)
	sw	a6, 10*4(sp)
	sw	a7, 11*4(sp)
	sw	t3, 12*4(sp)
	sw	t4, 13*4(sp)
	sw	t5, 14*4(sp)
	sw	t6, 15*4(sp)
	call	subutai_trap
	lw	ra,  0*4(sp)
	lw	t0,  1*4(sp)
	lw	t1,  2*4(sp)
	lw	t2,  3*4(sp)
	lw	a0,  4*4(sp)
	lw	a1,  5*4(sp)
	lw	a2,  6*4(sp)
	lw	a3,  7*4(sp)
	lw	a4,  8*4(sp)
	lw	a5,  9*4(sp)
	lw	a6, 10*4(sp)
	lw	a7, 11*4(sp)
	lw	t3, 12*4(sp)
	lw	t4, 13*4(sp)
	lw	t5, 14*4(sp)
	lw	t6, 15*4(sp)
	addi	sp, sp, 16*4
	mret

	.text
crt_init:
	.option push
	.option norelax
	la	gp, __global_pointer$
	.option pop
	la	sp, _estack
	la	t0, trap_entry
	csrw	mtvec, t0
	/* Machine external interrupts reach the core (VexRiscv's mask CSR selects which). */
	li	t0, 0x800
	csrw	mie, t0

	/* Private .tile_bss of this core. */
	la	t0, _ftile_bss
	la	t1, _etile_bss
1:	bgeu	t0, t1, 2f
	sw	zero, 0(t0)
	addi	t0, t0, 4
	j	1b
2:
	call	subutai_stack_top
	mv	sp, a0
	call	subutai_start
3:	j	3b
