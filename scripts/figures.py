#!/usr/bin/env python3
"""The "Figures so far" table of docs/benchmarks.md, written from results/*.csv (make figures).

Every figure of that table is an experiment's headline (``Experiment.headlines`` of
scripts/experiments/), read from the CSV its command wrote (the command is in the table's last
column), so the document cannot drift from results/: rerun a benchmark, then ``make figures``; two
rows come from tools (the ECP5 resources of ``make resources`` and the bitstreams of ``make
bitstream``). A result whose stamp does not measure what the working tree measures is refused
(scripts/experiments/stamp.py says how that is decided): its row says so and why, instead of a
figure, and the refusal is printed. With --check nothing is written: the exit status says whether
the document's table is the one the results give (a test runs it); with --strict, a refused result
is an error.

Usage: python scripts/figures.py [--check] [--strict] [--results DIR] [--doc FILE]
"""

import argparse
import csv
import os
import sys

from gateware.build import ROOT
from scripts.experiments import EXPERIMENTS, load

# A result file that is missing or lacks what a figure needs (the experiments raise it too).
from scripts.experiments.framework import MissingResult as FiguresError, Results
from scripts.experiments.stamp import StaleResult
from scripts.results import RESULTS_DIR, markdown_table, to_int as _int

DOC = os.path.join(ROOT, "docs", "benchmarks.md")
BEGIN = "<!-- figures: begin (written by `make figures` from results/*.csv; do not edit) -->"
END = "<!-- figures: end -->"


def _rows(results_dir, name, command):
    path = os.path.join(results_dir, f"{name}.csv")
    if not os.path.exists(path):
        raise FiguresError(f"{path} is missing: run `{command}`")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise FiguresError(f"{path} has no rows: run `{command}`")
    return rows


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


ROWS = [
    "noc",
    "fsm",
    resources,
    bitstream,
    "mem",
    "prodcons",
    "rwlock",
    "switch",
    "apps",
    "multi",
    "tidon",
    "chan",
    "simspeed",
]
assert all(r in EXPERIMENTS for r in ROWS if isinstance(r, str))


def rows(results_dir=RESULTS_DIR, refused=None):
    """(figure, value, command) of every row; a refused result gives a row that says why, and its
    message is added to ``refused``."""
    out = []
    for row in ROWS:
        if not isinstance(row, str):
            out.append(row(results_dir))
            continue
        experiment = load(row)
        results = Results(experiment, results_dir)
        try:
            out += experiment.headlines(results)
        except StaleResult as e:
            results.refused.append((row, str(e)))
        for name, message in results.refused:
            if refused is not None:
                refused.append(message)
            title = experiment.title + ("" if name == row else f" ({name})")
            out.append((title, f"refused: {message}", experiment.command_of(name)))
    return out


def render(results_dir=RESULTS_DIR, refused=None):
    """The Markdown table of every figure, from the CSVs under results_dir."""
    return markdown_table(
        ["figure", "value", "command"],
        [[f, v, c if c.startswith("`") else f"`{c}`"] for f, v, c in rows(results_dir, refused)],
    )


def splice(text, table):
    """The document with the table between the markers replaced."""
    if text.count(BEGIN) != 1 or text.count(END) != 1:
        raise FiguresError(f"the document must hold the markers {BEGIN!r} and {END!r} once each")
    head, rest = text.split(BEGIN)
    _, tail = rest.split(END)
    return f"{head}{BEGIN}\n{table}{END}{tail}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; fail if the document's table is not the results' one.",
    )
    parser.add_argument("--results", default=RESULTS_DIR, help="directory of the result CSVs.")
    parser.add_argument("--strict", action="store_true", help="a refused result is an error.")
    parser.add_argument("--doc", default=DOC, help="the document to update (default: docs/benchmarks.md).")
    args = parser.parse_args()
    try:
        with open(args.doc) as f:
            text = f.read()
        refused = []
        table = render(args.results, refused)
        new = splice(text, table)
    except (FiguresError, OSError, KeyError, ValueError) as e:
        raise SystemExit(f"error: {e}")
    for message in refused:
        print(f"refused: {message}", file=sys.stderr)
    if refused and args.strict:
        raise SystemExit(f"error: {len(refused)} result(s) refused")
    if args.check:
        if new != text:
            raise SystemExit(
                f"error: the figures in {args.doc} are not those of {args.results}: "
                "run `make figures` and commit the result"
            )
        print(f"{args.doc}: figures match {args.results}")
        return
    if new != text:
        with open(args.doc, "w") as f:
            f.write(new)
    print(table, end="")
    print(f"wrote the figures table of {args.doc}", file=sys.stderr)


if __name__ == "__main__":
    main()
