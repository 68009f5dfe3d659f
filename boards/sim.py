#!/usr/bin/env python3
#
# Verilator simulation target of the Subutai SoC (the default target).
#
#   python3 boards/sim.py --tiles 4 --build                 # build the model once
#   python3 boards/sim.py --tiles 4 --ram-init hello.bin    # run an image on it (no rebuild)
#   python3 boards/sim.py --tiles 4 --app hello             # build firmware app, then run it
#

import argparse
import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from migen import *

from litex.build.generic_platform import Pins, Subsignal
from litex.build.io import CRG
from litex.build.sim import SimPlatform
from litex.soc.integration.builder import Builder

from gateware.control import SimControl
from soc.mesh import mesh_shape, MeshShapeError
from soc.subutai_soc import SubutaiSoC, KiB, MiB

HARNESS_DIR  = os.path.join(ROOT, "boards", "sim_harness")
FIRMWARE_DIR = os.path.join(ROOT, "firmware")
EXIT_TIMEOUT = 124
BACKENDS     = ("subutai", "swonly")  # PThreads backends of the firmware (link time)

# IOs ----------------------------------------------------------------------------------------------

_io = [
    ("sys_clk", 0, Pins(1)),
    ("sys_rst", 0, Pins(1)),
    ("serial", 0,
        Subsignal("source_valid", Pins(1)),
        Subsignal("source_ready", Pins(1)),
        Subsignal("source_data",  Pins(8)),
        Subsignal("sink_valid",   Pins(1)),
        Subsignal("sink_ready",   Pins(1)),
        Subsignal("sink_data",    Pins(8)),
    ),
    ("sim_ctrl", 0,
        Subsignal("valid", Pins(1)),
        Subsignal("code",  Pins(8)),
    ),
]


class Platform(SimPlatform):
    def __init__(self):
        SimPlatform.__init__(self, "SIM", _io)

# SoC ----------------------------------------------------------------------------------------------

class SimSoC(SubutaiSoC):
    def __init__(self, mesh_x=2, mesh_y=2, sys_clk_freq=int(100e6), main_ram_size=1*MiB, **kwargs):
        platform = Platform()
        self.crg = CRG(platform.request("sys_clk"))
        SubutaiSoC.__init__(self, platform, sys_clk_freq,
            mesh_x                   = mesh_x,
            mesh_y                   = mesh_y,
            uart_name                = "sim",
            integrated_main_ram_size = main_ram_size,
            # A one-word init makes the model read sim_main_ram.init when it starts, so a new
            # image needs no rebuild.
            integrated_main_ram_init = [0],
            **kwargs)
        self.sim_ctrl = SimControl(platform.request("sim_ctrl"))

# Model --------------------------------------------------------------------------------------------

@dataclass
class SimResult:
    exit_code: int
    output:    str
    cycles:    int
    seconds:   float
    stderr:    str

    @property
    def speed(self):
        return self.cycles/self.seconds if self.seconds else 0.0


def _source_digest():
    """Digest of everything that shapes the model: gateware, SoC generator, this target, harness."""
    h = hashlib.sha256()
    for sub in ["gateware", "soc", "boards/sim.py", "boards/sim_harness"]:
        path = os.path.join(ROOT, sub)
        files = [path] if os.path.isfile(path) else sorted(
            os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs
            if f.endswith((".py", ".cpp", ".h", "Makefile")))
        for f in files:
            h.update(f.encode())
            h.update(open(f, "rb").read())
    return h.hexdigest()


class SimModel:
    """A built Verilator model of one SoC configuration, runnable on many firmware images."""

    def __init__(self, output_dir, obj_dir="obj_dir"):
        self.output_dir    = os.path.abspath(output_dir)
        self.gateware_dir  = os.path.join(self.output_dir, "gateware")
        self.generated_dir = os.path.join(self.output_dir, "software", "include", "generated")
        self.csr_json      = os.path.join(self.output_dir, "csr.json")
        self.binary        = os.path.join(self.gateware_dir, obj_dir, "Vsim")

    @property
    def config(self):
        with open(self.csr_json) as f:
            return json.load(f)

    @property
    def n_tiles(self):
        return self.config["constants"]["n_tiles"]

    def build_firmware(self, app, out_dir=None, extra_cflags="", backend="subutai", program_args=""):
        """Compile a firmware application (firmware/apps/) or benchmark program
        (firmware/programs/, run with "-t <tiles> program_args") against this SoC's generated
        headers, linked with a PThreads backend ("subutai" or "swonly"); return its .bin."""
        if backend not in BACKENDS:
            raise ValueError(f"backend {backend!r}: must be one of {', '.join(BACKENDS)}")
        if "'" in program_args:
            raise ValueError(f"program arguments {program_args!r}: no quotes allowed")
        with _build_lock(self.output_dir):
            return self._build_firmware(app, out_dir, extra_cflags, backend, program_args)

    def _build_firmware(self, app, out_dir, extra_cflags, backend, program_args):
        if out_dir is None:
            tag = "".join(c if c.isalnum() else "_" for c in program_args.strip())
            out_dir = os.path.join(self.output_dir, "firmware",
                f"{app}-{backend}" + (f"-{tag}" if tag else ""))
        cmd = ["make", "-s", "-C", FIRMWARE_DIR, f"APP={app}", f"SOC_DIR={self.output_dir}",
            f"OUT={out_dir}", f"BACKEND={backend}", f"ARGS={program_args}"]
        if extra_cflags:
            cmd.append(f"EXTRA_CFLAGS={extra_cflags}")
        subprocess.run(cmd, check=True)
        return os.path.join(out_dir, f"{app}.bin")

    def run(self, image, max_cycles=50_000_000, trace=None, run_dir=None, echo=False, args=()):
        """Run a raw binary image (loaded at main RAM) until it exits or max_cycles elapse."""
        if not os.path.exists(self.binary):
            raise FileNotFoundError(f"no model at {self.binary}: build it first (--build)")
        tmp = None
        if run_dir is None:
            tmp = run_dir = tempfile.mkdtemp(prefix="subutai-sim-")
        os.makedirs(run_dir, exist_ok=True)
        # Other initialised memories of the design (e.g. LiteX's identifier ROM).
        for f in os.listdir(self.gateware_dir):
            if f.endswith(".init"):
                shutil.copy(os.path.join(self.gateware_dir, f), run_dir)
        write_ram_init(image, os.path.join(run_dir, "sim_main_ram.init"))
        cmd = [self.binary, "--dir", run_dir, "--max-cycles", str(max_cycles), *args]
        if trace:
            cmd += ["--trace", os.path.abspath(trace)]
        try:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                errors="replace")
            out = []
            for line in proc.stdout:
                out.append(line)
                if echo:
                    print(line, end="", flush=True)
            err = proc.stderr.read()
            code = proc.wait()
        finally:
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)
        cycles, seconds = 0, 0.0
        for line in err.splitlines():
            if line.startswith("[sim] exit="):
                fields = dict(kv.split("=", 1) for kv in line[6:].split() if "=" in kv)
                cycles, seconds = int(fields["cycles"]), float(fields["seconds"])
        return SimResult(code, "".join(out), cycles, seconds, err)


def write_ram_init(image, init_path):
    """Convert a little-endian binary image into the $readmemh file of main RAM (32-bit words)."""
    data = open(image, "rb").read()
    data += b"\0"*(-len(data) % 4)
    with open(init_path, "w") as f:
        for i in range(0, len(data), 4):
            f.write(f"{int.from_bytes(data[i:i+4], 'little'):08x}\n")


def model_dir(mesh_x, mesh_y, cpu_variant="standard"):
    return os.path.join(ROOT, "build", f"sim_{mesh_x}x{mesh_y}_{cpu_variant}")


@contextlib.contextmanager
def _build_lock(output_dir):
    """Serialize builds in one build directory across processes (a test run and a benchmark
    regenerate the same headers)."""
    os.makedirs(output_dir, exist_ok=True)
    with open(os.path.join(output_dir, ".lock"), "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def build_model(mesh_x=2, mesh_y=2, cpu_variant="standard", output_dir=None, **kwargs):
    """Generate the SoC and build its Verilator model, unless an identical one is already built
    (see :func:`_build_model` for the options)."""
    output_dir = output_dir or model_dir(mesh_x, mesh_y, cpu_variant)
    with _build_lock(output_dir):
        return _build_model(mesh_x, mesh_y, cpu_variant, output_dir=output_dir, **kwargs)


def _build_model(mesh_x=2, mesh_y=2, cpu_variant="standard", tile_ram_size=16*KiB,
        main_ram_size=1*MiB, output_dir=None, trace=None, opt=None, cxxopt=None, pgo=None,
        obj_dir=None, jobs=None, force=False, log=print):
    obj_dir    = obj_dir or ("obj_dir" if not trace else f"obj_dir_trace_{trace}")
    model      = SimModel(output_dir, obj_dir)
    params = dict(mesh=[mesh_x, mesh_y], cpu_variant=cpu_variant, tile_ram_size=tile_ram_size,
        main_ram_size=main_ram_size, trace=trace, opt=opt, cxxopt=cxxopt, pgo=pgo,
        digest=_source_digest())
    stamp = os.path.join(model.gateware_dir, obj_dir + ".stamp")
    if not force and os.path.exists(model.binary) and os.path.exists(stamp):
        if json.load(open(stamp)) == params:
            log(f"[build] {mesh_x}x{mesh_y} model up to date: {model.binary}")
            return model
    for tool, package in [("verilator", "verilator"), ("riscv64-unknown-elf-gcc", "gcc-riscv64-unknown-elf")]:
        if shutil.which(tool) is None:
            raise RuntimeError(f"{tool} not found: install the Debian package {package} (make setup)")

    t0 = time.time()
    knobs = {"OBJ_DIR": obj_dir, "JOBS": jobs or os.cpu_count() or 2, "TRACE": trace,
        "VERILATOR_OPT": opt, "CXXOPT": cxxopt, "PGO": pgo}
    if pgo == "use":
        # Recompile the C++ of the PGO=gen build with its recorded profile: new Verilog would
        # no longer match the profile.
        log(f"[build] recompiling {model.binary} with its profile")
        _harness_make(model, "compile", knobs)
    else:
        log(f"[build] {mesh_x}x{mesh_y} SoC ({mesh_x*mesh_y} tiles, VexRiscv {cpu_variant}): generating gateware in {output_dir}")
        _quiet_litex()
        soc = SimSoC(mesh_x=mesh_x, mesh_y=mesh_y, cpu_variant=cpu_variant,
            tile_ram_size=tile_ram_size, main_ram_size=main_ram_size)
        builder = Builder(soc, output_dir=output_dir, compile_software=False, compile_gateware=False,
            csr_json=model.csr_json, csr_csv=os.path.join(output_dir, "csr.csv"))
        builder.build(run=False, build_name="sim")
        soc.export_software(model.generated_dir)
        sources = [f for f, *_ in soc.platform.sources if f.endswith(".v")]
        knobs["SOURCES"] = " ".join(["sim.v"] + [s for s in sources if os.path.basename(s) != "sim.v"])
        log(f"[build] verilating and compiling the model ({time.time() - t0:.0f} s so far)")
        if os.path.exists(os.path.join(model.gateware_dir, obj_dir)):
            shutil.rmtree(os.path.join(model.gateware_dir, obj_dir))
        _harness_make(model, "model", knobs)
    json.dump(params, open(stamp, "w"))
    log(f"[build] model ready in {time.time() - t0:.0f} s: {model.binary}")
    return model


def _harness_make(model, target, knobs):
    """Run the harness Makefile (boards/sim_harness/Makefile) in the model's gateware directory."""
    cmd = ["make", "-s", "-f", os.path.join(HARNESS_DIR, "Makefile"), "-C", model.gateware_dir, target]
    cmd += [f"{k}={v}" for k, v in knobs.items() if v is not None]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-8000:])
        raise RuntimeError(f"Verilator model build ({target}) failed (exit {proc.returncode})")


def _quiet_litex():
    """LiteX logs every bus region and CSR at INFO level; keep warnings and errors only."""
    import logging
    logging.disable(logging.INFO)

# Build --------------------------------------------------------------------------------------------

def firmware_apps():
    """Applications written for this SoC (firmware/apps/)."""
    return sorted(os.listdir(os.path.join(FIRMWARE_DIR, "apps")))


def benchmark_programs():
    """Plain PThreads benchmark programs (firmware/programs/, except their common headers)."""
    base = os.path.join(FIRMWARE_DIR, "programs")
    return sorted(d for d in os.listdir(base)
        if d != "common" and os.path.isdir(os.path.join(base, d)))


def main():
    parser = argparse.ArgumentParser(description="Subutai SoC on Verilator (LiteX simulation).")
    parser.add_argument("--tiles", type=int, default=None, help="Number of tiles (1 to 16).")
    parser.add_argument("--mesh", default=None, help="Mesh shape XxY (1x1 to 4x4).")
    parser.add_argument("--cpu-variant", default="standard", help="VexRiscv variant of every core.")
    parser.add_argument("--tile-ram-size", type=lambda s: int(s, 0), default=16*KiB, help="Private SRAM per tile (bytes).")
    parser.add_argument("--main-ram-size", type=lambda s: int(s, 0), default=1*MiB, help="Shared main RAM (bytes).")
    parser.add_argument("--output-dir", default=None, help="Build directory (default build/sim_XxY_<variant>).")
    parser.add_argument("--build", action="store_true", help="Build the model (skipped when up to date).")
    parser.add_argument("--force", action="store_true", help="Rebuild the model even when up to date.")
    parser.add_argument("--app", default=None,
        help="Firmware application (firmware/apps/<app>) or benchmark program (firmware/programs/<app>) to compile and run.")
    parser.add_argument("--args", default="", metavar="'ARGS'",
        help="Arguments of a benchmark program, after the '-t <tiles>' it always gets (e.g. '-i test -s 7').")
    parser.add_argument("--backend", choices=BACKENDS, default="subutai",
        help="PThreads backend the --app is linked with.")
    parser.add_argument("--ram-init", default=None, help="Raw binary image to run from main RAM.")
    parser.add_argument("--max-cycles", type=int, default=50_000_000, help="Stop after this many cycles (exit 124).")
    parser.add_argument("--trace", nargs="?", const="sim.vcd", default=None, metavar="FILE",
        help="Write a waveform (.vcd or .fst); builds a tracing model beside the fast one.")
    parser.add_argument("--jobs", type=int, default=None, help="Parallel C++ compile jobs.")
    args = parser.parse_args()

    try:
        mesh_x, mesh_y = mesh_shape(args.tiles, args.mesh)
    except MeshShapeError as e:
        parser.error(str(e))
    if args.ram_init and args.app:
        parser.error("give either --app or --ram-init, not both")
    if args.ram_init and not os.path.isfile(args.ram_init):
        parser.error(f"--ram-init {args.ram_init}: no such file")
    if args.max_cycles < 0:
        parser.error("--max-cycles must be >= 0")
    if args.app and args.app not in firmware_apps() + benchmark_programs():
        parser.error(f"--app {args.app}: no such application or program (have: "
            f"{', '.join(firmware_apps())}; programs: {', '.join(benchmark_programs())})")
    if args.args and args.app not in benchmark_programs():
        parser.error("--args only applies to a benchmark program (firmware/programs/)")
    if "'" in args.args:
        parser.error("--args: no quotes allowed")

    trace = None
    if args.trace:
        trace = "fst" if args.trace.endswith(".fst") else "1"
    try:
        model = build_model(mesh_x, mesh_y, args.cpu_variant, tile_ram_size=args.tile_ram_size,
            main_ram_size=args.main_ram_size, output_dir=args.output_dir, trace=trace,
            jobs=args.jobs, force=args.force)
    except RuntimeError as e:
        sys.exit(f"error: {e}")

    image = args.ram_init
    if args.app:
        image = model.build_firmware(args.app, backend=args.backend, program_args=args.args)
    if image is None:
        return
    print(f"[sim] running {os.path.basename(image)} on {mesh_x}x{mesh_y} ({mesh_x*mesh_y} tiles)", flush=True)
    result = model.run(image, max_cycles=args.max_cycles, trace=args.trace, echo=True)
    sys.stderr.write(result.stderr)
    sys.exit(result.exit_code)


if __name__ == "__main__":
    main()
