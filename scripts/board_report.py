#!/usr/bin/env python3
"""Resource and timing report of a board build (ECP5: yosys + nextpnr-ecp5).

Usage::

    .venv/bin/python scripts/board_report.py BUILD_DIR [--no-components] [--results DIR]

``BUILD_DIR`` is a board build (e.g. ``build/radiona_ulx3s_2x2``; ``--board B --tiles N`` names
the default one); ``make bitstream`` runs this after the board target. The report is made from
the files the build left: the yosys log (cell counts after ``synth_ecp5``), nextpnr's ``--report``
JSON (utilisation of the placed design, Fmax of every clock) and ``<name>_times.json`` (stage
times).

Writes ``results/bitstream_<board>_<X>x<Y>.{csv,md}`` and updates the build's row of
``results/boards.{csv,md}`` (one row per board and mesh). The per-component figures (one router,
one basic NI, one NI with Subutai-HW, and the Subutai overhead over the basic NI) come from
``scripts/noc_resources.py``'s :func:`synthesize` with ``synth_ecp5 -nowidelut`` and without
event counters, as in the board build, and :func:`placed_figures` (LUT4 sites); they are cached in ``build/board_components.json`` until gateware/ changes.
"""

import argparse
import csv
import glob
import hashlib
import inspect
import json
import os
import re
import time

from gateware.build import BUILD_DIR, ROOT

from soc.nextpnr import critical_path, critical_path_text, parse_nextpnr_report, sys_fmax
from scripts.results import columns, RESULTS_DIR, markdown_table, console_table, save_table

COMPONENTS_CACHE = os.path.join(BUILD_DIR, "board_components.json")

# Components of a tile a board report lists (scripts/noc_resources.py's board_designs), by key.
COMPONENT_LABELS = {
    "router": "router (5 ports, 4x4 mesh)",
    "ni_basic": "NI, basic",
    "ni_subutai": "NI with Subutai-HW",
}

# Columns of results/boards.{csv,md}, one row per build.
BOARD_COLUMNS = (
    "board device mesh tiles cpu_variant sys_clk_mhz fmax_mhz timing_met lut4 lut_sites lut_sites_pct ff "
    "ff_pct bram bram_pct dsp dsp_pct yosys_s nextpnr_s ecppack_s status date"
).split()

# Parsing ------------------------------------------------------------------------------------------


def parse_yosys_cells(log_path):
    """Cell counts of the synthesized design: the last "Printing statistics" block of a yosys
    log (synth_ecp5 ends with one; with a flattened design the top module is the design)."""
    text = open(log_path, errors="replace").read()
    at = text.rfind("Printing statistics.")
    if at < 0:
        raise ValueError(f"{log_path}: no yosys statistics (did synthesis finish?)")
    block = text[at:]
    end = re.search(r"\n\d+(\.\d+)+\. Executing", block)
    if end:
        block = block[: end.start()]
    cells = {}
    for count, name in re.findall(r"^\s+(\d+)\s+([A-Za-z_$][\w$]*)\s*$", block, re.M):
        if (
            name in ("wires", "ports", "submodules", "cells", "memories", "processes")
            or not name.isupper()
            and not name.startswith("$")
        ):  # Module names.
            continue
        cells[name] = int(count)  # The hierarchy total comes last and wins.
    return cells


# Components ---------------------------------------------------------------------------------------


def _gateware_digest():
    h = hashlib.sha256()
    for f in sorted(glob.glob(os.path.join(ROOT, "gateware", "**", "*.py"), recursive=True)):
        h.update(f.encode())
        h.update(open(f, "rb").read())
    h.update(open(os.path.join(ROOT, "scripts", "noc_resources.py"), "rb").read())
    return h.hexdigest()


def component_figures(force=False, log=None):
    """LUT4/FF/BRAM of one router (5 ports, interior of a 4x4 mesh: the largest), one basic NI
    and one NI with the Subutai port and engine, as a board builds them (``-nowidelut``, no event
    counters), synthesized alone and placed alone (LUT4 sites); cached until gateware/ changes."""
    from scripts.noc_resources import synthesize, placed_figures, board_designs

    digest = _gateware_digest()
    if not force and os.path.exists(COMPONENTS_CACHE):
        cached = json.load(open(COMPONENTS_CACHE))
        if cached.get("digest") == digest:
            return cached["components"]
    from soc.subutai_soc import SubutaiSoC

    depth = inspect.signature(SubutaiSoC.__init__).parameters["noc_buffer_depth"].default
    designs = board_designs(buffer_depth=depth)
    out = []
    for key, label in COMPONENT_LABELS.items():
        d = designs[key]
        kw = {"log": log} if log else {}
        r = synthesize(d.factory, d.top, ios_of=d.ios_of, flags="-nowidelut", netlist=True, **kw)
        placed = placed_figures(r, **kw)
        cells = r["cells"]
        out.append(
            {
                "key": key,
                "label": label,
                "lut4": cells.get("LUT4", 0),
                "lut_sites": placed["lut_sites"],
                "ff": cells.get("TRELLIS_FF", 0),
                "bram": cells.get("DP16KD", 0),
                "dpram": cells.get("TRELLIS_DPR16X4", 0),
                "dsp": cells.get("MULT18X18D", 0),
                "yosys_s": r["seconds"],
            }
        )
    os.makedirs(os.path.dirname(COMPONENTS_CACHE), exist_ok=True)
    json.dump({"digest": digest, "components": out}, open(COMPONENTS_CACHE, "w"), indent=1)
    return out


def subutai_overhead(components):
    """Subutai-HW's LUT4 and FF over the basic NI, in percent; with a router among the
    components, also over the tile's whole network part (router + basic NI): the paper's NI
    comparison includes buffers that are in the router here."""
    c = {x["key"]: x for x in components}
    basic, sub = c["ni_basic"], c["ni_subutai"]
    keys = [k for k in ("lut4", "lut_sites", "ff") if k in basic and k in sub]
    out = {k: round(100.0 * (sub[k] - basic[k]) / basic[k], 1) if basic[k] else None for k in keys}
    if "router" in c:
        net = {k: basic[k] + c["router"][k] for k in keys}
        out.update(
            {f"{k}_network": round(100.0 * (sub[k] - basic[k]) / net[k], 1) if net[k] else None for k in keys}
        )
    return out


def overhead_text(o):
    sites = f", +{o['lut_sites']} % LUT4 sites" if "lut_sites" in o else ""
    text = f"Subutai-HW over the basic NI: +{o['lut4']} % LUT4{sites}, +{o['ff']} % FF"
    if "lut4_network" in o:
        sites = f", +{o['lut_sites_network']} % LUT4 sites" if "lut_sites_network" in o else ""
        text += f"; over the router + basic NI: +{o['lut4_network']} % LUT4{sites}, +{o['ff_network']} % FF"
    return text + " (the paper: +46 % area on a 28 nm ASIC)."


# Report -------------------------------------------------------------------------------------------


def _pct(used, avail):
    return round(100.0 * used / avail, 1) if avail else ""


def build_figures(board, device, mesh, sys_clk_freq, gateware_dir, build_name, times, cpu_variant="standard"):
    """One row of figures of a finished ECP5 build."""
    # Yosys's own log (-l <name>.rpt in LiteX's script): its console output through YoWASP
    # can miss the end.
    yosys_log = os.path.join(gateware_dir, f"{build_name}.rpt")
    cells = parse_yosys_cells(yosys_log)
    report = os.path.join(gateware_dir, f"{build_name}_report.json")
    util, fmax = parse_nextpnr_report(report)
    sys_mhz = sys_clk_freq / 1e6
    clk = sys_fmax(fmax, sys_mhz)
    path = critical_path(report, clk[0]) if clk else None
    comb, ff = util.get("TRELLIS_COMB", (0, 0)), util.get("TRELLIS_FF", (0, 0))
    bram, dsp = util.get("DP16KD", (0, 0)), util.get("MULT18X18D", (0, 0))
    # LUT4 from yosys (what synthesis mapped); the device's LUT4 count is its TRELLIS_COMB
    # sites (one LUT4 each; a carry CCU2C takes two).
    lut4 = cells.get("LUT4", 0)
    bit = os.path.join(gateware_dir, f"{build_name}.bit")
    return {
        "board": board,
        "device": device,
        "mesh": f"{mesh[0]}x{mesh[1]}",
        "tiles": mesh[0] * mesh[1],
        "cpu_variant": cpu_variant,
        "sys_clk_mhz": round(sys_mhz, 2),
        "fmax_mhz": round(clk[1], 1) if clk else "",
        "timing_met": ("yes" if clk and clk[1] >= sys_mhz else "no"),
        "lut4": lut4,
        "lut_sites": comb[0],
        "lut_sites_pct": _pct(comb[0], comb[1]),
        "ff": ff[0],
        "ff_pct": _pct(ff[0], ff[1]),
        "bram": bram[0],
        "bram_pct": _pct(bram[0], bram[1]),
        "dsp": dsp[0],
        "dsp_pct": _pct(dsp[0], dsp[1]),
        "yosys_s": round(times.get("yosys", 0)),
        "nextpnr_s": round(times.get("nextpnr", 0)),
        "ecppack_s": round(times.get("ecppack", 0)),
        "status": "bitstream" if os.path.exists(bit) else "no bitstream",
        "date": time.strftime("%Y-%m-%d"),
        # Not in the aggregated table: detail of this build.
        "_cells": cells,
        "_util": util,
        "_fmax": fmax,
        "_comb": comb,
        "_critical_path": critical_path_text(path) if path else "",
    }


def update_boards_table(row, results_dir=RESULTS_DIR):
    """Replace (or add) the row of this board and mesh in results/boards.{csv,md}."""
    path = os.path.join(results_dir, "boards.csv")
    rows = []
    if os.path.exists(path):
        with open(path, newline="") as f:
            rows = [r for r in csv.DictReader(f)]
    key = (row["board"], row["mesh"])
    rows = [r for r in rows if (r.get("board"), r.get("mesh")) != key]
    rows.append({k: row.get(k, "") for k in BOARD_COLUMNS})
    rows.sort(key=lambda r: (r["board"], int(r["tiles"] or 0), r["mesh"]))
    table = [[r.get(k, "") for k in BOARD_COLUMNS] for r in rows]
    notes = """
One row per board build (`make bitstream BOARD=<board> TILES=<n>`), updated in place. ECP5:
`lut4`: logic LUT4 from yosys `synth_ecp5` (`-nowidelut`, as the targets build; rows built
before that mapping used the wide-LUT default);
`lut_sites`: LUT4 sites the placed design takes (logic, carry chains, distributed RAM; nextpnr
TRELLIS_COMB) and their share of the device; FF, BRAM (DP16KD), DSP (MULT18X18D) and Fmax of the system clock from nextpnr-ecp5's
`--report`; times in seconds (YoWASP, one thread each). Xilinx rows: Vivado project generated,
figures need Vivado. Per-build detail: `bitstream_<board>_<X>x<Y>.md`.
"""
    return save_table(
        "boards", BOARD_COLUMNS, table, title="Board builds", notes=notes, results_dir=results_dir
    )


def report_build(meta, gateware_dir, build_name, components=True, results_dir=RESULTS_DIR, log=print):
    """Write the per-build report and update the aggregated table; print a short table. ``meta``:
    what the board target wrote beside the tools' logs (``<build_name>_times.json``: the board,
    device, mesh, clock, core, stage times, and nextpnr's placer, router and runs when known)."""
    board, device, times = meta["board"], meta["device"], meta["times"]
    cpu_variant = meta.get("cpu_variant", "standard")
    nextpnr, nextpnr_runs = meta.get("nextpnr"), meta.get("nextpnr_runs")
    mesh, sys_clk_freq = meta["mesh"], meta["sys_clk_freq"]
    fig = build_figures(board, device, mesh, sys_clk_freq, gateware_dir, build_name, times, cpu_variant)
    name = f"bitstream_{board}_{fig['mesh']}"
    header = ["figure", "value"]
    comb = fig["_comb"]
    rows = [
        ["board", board],
        ["device", device],
        ["mesh", f"{fig['mesh']} ({fig['tiles']} tiles)"],
        ["VexRiscv variant", cpu_variant],
        ["target sys_clk (MHz)", fig["sys_clk_mhz"]],
        ["Fmax sys_clk (MHz)", fig["fmax_mhz"]],
        ["timing met", fig["timing_met"]],
        ["LUT4, logic (yosys)", fig["lut4"]],
        [
            "LUT4 sites used: logic, carry, distributed RAM (nextpnr TRELLIS_COMB)",
            f"{comb[0]} of {comb[1]} ({fig['lut_sites_pct']} %)",
        ],
        ["FF", f"{fig['ff']} ({fig['ff_pct']} %)"],
        ["BRAM (DP16KD)", f"{fig['bram']} ({fig['bram_pct']} %)"],
        ["DSP (MULT18X18D)", f"{fig['dsp']} ({fig['dsp_pct']} %)"],
        ["carry (CCU2C, yosys)", fig["_cells"].get("CCU2C", 0)],
        ["distributed RAM (TRELLIS_DPR16X4, yosys)", fig["_cells"].get("TRELLIS_DPR16X4", 0)],
        ["generate (s)", round(times.get("generate", 0))],
        ["yosys (s)", fig["yosys_s"]],
        ["nextpnr-ecp5 (s)", fig["nextpnr_s"]],
        ["ecppack (s)", fig["ecppack_s"]],
    ]
    if nextpnr:
        rows.append(
            [
                "nextpnr placer, router",
                f"{nextpnr['placer']}, {nextpnr['router']}"
                + (" with timing-driven rip-up (--tmg-ripup)" if nextpnr.get("tmg_ripup") else "")
                + (f"; HeAP timing weight {nextpnr['timing_weight']}" if nextpnr.get("timing_weight") else "")
                + (f"; HeAP criticality exponent {nextpnr['critexp']}" if nextpnr.get("critexp") else "")
                + (
                    "; tiles' block RAMs locked by the floorplan (--floorplan)"
                    if nextpnr.get("floorplan")
                    else ""
                ),
            ]
        )
    if nextpnr_runs:
        rows.append(
            [
                "nextpnr runs (seed: outcome, minutes)",
                "; ".join(f"{r['seed']}: {r['outcome']}, {r['seconds'] / 60:.1f}" for r in nextpnr_runs),
            ]
        )
    for clk, (a, c) in sorted(fig["_fmax"].items()):
        rows.append([f"Fmax {clk} (MHz)", f"{a:.1f} (target {c:.1f})"])
    if fig["_critical_path"]:
        rows.append(["critical path of sys_clk (source -> sink: delay)", fig["_critical_path"]])
    comp_rows, overhead = [], None
    if components:
        comps = component_figures(log=lambda m: log(f"[report] {m}"))
        overhead = subutai_overhead(comps)
        for c in comps:
            comp_rows.append([c["label"], c["lut4"], c.get("lut_sites", ""), c["ff"], c["bram"], c["dpram"]])
    # CSV: the figures, then the components (one table per file, long format).
    csv_rows = [[k, v] for k, v in rows]
    for c in comp_rows:
        csv_rows += [
            [f"{c[0]}: LUT4", c[1]],
            [f"{c[0]}: LUT4 sites", c[2]],
            [f"{c[0]}: FF", c[3]],
            [f"{c[0]}: DP16KD", c[4]],
            [f"{c[0]}: TRELLIS_DPR16X4", c[5]],
        ]
    if overhead:
        names = {"lut4": "LUT4", "lut_sites": "LUT4 sites", "ff": "FF"}
        csv_rows += [
            [
                f"Subutai-HW over {'router + ' if k.endswith('_network') else ''}basic NI: "
                f"{names[k.removesuffix('_network')]} (%)",
                v,
            ]
            for k, v in overhead.items()
        ]
    from scripts.results import save_csv

    os.makedirs(results_dir, exist_ok=True)
    save_csv(name, header, csv_rows, results_dir)
    md = [f"# Bitstream {board} {fig['mesh']}\n\n", markdown_table(header, rows)]
    comp_header = columns(
        "component (synth_ecp5 -nowidelut, alone, as on boards) | LUT4 | LUT4 sites (placed alone) | FF | "
        "DP16KD | TRELLIS_DPR16X4"
    )
    if comp_rows:
        md += [
            "\n## Components\n\n",
            markdown_table(comp_header, comp_rows),
            f"\n{overhead_text(overhead)}\n",
        ]
    md.append(
        "\nMade by `scripts/board_report.py` from the yosys log and nextpnr's `--report` "
        f"JSON of `{os.path.relpath(gateware_dir, ROOT)}`.\n"
    )
    with open(os.path.join(results_dir, f"{name}.md"), "w") as f:
        f.write("".join(md))
    update_boards_table(fig, results_dir)

    figures = [fig[k] for k in ("lut4", "ff", "bram", "dsp", "yosys_s", "nextpnr_s")]
    short = [[board, fig["mesh"], f"{fig['fmax_mhz']} / {fig['sys_clk_mhz']}", *figures]]
    log(
        console_table(
            ["board", "mesh", "Fmax/target MHz", "LUT4", "FF", "DP16KD", "MULT18", "yosys s", "nextpnr s"],
            short,
        )
    )
    if fig["_critical_path"]:
        log(f"critical path: {fig['_critical_path']}")
    if comp_rows:
        log(console_table(comp_header, comp_rows))
        log(overhead_text(overhead))
    log(
        f"wrote {os.path.relpath(os.path.join(results_dir, name), ROOT)}.{{csv,md}}, "
        f"{os.path.relpath(os.path.join(results_dir, 'boards'), ROOT)}.{{csv,md}}"
    )
    return fig


def report_vivado(meta, results_dir=RESULTS_DIR):
    """Row of a Xilinx build whose Vivado project was generated (figures need Vivado)."""
    mesh = meta["mesh"]
    row = {
        "board": meta["board"],
        "device": meta["device"],
        "mesh": f"{mesh[0]}x{mesh[1]}",
        "tiles": mesh[0] * mesh[1],
        "cpu_variant": meta.get("cpu_variant", "standard"),
        "sys_clk_mhz": round(meta["sys_clk_freq"] / 1e6, 2),
        "status": "Vivado project (needs Vivado)",
        "date": time.strftime("%Y-%m-%d"),
    }
    return update_boards_table(row, results_dir)


def main():
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "build_dir",
        metavar="BUILD_DIR",
        nargs="?",
        help="board build directory, e.g. build/radiona_ulx3s_2x2",
    )
    p.add_argument("--board", help="instead of BUILD_DIR: the board of a build in its default directory")
    p.add_argument("--tiles", type=int, help="with --board: its number of tiles")
    p.add_argument("--mesh", help="with --board: its mesh shape XxY")
    p.add_argument("--no-components", action="store_true", help="skip the per-component synthesis")
    p.add_argument("--results", default=RESULTS_DIR, help="output directory (default: results/)")
    args = p.parse_args()
    if (args.build_dir is None) == (args.board is None):
        p.error("give BUILD_DIR or --board (with --tiles or --mesh)")
    build_dir = args.build_dir
    if args.board:
        from soc.fpga_flow import default_output_dir
        from soc.mesh import MeshShapeError, mesh_shape

        try:
            build_dir = default_output_dir(args.board, *mesh_shape(args.tiles, args.mesh))
        except MeshShapeError as e:
            p.error(str(e))
    found = glob.glob(os.path.join(build_dir, "gateware", "*_times.json"))
    if not found:
        p.exit(2, f"{p.prog}: error: {build_dir}: no finished build (gateware/*_times.json)\n")
    meta = json.load(open(found[0]))
    build_name = os.path.basename(found[0])[: -len("_times.json")]
    try:
        if meta.get("toolchain") == "vivado":
            report_vivado(meta, args.results)
        else:
            gateware_dir = os.path.join(build_dir, "gateware")
            report_build(meta, gateware_dir, build_name, not args.no_components, args.results)
    except (OSError, ValueError, KeyError) as e:
        p.exit(2, f"{p.prog}: error: {e}\n")


if __name__ == "__main__":
    main()
