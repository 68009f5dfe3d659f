#!/usr/bin/env python3
"""The README's "Figures so far" table, written from results/*.csv (make figures).

Every figure of that table is read from the CSV a benchmark command wrote (the command is in the
table's last column), so the README cannot drift from results/: rerun a benchmark, then
``make figures``. With --check nothing is written: the exit status says whether the README's table
is the one the results give (a test runs it).

Usage: python scripts/figures.py [--check] [--results DIR] [--readme FILE]
"""

import argparse
import csv
import math
import os
import re
import sys

from gateware.build import ROOT
from scripts.apps_report import PAPER_FIG12
from scripts.bench_apps import LINK_SPREAD_GOAL
from scripts.prodcons_report import SPREAD_GOAL, median_spreads
from scripts.results import RESULTS_DIR, markdown_table, spread

README = os.path.join(ROOT, "README.md")
BEGIN = "<!-- figures: begin (written by `make figures` from results/*.csv; do not edit) -->"
END = "<!-- figures: end -->"


class FiguresError(Exception):
    """A result file is missing or lacks what a figure needs."""


def _rows(results_dir, name, command):
    path = os.path.join(results_dir, f"{name}.csv")
    if not os.path.exists(path):
        raise FiguresError(f"{path} is missing: run `{command}`")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise FiguresError(f"{path} has no rows: run `{command}`")
    return rows


def _has_rows(results_dir, name):
    path = os.path.join(results_dir, f"{name}.csv")
    if not os.path.exists(path):
        return False
    with open(path, newline="") as f:
        return any(True for _ in csv.DictReader(f))


def _int(text):
    return int(float(text))


def _cycles(n):
    """3.39 M, 511 k, 856: three significant figures for large cycle counts."""
    if n >= 1e6:
        return f"{n / 1e6:#.3g}".rstrip(".") + " M"
    if n >= 1e4:
        return f"{n / 1e3:#.3g}".rstrip(".") + " k"
    return f"{n:,}"


def _range(values, fmt):
    lo, hi = min(values), max(values)
    return fmt(lo) if fmt(lo) == fmt(hi) else f"{fmt(lo)}–{fmt(hi)}"


# One function per row: (figure, value, command).


def noc_zero_load(d):
    rows = _rows(d, "noc_zero_load", "make bench-noc")
    lat = {_int(r["hops"]): _int(r["min (cycles)"]) for r in rows}
    top = max(lat)
    per_hop = (lat[top] - lat[0]) / top
    exact = all(lat[h] == lat[0] + per_hop * h for h in lat)
    plural = "" if per_hop == 1 else "s"
    hops = "hops" if per_hop == 1 else f"{per_hop:g}*hops"
    value = (
        f"{per_hop:g} cycle{plural} per hop (`{lat[0]} + {hops}` cycles"
        if exact
        else f"{per_hop:.2f} cycles per hop on average ({lat[0]} cycles at 0 hops"
    ) + f", RTL, up to {top} hops)"
    return "NoC zero-load latency", value, "make bench-noc"


def noc_saturation(d):
    rows = _rows(d, "noc_load", "make bench-noc")
    sat = [r for r in rows if r["offered (flits/cycle/tile)"] == "saturation"]
    if not sat:
        raise FiguresError("results/noc_load.csv has no saturation row: run `make bench-noc`")
    return (
        "NoC saturation, uniform random",
        f"{float(sat[0]['accepted']):.2f} flits/cycle/tile",
        "make bench-noc",
    )


def noc_pingpong(d):
    rows = {r["mode"]: r for r in _rows(d, "noc_pingpong", "make bench-noc")}
    pairs = _int(next(iter(rows.values()))["pairs"])
    tiles = round((1 + math.sqrt(1 + 4 * pairs)) / 2)  # pairs = tiles * (tiles - 1)
    return (
        "software round trip between tiles (minimum)",
        f"{_int(rows['poll']['min RTT'])} cycles polling, {_int(rows['irq']['min RTT'])} "
        f"interrupt-driven ({tiles} tiles)",
        "make bench-noc",
    )


def subutai_fsm(d):
    rows = _rows(d, "bench_fsm", "make bench-fsm")

    def cycles(match):
        found = [_int(r["FSM cycles"]) for r in rows if match(r["operation"], r["case"])]
        if not found:
            raise FiguresError("results/bench_fsm.csv lacks a case of the figure: run `make bench-fsm`")
        return _range(found, str)

    mutex = cycles(lambda op, case: op.startswith("Mutex"))
    barrier = cycles(lambda op, case: op == "Barrier wait" and "rho=63" in case)
    splice = cycles(lambda op, case: op == "Cond broadcast" and "rho=63" in case and "splice" in case)
    return (
        "Subutai-HW operation latency (m = c = 1)",
        f"mutex lock, trylock, unlock {mutex} engine cycles; barrier release of 63 waiters {barrier}; "
        f"cond broadcast of 63 waiters onto a local mutex {splice} (one splice)",
        "make bench-fsm",
    )


def resources(d):
    # The parts as the boards build them: -nowidelut, no event counters.
    rows = [
        r
        for r in _rows(d, "noc_resources", "make resources")
        if r["flags"] == "-nowidelut" and "counters" not in r["design"]
    ]

    def kind(design):
        if design.startswith("MeshRouter"):
            return "router"
        if design.startswith("NI"):
            return "NI+Subutai" if "Subutai" in design else "NI"
        if design.startswith("VexRiscv `standard`"):
            return "core"
        if design.startswith("Tile"):
            return "tile"
        return "engine" if design.startswith("Subutai engine") else design

    by = {kind(r["design"]): r for r in rows}

    def figure(k, column):
        if k not in by:
            raise FiguresError(f"results/noc_resources.csv lacks the {k}: run `make resources`")
        return f"{_int(by[k][column]):,}"

    parts = ("router", "NI", "NI+Subutai", "engine", "core", "tile")
    return (
        "router / NI / NI with Subutai / the engine in it / VexRiscv / the rest of a tile with "
        "its NI and Subutai (ECP5 as on boards: `-nowidelut`, no event counters)",
        " / ".join(figure(k, "LUT4") for k in parts)
        + " LUT4, "
        + " / ".join(figure(k, "LUT4 sites (placed)") for k in parts)
        + " LUT4 sites placed alone",
        "make resources",
    )


def bitstream(d):
    rows = [
        r
        for r in _rows(d, "boards", "make bitstream")
        if r["status"] == "bitstream" and r["board"] == "radiona_ulx3s"
    ]
    rows.sort(key=lambda r: _int(r["tiles"]))
    if not rows:
        raise FiguresError("results/boards.csv has no ULX3S bitstream: run `make bitstream`")
    tiles = " / ".join(r["tiles"] for r in rows)
    fmax = ", ".join(
        f"{r['fmax_mhz']} MHz ({r['tiles']} tile{'s' if r['tiles'] != '1' else ''} at a "
        f"{float(r['sys_clk_mhz']):g} MHz target, {'met' if r['timing_met'] == 'yes' else 'not met'})"
        for r in rows
    )
    luts = " / ".join(f"{_int(r['lut_sites']):,}" for r in rows)
    pct = " / ".join(str(round(float(r["lut_sites_pct"]))) for r in rows)
    bram = " / ".join(r["bram"] for r in rows)
    return (
        f"ULX3S 85F bitstream, {tiles} tiles",
        f"{luts} LUT4 sites ({pct} %), {bram} DP16KD; Fmax {fmax}",
        " / ".join(f"`make bitstream TILES={r['tiles']}`" for r in rows),
    )


PRODCONS_CASES = [
    ("mutex", "lock_queued", "lock queued"),
    ("barrier", "wait_released", "barrier release"),
    ("cond", "broadcast", "cond broadcast"),
    ("cond", "wait_queued", "cond wait queued"),
    ("mutex", "lock_free", "uncontended lock"),
    ("mutex", "unlock", "unlock"),
]


def _prodcons_medians(rows):
    tiles = max(_int(r["tiles"]) for r in rows)
    med = {
        (r["primitive"], r["case"], r["backend"]): _int(r["median"])
        for r in rows
        if _int(r["tiles"]) == tiles
    }
    parts = [
        f"{label} {med[(p, c, 'swonly')]:,} / {med[(p, c, 'subutai')]:,}"
        for p, c, label in PRODCONS_CASES
        if (p, c, "swonly") in med and (p, c, "subutai") in med
    ]
    return tiles, med, parts


def prodcons(d):
    rows = _rows(d, "prodcons", "make bench")
    tiles, med, parts = _prodcons_medians(rows)
    value = ", ".join(parts)
    if os.path.exists(os.path.join(d, "prodcons_layouts.csv")):
        all_rows = [
            {
                **r,
                "tiles": _int(r["tiles"]),
                "median": _int(r["median"]),
                "layout_pad": _int(r["layout_pad"]),
                "layout_variant": _int(r.get("layout_variant") or 0),
            }
            for r in _rows(d, "prodcons_layouts", "make bench")
        ]
        for what, probe, fixed in (
            ("code layouts", "layout_pad", "layout_variant"),
            ("links of the library", "layout_variant", "layout_pad"),
        ):
            rows = [r for r in all_rows if r[fixed] == 0]
            images = len({r[probe] for r in rows})
            if images < 2:
                continue
            spreads = list(median_spreads(rows, lambda r: r[probe]).values())
            within = sum(s < SPREAD_GOAL for s in spreads)
            value += (
                f"; across {images} {what} {within} of {len(spreads)} medians move by less than "
                f"{SPREAD_GOAL:g} % (largest {max(spreads):.1f} %)"
            )
    return f"prodcons, SW-only / Subutai median cycles ({tiles} tiles)", value, "make bench"


def _apps(rows, largest=16, one_tile=True):
    """(tiles, text) of the largest size up to ``largest`` tiles that was run (and the speed-ups
    on 1 tile, with ``one_tile``)."""
    tiles = max(t for t in (_int(r["tiles"]) for r in rows) if t <= largest)
    roi = {(r["program"], _int(r["tiles"]), r["backend"]): _int(r["roi"]) for r in rows}
    programs = sorted({r["program"] for r in rows}, key=lambda p: -roi.get((p, tiles, "swonly"), 0))
    parts = [
        f"{p} {_cycles(roi[(p, tiles, 'swonly')])} / {_cycles(roi[(p, tiles, 'subutai')])} "
        f"({roi[(p, tiles, 'swonly')] / roi[(p, tiles, 'subutai')]:.2f}×)"
        for p in programs
        if (p, tiles, "swonly") in roi and (p, tiles, "subutai") in roi
    ]
    one = [
        roi[(p, 1, "swonly")] / roi[(p, 1, "subutai")]
        for p in programs
        if (p, 1, "swonly") in roi and (p, 1, "subutai") in roi
    ]
    tail = f"; {_range(one, lambda x: f'{x:.2f}')}× on 1 tile" if one and one_tile else ""
    return tiles, ", ".join(parts) + tail


def apps(d):
    tiles, value = _apps(_rows(d, "apps", "make bench-apps"))
    return (
        f"benchmark programs, SW-only / Subutai ROI cycles, speed-up ({tiles} tiles, simsmall)",
        value,
        "make bench-apps",
    )


def _apps_at(d, size):
    """The programs on one of the paper's machines (32 or 64 tiles), its Fig. 12 beside, or None
    when that size was not run."""
    rows = _rows(d, "apps", "make bench-apps")
    if not any(_int(r["tiles"]) == size for r in rows):
        return None
    tiles, value = _apps(rows, size, one_tile=False)
    paper = ", ".join(f"{p} {figures[tiles]:.2f}×" for p, figures in PAPER_FIG12.items() if tiles in figures)
    return (
        f"benchmark programs, SW-only / Subutai ROI cycles, speed-up ({tiles} tiles, simsmall)",
        f"{value}; TPDS'21 Fig. 12: {paper}" if paper else value,
        "make bench-apps-64",
    )


def apps_32(d):
    return _apps_at(d, 32)


def apps_64(d):
    return _apps_at(d, 64)


def zephyr_apps(d):
    rows = _rows(d, "zephyr_apps", "make zephyr-bench")
    tiles, value = _apps(rows)
    bare = {(r["program"], r["input"]): r["checksum"] for r in _rows(d, "apps", "make bench-apps")}
    same = all(bare.get((r["program"], r["input"])) == r["checksum"] for r in rows)
    value += "; same checksums as bare metal" if same else "; CHECKSUMS DIFFER from bare metal"
    return (
        f"Zephyr on every tile: benchmark programs, SW-only / Subutai ROI cycles, speed-up ({tiles} tiles, "
        "simsmall)",
        value,
        "make zephyr-bench",
    )


def zephyr_prodcons(d):
    tiles, med, parts = _prodcons_medians(_rows(d, "zephyr_prodcons", "make zephyr-bench"))
    return (
        f"Zephyr: prodcons, SW-only / Subutai median cycles ({tiles} tiles)",
        ", ".join(parts) + " (a waiter alone on its core spins for its answer: no interrupt, no "
        "context switch)",
        "make zephyr-bench",
    )


def membw(d):
    rows = _rows(d, "membw", "make bench-mem")
    bpc = {(_int(r["tiles"]), _int(r["mem banks"])): float(r["read_private (B/cycle)"]) for r in rows}
    refill = {(_int(r["tiles"]), _int(r["mem banks"])): r["refill (cycles)"] for r in rows}
    tiles = max(n for n, _ in bpc)
    parts = []
    for name, banked in [("shared bus", False), ("banks", True)]:
        one = [k for k in bpc if k[0] == 1 and bool(k[1]) == banked]
        top = [k for k in bpc if k[0] == tiles and bool(k[1]) == banked]
        if one and top:
            (one,), (top,) = one[:1], top[:1]
            label = f"{top[1]} banks" if banked else name
            parts.append(
                f"{label}: {bpc[one]:.2f} → {bpc[top]:.2f} B/cycle ({bpc[top] / bpc[one]:.1f}×), "
                f"refill {refill[one]} cycles on 1 tile"
            )
    return (
        f"memory: aggregate private read bandwidth, 1 → {tiles} tiles",
        "; ".join(parts),
        "make bench-mem",
    )


def apps_links(d):
    rows = _rows(d, "apps_links", "make bench-apps")
    by = {}
    for r in rows:
        by.setdefault((r["program"], r["backend"], _int(r["tiles"])), []).append(_int(r["roi"]))
    spreads = {k: spread(v) for k, v in by.items()}
    links = max(len(v) for v in by.values())
    tiles = sorted({t for _, _, t in by})
    within = sum(s < LINK_SPREAD_GOAL for s in spreads.values())
    worst = max(spreads, key=spreads.get)
    return (
        f"benchmark programs' ROI across {links} links of the library ({', '.join(map(str, tiles))} tiles)",
        f"{within} of {len(spreads)} within {LINK_SPREAD_GOAL:g} % (largest {spreads[worst]:.1f} %, {worst[0]} {worst[1]})",
        "make bench-apps",
    )


def rwlock(d):
    rows = _rows(d, "rwlock", "make bench")
    parts = [
        f"{r['tiles']} tiles {r['writes (%)']} % writes {_cycles(_int(r['SW-only (cycles)']))} / "
        f"{_cycles(_int(r['Subutai (cycles)']))} ({r['SW/Subutai']})"
        for r in rows
    ]
    return "read-write locks (`rwbench`), SW-only / Subutai cycles", "; ".join(parts), "make bench"


def switch(d):
    rows = _rows(d, "switch", "make bench-switch")
    parts = [
        f"{r['runtime']}, {r['backend']}: yield {r['yield, 2 threads (cycles)']} / "
        f"{r['yield, 8 threads (cycles)']} (2 / 8 threads), handoff {r['handoff (cycles/turn)']}"
        for r in rows
    ]
    return "switching threads on one core (`switchbench`), cycles", "; ".join(parts), "make bench-switch"


def multi(d):
    def parts(rows, name):
        def makespan(s, backend, policy, ts):
            for r in rows:
                if (r["set"], r["backend"], r["policy"], r["ts_ms"]) == (s, backend, policy, ts):
                    return _int(r["makespan"])
            raise FiguresError(
                f"results/{name}.csv has no {s} {backend} {policy} {ts} ms run: run `make bench-multi`"
            )

        out = []
        for s in dict.fromkeys(r["set"] for r in rows):
            (ts,) = {
                r["ts_ms"]
                for r in rows
                if r["set"] == s and r["policy"] == "oat" and r["backend"] == "subutai"
            }
            csa = makespan(s, "subutai", "csa", ts)
            out.append(
                f"{s} {makespan(s, 'swonly', 'rr', ts) / csa:.2f}× (CSA over OAT "
                f"{makespan(s, 'subutai', 'oat', ts) / csa:.2f}×)"
            )
        return f"{rows[0]['tiles']} tiles, TS {ts} ms: " + ", ".join(out)

    text = [parts(_rows(d, "multi", "make bench-multi"), "multi")]
    if os.path.exists(os.path.join(d, "multi_16.csv")):
        text.append(parts(_rows(d, "multi_16", "make bench-multi MULTI_ARGS='--tiles 16'"), "multi_16"))
    return (
        "several applications at once (Zephyr): makespan of SW-only + RR over Subutai + CSA",
        "; ".join(text),
        "make bench-multi",
    )


def tidon(d):
    rows = _rows(d, "tidon", "make bench-tidon")
    by = {}
    for r in rows:
        if r["weighted_speedup"]:
            by.setdefault((r["workload"], _int(r["ep_threads"]), r["backend"]), {})[r["policy"]] = float(
                r["weighted_speedup"]
            )
    parts = []
    for (workload, n, backend), pol in by.items():
        if backend != "subutai" or "tidon" not in pol or len(pol) < 2:
            continue
        best = max((p for p in pol if p != "tidon"), key=pol.get)
        parts.append(f"{workload}+ep×{n} {pol['tidon'] / pol[best]:.2f}×")
    return (
        "Tidon's weighted speed-up over the best other barrier policy (Subutai, 8 tiles)",
        ", ".join(parts),
        "make bench-tidon",
    )


def chan(d):
    lat = _rows(d, "chan", "make bench-chan")
    # The farm's runs are long (make bench-chan's second part); the latencies stand alone.
    farm = _rows(d, "chan_farm", "make bench-chan") if _has_rows(d, "chan_farm") else []
    parts = []
    for tiles in dict.fromkeys(r["tiles"] for r in lat):
        one = [r for r in lat if r["tiles"] == tiles and r["words"] == "1"]
        by = {(r["impl"], _int(r["hops"])): r for r in one}
        hops = sorted({h for _, h in by})
        noc = [by[("noc", h)] for h in hops if ("noc", h) in by]
        parts.append(
            f"{tiles} tiles, one-way at {' / '.join(map(str, hops))} hops: noc "
            + " / ".join(f"{float(r['latency_cycles']):g}" for r in noc)
            + " (the port alone "
            + " / ".join(f"{float(r['port_latency_cycles']):g}" for r in noc)
            + ")"
            + "".join(
                f", {impl} " + " / ".join(f"{float(by[(impl, h)]['latency_cycles']):g}" for h in hops)
                for impl in ("push", "flags", "queue")
                if all((impl, h) in by for h in hops)
            )
        )
    best = {}
    for r in farm:
        if r["speedup"]:
            key = (_int(r["m"]), r["type"])
            best.setdefault(key, {})
            best[key][r["impl"]] = max(best[key].get(r["impl"], 0), float(r["speedup"]))
    farm_parts = [
        f"M = {m} {t}: noc {b['noc']:.2f}"
        + "".join(f", {i} {b[i]:.2f}" for i in ("push", "flags", "queue") if i in b)
        for (m, t), b in sorted(best.items())
        if "noc" in b
    ]
    return (
        "channels (seed 004): one-way latency in cycles"
        + ("; farm's best speed-up on 16 tiles" if farm_parts else ""),
        "; ".join(parts) + ("; farm " + "; ".join(farm_parts) if farm_parts else ""),
        # The committed sweep: the farm's int sizes to 32 (a run at M = 64 or float simulates for
        # 6 to 12 minutes; the default sweep is hours on two cores).
        'make bench-chan CHAN_ARGS="--sizes 8 16 32 --float-sizes"',
    )


def simspeed(d):
    rows = _rows(d, "simspeed", "make simspeed")
    col = "default (Mc/s)"
    if col not in rows[0]:
        raise FiguresError(f"results/simspeed.csv has no {col!r} column: run `make simspeed`")
    tiles = [_int(r["tiles"]) for r in rows]
    speeds = [float(r[col]) for r in rows]
    value = (
        f"{' / '.join(f'{s:.3g}' for s in speeds)} M cycles/s for {' / '.join(map(str, tiles))} tiles, "
        f"{' / '.join(f'{s * t:.3g}' for s, t in zip(speeds, tiles))} M tile-cycles/s"
    )
    # The model on several host threads (simspeed's `threads` configuration, its large meshes).
    threads_col = next((c for c in rows[0] if re.fullmatch(r"\d+ threads \(M tile-cycles/s\)", c)), None)
    threaded = [
        (t, float(r[threads_col]))
        for t, r in zip(tiles, rows)
        if threads_col and r[threads_col] not in ("", "–")
    ]
    if threaded:
        value += "; " + ", ".join(
            f"{t} tiles on {threads_col.split()[0]} host threads {v:.3g} M tile-cycles/s" for t, v in threaded
        )
    # What the largest model costs to build (simspeed --rebuild: a cold build of the default model).
    built = [(t, r) for t, r in zip(tiles, rows) if r.get("build (s)", "–") not in ("", "–")]
    if built:
        t, r = built[-1]
        value += f"; the {t}-tile model builds in {r['build (s)']} s, {r['build peak (GB)']} GB peak"
    return "simulation speed (`busy` on every core)", value, "make simspeed"


ROWS = [
    noc_zero_load,
    noc_saturation,
    noc_pingpong,
    subutai_fsm,
    resources,
    bitstream,
    membw,
    prodcons,
    rwlock,
    switch,
    apps,
    apps_32,
    apps_64,
    apps_links,
    zephyr_apps,
    zephyr_prodcons,
    multi,
    tidon,
    chan,
    simspeed,
]


def render(results_dir=RESULTS_DIR):
    """The Markdown table of every figure, from the CSVs under results_dir."""
    rows = [r for r in (row(results_dir) for row in ROWS) if r]
    return markdown_table(
        ["figure", "value", "command"], [[f, v, c if c.startswith("`") else f"`{c}`"] for f, v, c in rows]
    )


def splice(readme_text, table):
    """The README with the table between the markers replaced."""
    if readme_text.count(BEGIN) != 1 or readme_text.count(END) != 1:
        raise FiguresError(f"the README must hold the markers {BEGIN!r} and {END!r} once each")
    head, rest = readme_text.split(BEGIN)
    _, tail = rest.split(END)
    return f"{head}{BEGIN}\n{table}{END}{tail}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; fail if the README's table is not the results' one.",
    )
    parser.add_argument("--results", default=RESULTS_DIR, help="directory of the result CSVs.")
    parser.add_argument("--readme", default=README, help="the README to update.")
    args = parser.parse_args()
    try:
        with open(args.readme) as f:
            text = f.read()
        new = splice(text, render(args.results))
    except (FiguresError, OSError, KeyError, ValueError) as e:
        raise SystemExit(f"error: {e}")
    if args.check:
        if new != text:
            raise SystemExit(
                f"error: the figures in {args.readme} are not those of {args.results}: "
                "run `make figures` and commit the result"
            )
        print(f"{args.readme}: figures match {args.results}")
        return
    if new != text:
        with open(args.readme, "w") as f:
            f.write(new)
    print(render(args.results), end="")
    print(f"wrote the figures table of {args.readme}", file=sys.stderr)


if __name__ == "__main__":
    main()
