/*
 * PARSEC hooks (the hooks library of the PARSEC suite): a benchmark marks its start, its region
 * of interest (the parallel phase, without input generation and result checking) and its end.
 * Programs call them under #ifdef ENABLE_PARSEC_HOOKS, so they also build without this harness.
 * Here they time the region of interest for the benchmark harness (harness.c).
 */
#ifndef PARSEC_HOOKS_H
#define PARSEC_HOOKS_H

#ifdef __cplusplus
extern "C" {
#endif

enum __parsec_benchmark {
	__parsec_blackscholes,
	__parsec_bodytrack,
	__parsec_canneal,
	__parsec_dedup,
	__parsec_facesim,
	__parsec_ferret,
	__parsec_fluidanimate,
	__parsec_freqmine,
	__parsec_raytrace,
	__parsec_streamcluster,
	__parsec_swaptions,
	__parsec_vips,
	__parsec_x264,
	__splash2_barnes,
	__splash2_cholesky,
	__splash2_fft,
	__splash2_fmm,
	__splash2_lu_cb,
	__splash2_lu_ncb,
	__splash2_ocean_cp,
	__splash2_ocean_ncp,
	__splash2_radiosity,
	__splash2_radix,
	__splash2_raytrace,
	__splash2_volrend,
	__splash2_water_nsquared,
	__splash2_water_spatial,
	/* Beyond PARSEC's list: the NAS Parallel Benchmarks' EP (programs/ep). */
	__npb_ep,
};

void __parsec_bench_begin(enum __parsec_benchmark benchmark);
void __parsec_bench_end(void);
void __parsec_roi_begin(void);
void __parsec_roi_end(void);

#ifdef __cplusplus
}
#endif

#endif /* PARSEC_HOOKS_H */
