#!/usr/bin/env python3
"""The benchmark programs with both PThreads backends on 1, 2, 4, 8 and 16 tiles (make bench-apps,
make zephyr-bench).

Builds what is missing (Verilator models, firmware, the host build), runs every program of
firmware/programs/ linked with the software-only backend and with the Subutai backend on each SoC
size, keeps the whole capture (results/apps_capture.txt) and turns it into results/apps.{csv,md,png}
with scripts/apps_report.py: Subutai's speed-up over SW-only, each backend's scaling and the
synchronization events per program. Every run's checksum must equal the host build's (gcc and
glibc's pthreads) for the same input; a mismatch fails the benchmark.

With --os zephyr the programs run as Zephyr applications (zephyr-app/apps/program: one kernel per
tile, the PThreads library on Zephyr threads) and the results are results/zephyr_apps.*; this needs
a Zephyr tree (ZEPHYR_BASE, see boards/zephyr.py).

Independent simulations run side by side (--jobs, default: the number of cores); the capture and
the tables do not depend on it.

Usage: python scripts/bench_apps.py [--programs P ...] [--tiles 1 2 4 8 16]
                                    [--backends swonly subutai] [--input simsmall] [--seed 1]
                                    [--os baremetal|zephyr] [--jobs N]
"""

import argparse
import os
import sys
import time


from gateware.build import BUILD_DIR
from gateware.cpu import SIM_CPU_VARIANT
from soc.firmware import BACKENDS, link_perturbations, slug
from soc.simulation import build_model, mem_banks_arg, stop_runs_on_sigterm
from scripts import host_programs
from scripts.bench import run_checked
from scripts.apps_report import app_runs, checksum_problems, input_args, report
from scripts.capture import CaptureError
from scripts.jobs import add_jobs_argument, run_all
from scripts.results import (
    RESULTS_DIR,
    PartialCapture,
    console_table,
    markdown_table,
    save_capture,
    save_csv,
    spread,
)
from soc.mesh import MeshShapeError, mesh_shape

INPUTS = ("test", "simsmall", "simmedium")
OSES = ("baremetal", "zephyr")
MAX_CYCLES = 200_000_000


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def build_image(model, program, backend, args, os_name):
    """The image of a program for a model: bare-metal firmware or a Zephyr application."""
    if os_name == "zephyr":
        from soc.zephyr import build_app

        return build_app(model, "program", backend, program, args, log=log)
    return model.build_firmware(program, backend=backend, program_args=args)


def run_programs(
    programs,
    tiles,
    backends,
    args,
    os_name="baremetal",
    jobs=1,
    mem_banks=None,
    cpu_variant=SIM_CPU_VARIANT,
    threads=1,
    partial=None,
):
    """Run every program on every size with every backend, ``jobs`` at a time; return the capture
    lines in that order. ``partial``: a :class:`scripts.results.PartialCapture` that gets each
    run's lines as it ends."""
    models = {
        n: build_model(*mesh_shape(n), cpu_variant, mem_banks=mem_banks, threads=threads, log=log)
        for n in tiles
    }

    def run(n, program, backend):
        x, y = mesh_shape(n)
        image = build_image(models[n], program, backend, args, os_name)
        lines = run_checked(
            models[n],
            image,
            f"{program} {args}, {backend}, {n} tiles ({x}x{y}), {os_name}",
            MAX_CYCLES,
            "bench-apps",
        )
        return partial.add(lines) if partial else lines

    # The longest runs (most tiles) first, so that the last ones to finish are short.
    order = [(n, p, b) for n in sorted(tiles, reverse=True) for p in programs for b in backends]
    # A model on several host threads spins on its cores: no more runs at once than cores for it.
    jobs = max(1, min(jobs, jobs // max(models[n].threads for n in tiles)))
    results = dict(zip(order, run_all([lambda t=t: run(*t) for t in order], jobs)))
    return [line for n in tiles for p in programs for b in backends for line in results[(n, p, b)]]


#: Goal for the spread of a program's ROI across the perturbed links (percent).
LINK_SPREAD_GOAL = 2.0


def run_links(programs, tiles, backends, args, jobs=1, cpu_variant=SIM_CPU_VARIANT):
    """Run every program on every size with every backend, linked the default way and the ways of
    soc.firmware.link_perturbations() (bare metal); return rows (program, backend, tiles,
    variant, what, roi, checksum) and the runs' records (for their checksums)."""
    models = {n: build_model(*mesh_shape(n), cpu_variant, log=log) for n in tiles}

    def run(n, program, backend, perturbation):
        model, (x, y) = models[n], mesh_shape(n)
        tag = slug(args)
        image = model.build_firmware(
            program,
            backend=backend,
            program_args=args,
            out_dir=os.path.join(
                model.output_dir,
                "firmware",
                f"{program}-{backend}-{tag}-link{perturbation.variant if perturbation else 0}",
            ),
            perturbation=perturbation,
        )
        what = perturbation.what if perturbation else "default"
        lines = run_checked(
            model,
            image,
            f"{program} {args}, {backend}, {n} tiles ({x}x{y}), link {what}",
            MAX_CYCLES,
            "bench-apps",
        )
        (record,) = app_runs(lines)
        row = [
            program,
            backend,
            n,
            perturbation.variant if perturbation else 0,
            what,
            record["roi"],
            record["checksum"],
        ]
        return row, dict(record, args=f"{record['args']}, link {what}")

    order = [
        (n, p, b, q)
        for n in sorted(tiles, reverse=True)
        for p in programs
        for b in backends
        for q in [None] + link_perturbations(b)
    ]
    done = run_all([lambda t=t: run(*t) for t in order], jobs)
    return [row for row, _ in done], [record for _, record in done]


def links_report(rows, results_dir):
    """results/apps_links.{csv,md}: every link's ROI, and each program's spread across them."""
    save_csv(
        "apps_links",
        ["program", "backend", "tiles", "layout_variant", "link", "roi", "checksum"],
        rows,
        results_dir,
    )
    by = {}
    for program, backend, tiles, _, _, roi, _ in rows:
        by.setdefault((program, backend, tiles), []).append(roi)
    keys = sorted(by, key=lambda k: (k[2], k[0], k[1]))
    table = [
        [p, b, t, min(by[(p, b, t)]), max(by[(p, b, t)]), f"{spread(by[(p, b, t)]):.1f} %"]
        for p, b, t in keys
    ]
    over = [row for row, k in zip(table, keys) if spread(by[k]) >= LINK_SPREAD_GOAL]
    header = ["program", "backend", "tiles", "smallest ROI", "largest ROI", "spread"]
    notes = (
        f"Spread: (largest − smallest) / smallest ROI over {len(rows) // max(1, len(by))} links of "
        "each image, the default and the perturbed ones of `soc.firmware.link_perturbations()` "
        "(the library's objects in other orders, a 1 KiB function of the synchronization paths "
        "that nothing calls inserted at several places; `scripts/bench_apps.py --perturb`): what "
        f"a change to the library does to a program's figure. Goal: under {LINK_SPREAD_GOAL:g} %. "
        f"{len(table) - len(over)} of {len(table)} are within it"
        + (": not " + ", ".join(f"{p} {b} {t} tiles ({s})" for p, b, t, _, _, s in over) if over else "")
        + ".\n"
    )
    with open(os.path.join(results_dir, "apps_links.md"), "w") as f:
        f.write("# Benchmark programs: ROI across links of the library\n\n")
        f.write(markdown_table(header, table) + "\n" + notes)
    return console_table(header, table)


def host_reference(programs, args):
    """{(program, input): checksum} of the host build, run with one thread."""
    log(f"[bench-apps] host reference (gcc, glibc pthreads): {', '.join(programs)}")
    reference = {}
    for name, exe in host_programs.build(programs).items():
        output = host_programs.run(exe, f"-t 1 {args}")
        reference[(name, input_args(args))] = host_programs.checksum(output, name)
    return reference


def main():
    available = host_programs.programs()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--programs",
        nargs="+",
        default=available,
        metavar="PROGRAM",
        help=f"programs of firmware/programs/ (default: all: {', '.join(available)})",
    )
    parser.add_argument(
        "--tiles", type=int, nargs="+", default=[1, 2, 4, 8, 16], help="SoC sizes (tiles, 1 to 64)."
    )
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=["swonly", "subutai"])
    parser.add_argument("--input", choices=INPUTS, default="simsmall", help="input class.")
    parser.add_argument("--seed", type=int, default=1, help="seed of the generated inputs.")
    parser.add_argument(
        "--os",
        choices=OSES,
        default="baremetal",
        dest="os_name",
        help="bare-metal runtime (one thread per core) or Zephyr on every tile.",
    )
    parser.add_argument(
        "--mem-banks",
        type=mem_banks_arg,
        default=None,
        help="main RAM banks of the simulated SoCs (default: one per tile; 0: one RAM on the shared "
        "bus, the memory system before banking); results of a given value are "
        "results/apps_mem<N>.*",
    )
    parser.add_argument(
        "--cpu-variant",
        default=SIM_CPU_VARIANT,
        help=f"VexRiscv variant of every core (LiteX's, or gateware.cpu.CORE_VARIANTS; default "
        f"{SIM_CPU_VARIANT}).",
    )
    parser.add_argument(
        "--perturb",
        action="store_true",
        help="instead of the benchmark, each program linked the default way and the perturbed ways "
        "of soc.firmware.link_perturbations() (bare metal): results/apps_links.{csv,md}.",
    )
    parser.add_argument("--results", default=RESULTS_DIR, help="Output directory.")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="host threads of each model (Verilator --threads; runs at once are fewer in proportion): "
        "for 32 tiles and more on a machine with cores to spare",
    )
    parser.add_argument(
        "--append",
        action="store_true",
        help="extend the saved capture (<results>/apps_capture.txt) with these runs, replacing its "
        "runs of the same program, backend and size, and report them all (e.g. --tiles 32 64 beside "
        "make bench-apps' 1 to 16)",
    )
    add_jobs_argument(parser)
    args = parser.parse_args()
    # SIGTERM stops the running models with the script (not left computing on).
    stop_runs_on_sigterm()
    unknown = sorted(set(args.programs) - set(available))
    if unknown:
        parser.error(f"--programs: no such program {', '.join(unknown)} (have: {', '.join(available)})")
    for n in args.tiles:
        try:
            mesh_shape(n)
        except MeshShapeError as e:
            parser.error(str(e))
    if args.seed < 0:
        parser.error("--seed must be >= 0")

    if args.os_name == "zephyr":
        from soc.zephyr import require_zephyr

        require_zephyr()
    name = "apps" if args.os_name == "baremetal" else "zephyr_apps"
    title = "Benchmark programs: Subutai vs SW-only" + (
        ", Zephyr on every tile" if args.os_name == "zephyr" else ""
    )
    if args.mem_banks is not None:
        name += f"_mem{args.mem_banks}"
        title += (
            ", main RAM on the shared bus" if args.mem_banks == 0 else f", main RAM in {args.mem_banks} banks"
        )

    if args.threads < 1 or (args.threads > 1 and (args.perturb or args.os_name != "baremetal")):
        parser.error("--threads: a positive count; more than 1 for the bare-metal benchmark only")
    previous = os.path.join(args.results, f"{name}_capture.txt")
    if args.append and (args.perturb or not os.path.exists(previous)):
        parser.error(
            f"--append: {'not with --perturb' if args.perturb else f'no capture {previous} to extend'}"
        )
    if args.perturb and (args.os_name != "baremetal" or args.mem_banks is not None):
        parser.error("--perturb: bare metal on the default memory system only")

    start = time.time()
    program_args = f"-i {args.input} -s {args.seed}"
    try:
        reference = host_reference(args.programs, program_args)
    except host_programs.HostProgramError as e:
        raise SystemExit(f"error: {e}")
    if args.perturb:
        try:
            rows, runs = run_links(
                args.programs, args.tiles, args.backends, program_args, args.jobs, args.cpu_variant
            )
        except RuntimeError as e:
            raise SystemExit(f"error: {e}")
        print(links_report(rows, args.results))
        problems = checksum_problems(runs, reference)
        if problems:
            raise SystemExit("error: wrong results:\n  " + "\n  ".join(problems))
        print(
            f"\nwrote {args.results}/apps_links.{{csv,md}} ({time.time() - start:.0f} s); checksums: "
            f"every run equals the host build's ({len(rows)} runs)"
        )
        return
    # Every run's output as it ends: a stopped benchmark still reports (apps_report.py <file>).
    partial = PartialCapture(os.path.join(BUILD_DIR, f"{name}_partial_capture.txt"))
    try:
        lines = run_programs(
            args.programs,
            args.tiles,
            args.backends,
            program_args,
            args.os_name,
            args.jobs,
            args.mem_banks,
            args.cpu_variant,
            args.threads,
            partial,
        )
    except RuntimeError as e:
        raise SystemExit(f"error: {e}")
    if args.append:
        # The saved capture first: its runs of the configurations rerun here are replaced.
        with open(previous) as f:
            lines = f.read().splitlines() + lines
    capture = save_capture(name, lines, args.results)
    try:
        runs = app_runs(lines)
        table = report(runs, args.results, name, title)
    except CaptureError as e:
        raise SystemExit(f"error: {e}")
    print(table)
    print(
        f"\nwrote {args.results}/{name}.{{csv,md,png}} and {capture} ({time.time() - start:.0f} s, "
        f"{args.jobs} at a time)"
    )
    problems = checksum_problems(runs, reference)
    if problems:
        raise SystemExit("error: wrong results:\n  " + "\n  ".join(problems))
    print(f"checksums: every run equals the host build's ({len(runs)} runs)")


if __name__ == "__main__":
    main()
