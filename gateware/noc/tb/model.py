#
# Verilator model of a NoC Mesh: generation, build (cached) and runs.
#
"""Build and run the Verilator testbench (``tb.cpp``) of a :class:`gateware.noc.mesh.Mesh`.

``build_model(mesh_x, mesh_y)`` generates the Verilog of a mesh whose local links are top-level
ports named ``t<i>_in_<field>`` / ``t<i>_out_<field>``, a ``ports.h`` that binds them for the
harness, and builds the model with Verilator into ``build/noc_tb/<shape>/``. The build is reused
while the hash of the NoC gateware, the harness and this file is unchanged (``stamp`` file).

``Model.run(packets, ...)`` writes a traffic file, runs the model and returns a :class:`RunResult`
with the parsed log.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

from gateware import fhdl_speed
from gateware.build import BUILD_DIR as _BUILD_ROOT, build_verilator_testbench, built_testbench, source_digest

TB_DIR = os.path.dirname(os.path.abspath(__file__))
BUILD_DIR = os.path.join(_BUILD_ROOT, "noc_tb")

LINK_FIELDS = ["valid", "vc", "first", "last", "data", "ready"]


def source_hash(extra=""):
    """Hash of everything a model depends on: NoC gateware, harness, this builder."""
    return source_digest(["gateware/noc"], extra)


def generate_verilog(mesh_x, mesh_y, **kwargs):
    """Verilog of a Mesh with every local link as top-level ports; returns (verilog, ports.h)."""
    from migen import Module, Signal
    from migen.fhdl.verilog import convert
    from gateware.noc.mesh import Mesh

    top = Module()
    top.submodules.mesh = mesh = Mesh(mesh_x, mesh_y, **kwargs)
    ios = set()
    for t in range(mesh.n_tiles):
        for d, link in (("in", mesh.local_inputs[t]), ("out", mesh.local_outputs[t])):
            for f in LINK_FIELDS:
                s = Signal(len(getattr(link, f)), name_override=f"t{t}_{d}_{f}")
                ios.add(s)
                # Forward fields enter at inputs and leave at outputs; ready the other way.
                if (d == "in") == (f != "ready"):
                    top.comb += getattr(link, f).eq(s)
                else:
                    top.comb += s.eq(getattr(link, f))
    error = Signal(name_override="noc_error")
    top.comb += error.eq(mesh.error)
    ios.add(error)
    fhdl_speed.install()
    verilog = str(convert(top, ios=ios, name="mesh"))

    lines = [
        f"#define MESH_X {mesh_x}",
        f"#define MESH_Y {mesh_y}",
        f"#define N_TILES {mesh.n_tiles}",
        "static void bind_ports(Vmesh *top, Link *in, Link *out) {",
    ]
    for t in range(mesh.n_tiles):
        for d in ("in", "out"):
            refs = ", ".join(f"&top->t{t}_{d}_{f}" for f in LINK_FIELDS)
            lines.append(f"    {d}[{t}] = Link{{{refs}}};")
    lines.append("}")
    return verilog, "\n".join(lines) + "\n"


@dataclass
class RunResult:
    status: str  # "ok", "deadlock" or "timeout".
    returncode: int
    summary: dict  # RESULT fields of the harness (ints).
    injections: list  # (cycle, tile, vc, head) per injected head flit.
    deliveries: list  # (cycle, tile, vc, first, last, data) per delivered flit.
    stdout: str = ""
    wall: float = 0.0

    @property
    def cycles(self):
        return self.summary["cycles"]


class Model:
    def __init__(self, mesh_x, mesh_y, path, params):
        self.mesh_x, self.mesh_y = mesh_x, mesh_y
        self.n_tiles = mesh_x * mesh_y
        self.path = path
        self.params = params

    def run(self, packets, seed=1, stall=0.0, max_cycles=2_000_000, timeout=2000, drain=32, workdir=None):
        """Run ``packets`` (list of :class:`gateware.noc.tb.traffic.Packet`); ``stall``: probability
        (0..1) that a receiver refuses a VC in a cycle."""
        from gateware.noc.tb.traffic import write_traffic

        own = workdir is None
        workdir = workdir or tempfile.mkdtemp(prefix="noc_tb_")
        try:
            traffic = os.path.join(workdir, "traffic.txt")
            log = os.path.join(workdir, "log.txt")
            write_traffic(traffic, packets, self.mesh_x, self.mesh_y)
            t0 = time.time()
            p = subprocess.run(
                [
                    self.path,
                    traffic,
                    log,
                    "--seed",
                    str(seed),
                    "--stall",
                    str(int(round(stall * 1000))),
                    "--max-cycles",
                    str(max_cycles),
                    "--timeout",
                    str(timeout),
                    "--drain",
                    str(drain),
                ],
                capture_output=True,
                text=True,
            )
            wall = time.time() - t0
            summary, status = {}, "crash"
            for line in p.stdout.splitlines():
                if line.startswith("RESULT"):
                    for kv in line.split()[1:]:
                        k, v = kv.split("=")
                        summary[k] = v if k == "status" else int(v)
                    status = summary["status"]
            if status == "crash":
                raise RuntimeError(f"harness failed ({p.returncode}): {p.stdout}{p.stderr}")
            injections, deliveries = [], []
            with open(log) as f:
                for line in f:
                    w = line.split()
                    if w[0] == "R":
                        deliveries.append(
                            (int(w[1]), int(w[2]), int(w[3]), int(w[4]), int(w[5]), int(w[6], 16))
                        )
                    else:
                        injections.append((int(w[1]), int(w[2]), int(w[3]), int(w[4], 16)))
        finally:
            if own:
                shutil.rmtree(workdir, ignore_errors=True)
        return RunResult(status, p.returncode, summary, injections, deliveries, p.stdout, wall)


def model_name(mesh_x, mesh_y, buffer_depth=2, starvation_limit=8):
    name = f"{mesh_x}x{mesh_y}"
    if (buffer_depth, starvation_limit) != (2, 8):
        name += f"-d{buffer_depth}-s{starvation_limit}"
    return name


def build_model(mesh_x, mesh_y, buffer_depth=2, starvation_limit=8, jobs=2, log=None):
    """Build (or reuse) the Verilator model of a mesh; returns a :class:`Model`."""
    log = log or (lambda msg: print(msg, file=sys.stderr))
    params = dict(buffer_depth=buffer_depth, starvation_limit=starvation_limit)
    name = model_name(mesh_x, mesh_y, **params)
    outdir = os.path.join(BUILD_DIR, name)
    digest = source_hash(repr((mesh_x, mesh_y, sorted(params.items()))))
    binary = built_testbench(outdir, "mesh", digest)
    if binary:
        return Model(mesh_x, mesh_y, binary, params)
    verilog, ports = generate_verilog(mesh_x, mesh_y, **params)
    # The C++ of a 4x4 mesh (~4 MB) takes 70 s at -O2 but 17 s at -O1, for the same speed of the
    # model (~100 k cycles/s, runs are short). Initialization code stays at -O0.
    binary = build_verilator_testbench(
        outdir,
        "mesh",
        {"mesh.v": verilog, "ports.h": ports},
        os.path.join(TB_DIR, "tb.cpp"),
        digest,
        jobs=jobs,
        cxx_opt=("-O1", "-O0", "-O1"),
        log=log,
        tag=f"noc_tb {name}",
    )
    return Model(mesh_x, mesh_y, binary, params)
