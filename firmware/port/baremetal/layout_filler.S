/*
 * A function of 1 KiB on the synchronization paths that nothing calls: linked only into the
 * perturbed images of python -m scripts.experiments prodcons --perturb (firmware/Makefile, LIB_ORDER), where it stands
 * for code added to the library, so that the benchmark sees what such a change does to where the
 * timed code lands in the caches.
 */
	.section .text.hot.subutai_layout_filler, "ax", @progbits
	.globl subutai_layout_filler
	.type subutai_layout_filler, @function
	.p2align 2
subutai_layout_filler:
	.rept 255
	addi a0, a0, 1
	.endr
	ret
	.size subutai_layout_filler, . - subutai_layout_filler
