#!/usr/bin/env python3
"""Channels through the NoC (seed 004's rdy-ack channels) on the simulated SoC, bare metal
(make bench-chan).

1. One-way latency and throughput (seed 004's Table 5): ``chanbench`` with every implementation
   of channels (noc, push, flags, queue) on each SoC size, between tile 0 and a tile one hop away
   and the farthest tile.
2. The farm (seed 004's Fig. 14): ``farm`` on the 16-tile SoC with every implementation, matrix
   size and element type, for each number of workers, and each size and type once sequentially
   (``-t 1``, the reference of the speed-up). A parallel run streams ``--tasks-per-worker`` tasks
   per worker (at least 4); the sequential one ``--sequential-tasks`` (its time per task does not
   depend on their number). Every run's checksum must equal the host build's with the same
   arguments.

Writes results/chan.{csv,md,png}, results/chan_farm.{csv,md} and the capture
(scripts/chan_report.py rewrites the reports from it). Each run's output is also appended to
build/chan_partial_capture.txt as the run ends, so a sweep stopped before its end (a farm run at
M = 128 simulates for many minutes) still reports what ran: ``python scripts/chan_report.py
build/chan_partial_capture.txt`` (its reports are written beside it).

Usage: python scripts/bench_chan.py [--tiles 8 16] [--impls noc push flags queue]
                                    [--sizes 8 16 32 64 128] [--types int float]
                                    [--float-sizes 32] [--workers 1 4 14] [--jobs N]
"""

import argparse
import os
import shutil
import sys
import time

from gateware.build import BUILD_DIR
from soc.firmware import CHANS, check_chan, slug
from soc.mesh import MeshShapeError, mesh_shape
from soc.simulation import build_model, stop_runs_on_sigterm
from soc.subutai_soc import MiB
from scripts import host_programs
from scripts.bench import run_checked
from scripts.chan_report import IMPLS, label_record, report
from scripts.jobs import add_jobs_argument, run_all
from scripts.results import RESULTS_DIR, PartialCapture, save_capture

FARM_TILES = 16
#: Main RAM of the farm's SoC: the matrices (a pool of 8 and one output per worker, 64 KiB each at
#: M = 128) do not fit the default 1 MiB.
FARM_MAIN_RAM = 4 * MiB
FARM_MAX_WORKERS = 14  # firmware/programs/farm: an emitter and a collector besides
#: Fewest tasks of a parallel run (its service time is measured after the first W results).
MIN_TASKS = 4
MAX_CYCLES = 400_000_000


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def farm_program_args(m, type_, tasks):
    """The farm's arguments but the thread count (the host's reference runs with one)."""
    return f"-i test -m {m} -d {type_} -n {tasks}"


def farm_args(m, type_, tasks, threads):
    """The farm's arguments on the SoC (after the harness's "-t <tiles>", which the last -t
    overrides)."""
    return f"{farm_program_args(m, type_, tasks)} -t {threads}"


def latency_runs(tiles_list, impls, partial):
    lines = []
    for tiles in tiles_list:
        x, y = mesh_shape(tiles)
        model = build_model(x, y, log=log)
        for impl in impls:
            image = model.build_firmware("chanbench", chan=impl)
            out = run_checked(model, image, f"chanbench {impl}, {tiles} tiles", MAX_CYCLES, "bench-chan")
            lines += partial.add([label_record(run="chanbench", impl=impl, tiles=tiles)] + out)
    return lines


def farm_runs(impls, configs, workers, tasks_per_worker, sequential_tasks, jobs, partial, tiles=FARM_TILES):
    x, y = mesh_shape(tiles)
    model = build_model(x, y, main_ram_size=FARM_MAIN_RAM, log=log)
    plan = []  # (impl, m, type, workers, tasks)
    for m, type_ in configs:
        plan.append((impls[0], m, type_, 0, sequential_tasks))
        for impl in impls:
            for w in workers:
                plan.append((impl, m, type_, w, max(MIN_TASKS, tasks_per_worker * w)))
    # The host's checksums, one per argument set (they do not depend on the thread count).
    references = {}
    for impl, m, type_, w, tasks in plan:
        key = (m, type_, tasks)
        if key not in references:
            references[key] = host_programs.checksums(["farm"], farm_program_args(m, type_, tasks))["farm"]
    # One image per run (the arguments are built in), built one after the other into the
    # implementation's directory and copied away, then run side by side.
    images = []
    for impl, m, type_, w, tasks in plan:
        args = farm_args(m, type_, tasks, w + 2 if w else 1)
        out_dir = os.path.join(model.output_dir, "firmware", f"bench_chan_farm_{impl}")
        built = model.build_firmware("farm", out_dir=out_dir, program_args=args, chan=impl)
        image = os.path.join(out_dir, f"farm-{slug(args)}.bin")
        shutil.copyfile(built, image)
        images.append(image)
    log(f"[bench-chan] farm: {len(plan)} runs on {tiles} tiles, {jobs} at a time")

    def task(n):
        impl, m, type_, w, tasks = plan[n]
        what = f"farm {impl} M={m} {type_} W={w} ({n + 1}/{len(plan)})"
        out = run_checked(model, images[n], what, MAX_CYCLES, "bench-chan")
        label = label_record(
            run="farm",
            impl=impl,
            m=m,
            type=type_,
            workers=w,
            tasks=tasks,
            reference=references[(m, type_, tasks)],
        )
        return partial.add([label] + out)

    return [line for out in run_all([lambda n=n: task(n) for n in range(len(plan))], jobs) for line in out]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tiles", type=int, nargs="*", default=[8, 16], help="SoC sizes of the latency runs")
    p.add_argument("--impls", nargs="+", default=list(IMPLS), help=f"implementations ({', '.join(CHANS)})")
    p.add_argument(
        "--sizes",
        type=int,
        nargs="*",
        default=[8, 16, 32, 64, 128],
        help="matrix sizes M (int; 8 and 16: finer grains than seed 004's)",
    )
    p.add_argument("--types", nargs="+", default=["int", "float"], choices=["int", "float"])
    p.add_argument(
        "--float-sizes",
        type=int,
        nargs="*",
        default=[32],
        help="matrix sizes run with float elements (emulated: about ten times the cycles of int)",
    )
    p.add_argument(
        "--workers",
        type=int,
        nargs="*",
        default=[1, 4, 14],
        help="worker counts (each run simulates about --tasks-per-worker tasks of one worker: "
        "M = 128 int takes 1.1 M cycles a task)",
    )
    p.add_argument("--farm-tiles", type=int, default=FARM_TILES, help="SoC size of the farm runs")
    p.add_argument("--tasks-per-worker", type=int, default=3)
    p.add_argument("--sequential-tasks", type=int, default=4)
    add_jobs_argument(p)
    args = p.parse_args()
    try:
        for impl in args.impls:
            check_chan(impl)
        for tiles in args.tiles:
            mesh_shape(tiles)
    except (ValueError, MeshShapeError) as e:
        p.error(str(e))
    if any(not 3 <= m <= 256 for m in args.sizes + args.float_sizes):
        p.error("matrix sizes: 3 to 256")
    try:
        mesh_shape(args.farm_tiles)
    except MeshShapeError as e:
        p.error(str(e))
    most = min(FARM_MAX_WORKERS, args.farm_tiles - 2)
    if any(not 1 <= w <= most for w in args.workers):
        p.error(f"--workers: 1 to {most} (an emitter and a collector besides, on {args.farm_tiles} tiles)")
    if args.tasks_per_worker < 1 or args.sequential_tasks < 1:
        p.error("task counts must be positive")
    stop_runs_on_sigterm()
    start = time.time()
    configs = [(m, "int") for m in args.sizes if "int" in args.types]
    configs += [(m, "float") for m in args.float_sizes if "float" in args.types]
    partial = PartialCapture(os.path.join(BUILD_DIR, "chan_partial_capture.txt"))
    try:
        lines = latency_runs(args.tiles, args.impls, partial)
        if configs and args.workers:
            lines += farm_runs(
                args.impls,
                configs,
                args.workers,
                args.tasks_per_worker,
                args.sequential_tasks,
                args.jobs,
                partial,
                args.farm_tiles,
            )
    except host_programs.HostProgramError as e:
        raise SystemExit(f"error: {e}")
    except BaseException:
        log(
            f"[bench-chan] stopped: the runs that ended are in {os.path.relpath(partial.path)} "
            f"(python scripts/chan_report.py {os.path.relpath(partial.path)})"
        )
        raise
    capture = save_capture("chan", lines)
    text, problems = report(lines, RESULTS_DIR, "chan")
    print(text)
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    print(
        f"\nwrote results/chan.{{csv,md,png}}, results/chan_farm.{{csv,md}}, {capture} in {time.time() - start:.0f} s"
    )
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
