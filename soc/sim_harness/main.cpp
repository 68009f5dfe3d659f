// Verilator harness of the Subutai SoC simulation.
//
// Drives sys_clk, prints the UART to stdout and stops when software writes the sim_ctrl exit
// register (exiting with its code) or when --max-cycles is reached. It replaces LiteX's generic
// libevent simulator core: no per-cycle module dispatch, no tracing unless built with TRACE=1.

#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

#include "Vsim.h"
#include "verilated.h"
#if VM_TRACE
#if VM_TRACE_FST
#include "verilated_fst_c.h"
typedef VerilatedFstC Tracer;
#else
#include "verilated_vcd_c.h"
typedef VerilatedVcdC Tracer;
#endif
#endif

// Exit status of a run stopped by --max-cycles: soc/simulation.py's EXIT_TIMEOUT, passed by the
// harness Makefile.
#ifndef SUBUTAI_EXIT_TIMEOUT
#error "SUBUTAI_EXIT_TIMEOUT is not defined: build the model through soc/simulation.py"
#endif
static const int EXIT_TIMEOUT = SUBUTAI_EXIT_TIMEOUT;
static const int EXIT_USAGE = 2;

static uint64_t main_time;
double sc_time_stamp() { return (double)main_time; }

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [--dir DIR] [--max-cycles N] [--trace FILE] [--trace-start N] [--trace-end N]\n"
		"          [--quiet]\n"
		"  --dir DIR        run in DIR (main RAM is initialised from DIR/sim_main_ram.init, or\n"
		"                   from DIR/sim_main_ram_bank<k>.init, one per bank)\n"
		"  --max-cycles N   stop with exit code %d after N cycles (0: no limit)\n"
		"  --trace FILE     write a waveform (model built with TRACE=1)\n"
		"  --quiet          do not print the summary line on stderr\n",
		prog, EXIT_TIMEOUT);
}

// The number given to option opt; false, with the error printed, when s is not one.
static bool parse_u64(const char *opt, const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || *s == '\0' || *end != '\0' || *s == '-') {
		fprintf(stderr, "[sim] %s: not a number: %s\n", opt, s);
		return false;
	}
	*out = v;
	return true;
}

int main(int argc, char **argv)
{
	const char *dir = nullptr;
	const char *trace_file = nullptr;
	uint64_t max_cycles = 0, trace_start = 0, trace_end = UINT64_MAX;
	bool quiet = false;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool has_val = i + 1 < argc;
		if (!strcmp(a, "--dir") && has_val) {
			dir = argv[++i];
		} else if (!strcmp(a, "--max-cycles") && has_val) {
			if (!parse_u64(a, argv[++i], &max_cycles))
				return EXIT_USAGE;
		} else if (!strcmp(a, "--trace") && has_val) {
			trace_file = argv[++i];
		} else if (!strcmp(a, "--trace-start") && has_val) {
			if (!parse_u64(a, argv[++i], &trace_start))
				return EXIT_USAGE;
		} else if (!strcmp(a, "--trace-end") && has_val) {
			if (!parse_u64(a, argv[++i], &trace_end))
				return EXIT_USAGE;
		} else if (!strcmp(a, "--quiet")) {
			quiet = true;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(argv[0]);
			return 0;
		} else if (!strncmp(a, "+verilator", 10)) {
			/* Verilator runtime options, handled by commandArgs. */
		} else {
			fprintf(stderr, "[sim] unknown or incomplete argument: %s\n", a);
			usage(argv[0]);
			return EXIT_USAGE;
		}
	}
	if (dir && chdir(dir) != 0) {
		fprintf(stderr, "[sim] cannot enter %s: %s\n", dir, strerror(errno));
		return EXIT_USAGE;
	}
	if (access("sim_main_ram.init", R_OK) != 0 && access("sim_main_ram_bank0.init", R_OK) != 0) {
		fprintf(stderr, "[sim] no sim_main_ram.init (or sim_main_ram_bank0.init) in %s: give a "
			"firmware image\n",
			dir ? dir : ".");
		return EXIT_USAGE;
	}

	Verilated::commandArgs(argc, argv);
	Vsim *top = new Vsim;

#if VM_TRACE
	Tracer *tracer = nullptr;
	if (trace_file) {
		Verilated::traceEverOn(true);
		tracer = new Tracer;
		top->trace(tracer, 99);
		tracer->open(trace_file);
	}
#else
	if (trace_file) {
		fprintf(stderr, "[sim] --trace: this model was built without tracing (rebuild with --trace)\n");
		return EXIT_USAGE;
	}
#endif

	top->serial_source_ready = 1;
	top->serial_sink_valid = 0;
	top->sys_clk = 0;
	top->eval();

	auto t0 = std::chrono::steady_clock::now();
	uint64_t cycle = 0;
	int code = -1;
	while (!Verilated::gotFinish()) {
		top->sys_clk = 1;
		top->eval();
		main_time++;
#if VM_TRACE
		if (tracer && cycle >= trace_start && cycle <= trace_end)
			tracer->dump(2 * cycle);
#endif
		top->sys_clk = 0;
		top->eval();
		main_time++;
#if VM_TRACE
		if (tracer && cycle >= trace_start && cycle <= trace_end)
			tracer->dump(2 * cycle + 1);
#endif
		cycle++;

		/* The UART model is always ready: a byte is transferred on every cycle with valid. */
		if (top->serial_source_valid)
			putchar(top->serial_source_data);
		if (top->sim_ctrl_valid) {
			code = top->sim_ctrl_code;
			break;
		}
		if (max_cycles && cycle >= max_cycles)
			break;
	}
	fflush(stdout);
	double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

#if VM_TRACE
	if (tracer)
		tracer->close();
#endif
	top->final();
	delete top;

	if (code < 0) {
		fprintf(stderr, "[sim] timeout: software did not end the simulation within %" PRIu64
			" cycles\n", cycle);
		code = EXIT_TIMEOUT;
	}
	if (!quiet)
		fprintf(stderr, "[sim] exit=%d cycles=%" PRIu64 " seconds=%.3f speed=%.0f cycles/s\n",
			code, cycle, secs, secs > 0 ? cycle / secs : 0.0);
	return code;
}
