/*
 * Context switch of the bare-metal user-level threads (ult.h): QuickThreads' idea, the caller
 * saves what the ABI says survives a call (ra, sp, s0-s11) and tp, its TLS pointer, and takes
 * another thread's. The contexts are in tile RAM, so a switch touches neither the shared memory
 * nor the data cache. ult_release_zombie() returns to the restored ra, as the switch would.
 */
	.section .text.ult_switch, "ax"

	/* SUBUTAI_ULT_SWITCH_TWICE=1 (a measurement build, scripts/experiments/switch.py) saves and restores
	 * each context twice: what a yield costs more is the context switch's own cost. */
	.macro	save_context
	sw	ra,  0*4(a0)
	sw	sp,  1*4(a0)
	sw	tp,  2*4(a0)
	sw	s0,  3*4(a0)
	sw	s1,  4*4(a0)
	sw	s2,  5*4(a0)
	sw	s3,  6*4(a0)
	sw	s4,  7*4(a0)
	sw	s5,  8*4(a0)
	sw	s6,  9*4(a0)
	sw	s7, 10*4(a0)
	sw	s8, 11*4(a0)
	sw	s9, 12*4(a0)
	sw	s10, 13*4(a0)
	sw	s11, 14*4(a0)
	.endm
	.macro	restore_context
	lw	ra,  0*4(a1)
	lw	sp,  1*4(a1)
	lw	tp,  2*4(a1)
	lw	s0,  3*4(a1)
	lw	s1,  4*4(a1)
	lw	s2,  5*4(a1)
	lw	s3,  6*4(a1)
	lw	s4,  7*4(a1)
	lw	s5,  8*4(a1)
	lw	s6,  9*4(a1)
	lw	s7, 10*4(a1)
	lw	s8, 11*4(a1)
	lw	s9, 12*4(a1)
	lw	s10, 13*4(a1)
	lw	s11, 14*4(a1)
	.endm

	/* void ult_switch(struct ult_context *from, const struct ult_context *to) */
	.global ult_switch
	.align 2
ult_switch:
	save_context
#if SUBUTAI_ULT_SWITCH_TWICE
	save_context
#endif
	restore_context
#if SUBUTAI_ULT_SWITCH_TWICE
	restore_context
#endif
	/* The stack of a thread that exited, given back now that the core is off it. */
	lui	t0, %hi(ult_release_pending)
	lw	t0, %lo(ult_release_pending)(t0)
	bnez	t0, ult_release_zombie
	ret

	/* A new thread's first instruction (ult_create() put its slot in s0, its main in s1; the
	 * switch to it gave back the stack of a thread that exited). */
	.global ult_entry
	.align 2
ult_entry:
	mv	a0, s0
	jr	s1
