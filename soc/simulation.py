#
# Verilator simulation of the Subutai SoC: the SoC on LiteX's SimPlatform, its model build (once per
# configuration, reused for any number of firmware images) and its runs.
#
"""Build and run the Verilator model of a :class:`soc.subutai_soc.SubutaiSoC`.

The library behind ``boards/sim.py`` (as ``litex.build.sim`` is behind ``litex_sim.py``), used
by the Zephyr flow (:mod:`soc.zephyr`), the benchmark scripts and the tests::

    model = build_model(2, 2)                       # built once; reused while its sources match
    image = model.build_firmware("hello")           # firmware/apps/hello against its headers
    result = model.run(image, max_cycles=10_000_000)
    result.exit_code, result.output, result.cycles

A model reads its main-RAM image (``sim_main_ram.init``, or one ``sim_main_ram_bank<k>.init`` per
bank of an interleaved main RAM) when it starts, so a new image needs no rebuild. The model is rebuilt when anything that shapes it changes (the digest of ``gateware/``,
``soc/`` and the harness, and the build parameters, kept in a stamp beside the binary); builds
in one directory are serialized across processes by a lock file.
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass

from migen import *

from litex.build.generic_platform import Pins, Subsignal
from litex.build.io import CRG
from litex.build.sim import SimPlatform
from litex.soc.integration.builder import Builder

from gateware.cpu import SIM_CPU_VARIANT
from gateware import fhdl_speed
from gateware.control import SimControl
from gateware.memory import bank_images
from gateware.build import BUILD_DIR, build_lock, source_digest
from soc.firmware import build_firmware
from soc.partition import (
    Partitioning,
    check_ports,
    group_verilog,
    leader_signals,
    partition_dir,
    ports_header,
)
from soc.subutai_soc import SubutaiSoC, KiB, MiB

HARNESS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sim_harness")
#: Exit status of a run stopped by its cycle limit (the harness is compiled with it; the same as
#: coreutils' timeout).
EXIT_TIMEOUT = 124
#: Exit status of a cut model's run that lost a partition (one died, or did not start).
EXIT_PARTITION = 125


#: Smallest mesh whose model verilates one tile module for every tile but tile 0 by default
#: (:mod:`soc.tile_block`): measured with ``boards/sim.py`` runs both ways (docs/architecture.md,
#: Simulation: 1.6-2.1x at 16 and 32 tiles, 0.67x at 4, where the hierarchy block's calls cost
#: more than the shared code saves).
TILE_BLOCKS_FROM = 16


def default_tile_blocks(n_tiles, trace=None):
    """Whether a model of ``n_tiles`` verilates one tile module for all (:data:`TILE_BLOCKS_FROM`);
    a waveform (``trace``) shows every tile's signals in one flattened design."""
    return not trace and n_tiles >= TILE_BLOCKS_FROM


def default_mem_banks(n_tiles):
    """Main RAM banks of a simulated SoC of ``n_tiles`` (:class:`gateware.memory.InterleavedMainRAM`):
    one per tile, or on a tile count that is not a power of two (3x1, 3x2, 6x4...) the power of two
    below it, as the banks take their number from address bits. Chosen with ``make bench-mem``: at
    8 tiles 8 banks stream as fast as 16 (4 lose half the store bandwidth), at 16 tiles 16 banks
    beat 8 by half on stores."""
    if n_tiles < 1:
        raise ValueError(f"a SoC has 1 tile or more (got {n_tiles})")
    return 1 << (n_tiles.bit_length() - 1)


def mem_banks_arg(text):
    """``argparse`` type of ``--mem-banks``: 0 (one RAM on the shared SoC bus) or a power of two."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if n < 0 or n & (n - 1):
        raise argparse.ArgumentTypeError(f"{n}: expected 0 or a power of two")
    return n


# IOs ----------------------------------------------------------------------------------------------

_io = [
    ("sys_clk", 0, Pins(1)),
    ("sys_rst", 0, Pins(1)),
    (
        "serial",
        0,
        Subsignal("source_valid", Pins(1)),
        Subsignal("source_ready", Pins(1)),
        Subsignal("source_data", Pins(8)),
        Subsignal("sink_valid", Pins(1)),
        Subsignal("sink_ready", Pins(1)),
        Subsignal("sink_data", Pins(8)),
    ),
    (
        "sim_ctrl",
        0,
        Subsignal("valid", Pins(1)),
        Subsignal("code", Pins(8)),
    ),
]


class Platform(SimPlatform):
    def __init__(self):
        SimPlatform.__init__(self, "SIM", _io)
        #: Signals made ports of the top module beside the pads: the leader's side of the cut of
        #: a model in partitions (soc/partition.py).
        self.extra_ios = set()

    def get_verilog(self, fragment, **kwargs):
        ios = self.constraint_manager.get_io_signals() | self.extra_ios
        return SimPlatform.get_verilog(self, fragment, ios=ios, **kwargs)


# SoC ----------------------------------------------------------------------------------------------


class SimSoC(SubutaiSoC):
    def __init__(
        self,
        mesh_x=2,
        mesh_y=2,
        sys_clk_freq=int(100e6),
        main_ram_size=1 * MiB,
        mem_banks=None,
        partitioning=None,
        **kwargs,
    ):
        """``partitioning``: the SoC is the leader of a model cut into partitions
        (:class:`soc.partition.Partitioning`): the other partitions' tiles are left out, and the
        signals of the cut are ports."""
        platform = Platform()
        if partitioning is not None:
            kwargs["remote_tiles"] = partitioning.remote_tiles()
        if mem_banks is None:
            mem_banks = default_mem_banks(mesh_x * mesh_y)
        self.crg = CRG(platform.request("sys_clk"))
        SubutaiSoC.__init__(
            self,
            platform,
            sys_clk_freq,
            mesh_x=mesh_x,
            mesh_y=mesh_y,
            uart_name="sim",
            integrated_main_ram_size=main_ram_size,
            # A one-word init makes the model read sim_main_ram.init when it starts, so a new
            # image needs no rebuild.
            integrated_main_ram_init=[0],
            mem_banks=mem_banks,
            # --mem-banks 0 is the first memory system, kept as the baseline of make bench-mem
            # and bench-apps: unregistered uplinks on one shared bus, no bursts.
            registered_uplinks=kwargs.pop("registered_uplinks", bool(mem_banks)),
            **kwargs,
        )
        self.sim_ctrl = SimControl(platform.request("sim_ctrl"))
        if partitioning is not None:
            self.partition_signals = leader_signals(self, partitioning)
            platform.extra_ios |= set(self.partition_signals.values())


# Model --------------------------------------------------------------------------------------------


@dataclass
class SimResult:
    exit_code: int
    output: str
    cycles: int
    seconds: float
    stderr: str

    @property
    def speed(self):
        return self.cycles / self.seconds if self.seconds else 0.0


def _source_digest():
    """Digest of everything that shapes the model: the gateware (not its testbenches), the SoC
    generator with this library and the harness."""
    return source_digest(["gateware", "soc"], exclude=("tb",), length=64)


class SimModel:
    """A built Verilator model of one SoC configuration, runnable on many firmware images."""

    def __init__(self, output_dir, obj_dir="obj_dir", partitions=1, leader_tiles=None):
        self.output_dir = os.path.abspath(output_dir)
        self.gateware_dir = os.path.join(self.output_dir, "gateware")
        #: Processes the model runs in (soc/partition.py); its binary is the leader's.
        self.partitions = partitions
        if partitions > 1:
            self.gateware_dir = partition_dir(self.gateware_dir, partitions, leader_tiles)
        self.generated_dir = os.path.join(self.output_dir, "software", "include", "generated")
        self.csr_json = os.path.join(self.output_dir, "csr.json")
        self.binary = os.path.join(self.gateware_dir, obj_dir, "Vsim")
        # The parameters the model was built with, beside it (build_model(), a board's --sim).
        self.stamp = os.path.join(self.gateware_dir, obj_dir + ".stamp")

    def built_with(self, params):
        """Whether the model is built, and with ``params``."""
        if not (os.path.exists(self.binary) and os.path.exists(self.stamp)):
            return False
        with open(self.stamp) as f:
            return json.load(f) == params

    def write_stamp(self, params):
        with open(self.stamp, "w") as f:
            json.dump(params, f)

    @property
    def config(self):
        with open(self.csr_json) as f:
            return json.load(f)

    @property
    def threads(self):
        """Host threads the model evaluates on (``threads`` of :func:`build_model`)."""
        with open(self.stamp) as f:
            return json.load(f).get("threads", 1)

    @property
    def n_tiles(self):
        return self.config["constants"]["n_tiles"]

    def build_firmware(
        self,
        app,
        out_dir=None,
        extra_cflags="",
        backend="subutai",
        program_args="",
        layout_pad=0,
        perturbation=None,
        program_dir=None,
        chan=None,
    ):
        """Compile a firmware application or benchmark program against this SoC's generated
        headers (:func:`soc.firmware.build_firmware`); return its .bin."""
        return build_firmware(
            self.output_dir,
            app,
            out_dir,
            extra_cflags,
            backend,
            program_args,
            layout_pad=layout_pad,
            perturbation=perturbation,
            program_dir=program_dir,
            chan=chan,
        )

    def mpi_command(self, hosts, leader_args):
        """The ``mpirun`` command of a run of this cut model as an MPI job: partition ``k`` is
        rank ``k``, the partitions spread over ``hosts`` in contiguous groups (neighbours on one
        host), the leader on the first host, which needs the run directory. Every host needs
        this model's binaries at the same path (a shared or copied build directory)."""
        if self.partitions < 2:
            raise ValueError("hosts: an MPI job runs a model built in partitions (--partitions)")
        with open(self.stamp) as f:
            if not json.load(f).get("mpi"):
                raise ValueError("this model was built without Open MPI (make setup installs it): rebuild it")
        mpirun = shutil.which("mpirun")
        if mpirun is None:
            raise RuntimeError("mpirun not found: install the Debian package openmpi-bin (make setup)")
        cmd = [mpirun, "--oversubscribe"]
        if os.geteuid() == 0:
            cmd.append("--allow-run-as-root")
        for k in range(self.partitions):
            host = hosts[k * len(hosts) // self.partitions]
            binary = os.path.join(self.gateware_dir, partition_obj_dir(k), "Vsim")
            cmd += [":"] if k else []
            cmd += ["-np", "1", "--host", host, binary, "--transport", "mpi", "--partition", str(k)]
            cmd += leader_args if k == 0 else []
        return cmd

    def _prepare_run(self, run_dir):
        """A run directory with the design's initialised memories (LiteX's identifier ROM, a
        board SoC's BIOS ROM): the model reads them there when it starts."""
        if not os.path.exists(self.binary):
            raise FileNotFoundError(f"no model at {self.binary}: build it first (--build)")
        os.makedirs(run_dir, exist_ok=True)
        for f in os.listdir(self.gateware_dir):
            if f.endswith(".init"):
                shutil.copy(os.path.join(self.gateware_dir, f), run_dir)

    def run(
        self,
        image,
        max_cycles=50_000_000,
        trace=None,
        run_dir=None,
        echo=False,
        args=(),
        launcher=(),
        hosts=None,
    ):
        """Run a raw binary image (loaded at main RAM) until it exits or max_cycles elapse.
        ``launcher``: a command the model runs under (e.g. a profiler's, ending in ``--``).
        ``hosts``: a cut model's partitions as the ranks of an MPI job on these hosts
        (:meth:`mpi_command`); without, the leader starts them on this host."""
        tmp = None
        if run_dir is None:
            tmp = run_dir = tempfile.mkdtemp(prefix="subutai-sim-")
        self._prepare_run(run_dir)
        constants = self.config["constants"]
        write_ram_init(
            image,
            run_dir,
            constants.get("mem_banks", 0),
            constants.get("mem_line_bytes", 32),
            self.config["memories"]["main_ram"]["size"],
        )
        model_args = ["--dir", run_dir, "--max-cycles", str(max_cycles), *args]
        cmd = [*launcher, *(self.mpi_command(hosts, model_args) if hosts else [self.binary, *model_args])]
        if trace:
            cmd += ["--trace", os.path.abspath(trace)]
        proc = None
        try:
            proc = _start_tracked(
                cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace"
            )
            out = []
            for line in proc.stdout:
                out.append(line)
                if echo:
                    print(line, end="", flush=True)
            err = proc.stderr.read()
            code = proc.wait()
        except BaseException:
            # Interrupted (Ctrl-C, SIGTERM through stop_runs_on_sigterm(), an error): the model
            # goes with the run instead of computing on, orphaned.
            if proc is not None:
                proc.kill()
                proc.wait()
            raise
        finally:
            _untrack(proc)
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)
        cycles, seconds = 0, 0.0
        for line in err.splitlines():
            if line.startswith("[sim] exit="):
                fields = dict(kv.split("=", 1) for kv in line[6:].split() if "=" in kv)
                cycles, seconds = int(fields["cycles"]), float(fields["seconds"])
        return SimResult(code, "".join(out), cycles, seconds, err)

    def start_serial(self, run_dir, max_cycles=0):
        """Start the model with its UART on a pseudo-terminal, as a board's serial port (a
        board SoC in simulation: its firmware comes through the BIOS's serial boot). The UART's
        output also goes to ``run_dir``/uart.log, the harness's messages to sim.log. Returns the
        running process and the terminal's path; the run ends at the firmware's ``@exit N``
        (status N) or after ``max_cycles`` (0: none; status :data:`EXIT_TIMEOUT`)."""
        self._prepare_run(run_dir)
        sim_log = os.path.join(run_dir, "sim.log")
        with open(os.path.join(run_dir, "uart.log"), "w") as out, open(sim_log, "w") as err:
            proc = subprocess.Popen(
                [self.binary, "--dir", run_dir, "--max-cycles", str(max_cycles), "--pty"],
                stdout=out,
                stderr=err,
                stdin=subprocess.DEVNULL,
            )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with open(sim_log) as f:
                for line in f:
                    if line.startswith("[sim] serial: "):
                        return proc, line.split(": ", 1)[1].strip()
            if proc.poll() is not None:
                break
            time.sleep(0.05)
        proc.kill()
        raise RuntimeError(f"the model gave no serial port (see {sim_log})")


# Model processes running (SimModel.run): what stop_runs_on_sigterm() kills. The benchmark
# scripts run several at once from a pool of threads, hence the lock.
_RUNNING: set = set()
_RUNNING_LOCK = threading.Lock()
_STOPPING = threading.Event()


def _start_tracked(cmd, **kwargs):
    with _RUNNING_LOCK:
        if _STOPPING.is_set():
            # A pool's thread taking its next run after SIGTERM: start nothing more.
            raise RuntimeError("stopping (SIGTERM): no more simulations are started")
        proc = subprocess.Popen(cmd, **kwargs)
        _RUNNING.add(proc)
    return proc


def _untrack(proc):
    with _RUNNING_LOCK:
        _RUNNING.discard(proc)


def stop_runs_on_sigterm():
    """Make SIGTERM end this process as Ctrl-C does, with its running models: Python's default
    is to die at once, which leaves every model that a benchmark script started computing on as
    an orphan (for hours, on 16 tiles). The handler kills the running models, whose runs then end
    (their threads return), and raises SystemExit in the main thread. Call it from the main
    thread of a script."""

    def handler(signum, frame):
        with _RUNNING_LOCK:
            _STOPPING.set()
            running = list(_RUNNING)
        for proc in running:
            proc.kill()
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, handler)


def write_ram_init(image, run_dir, mem_banks=0, line_bytes=32, size=None):
    """Convert a little-endian binary image into the $readmemh files of main RAM (32-bit words):
    ``sim_main_ram.init``, or with ``mem_banks`` one ``sim_main_ram_bank<k>.init`` per bank."""
    data = open(image, "rb").read()
    data += b"\0" * (-len(data) % 4)
    words = [int.from_bytes(data[i : i + 4], "little") for i in range(0, len(data), 4)]
    if mem_banks:
        files = {
            f"sim_main_ram_bank{k}.init": b
            for k, b in enumerate(bank_images(words, mem_banks, size, line_bytes))
        }
    else:
        files = {"sim_main_ram.init": words}
    for name, content in files.items():
        with open(os.path.join(run_dir, name), "w") as f:
            f.write("".join(f"{w:08x}\n" for w in content))


#: Main RAM of a simulated SoC unless asked otherwise.
DEFAULT_MAIN_RAM_SIZE = 1 * MiB
#: Words of the atomic unit (the software-only baseline's objects) unless asked otherwise.
DEFAULT_ATOMIC_WORDS = 2048


def model_dir(
    mesh_x,
    mesh_y,
    cpu_variant=SIM_CPU_VARIANT,
    mem_banks=None,
    main_ram_size=DEFAULT_MAIN_RAM_SIZE,
    atomic_words=DEFAULT_ATOMIC_WORDS,
):
    default = mem_banks is None or mem_banks == default_mem_banks(mesh_x * mesh_y)
    suffix = "" if default else f"_mem{mem_banks}"
    if main_ram_size != DEFAULT_MAIN_RAM_SIZE:
        suffix += (
            f"_ram{main_ram_size // MiB}m" if main_ram_size % MiB == 0 else f"_ram{main_ram_size // KiB}k"
        )
    if atomic_words != DEFAULT_ATOMIC_WORDS:
        suffix += f"_aw{atomic_words}"
    return os.path.join(BUILD_DIR, f"sim_{mesh_x}x{mesh_y}_{cpu_variant}{suffix}")


def build_model(mesh_x=2, mesh_y=2, cpu_variant=SIM_CPU_VARIANT, output_dir=None, mem_banks=None, **kwargs):
    """Generate the SoC and build its Verilator model, unless an identical one is already built
    (see :func:`_build_model` for the options). ``mem_banks``: main RAM banks (None: one per tile,
    :func:`default_mem_banks`; 0: one RAM on the shared SoC bus). ``threads``: host cores the
    model evaluates on (Verilator ``--threads``; a model of its own). It spins on them, so it pays
    on a machine with a core per thread and large meshes only: measured on 2 cores with ``hello``,
    2 threads run the flattened 16 tiles at 0.70x the cycles per second of one, 32 tiles at 2.6x
    (each core's cache holds half the model); with ``busy``, the flattened 32 tiles at 1.2x (still
    0.6x the tile-module model on one thread), the tile-module model 32 tiles at 0.76x, 64 at
    1.15x (``results/simspeed.md``). ``tile_blocks``: every tile but tile 0 an instance of one module,
    verilated once (:mod:`soc.tile_block`), or (False) every tile flattened into the SoC's module:
    the same cycles; None is :func:`default_tile_blocks`, the other choice a model of its own
    (``obj_dir_blocks``, ``obj_dir_flat``). ``profile``: every Verilog statement a C++ function
    named after its line (Verilator ``--prof-cfuncs``), for ``scripts/simprofile.py``; the same
    cycles, a model of its own (``..._profile``)."""
    if mem_banks is None:
        mem_banks = default_mem_banks(mesh_x * mesh_y)
    output_dir = output_dir or model_dir(
        mesh_x,
        mesh_y,
        cpu_variant,
        mem_banks,
        kwargs.get("main_ram_size", DEFAULT_MAIN_RAM_SIZE),
        kwargs.get("atomic_words", DEFAULT_ATOMIC_WORDS),
    )
    kwargs["mem_banks"] = mem_banks
    with build_lock(output_dir):
        return _build_model(mesh_x, mesh_y, cpu_variant, output_dir=output_dir, **kwargs)


def _build_model(
    mesh_x=2,
    mesh_y=2,
    cpu_variant=SIM_CPU_VARIANT,
    tile_ram_size=16 * KiB,
    main_ram_size=DEFAULT_MAIN_RAM_SIZE,
    atomic_words=DEFAULT_ATOMIC_WORDS,
    mem_banks=None,
    registered_uplinks=None,
    output_dir=None,
    trace=None,
    opt=None,
    cxxopt=None,
    pgo=None,
    obj_dir=None,
    jobs=None,
    threads=1,
    tile_blocks=None,
    profile=False,
    partitions=1,
    leader_tiles=None,
    force=False,
    log=print,
):
    partitioning = None
    if partitions > 1:
        if trace or threads != 1 or profile or pgo or tile_blocks is False:
            raise ValueError(
                "a model in partitions is built with its tile module, without a waveform, "
                "--threads, a profile or PGO"
            )
        partitioning = Partitioning(mesh_x, mesh_y, partitions, leader_tiles)
        tile_blocks = True
        obj_dir = obj_dir or partition_obj_dir(0)
    if tile_blocks is None:
        tile_blocks = default_tile_blocks(mesh_x * mesh_y, trace)
    if not obj_dir:
        # The default model in obj_dir, the other one of its mesh beside it.
        default = tile_blocks == default_tile_blocks(mesh_x * mesh_y, trace)
        obj_dir = (
            f"obj_dir_trace_{trace}"
            if trace
            else "obj_dir"
            if default
            else f"obj_dir_{'blocks' if tile_blocks else 'flat'}"
        )
        obj_dir += "" if threads == 1 else f"_threads{threads}"
        obj_dir += "_profile" if profile else ""
    model = SimModel(output_dir, obj_dir, partitions=partitions, leader_tiles=leader_tiles)
    params = dict(
        mesh=[mesh_x, mesh_y],
        cpu_variant=cpu_variant,
        tile_ram_size=tile_ram_size,
        main_ram_size=main_ram_size,
        mem_banks=mem_banks,
        trace=trace,
        opt=opt,
        cxxopt=cxxopt,
        pgo=pgo,
        digest=_source_digest(),
    )
    if atomic_words != DEFAULT_ATOMIC_WORDS:
        params["atomic_words"] = atomic_words
    if threads != 1:
        params["threads"] = threads
    if profile:
        params["profile"] = True
    if partitions > 1:
        params["partitions"] = partitions
        params["leader_tiles"] = leader_tiles
        mpi = mpi_flags()
        params["mpi"] = mpi is not None
    if tile_blocks and mesh_x * mesh_y > 1:
        params["tile_blocks"] = True
    if registered_uplinks is not None:
        # Not the default of its memory system (the board's: registered uplinks on the shared bus).
        params["registered_uplinks"] = registered_uplinks
    if not force and model.built_with(params):
        log(f"[build] {mesh_x}x{mesh_y} model up to date: {model.binary}")
        return model
    for tool, package in [("verilator", "verilator"), ("riscv64-unknown-elf-gcc", "gcc-riscv64-unknown-elf")]:
        if shutil.which(tool) is None:
            raise RuntimeError(f"{tool} not found: install the Debian package {package} (make setup)")

    t0 = time.time()
    knobs = harness_knobs(obj_dir, jobs, trace, opt, cxxopt, pgo, threads, profile)
    if pgo == "use":
        # Recompile the C++ of the PGO=gen build with its recorded profile: new Verilog would
        # no longer match the profile.
        log(f"[build] recompiling {model.binary} with its profile")
        _harness_make(model, "compile", knobs)
    else:
        log(
            f"[build] {mesh_x}x{mesh_y} SoC ({mesh_x * mesh_y} tiles, VexRiscv {cpu_variant}, "
            f"main RAM {f'in {mem_banks} banks' if mem_banks else 'on the shared bus'}): generating gateware in {output_dir}"
        )
        quiet_litex()
        soc = SimSoC(
            mesh_x=mesh_x,
            mesh_y=mesh_y,
            cpu_variant=cpu_variant,
            tile_ram_size=tile_ram_size,
            main_ram_size=main_ram_size,
            atomic_words=atomic_words,
            mem_banks=mem_banks,
            tile_blocks=tile_blocks,
            partitioning=partitioning,
            **({} if registered_uplinks is None else {"registered_uplinks": registered_uplinks}),
        )
        if partitioning is None:
            verilate(soc, model, knobs, log=log, t0=t0)
        else:
            verilate_partitions(soc, model, knobs, partitioning, mpi, log=log, t0=t0)
    model.write_stamp(params)
    log(f"[build] model ready in {time.time() - t0:.0f} s: {model.binary}")
    return model


def generate(soc, model, knobs, compile_software=False):
    """Generate ``soc`` into the model's directory (Verilog, csr.json, headers; with
    ``compile_software`` LiteX's BIOS too, in its ROM); return the harness's knobs for its
    Verilog, and the Verilog besides the top module's."""
    fhdl_speed.install()
    builder = Builder(
        soc,
        output_dir=model.output_dir,
        gateware_dir=model.gateware_dir,
        compile_software=compile_software,
        compile_gateware=False,
        csr_json=model.csr_json,
        csr_csv=os.path.join(model.output_dir, "csr.csv"),
    )
    builder.build(run=False, build_name="sim")
    soc.export_software(model.generated_dir)
    sources = [f for f, *_ in soc.platform.sources if f.endswith(".v") and os.path.basename(f) != "sim.v"]
    block = getattr(soc, "tile_block", None)
    if block is not None:
        # One module for every tile but tile 0, verilated once as a hierarchy block.
        sources.append(block.write(soc.platform, model.gateware_dir))
        config = os.path.join(model.gateware_dir, "hier_blocks.vlt")
        with open(config, "w") as f:
            f.write(f'`verilator_config\nhier_block -module "{block.name}"\n')
        sources.insert(0, config)
        knobs = dict(knobs, HIER_BLOCKS=block.name)
    return knobs, sources


def verilate(soc, model, knobs, compile_software=False, log=print, t0=None):
    """Generate ``soc`` into the model's directory (:func:`generate`) and build its Verilator
    model with the harness."""
    t0 = t0 or time.time()
    knobs, sources = generate(soc, model, knobs, compile_software)
    knobs = dict(knobs, SOURCES=_sources("sim.v", sources))
    log(f"[build] verilating and compiling the model ({time.time() - t0:.0f} s so far)")
    _make_model(model, knobs)


def _sources(top, sources):
    """The harness's SOURCES: Verilator's configuration first, then the top module's file."""
    configs = [f for f in sources if f.endswith(".vlt")]
    return " ".join(configs + [top] + [f for f in sources if f not in configs])


def _make_model(model, knobs, target="model", makefile="Makefile"):
    if os.path.exists(os.path.join(model.gateware_dir, knobs["OBJ_DIR"])):
        shutil.rmtree(os.path.join(model.gateware_dir, knobs["OBJ_DIR"]))
    _harness_make(model, target, knobs, makefile)


def mpi_flags():
    """Open MPI's (compile, link) flags, from its compiler wrapper, or None where it is not
    installed: a cut model then runs on one host only (its partitions share memory)."""
    if shutil.which("mpicxx") is None:
        return None
    flags = [
        subprocess.run(
            ["mpicxx", f"--showme:{what}"], capture_output=True, text=True, check=True
        ).stdout.strip()
        for what in ("compile", "link")
    ]
    return tuple(flags)


def partition_obj_dir(k):
    """The build directory of partition ``k`` of a cut model (in its gateware directory)."""
    return f"obj_dir_part{k}"


def verilate_partitions(soc, model, knobs, partitioning, mpi, log=print, t0=None):
    """Generate the leader ``soc`` and the other partitions of ``partitioning`` into the model's
    directory (``gateware/partitions<n>``: :mod:`soc.partition`), check each top module's ports
    against the cut, and build each partition's Verilator model with its generated exchange
    (with ``mpi``, Open MPI's flags of :func:`mpi_flags`, an MPI transport too)."""
    t0 = t0 or time.time()
    P = partitioning
    knobs, sources = generate(soc, model, knobs)
    tops = ["sim.v"]
    for k in range(1, P.n):
        tops.append(f"part{k}.v")
        group_verilog(soc.tile_block, P, k, soc.platform, os.path.join(model.gateware_dir, tops[k]))
    binaries = [f"../{partition_obj_dir(k)}/Vsim" for k in range(1, P.n)]
    for k in range(P.n):
        check_ports(os.path.join(model.gateware_dir, tops[k]), P, k)
        include = os.path.join(model.gateware_dir, f"include_part{k}")
        os.makedirs(include, exist_ok=True)
        with open(os.path.join(include, "partition_ports.h"), "w") as f:
            f.write(ports_header(P, k, binaries))
        log(
            f"[build] partition {k + 1} of {P.n} ({len(P.tiles(k))} tiles{', the memory system' if k == 0 else ''}): "
            f"verilating and compiling ({time.time() - t0:.0f} s so far)"
        )
        part_knobs, part_sources = knobs, sources
        if k == 0 and P.tiles(0) == [0]:
            # A leader of tile 0 alone has no instance of the tile module: no hierarchy block.
            part_knobs = {key: v for key, v in knobs.items() if key != "HIER_BLOCKS"}
            block = os.path.join(model.gateware_dir, f"{soc.tile_block.name}.v")
            part_sources = [f for f in sources if not f.endswith(".vlt") and f != block]
        _make_model(
            model,
            dict(
                part_knobs,
                SOURCES=_sources(tops[k], part_sources),
                OBJ_DIR=partition_obj_dir(k),
                PARTITION_INCLUDE=include,
                EXIT_PARTITION=EXIT_PARTITION,
                MPI_CFLAGS=f"-DSUBUTAI_MPI=1 {mpi[0]}" if mpi else None,
                MPI_LDFLAGS=mpi[1] if mpi else None,
            ),
            target="partition",
            makefile="partition.mk",
        )


def harness_knobs(
    obj_dir="obj_dir", jobs=None, trace=None, opt=None, cxxopt=None, pgo=None, threads=1, profile=False
):
    """The harness Makefile's variables (soc/sim_harness/Makefile)."""
    return {
        "PROF_CFUNCS": 1 if profile else None,
        "THREADS": threads,
        "OBJ_DIR": obj_dir,
        "JOBS": jobs or os.cpu_count() or 2,
        "TRACE": trace,
        "EXIT_TIMEOUT": EXIT_TIMEOUT,
        "VERILATOR_OPT": opt,
        "CXXOPT": cxxopt,
        "PGO": pgo,
    }


def _harness_make(model, target, knobs, makefile="Makefile"):
    """Run the harness Makefile (soc/sim_harness/Makefile, or ``makefile`` beside it) in the model's
    gateware directory."""
    cmd = ["make", "-s", "-f", os.path.join(HARNESS_DIR, makefile), "-C", model.gateware_dir, target]
    cmd += [f"{k}={v}" for k, v in knobs.items() if v is not None]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-8000:])
        raise RuntimeError(f"Verilator model build ({target}) failed (exit {proc.returncode})")


def quiet_litex():
    """LiteX logs every bus region and CSR at INFO level; keep warnings and errors only."""
    import logging

    logging.disable(logging.INFO)
