#!/usr/bin/env python3
"""What the board changes: prodcons and a benchmark program on a board's own SoC in simulation
(BIOS, serial boot, LiteDRAM and the L2 in front of a model of the board's SDRAM chip), beside the
same firmware on the plain simulated SoC (main RAM in line-interleaved on-chip banks).

Runs ``boards/<board>.py --sim`` as a user would (``make board-sim``), once per backend and
firmware, each serial-booted through the pseudo-terminal by scripts/board_run.py; the captures
go through the same report scripts as a board's (scripts/prodcons_report.py,
scripts/apps_report.py): results/board_sim_prodcons.* and results/board_sim_apps.*. The plain
simulation of the same firmware runs in the same invocation, and results/board_sim.{csv,md}
put the two side by side: median cycles of every prodcons case and the program's region of
interest.

Usage: python scripts/bench_board_sim.py [--board radiona_ulx3s] [--tiles 4]
                                         [--program streamcluster] [--input simsmall]
"""

import argparse
import csv
import os
import subprocess
import sys
import tempfile

from gateware.build import ROOT
from scripts.apps_report import app_runs, input_args, report as apps_report
from scripts.bench import run_checked
from scripts.capture import parse_lines, read_capture
from scripts.prodcons_report import latency_rows, report as prodcons_report
from scripts.results import RESULTS_DIR, save_capture
from soc.firmware import BACKENDS, benchmark_programs
from soc.mesh import MeshShapeError, mesh_shape
from soc.simulation import build_model, stop_runs_on_sigterm

BOARDS = ["radiona_ulx3s", "colorlight_i5", "digilent_arty"]
NAME = "board_sim"
MAX_CYCLES = 400_000_000


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def on_board(board, tiles, app, backend, app_args, capture):
    """Serial-boot one firmware on the board SoC in simulation; its capture lines."""
    cmd = [
        sys.executable,
        f"boards/{board}.py",
        "--tiles",
        str(tiles),
        "--sim",
        "--app",
        app,
        "--backend",
        backend,
        "--capture",
        capture,
        "--max-cycles",
        str(MAX_CYCLES),
    ]
    if app_args:
        cmd += ["--app-args", app_args]
    log(f"[{NAME}] {app} {app_args}, {backend}, {tiles} tiles, {board} SoC: running...")
    p = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        sys.stderr.write(p.stdout[-3000:])
        raise SystemExit(f"error: {app} on the {board} SoC exited with {p.returncode}")
    for line in p.stdout.splitlines():
        if line.startswith("[board] [sim] exit="):
            log(f"[{NAME}] {app}, {backend}: {line[len('[board] [sim] ') :]}")
    return [line.rstrip("\n") for line in read_capture(capture)]


def on_plain_sim(tiles, app, backend, app_args):
    """The same firmware on the plain simulated SoC; its output lines."""
    model = build_model(*mesh_shape(tiles), log=log)
    image = model.build_firmware(app, backend=backend, program_args=app_args)
    return run_checked(
        model, image, f"{app} {app_args}, {backend}, {tiles} tiles, plain SoC", MAX_CYCLES, NAME
    )


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
        f"`python scripts/bench_board_sim.py --board {board} --tiles {tiles} --program {program}`.",
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


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1],
    )
    parser.add_argument("--board", default="radiona_ulx3s", choices=BOARDS)
    parser.add_argument("--tiles", type=int, default=4)
    parser.add_argument("--program", default="streamcluster", choices=benchmark_programs())
    parser.add_argument("--input", default="simsmall", choices=["test", "simsmall", "simmedium"])
    parser.add_argument("--results", default=RESULTS_DIR, help="output directory")
    args = parser.parse_args()
    # SIGTERM stops the running models with the script (not left computing on).
    stop_runs_on_sigterm()
    try:
        mesh_shape(args.tiles)
    except MeshShapeError as e:
        parser.error(f"--tiles: {e}")
    program_args = input_args(f"-i {args.input}")
    os.makedirs(args.results, exist_ok=True)
    board_lines, plain_lines = [], []
    with tempfile.TemporaryDirectory(prefix="subutai-board-sim-bench-") as tmp:
        for backend in BACKENDS:
            for app, app_args in (("prodcons", ""), (args.program, program_args)):
                capture = os.path.join(tmp, f"{app}-{backend}.txt")
                board_lines += on_board(args.board, args.tiles, app, backend, app_args, capture)
                plain_lines += on_plain_sim(args.tiles, app, backend, app_args)
    save_capture(NAME, board_lines, args.results)
    prodcons_lines = [l for l in board_lines if '"program":"prodcons"' in l]
    prodcons_report(parse_lines(prodcons_lines), args.results, name=f"{NAME}_prodcons")
    apps_report(
        app_runs(board_lines),
        args.results,
        name=f"{NAME}_apps",
        title=f"{args.program} on the {args.board} SoC in simulation: Subutai vs SW-only",
    )
    rows = comparison(args.board, args.tiles, args.program, board_lines, plain_lines)
    if not rows:
        raise SystemExit("error: no figure found in both runs")
    print("\n".join(write_comparison(rows, args.results, args.board, args.tiles, args.program, args.input)))
    log(f"wrote {args.results}/{NAME}.{{csv,md}}, {NAME}_prodcons.*, {NAME}_apps.* and {NAME}_capture.txt")


if __name__ == "__main__":
    main()
