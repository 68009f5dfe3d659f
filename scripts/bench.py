#!/usr/bin/env python3
"""The project's main benchmark: prodcons with both PThreads backends on 2, 4 and 8 tiles.

Builds what is missing (Verilator models, firmware), runs the `prodcons` firmware linked with the
software-only backend and with the Subutai backend on each SoC size, keeps the whole capture
(results/prodcons_capture.txt) and turns it into results/prodcons.{csv,md,png} with
scripts/prodcons_report.py, then prints the table: per primitive, median application-visible
cycles of SW-only and of Subutai, their ratio and the paper's (TPDS'21 Table XI).

With --os zephyr, prodcons runs unchanged as a Zephyr application (one kernel per tile) and the
results are results/zephyr_prodcons.*; this needs a Zephyr tree (ZEPHYR_BASE, see boards/zephyr.py).

Usage: python scripts/bench.py [--tiles 2 4 8] [--backends swonly subutai] [--rounds N]
                               [--os baremetal|zephyr]
"""

import argparse
import os
import sys
import time


from soc.firmware import BACKENDS
from soc.simulation import build_model
from scripts.capture import CaptureError, parse_lines
from scripts.prodcons_report import report
from scripts.results import RESULTS_DIR, save_capture
from soc.mesh import MeshShapeError, mesh_shape

MAX_CYCLES = 60_000_000


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def run_prodcons(tiles, backends, rounds, os_name="baremetal"):
    """Run prodcons for every size and backend; return the capture lines."""
    lines = []
    for n in tiles:
        x, y = mesh_shape(n)
        model = build_model(x, y, log=log)
        for backend in backends:
            rounds_flag = f"-DPRODCONS_ROUNDS={rounds}"
            if os_name == "zephyr":
                from soc.zephyr import build_app
                image = build_app(model, "program", backend, "prodcons", extra_cflags=rounds_flag,
                    out_dir=os.path.join(model.output_dir, "zephyr", f"prodcons-{backend}-r{rounds}"),
                    log=log)
            else:
                image = model.build_firmware("prodcons", backend=backend, extra_cflags=rounds_flag,
                    out_dir=os.path.join(model.output_dir, "firmware", f"prodcons-{backend}-r{rounds}"))
            lines += run_checked(model, image, f"prodcons, {backend}, {n} tiles ({x}x{y}), {os_name}",
                MAX_CYCLES, "bench")
    return lines


def run_checked(model, image, what, max_cycles, tag):
    """Run an image on a model with progress lines; return its output lines, exit on a failure."""
    log(f"[{tag}] {what}: running...")
    result = model.run(image, max_cycles=max_cycles)
    log(f"[{tag}] {what}: {result.cycles:,} cycles in {result.seconds:.1f} s")
    if result.exit_code != 0:
        sys.stderr.write(result.output[-2000:] + result.stderr[-1000:])
        raise SystemExit(f"error: {what} exited with {result.exit_code}")
    return result.output.splitlines()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiles", type=int, nargs="+", default=[2, 4, 8],
        help="SoC sizes (tiles, 2 to 16).")
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=["swonly", "subutai"])
    parser.add_argument("--rounds", type=int, default=16, help="prodcons rounds per run.")
    parser.add_argument("--os", choices=("baremetal", "zephyr"), default="baremetal", dest="os_name",
        help="bare-metal runtime (one thread per core) or Zephyr on every tile.")
    parser.add_argument("--results", default=RESULTS_DIR, help="Output directory.")
    args = parser.parse_args()
    for n in args.tiles:
        if n < 2:
            parser.error(f"--tiles {n}: prodcons needs at least 2 tiles (a producer and a consumer)")
        try:
            mesh_shape(n)
        except MeshShapeError as e:
            parser.error(str(e))
    if args.rounds < 1:
        parser.error("--rounds must be >= 1")

    name = "prodcons" if args.os_name == "baremetal" else "zephyr_prodcons"
    if args.os_name == "zephyr":
        from soc.zephyr import require_zephyr
        require_zephyr()

    start = time.time()
    try:
        lines = run_prodcons(args.tiles, args.backends, args.rounds, args.os_name)
    except RuntimeError as e:
        raise SystemExit(f"error: {e}")
    capture = save_capture(name, lines, args.results)
    try:
        table = report(parse_lines(lines), args.results, name)
    except CaptureError as e:
        raise SystemExit(f"error: {e}")
    print(table)
    print(f"\nwrote {args.results}/{name}.{{csv,md,png}} and {capture} "
          f"({time.time() - start:.0f} s)")


if __name__ == "__main__":
    main()
