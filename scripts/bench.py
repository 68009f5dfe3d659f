#!/usr/bin/env python3
"""The project's main benchmark: prodcons with both PThreads backends on 2, 4 and 8 tiles.

Builds what is missing (Verilator models, firmware), runs the `prodcons` firmware linked with the
software-only backend and with the Subutai backend on each SoC size, keeps the whole capture
(results/prodcons_capture.txt) and turns it into results/prodcons.{csv,md,png} with
scripts/prodcons_report.py, then prints the table: per primitive, median application-visible
cycles of SW-only and of Subutai, their ratio and the paper's (TPDS'21 Table XI).

With --layouts N (bare metal), every configuration is also rebuilt N-1 times with everything but the
timed code and data shifted by 64, 128, ... bytes (firmware/lib/linker.ld): the tables then give
each median's spread across these layouts, what a change elsewhere in an image can still do to it
(results/prodcons_layouts.csv has every layout's figures). results/prodcons.csv is always the
unshifted layout's.

With --perturb (bare metal), every configuration is also linked the ways of
soc.firmware.link_perturbations(): the library's objects in other orders, and a 1 KiB function of
the synchronization paths that nothing calls inserted at several places of it. A real change to
the library moves the timed code inside the hot block, which --layouts does not: the tables then
give each median's spread across these links too (results/prodcons_layouts.csv has their
figures).

With --os zephyr, prodcons runs unchanged as a Zephyr application (one kernel per tile) and the
results are results/zephyr_prodcons.*; this needs a Zephyr tree (ZEPHYR_BASE, see boards/zephyr.py).

Independent simulations run side by side (--jobs, default: the number of cores); the results do
not depend on it.

Usage: python scripts/bench.py [--tiles 2 4 8] [--backends swonly subutai] [--rounds N]
                               [--layouts N] [--perturb] [--os baremetal|zephyr] [--jobs N]
"""

import argparse
import os
import sys
import time


from gateware.cpu import SIM_CPU_VARIANT
from soc.firmware import BACKENDS, link_perturbations
from soc.simulation import build_model, stop_runs_on_sigterm
from scripts.capture import CaptureError, parse_lines
from scripts.jobs import add_jobs_argument, run_all
from scripts.prodcons_report import report
from scripts.results import RESULTS_DIR, save_capture
from soc.mesh import MeshShapeError, mesh_shape

MAX_CYCLES = 60_000_000
ROUNDS = 16  # prodcons rounds of a run (results/prodcons.* are of this many)
# Shift between two layouts of --layouts (bytes): two cache lines of the shipped VexRiscv variants.
LAYOUT_STEP = 64


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def run_prodcons(
    tiles,
    backends,
    rounds,
    os_name="baremetal",
    layouts=1,
    jobs=1,
    perturb=False,
    cpu_variant=SIM_CPU_VARIANT,
):
    """Run prodcons for every size, backend and layout (``layouts`` shifts of LAYOUT_STEP bytes,
    and with ``perturb`` the links of link_perturbations(); bare metal only), ``jobs`` at a time;
    return the capture lines, in that order."""
    models = {n: build_model(*mesh_shape(n), cpu_variant, log=log) for n in tiles}
    rounds_flag = f"-DPRODCONS_ROUNDS={rounds}"

    def run(n, backend, pad, perturbation=None):
        model, (x, y) = models[n], mesh_shape(n)
        what = f"prodcons, {backend}, {n} tiles ({x}x{y}), {os_name}"
        if os_name == "zephyr":
            from soc.zephyr import build_app

            image = build_app(
                model,
                "program",
                backend,
                "prodcons",
                extra_cflags=rounds_flag,
                out_dir=os.path.join(model.output_dir, "zephyr", f"prodcons-{backend}-r{rounds}"),
                log=log,
            )
        else:
            suffix = f"-pad{pad}" if pad else ""
            suffix += f"-link{perturbation.variant}" if perturbation else ""
            image = model.build_firmware(
                "prodcons",
                backend=backend,
                extra_cflags=rounds_flag,
                out_dir=os.path.join(model.output_dir, "firmware", f"prodcons-{backend}-r{rounds}{suffix}"),
                layout_pad=pad,
                perturbation=perturbation,
            )
            what += f", layout +{pad} B" if layouts > 1 else ""
            what += f", link {perturbation.variant} ({perturbation.what})" if perturbation else ""
        return run_checked(model, image, what, MAX_CYCLES, "bench")

    tasks = [
        lambda n=n, b=b, pad=k * LAYOUT_STEP: run(n, b, pad)
        for n in tiles
        for b in backends
        for k in range(layouts)
    ]
    if perturb:
        tasks += [
            lambda n=n, b=b, p=p: run(n, b, 0, p)
            for n in tiles
            for b in backends
            for p in link_perturbations(b)
        ]
    return [line for lines in run_all(tasks, jobs) for line in lines]


def run_checked(model, image, what, max_cycles, tag, exit_codes=(0,)):
    """Run an image on a model with progress lines; return its output lines, exit on a failure
    (an exit code not in ``exit_codes``)."""
    log(f"[{tag}] {what}: running...")
    result = model.run(image, max_cycles=max_cycles)
    log(f"[{tag}] {what}: {result.cycles:,} cycles in {result.seconds:.1f} s")
    if result.exit_code not in exit_codes:
        sys.stderr.write(result.output[-2000:] + result.stderr[-1000:])
        raise SystemExit(f"error: {what} exited with {result.exit_code}")
    return result.output.splitlines()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--tiles", type=int, nargs="+", default=None, help="SoC sizes (tiles, 2 to 16; default 2 4 8 16)."
    )
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=["swonly", "subutai"])
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="prodcons rounds per run.")
    parser.add_argument(
        "--os",
        choices=("baremetal", "zephyr"),
        default="baremetal",
        dest="os_name",
        help="bare-metal runtime (one thread per core) or Zephyr on every tile.",
    )
    parser.add_argument(
        "--layouts",
        type=int,
        default=1,
        help=f"layouts per configuration: shifts of 0, {LAYOUT_STEP}, {2 * LAYOUT_STEP}, ... bytes of "
        "all but the timed code and data (bare metal).",
    )
    parser.add_argument(
        "--perturb",
        action="store_true",
        help="also link each configuration the ways of soc.firmware.link_perturbations() (the "
        "library's objects in other orders, a 1 KiB function inserted at several places; "
        "bare metal).",
    )
    parser.add_argument(
        "--cpu-variant",
        default=SIM_CPU_VARIANT,
        help=f"VexRiscv variant of every core (LiteX's, or gateware.cpu.CORE_VARIANTS; default "
        f"{SIM_CPU_VARIANT}).",
    )
    parser.add_argument("--results", default=RESULTS_DIR, help="Output directory.")
    add_jobs_argument(parser)
    args = parser.parse_args()
    # SIGTERM stops the running models with the script (not left computing on).
    stop_runs_on_sigterm()
    if args.tiles is None:
        args.tiles = [2, 4, 8, 16]
    for n in args.tiles:
        if n < 2:
            parser.error(f"--tiles {n}: prodcons needs at least 2 tiles (a producer and a consumer)")
        try:
            mesh_shape(n)
        except MeshShapeError as e:
            parser.error(str(e))
    if args.rounds < 1:
        parser.error("--rounds must be >= 1")
    if args.layouts < 1:
        parser.error("--layouts must be >= 1")
    if args.layouts > 1 and args.os_name == "zephyr":
        parser.error(
            "--layouts: the layout shift is a bare-metal linker option (use --layouts 1 with --os zephyr)"
        )
    if args.perturb and args.os_name == "zephyr":
        parser.error("--perturb: the perturbed links are bare-metal images")

    name = "prodcons" if args.os_name == "baremetal" else "zephyr_prodcons"
    if args.os_name == "zephyr":
        from soc.zephyr import require_zephyr

        require_zephyr()

    start = time.time()
    try:
        lines = run_prodcons(
            args.tiles,
            args.backends,
            args.rounds,
            args.os_name,
            args.layouts,
            args.jobs,
            args.perturb,
            args.cpu_variant,
        )
    except RuntimeError as e:
        raise SystemExit(f"error: {e}")
    capture = save_capture(name, lines, args.results)
    try:
        table = report(parse_lines(lines), args.results, name)
    except CaptureError as e:
        raise SystemExit(f"error: {e}")
    print(table)
    print(
        f"\nwrote {args.results}/{name}.{{csv,md,png}} and {capture} "
        f"({time.time() - start:.0f} s, {args.jobs} at a time)"
    )


if __name__ == "__main__":
    main()
