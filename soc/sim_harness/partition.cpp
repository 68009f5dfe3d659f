// Verilator harness of one partition of the cut Subutai SoC model (soc/partition.py).
//
// The leader (partition 0: tile 0, the memory system, the UART, the global control) is the
// command users run, with main.cpp's options and output: it creates the exchange buffer (an
// anonymous shared memory, memfd), starts the other partitions' binaries as its children, which
// inherit it, and runs the cycles with them. Every cycle runs in two steps (soc/partition.py):
//
//   1. each other partition publishes the nets it drives (register outputs: they depend on
//      nothing it receives in the cycle, which it checks every cycle);
//   2. the leader takes them, settles its logic and publishes its nets (the memory system's
//      answers depend on the requests of the same cycle);
//   3. every partition takes the nets it reads and clocks its edge.
//
// A partition's publication of cycle t is its counter reaching t + 1, stored after the nets with
// release order and read with acquire order; the nets of cycle t sit in buffer t & 1, so that a
// partition writes cycle t + 1's while a slower one still reads cycle t's (a partition can get at
// most one cycle ahead of those it reads: it waits for them). The leader ends the run (the
// firmware's exit, the cycle limit) by raising `stop`; the children end when they see it. A child
// dies with the leader (PR_SET_PDEATHSIG), and the leader ends with an error when a child dies.

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <libgen.h>
#include <sched.h>
#include <signal.h>
#include <string>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#if SUBUTAI_MPI
#include <mpi.h>
#endif

#include "Vsim.h"
#include "verilated.h"
#include "partition_ports.h"

#ifndef SUBUTAI_EXIT_TIMEOUT
#error "SUBUTAI_EXIT_TIMEOUT is not defined: build the model through soc/simulation.py"
#endif
static const int EXIT_TIMEOUT = SUBUTAI_EXIT_TIMEOUT;
#ifndef SUBUTAI_EXIT_PARTITION
#error "SUBUTAI_EXIT_PARTITION is not defined: build the model through soc/simulation.py"
#endif
// The leader's status when a partition died or could not start (soc/simulation.py's EXIT_PARTITION).
static const int EXIT_PARTITION = SUBUTAI_EXIT_PARTITION;
static const int EXIT_USAGE = 2;
static const bool LEADER = PARTITION_INDEX == 0;

static uint64_t main_time;
double sc_time_stamp() { return (double)main_time; }

struct alignas(64) Counter {
	std::atomic<uint64_t> value;
};

// The exchange buffer, in memory shared by every partition.
struct Exchange {
	uint64_t layout_id;
	alignas(64) std::atomic<int> stop;
	Counter published[N_PARTITIONS];
	alignas(64) uint32_t nets[2][NET_WORDS];
};

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [--dir DIR] [--max-cycles N] [--quiet]\n"
		"  --dir DIR        run in DIR (main RAM is initialised from DIR/sim_main_ram.init, or\n"
		"                   from DIR/sim_main_ram_bank<k>.init, one per bank)\n"
		"  --max-cycles N   stop with exit code %d after N cycles (0: no limit)\n"
		"  --quiet          do not print the summary line on stderr\n"
		"A model of %d partitions: this command starts the other %d itself.\n",
		prog, EXIT_TIMEOUT, N_PARTITIONS, N_PARTITIONS - 1);
}

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

static std::vector<pid_t> children;

// The leader's check on its children while it waits: false when one has ended (it never ends
// before the leader raises stop).
static bool children_alive()
{
	for (pid_t pid : children) {
		int status;
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid) {
			if (WIFSIGNALED(status))
				fprintf(stderr, "[sim] partition process %d died (signal %d)\n", (int)pid,
					WTERMSIG(status));
			else
				fprintf(stderr, "[sim] partition process %d ended (status %d)\n", (int)pid,
					WEXITSTATUS(status));
			return false;
		}
	}
	return true;
}

// How the partitions exchange their nets: through memory they share (the leader's children) or
// through MPI messages (the ranks of a job). A cycle is publish() then receive() on a tile
// partition, receive() then publish() on the leader; stop() is the leader's end of the run.
struct Transport {
	virtual ~Transport() {}
	// Puts the nets this partition drives, from the model, where its readers take them.
	virtual void publish(const Vsim *top, uint64_t cycle) = 0;
	// Waits for the nets this partition reads and puts them into the model; false when the run
	// stops first (a child: the leader stopped it; the leader: a partition died).
	virtual bool receive(Vsim *top, uint64_t cycle) = 0;
	virtual void stop(uint64_t cycle) = 0;
};

struct SharedMemoryTransport : Transport {
	Exchange *x;
	// Spins before a wait yields the core: long with a core for every partition (a provider is
	// a few microseconds behind), none with more partitions than cores (the provider may be
	// waiting for this very core).
	unsigned spin_limit;
	explicit SharedMemoryTransport(Exchange *x)
	    : x(x), spin_limit(sysconf(_SC_NPROCESSORS_ONLN) >= N_PARTITIONS ? 2000 : 0)
	{
	}

	void publish(const Vsim *top, uint64_t cycle) override
	{
		partition_publish(top, x->nets[cycle & 1]);
		x->published[PARTITION_INDEX].value.store(cycle + 1, std::memory_order_release);
	}

	// Spins while its providers are close behind and yields the core when they are not (more
	// partitions than cores).
	bool receive(Vsim *top, uint64_t cycle) override
	{
		for (int i = 0; i < N_PROVIDERS; i++) {
			unsigned spins = 0;
			while (x->published[PROVIDERS[i]].value.load(std::memory_order_acquire) <= cycle) {
				if (++spins < spin_limit) {
					__builtin_ia32_pause();
					continue;
				}
				if (!LEADER && x->stop.load(std::memory_order_acquire))
					return false;
				if (LEADER && (spins & 255) == 0 && !children_alive())
					return false;
				sched_yield();
			}
		}
		partition_receive(top, x->nets[cycle & 1]);
		return true;
	}

	void stop(uint64_t) override
	{
		x->stop.store(1, std::memory_order_release);
		for (pid_t pid : children) {
			int status;
			waitpid(pid, &status, 0);
		}
	}
};

#if SUBUTAI_MPI
struct MpiTransport : Transport {
	enum { TAG_NETS = 1, TAG_STOP = 2 };
	uint32_t nets[NET_WORDS] = {};
	// The sends of the last publication: completed before the block is written again, so that
	// no send waits for its reader to be receiving (two neighbours publish to each other).
	MPI_Request sends[N_PARTITIONS];
	int n_sends = 0;

	void send_block(int tag)
	{
		MPI_Waitall(n_sends, sends, MPI_STATUSES_IGNORE);
		n_sends = 0;
		for (int i = 0; i < N_READERS; i++)
			MPI_Isend(&nets[BLOCK_START[PARTITION_INDEX]], BLOCK_WORDS[PARTITION_INDEX], MPI_UINT32_T,
				  READERS[i], tag, MPI_COMM_WORLD, &sends[n_sends++]);
	}

	bool receive_block(int from)
	{
		MPI_Status status;
		MPI_Recv(&nets[BLOCK_START[from]], BLOCK_WORDS[from], MPI_UINT32_T, from, MPI_ANY_TAG,
			 MPI_COMM_WORLD, &status);
		return status.MPI_TAG == TAG_NETS;
	}

	~MpiTransport() { MPI_Waitall(n_sends, sends, MPI_STATUSES_IGNORE); }

	void publish(const Vsim *top, uint64_t) override
	{
		MPI_Waitall(n_sends, sends, MPI_STATUSES_IGNORE);
		n_sends = 0;
		partition_publish(top, nets);
		send_block(TAG_NETS);
	}

	bool receive(Vsim *top, uint64_t) override
	{
		// The leader (partition 0, every partition's provider) first: its stop ends the cycle;
		// the other providers' blocks of that cycle are sent all the same, and taken.
		for (int i = 0; i < N_PROVIDERS; i++) {
			if (!receive_block(PROVIDERS[i])) {
				for (int j = i + 1; j < N_PROVIDERS; j++)
					receive_block(PROVIDERS[j]);
				return false;
			}
		}
		partition_receive(top, nets);
		return true;
	}

	// The leader: every partition has published the next cycle (it received this one's nets);
	// take those, then stop them.
	void stop(uint64_t) override
	{
		for (int i = 0; i < N_PROVIDERS; i++)
			receive_block(PROVIDERS[i]);
		send_block(TAG_STOP);
	}
};
#endif

// Starts the other partitions' binaries (beside this one's directory), each with the buffer's
// descriptor.
static bool start_children(int fd, const char *dir, bool quiet)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0) {
		fprintf(stderr, "[sim] cannot find this binary: %s\n", strerror(errno));
		return false;
	}
	self[n] = '\0';
	std::string base = dirname(self);
	pid_t leader = getpid();
	for (int k = 1; k < N_PARTITIONS; k++) {
		std::string path = base + "/" + PARTITION_BINARIES[k - 1];
		std::string fd_arg = std::to_string(fd), k_arg = std::to_string(k);
		pid_t pid = fork();
		if (pid < 0) {
			fprintf(stderr, "[sim] fork: %s\n", strerror(errno));
			return false;
		}
		if (pid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != leader)
				_exit(EXIT_PARTITION);
			std::vector<const char *> argv = {path.c_str(), "--exchange-fd", fd_arg.c_str(),
							  "--partition", k_arg.c_str()};
			if (dir) {
				argv.push_back("--dir");
				argv.push_back(dir);
			}
			if (quiet)
				argv.push_back("--quiet");
			argv.push_back(nullptr);
			execv(path.c_str(), (char *const *)argv.data());
			fprintf(stderr, "[sim] cannot start partition %d (%s): %s\n", k, path.c_str(),
				strerror(errno));
			_exit(EXIT_PARTITION);
		}
		children.push_back(pid);
	}
	return true;
}

// A cycle's two evaluations, as main.cpp's, but the falling edge first: the model settles with the
// nets it received (and the leader publishes what depends on them), then clocks its rising edge,
// after which its registered outputs are the next cycle's. Each evaluation also settles the logic
// that hangs on the model's inputs (Verilator's input region), a third one would cost as much again.
static void settle(Vsim *top)
{
	top->sys_clk = 0;
	top->eval();
	main_time++;
}

static void rising_edge(Vsim *top)
{
	top->sys_clk = 1;
	top->eval();
	main_time++;
}

// Where a partition's time goes: waiting for its providers' nets, or evaluating its model. What
// limits a cut model's speed is the partition that waits least (the others wait for it). Its
// evaluation is also timed in CPU time, on every 16th cycle: what a partition costs whether or not
// it has a core of its own, the measure of how a cut scales on a host with more cores than this
// one (results/simspeed.md).
struct WaitClock {
	std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now(), mark;
	double waiting = 0, evaluating = 0;
	uint64_t sampled = 0;
	timespec eval_mark = {};
	void begin() { mark = std::chrono::steady_clock::now(); }
	void end() { waiting += std::chrono::duration<double>(std::chrono::steady_clock::now() - mark).count(); }
	static bool sampling(uint64_t cycle) { return (cycle & 15) == 0; }
	void begin_eval(uint64_t cycle)
	{
		if (sampling(cycle))
			clock_gettime(CLOCK_THREAD_CPUTIME_ID, &eval_mark);
	}
	void end_eval(uint64_t cycle)
	{
		if (!sampling(cycle))
			return;
		timespec now;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
		evaluating += (now.tv_sec - eval_mark.tv_sec) + 1e-9 * (now.tv_nsec - eval_mark.tv_nsec);
		sampled++;
	}
	void report(uint64_t cycles)
	{
		double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
		fprintf(stderr,
			"[sim] partition %d: %" PRIu64 " cycles, %.3f s, waiting %.3f s (%.0f%%), "
			"evaluating %.2f us/cycle (CPU)\n",
			PARTITION_INDEX, cycles, total, waiting, total > 0 ? 100 * waiting / total : 0.0,
			sampled ? 1e6 * evaluating / sampled : 0.0);
	}
};

// The premise of the cycle's two steps: what a tile partition publishes depends on nothing it
// receives in the same cycle. Checked on every cycle, on its nets as the partition has settled
// them with what it received, against those it published: the first net that moved, or null.
static const char *moved_net(const uint32_t *published, const uint32_t *settled)
{
	for (int i = 0; i < N_PUBLISHED; i++)
		if (memcmp(&published[PUBLISHED[i].word], &settled[PUBLISHED[i].word],
			   PUBLISHED[i].words * sizeof(uint32_t)) != 0)
			return PUBLISHED[i].name;
	return nullptr;
}

// A partition other than the leader: its cycles until the leader stops the run.
static int run_child(Transport *t, Vsim *top, bool quiet)
{
	WaitClock clock;
	static uint32_t published[NET_WORDS], settled[NET_WORDS];
	top->sys_clk = 0;
	top->eval();
	for (uint64_t cycle = 0;; cycle++) {
		partition_publish(top, published);
		t->publish(top, cycle);
		clock.begin();
		bool going = t->receive(top, cycle);
		clock.end();
		if (!going) {
			if (!quiet)
				clock.report(cycle);
			return 0;
		}
		clock.begin_eval(cycle);
		settle(top);
		partition_publish(top, settled);
		if (const char *net = moved_net(published, settled)) {
			fprintf(stderr,
				"[sim] partition %d: %s changed in cycle %" PRIu64 " with what the partition "
				"received: the cut is not at registers there (soc/partition.py)\n",
				PARTITION_INDEX, net, cycle);
			return EXIT_PARTITION;
		}
		rising_edge(top);
		clock.end_eval(cycle);
	}
}

#if PARTITION_INDEX == 0
// The leader: the run, as main.cpp runs the model in one process.
static int run_leader(Transport *t, Vsim *top, uint64_t max_cycles, bool quiet)
{
	top->serial_source_ready = 1;
	top->serial_sink_valid = 0;
	top->sys_clk = 0;
	top->eval();

	auto t0 = std::chrono::steady_clock::now();
	WaitClock clock;
	uint64_t cycle = 0;
	int code = -1;
	bool failed = false;
	while (!Verilated::gotFinish()) {
		clock.begin();
		bool going = t->receive(top, cycle);
		clock.end();
		if (!going) {
			failed = true;
			break;
		}
		clock.begin_eval(cycle);
		settle(top);
		t->publish(top, cycle);
		rising_edge(top);
		clock.end_eval(cycle);
		cycle++;
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
	if (!quiet)
		clock.report(cycle);
	if (!failed)
		t->stop(cycle);
	if (failed) {
		fprintf(stderr, "[sim] a partition ended before the run did, at cycle %" PRIu64 "\n", cycle);
		return EXIT_PARTITION;
	}
	if (code < 0) {
		fprintf(stderr, "[sim] timeout: software did not end the simulation within %" PRIu64
			" cycles\n", cycle);
		code = EXIT_TIMEOUT;
	}
	if (!quiet)
		fprintf(stderr, "[sim] exit=%d cycles=%" PRIu64 " seconds=%.3f speed=%.0f cycles/s partitions=%d\n",
			code, cycle, secs, secs > 0 ? cycle / secs : 0.0, N_PARTITIONS);
	return code;
}
#endif

// The shared memory of a run without MPI: the leader creates it (zero: no partition has
// published) and starts the others, which inherit it.
static Transport *shared_memory(uint64_t fd, const char *dir, bool quiet)
{
	if (LEADER) {
		int mfd = memfd_create("subutai-exchange", 0);
		if (mfd < 0 || ftruncate(mfd, sizeof(Exchange)) != 0) {
			fprintf(stderr, "[sim] cannot create the exchange buffer: %s\n", strerror(errno));
			return nullptr;
		}
		fd = (uint64_t)mfd;
	}
	void *mem = mmap(nullptr, sizeof(Exchange), PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
	if (mem == MAP_FAILED) {
		fprintf(stderr, "[sim] cannot map the exchange buffer: %s\n", strerror(errno));
		return nullptr;
	}
	Exchange *x = (Exchange *)mem;
	if (LEADER) {
		x->layout_id = LAYOUT_ID;
		if (!start_children((int)fd, dir, quiet)) {
			for (pid_t pid : children)
				kill(pid, SIGKILL);
			return nullptr;
		}
	} else if (x->layout_id != LAYOUT_ID) {
		fprintf(stderr, "[sim] partition %d: built for another cut than the leader's (rebuild the model)\n",
			PARTITION_INDEX);
		return nullptr;
	}
	return new SharedMemoryTransport(x);
}

#if SUBUTAI_MPI
// The ranks of an MPI job: one a partition, each checking the job against its build.
static Transport *mpi(int *argc, char ***argv)
{
	MPI_Init(argc, argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (rank != PARTITION_INDEX || size != N_PARTITIONS) {
		fprintf(stderr, "[sim] partition %d of %d started as MPI rank %d of %d: start partition k "
			"as rank k (soc/simulation.py's command)\n", PARTITION_INDEX, N_PARTITIONS, rank, size);
		MPI_Abort(MPI_COMM_WORLD, EXIT_USAGE);
	}
	// Every rank checks its cut against the leader's.
	uint64_t layout = LAYOUT_ID;
	MPI_Bcast(&layout, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
	if (layout != LAYOUT_ID) {
		fprintf(stderr, "[sim] partition %d: built for another cut than the leader's (rebuild the model)\n",
			PARTITION_INDEX);
		MPI_Abort(MPI_COMM_WORLD, EXIT_PARTITION);
	}
	return new MpiTransport;
}
#endif

int main(int argc, char **argv)
{
	const char *dir = nullptr;
	uint64_t max_cycles = 0, fd = UINT64_MAX, partition = 0;
	bool quiet = false, use_mpi = false;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool has_val = i + 1 < argc;
		if (!strcmp(a, "--dir") && has_val) {
			dir = argv[++i];
		} else if (!strcmp(a, "--max-cycles") && has_val) {
			if (!parse_u64(a, argv[++i], &max_cycles))
				return EXIT_USAGE;
		} else if (!strcmp(a, "--exchange-fd") && has_val && !LEADER) {
			if (!parse_u64(a, argv[++i], &fd))
				return EXIT_USAGE;
		} else if (!strcmp(a, "--partition") && has_val) {
			if (!parse_u64(a, argv[++i], &partition))
				return EXIT_USAGE;
		} else if (!strcmp(a, "--transport") && has_val) {
			const char *t = argv[++i];
			if (strcmp(t, "mpi") && strcmp(t, "shm")) {
				fprintf(stderr, "[sim] --transport %s: mpi or shm\n", t);
				return EXIT_USAGE;
			}
			use_mpi = !strcmp(t, "mpi");
		} else if (!strcmp(a, "--quiet")) {
			quiet = true;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(argv[0]);
			return 0;
		} else if (!strncmp(a, "+verilator", 10)) {
			/* Verilator runtime options, handled by commandArgs. */
		} else {
			fprintf(stderr, "[sim] unknown or incomplete argument: %s\n", a);
			if (LEADER && (!strcmp(a, "--trace") || !strcmp(a, "--pty")))
				fprintf(stderr, "[sim] %s needs the model in one process (boards/sim.py without --partitions)\n", a);
			usage(argv[0]);
			return EXIT_USAGE;
		}
	}
	if (partition != PARTITION_INDEX || (!LEADER && !use_mpi && fd == UINT64_MAX)) {
		fprintf(stderr, "[sim] this is partition %d of a cut model: run partition 0, which starts "
			"the others (or all of them as an MPI job with --transport mpi)\n", PARTITION_INDEX);
		return EXIT_USAGE;
	}
#if !SUBUTAI_MPI
	if (use_mpi) {
		fprintf(stderr, "[sim] --transport mpi: this model was built without MPI (install Open MPI: "
			"make setup, and rebuild it)\n");
		return EXIT_USAGE;
	}
#endif
	if (dir && chdir(dir) != 0) {
		fprintf(stderr, "[sim] cannot enter %s: %s\n", dir, strerror(errno));
		return EXIT_USAGE;
	}
	if (LEADER && access("sim_main_ram.init", R_OK) != 0 && access("sim_main_ram_bank0.init", R_OK) != 0) {
		fprintf(stderr, "[sim] no sim_main_ram.init (or sim_main_ram_bank0.init) in %s: give a "
			"firmware image\n", dir ? dir : ".");
		return EXIT_USAGE;
	}

	Transport *t;
#if SUBUTAI_MPI
	if (use_mpi)
		t = mpi(&argc, &argv);
	else
#endif
		t = shared_memory(fd, dir, quiet);
	if (!t)
		return EXIT_PARTITION;

	Verilated::commandArgs(argc, argv);
	Vsim *top = new Vsim;
#if PARTITION_INDEX == 0
	int code = run_leader(t, top, max_cycles, quiet);
#else
	int code = run_child(t, top, quiet);
#endif
	top->final();
	delete top;
	delete t;
#if SUBUTAI_MPI
	if (use_mpi)
		MPI_Finalize();
#endif
	return code;
}
