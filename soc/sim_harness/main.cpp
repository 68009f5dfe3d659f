// Verilator harness of the Subutai SoC simulation.
//
// Drives sys_clk, prints the UART to stdout and stops when software writes the sim_ctrl exit
// register (exiting with its code) or when --max-cycles is reached. It replaces LiteX's generic
// libevent simulator core: no per-cycle module dispatch, no tracing unless built with TRACE=1.
//
// With --pty (the board SoC in simulation, soc/board_sim.py) the UART is also a pseudo-terminal,
// both ways, as a board's USB serial port is: its path is printed on stderr ("[sim] serial:
// PATH"), whatever a host writes to it goes to the SoC's UART, and the run ends when the firmware
// prints "@exit N" (then with N), as a board's firmware reports its end.

#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <termios.h>
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
// Whether the SoC has the simulation's exit register (not a board SoC in simulation).
#ifndef SUBUTAI_SIM_CTRL
#define SUBUTAI_SIM_CTRL 1
#endif
static const int EXIT_USAGE = 2;
/*
 * Cycles between two bytes from the host: a 1 Mbit/s line at 50 MHz (10 bits a byte). Without a
 * pace the UART's FIFO takes a byte a cycle and LiteX's BIOS, which empties it into a ring buffer
 * in its interrupt handler, overruns that buffer while it checks a frame.
 */
static const uint64_t PTY_GAP_DEFAULT = 500;

static uint64_t main_time;
double sc_time_stamp() { return (double)main_time; }

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [--dir DIR] [--max-cycles N] [--trace FILE] [--trace-start N] [--trace-end N]\n"
		"          [--quiet] [--pty]\n"
		"  --dir DIR        run in DIR (main RAM is initialised from DIR/sim_main_ram.init, or\n"
		"                   from DIR/sim_main_ram_bank<k>.init, one per bank)\n"
		"  --max-cycles N   stop with exit code %d after N cycles (0: no limit)\n"
		"  --trace FILE     write a waveform (model built with TRACE=1)\n"
		"  --quiet          do not print the summary line on stderr\n"
		"  --pty            the UART is also a pseudo-terminal (no main-RAM image needed: the\n"
		"                   firmware comes through it); the run ends at the firmware's \"@exit N\"\n"
		"  --pty-gap N      cycles between two bytes to the SoC (default %d): a serial line's\n"
		"                   pace, which a BIOS reading its UART by interrupt relies on\n",
		prog, EXIT_TIMEOUT, PTY_GAP_DEFAULT);
}

/*
 * The UART as a pseudo-terminal. The harness keeps the terminal side open too (raw, so that the
 * line discipline neither echoes nor translates), so nothing is lost before a host opens it.
 */
struct SerialPty {
	int master = -1, slave = -1;
	std::string to_host, from_host;
	size_t from_pos = 0;
	std::string line;  /* the current output line, to see "@exit N" */
	int exit_code = -1;

	bool open_pty()
	{
		master = posix_openpt(O_RDWR | O_NOCTTY);
		if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0)
			return false;
		slave = open(ptsname(master), O_RDWR | O_NOCTTY);
		if (slave < 0)
			return false;
		struct termios t;
		if (tcgetattr(slave, &t) != 0)
			return false;
		cfmakeraw(&t);
		if (tcsetattr(slave, TCSANOW, &t) != 0)
			return false;
		fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
		return true;
	}

	const char *path() { return ptsname(master); }

	void output(uint8_t c)
	{
		to_host.push_back((char)c);
		if (c == '\n') {
			int code;
			char end;
			if (sscanf(line.c_str(), "@exit %d%c", &code, &end) == 1)
				exit_code = code & 0xff;
			line.clear();
		} else if (c != '\r') {
			line.push_back((char)c);
		}
	}

	/* Moves bytes between the buffers and the terminal (never blocks). */
	void poll()
	{
		if (!to_host.empty()) {
			ssize_t n = write(master, to_host.data(), to_host.size());
			if (n > 0)
				to_host.erase(0, (size_t)n);
		}
		if (from_pos == from_host.size()) {
			char buf[256];
			ssize_t n = read(master, buf, sizeof(buf));
			from_host.assign(n > 0 ? buf : "", n > 0 ? (size_t)n : 0);
			from_pos = 0;
		}
	}

	bool has_input() const { return from_pos < from_host.size(); }
	uint8_t input() const { return (uint8_t)from_host[from_pos]; }
	void consume() { from_pos++; }
};

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
	uint64_t max_cycles = 0, trace_start = 0, trace_end = UINT64_MAX, pty_gap = PTY_GAP_DEFAULT;
	bool quiet = false, use_pty = false;

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
		} else if (!strcmp(a, "--pty")) {
			use_pty = true;
		} else if (!strcmp(a, "--pty-gap") && has_val) {
			if (!parse_u64(a, argv[++i], &pty_gap))
				return EXIT_USAGE;
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
	SerialPty pty;
	if (use_pty) {
		if (!pty.open_pty()) {
			fprintf(stderr, "[sim] cannot open a pseudo-terminal: %s\n", strerror(errno));
			return EXIT_USAGE;
		}
		fprintf(stderr, "[sim] serial: %s\n", pty.path());
		fflush(stderr);
	} else if (access("sim_main_ram.init", R_OK) != 0 &&
		   access("sim_main_ram_bank0.init", R_OK) != 0) {
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
	/* Wall-clock time the host gets to read the last output after "@exit N". */
	const double drain_seconds = 2.0;
	std::chrono::steady_clock::time_point exited;
	uint64_t next_input = 0;
	while (!Verilated::gotFinish()) {
		/* A byte from the host is taken on a rising edge with valid and ready. */
		bool taken = use_pty && top->serial_sink_valid && top->serial_sink_ready;
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
		if (top->serial_source_valid) {
			putchar(top->serial_source_data);
			if (use_pty)
				pty.output(top->serial_source_data);
		}
		if (use_pty) {
			if (taken) {
				pty.consume();
				next_input = cycle + pty_gap;
			}
			if ((cycle & 255) == 0 || !pty.to_host.empty())
				pty.poll();
			top->serial_sink_valid = pty.has_input() && cycle >= next_input;
			top->serial_sink_data = pty.has_input() ? pty.input() : 0;
			top->eval();
			if (pty.exit_code >= 0) {
				auto now = std::chrono::steady_clock::now();
				if (exited == std::chrono::steady_clock::time_point())
					exited = now;
				if (pty.to_host.empty() &&
				    std::chrono::duration<double>(now - exited).count() >= drain_seconds) {
					code = pty.exit_code;
					break;
				}
			}
		}
#if SUBUTAI_SIM_CTRL
		if (top->sim_ctrl_valid) {
			code = top->sim_ctrl_code;
			break;
		}
#endif
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
