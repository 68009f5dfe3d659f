#!/usr/bin/env python3
"""Where the simulator's time goes, by part of a tile (router, core, Subutai engine, NI...).

Builds the tile-module model of a mesh (soc/tile_block.py) with Verilator's --prof-cfuncs, which
makes every Verilog statement a C++ function named after its source line, runs a firmware (`busy`
by default: every core computing, no packet in the network) under Linux `perf record`, and
attributes each sample to the part of the design its statement belongs to: the Verilog line's
assigned signal, whose Migen name says the part (the tile module's Verilog holds one tile, so
these prefixes are the tile's submodules). One function per statement weighs parts of many small
statements (the router's allocation and crossbar) more than the core's few large ones: the shares
are those of the profiling build, a guide to where a faster model must save, not a measurement of
the default build. Results go to results/simprofile.{csv,md,png}.
"""

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

from soc.mesh import mesh_shape
from soc.simulation import EXIT_TIMEOUT, build_model, stop_runs_on_sigterm
from soc.tile_block import TILE_MODULE
from scripts.results import save_table, console_table, RESULTS_DIR

# Migen names a tile's signals after the submodule that made them (tile_<submodule>_...), except
# where the name alone is unique (the router's input and output ports). First match wins.
TILE_PARTS = [
    ("router", ("inputport", "outputport", "conflict_", "vc0_turn", "tile_router", "router")),
    ("Subutai port and engine", ("tile_subutaiport", "subutaiport", "engine")),
    ("channel port", ("tile_channelport", "channelport")),
    ("network interface", ("tile_networkinterface", "networkinterface")),
    ("CSR banks", ("tile_csrbank", "tile_csr", "tile_interface", "csrbank")),
    ("tile bus and RAM", ("tile_wishbone", "tile_decoder", "tile_arbiter", "tile_ram", "ibus", "dbus")),
]
CORE = "VexRiscv core"
OTHER = "tile: other statements (Migen temporaries, cycle counter, uplink)"
TILE_EVAL = "tile module: Verilator's scheduling and calls"
SOC = "SoC module (tile 0, banks, crossbar, wrappers) and harness"

# An assignment, a continuous one or a declaration with its value: its target's name.
_ASSIGN = re.compile(
    r"\s*(?:(?:assign|output|input|reg|wire|signed)\s+)*(?:\[[^\]]*\]\s*)?"
    r"([A-Za-z_][A-Za-z0-9_]*)(?:\[[^\]]*\])*\s*(?:<=|=)[^=]"
)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PROF = re.compile(r"__PROF__([A-Za-z0-9_]+?)__l(\d+)")


def statement(lines, line):
    """The statement at ``line`` (1-based) of a Verilog file: its assigned signal's name and its
    text (the first assignment from that line on: an always block's line is its first
    statement's)."""
    for text in lines[line - 1 : line + 40]:
        m = _ASSIGN.match(text)
        if m:
            return m.group(1), text
    return "", ""


def tile_part(signal, text=""):
    """The part of a tile a statement belongs to: by the signal it assigns, else by the first
    other name in it that says (a memory's write names its address signal)."""
    for name in [signal] + _NAME.findall(text):
        for part, prefixes in TILE_PARTS:
            if name.startswith(prefixes):
                return part
    return OTHER


def attribute(samples, verilog, tile_module):
    """Shares in % by part, from ``samples`` (symbol, share in %) and ``verilog`` (file basename
    without .v -> list of lines)."""
    parts = collections.Counter()
    for symbol, share in samples:
        m = _PROF.search(symbol)
        if m:
            source, line = m.group(1), int(m.group(2))
            if source.startswith("VexRiscv"):
                # Tile 0's core in the SoC's module and the tile module's cores alike.
                part = CORE
            elif source == tile_module:
                part = tile_part(*statement(verilog[source], line))
            else:
                part = SOC
        elif symbol.startswith(f"V{tile_module}"):
            part = TILE_EVAL
        else:
            part = SOC
        parts[part] += share
    return parts


def perf_samples(data):
    """(symbol, share in %) of every symbol ``perf report`` lists for a recording."""
    out = subprocess.run(
        ["perf", "report", "-i", data, "--no-children", "--sort", "symbol", "--stdio"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    samples = []
    for line in out.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+\[.\]\s+(\S+)", line)
        if m:
            samples.append((m.group(2), float(m.group(1))))
    return samples


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tiles", type=int, default=64, help="Tiles of the mesh (2 to 64; default 64).")
    p.add_argument("--app", default="busy", help="Firmware application run on the model (default busy).")
    p.add_argument("--cycles", type=int, default=30_000, help="Simulated cycles profiled (default 30000).")
    p.add_argument("--frequency", type=int, default=2000, help="perf samples per second (default 2000).")
    p.add_argument("--jobs", type=int, default=None, help="Parallel C++ compile jobs.")
    args = p.parse_args()
    try:
        x, y = mesh_shape(args.tiles)
    except ValueError as e:
        p.error(f"--tiles: {e}")
    if args.tiles < 2:
        p.error("--tiles: the tile module needs 2 tiles or more (tile 0 is the SoC's own)")
    if args.cycles <= 0:
        p.error("--cycles must be positive")
    if args.frequency <= 0:
        p.error("--frequency must be positive")
    if shutil.which("perf") is None:
        sys.exit("perf not found: install the Debian package linux-perf (Ubuntu: linux-tools-generic)")
    stop_runs_on_sigterm()

    model = build_model(x, y, tile_blocks=True, profile=True, jobs=args.jobs)
    image = model.build_firmware(args.app)
    tile_module = TILE_MODULE
    verilog = {}
    with open(os.path.join(model.gateware_dir, f"{tile_module}.v")) as f:
        verilog[tile_module] = f.read().split("\n")

    with tempfile.TemporaryDirectory(prefix="subutai-profile-") as tmp:
        data = os.path.join(tmp, "perf.data")
        print(f"[profile] {args.app} on {x}x{y}, {args.cycles} cycles under perf record", flush=True)
        r = model.run(
            image,
            max_cycles=args.cycles,
            launcher=["perf", "record", "-q", "-F", str(args.frequency), "-o", data, "--"],
        )
        if r.exit_code not in (0, EXIT_TIMEOUT):
            raise RuntimeError(f"{args.app} failed under perf (exit {r.exit_code}):\n{r.output}\n{r.stderr}")
        parts = attribute(perf_samples(data), verilog, tile_module)

    total = sum(parts.values()) or 1.0
    header = ["part", "share (%)"]
    rows = [[part, f"{100 * share / total:.1f}"] for part, share in parts.most_common()]
    notes = (
        f"`scripts/simprofile.py --tiles {args.tiles} --app {args.app} --cycles {args.cycles}`: the "
        f"{x}x{y} tile-module model built with Verilator --prof-cfuncs (one C++ function per Verilog "
        f"statement, no gprof -pg), {r.cycles} cycles at {r.speed:,.0f} cycles/s under `perf record`, "
        "each sample attributed by the signal its statement assigns (Migen's names say the part). "
        "One function per statement weighs parts of many small statements more than the core's few "
        "large ones: shares of the profiling build, not of the default one."
    )
    name = "simprofile"
    csv_path, md_path = save_table(
        name, header, rows, title=f"Simulation time by part ({x}x{y}, {args.app})", notes=notes
    )
    print(console_table(header, rows))
    plot(rows, os.path.join(RESULTS_DIR, f"{name}.png"), f"{x}x{y}, {args.app}")
    print(f"\nwrote {csv_path}, {md_path} and results/{name}.png")


def plot(rows, path, label):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 3.5))
    names = [r[0] for r in rows][::-1]
    ax.barh(names, [float(r[1]) for r in rows][::-1])
    ax.set_xlabel("share of the simulator's time (%)")
    ax.set_title(f"Where the Verilator model's time goes ({label})", fontsize=10)
    ax.tick_params(axis="y", labelsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


if __name__ == "__main__":
    main()
