"""What the board changes: prodcons and a benchmark program on a board's own SoC in simulation
(BIOS, serial boot, LiteDRAM and the L2 in front of a model of the board's SDRAM chip), beside the
same firmware on the plain simulated SoC (main RAM in line-interleaved on-chip banks).

Runs ``boards/<board>.py --sim`` as a user would (``make board-sim``), once per backend and
firmware, each serial-booted through the pseudo-terminal by scripts/board_run.py; the captures
go through the same reports as a board's (scripts/experiments/prodcons.py, apps.py): results/board_sim_prodcons.* and results/board_sim_apps.*. The plain
simulation of the same firmware runs in the same invocation, and results/board_sim.{csv,md}
put the two side by side: median cycles of every prodcons case and the program's region of
interest.

Usage: python -m scripts.experiments board_sim [--board radiona_ulx3s] [--tiles 4]
           [--program streamcluster] [--input simsmall]
"""

import csv
import os
import subprocess
import sys
import tempfile

from gateware.build import ROOT
from scripts.capture import parse_lines, read_capture
from scripts.experiments.apps import app_runs, input_args, report as apps_report
from scripts.experiments.framework import Experiment, ModelConfig, Run, RunFailed, run_image, split_runs
from scripts.experiments.prodcons import latency_rows, report as prodcons_report
from soc.firmware import BACKENDS, benchmark_programs

BOARDS = ["radiona_ulx3s", "colorlight_i5", "digilent_arty"]
NAME = "board_sim"
MAX_CYCLES = 400_000_000


def on_board(board, tiles, app, backend, app_args, capture):
    """Serial-boot one firmware on the board SoC in simulation; its capture lines."""
    cmd = [sys.executable, f"boards/{board}.py", "--tiles", str(tiles), "--sim", "--app", app]
    cmd += ["--backend", backend, "--capture", capture, "--max-cycles", str(MAX_CYCLES)]
    if app_args:
        cmd += ["--app-args", app_args]
    p = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        raise RunFailed(f"{app} on the {board} SoC exited with {p.returncode}:\n{p.stdout[-3000:]}")
    return [line.rstrip("\n") for line in read_capture(capture)]


def comparison(board, tiles, program, board_lines, plain_lines):
    """Rows: what, backend, plain cycles, board cycles, board/plain."""
    rows = []
    medians = {}
    for where, lines in (("plain", plain_lines), ("board", board_lines)):
        for r in latency_rows(parse_lines([l for l in lines if "prodcons" in l])):
            if r["tiles"] == tiles:
                medians[(where, r["backend"], f"prodcons {r['primitive']} {r['case']}")] = r["median"]
        for run in app_runs(lines):
            if run["program"] == program and run["tiles"] == tiles:
                medians[(where, run["backend"], f"{program} ROI")] = run["roi"]
    for (where, backend, what), plain in sorted(medians.items()):
        if where != "plain":
            continue
        on_board_cycles = medians.get(("board", backend, what))
        if on_board_cycles is None:
            continue
        rows.append(
            {
                "board": board,
                "tiles": tiles,
                "what": what,
                "backend": backend,
                "plain_cycles": plain,
                "board_cycles": on_board_cycles,
                "board_over_plain": round(on_board_cycles / plain, 3) if plain else None,
            }
        )
    return rows


def write_comparison(rows, results_dir, board, tiles, program, input_name):
    with open(os.path.join(results_dir, f"{NAME}.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    md = [
        f"# What the board changes: the {board} SoC in simulation beside the plain SoC",
        "",
        f"{tiles} tiles; the figures of the same firmware: prodcons (its default rounds, median "
        f"cycles per case) and {program} ({input_name}, region of interest). Plain: the simulated "
        f"SoC of `make sim` (main RAM in on-chip banks, one per tile). Board: the board target's "
        f"own SoC in Verilator (`make board-sim`): LiteDRAM and the L2 in front of a model of the "
        f"board's SDRAM chip, firmware serial-booted through its BIOS. "
        f"`python -m scripts.experiments board_sim --board {board} --tiles {tiles} --program {program}`.",
        "",
        "| what | backend | plain (cycles) | board (cycles) | board / plain |",
        "|---|---|---:|---:|---:|",
    ]
    for r in rows:
        md.append(
            f"| {r['what']} | {r['backend']} | {r['plain_cycles']:,} | "
            f"{r['board_cycles']:,} | {r['board_over_plain']:.2f}× |"
        )
    with open(os.path.join(results_dir, f"{NAME}.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    return md


class BoardSim(Experiment):
    name = "board_sim"
    title = "a board's SoC in simulation beside the plain SoC"
    command = "python -m scripts.experiments board_sim"
    # The board targets and their SoC besides the plain one.
    measures = ("gateware", "soc", "firmware", "boards")
    results = ("board_sim_prodcons", "board_sim_apps")

    def add_arguments(self, parser):
        parser.add_argument("--board", default="radiona_ulx3s", choices=BOARDS)
        parser.add_argument("--tiles", type=int, default=4)
        parser.add_argument("--program", default="streamcluster", choices=benchmark_programs())
        parser.add_argument("--input", default="simsmall", choices=["test", "simsmall", "simmedium"])

    def runs(self, args):
        arguments = input_args(f"-i {args.input}")
        return [
            Run.of(
                f"{app} {app_args}, {backend}, {args.tiles} tiles, {where} SoC",
                None if where == "board" else ModelConfig.of(args.tiles),
                where=where,
                app=app,
                app_args=app_args,
                backend=backend,
            )
            for backend in BACKENDS
            for app, app_args in (("prodcons", ""), (args.program, arguments))
            for where in ("board", "plain")
        ]

    def image(self, run, model, args):
        c = run.config
        return (
            model.build_firmware(c["app"], backend=c["backend"], program_args=c["app_args"])
            if model
            else None
        )

    def execute(self, run, model, image, args):
        c = run.config
        if model:
            return run_image(model, image, run.what, MAX_CYCLES)
        with tempfile.TemporaryDirectory(prefix="subutai-board-sim-bench-") as tmp:
            capture = os.path.join(tmp, "capture.txt")
            return on_board(args.board, args.tiles, c["app"], c["backend"], c["app_args"], capture)

    def report(self, lines, args, results_dir):
        runs = split_runs(lines)
        board_lines = [line for label, out in runs if label["where"] == "board" for line in out]
        plain_lines = [line for label, out in runs if label["where"] == "plain" for line in out]
        prodcons_lines = [line for line in board_lines if '"program":"prodcons"' in line]
        prodcons_report(parse_lines(prodcons_lines), results_dir, name=f"{NAME}_prodcons")
        apps_report(
            app_runs(board_lines),
            results_dir,
            name=f"{NAME}_apps",
            title=f"{args.program} on the {args.board} SoC in simulation: Subutai vs SW-only",
        )
        rows = comparison(args.board, args.tiles, args.program, board_lines, plain_lines)
        if not rows:
            return "", ["no figure found in both runs"]
        return "\n".join(
            write_comparison(rows, results_dir, args.board, args.tiles, args.program, args.input)
        ), []


EXPERIMENT = BoardSim()
