#!/usr/bin/env python3
"""Tidon, the time-donating barrier (seed 002), beside spin, block and spin-then-block, on
co-running applications under Zephyr with both backends (make bench-tidon).

Seed 002 §5: a barrier-intensive program (streamcluster, bodytrack) runs one thread per tile while
``ep`` (NAS EP, embarrassingly parallel) runs beside it with 1, 2 or 4 threads (imbalanced: the
threads are not a multiple of the cores) or one per tile (balanced); each program also runs
alone, with the default barrier (spin-then-block), as the reference of its speed-up. Every
co-run is built once per barrier waiting policy (Kconfig SUBUTAI_BARRIER_WAIT) and backend, with
round-robin scheduling (seed 002 keeps the system's fair scheduler) at a 0.5 ms timeslot, and runs
on the simulated SoC (zephyr-app/apps/multi). Writes results/tidon.{csv,md,png} and the capture;
every instance's checksum must equal the host build's.

Usage: python scripts/bench_tidon.py [--tiles 8] [--workloads streamcluster bodytrack]
                                     [--ep-threads 1 2 4] [--backends swonly subutai]
                                     [--policies spin block spin-then-block tidon] [--jobs N]
"""

import argparse
import sys
import time

from gateware.cpu import SIM_CPU_VARIANT
from soc.firmware import BACKENDS
from soc.mesh import MeshShapeError, mesh_shape
from soc.simulation import build_model, stop_runs_on_sigterm
from scripts import host_programs
from scripts.bench import run_checked
from scripts.capture import CaptureError
from scripts.jobs import add_jobs_argument, run_all
from scripts.multi_report import set_runs
from scripts.results import RESULTS_DIR, save_capture
from scripts.tidon_report import ALONE_POLICY, POLICIES, label_record, report

WORKLOADS = ("streamcluster", "bodytrack")
EP_THREADS = (1, 2, 4)
SCHED_POLICY = "rr"
TS_US = 500
PROGRAM_ARGS = "-i simsmall -s 1"
MAX_CYCLES = 400_000_000
#: The launcher's deadline (ms of simulated time): a spinning co-run that has not ended by then is
#: reported unfinished (exit 3) instead of holding the benchmark.
DEADLINE_MS = 300


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def runs(tiles, workloads, ep_threads, backends, policies):
    """(kind, workload, ep threads, backend, policy, programs) of every run, alone ones first."""
    threads = sorted(set(ep_threads) | {tiles})
    order = []
    for backend in backends:
        for program in list(workloads) + [f"ep:{n}" for n in threads]:
            n = int(program.split(":")[1]) if program.startswith("ep:") else 0
            order.append(("alone", program.split(":")[0], n, backend, ALONE_POLICY, [program]))
    for workload in workloads:
        for n in threads:
            for backend in backends:
                for policy in policies:
                    order.append(("corun", workload, n, backend, policy, [workload, f"ep:{n}"]))
    return order


def run_all_sets(tiles, order, jobs):
    """Build and run every set; return the capture's lines."""
    from soc.zephyr import MULTI_SOC, build_multi

    model = build_model(*mesh_shape(tiles), SIM_CPU_VARIANT, log=log, **MULTI_SOC)
    deadline = [f"CONFIG_SUBUTAI_MULTI_DEADLINE_MS={DEADLINE_MS}"]

    def run(kind, workload, n, backend, policy, programs):
        image = build_multi(
            model, programs, backend, SCHED_POLICY, TS_US, PROGRAM_ARGS, deadline, log=log, barrier=policy
        )
        what = f"{' + '.join(programs)}, {backend}, {policy}, {tiles} tiles"
        lines = run_checked(model, image, what, MAX_CYCLES, "bench-tidon", (0, 3))
        return [label_record(kind, workload, n, tiles, backend, policy)] + lines

    return [line for lines in run_all([lambda o=o: run(*o) for o in order], jobs) for line in lines]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiles", type=int, default=8, help="SoC size (tiles; default 8).")
    parser.add_argument("--workloads", nargs="+", choices=WORKLOADS, default=list(WORKLOADS))
    parser.add_argument(
        "--ep-threads",
        type=int,
        nargs="+",
        default=list(EP_THREADS),
        help="ep's thread counts beside the workload (one per tile, balanced, is always run).",
    )
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=["swonly", "subutai"])
    parser.add_argument("--policies", nargs="+", choices=POLICIES, default=list(POLICIES))
    parser.add_argument("--results", default=RESULTS_DIR, help="Output directory.")
    add_jobs_argument(parser)
    args = parser.parse_args()
    stop_runs_on_sigterm()
    try:
        mesh_shape(args.tiles)
    except MeshShapeError as e:
        parser.error(str(e))
    for n in args.ep_threads:
        if not 1 <= n <= args.tiles:
            parser.error(f"--ep-threads {n}: 1 to {args.tiles} (the tiles)")
    from soc.zephyr import require_zephyr

    require_zephyr()
    name = "tidon" if args.tiles == 8 else f"tidon_{args.tiles}"
    start = time.time()
    order = runs(args.tiles, args.workloads, args.ep_threads, args.backends, args.policies)
    log(f"[bench-tidon] {len(order)} runs, {args.jobs} at a time")
    try:
        reference = host_programs.checksums(list(args.workloads) + ["ep"], PROGRAM_ARGS)
        lines = run_all_sets(args.tiles, order, args.jobs)
    except (RuntimeError, host_programs.HostProgramError) as e:
        raise SystemExit(f"error: {e}")
    capture = save_capture(name, lines, args.results)
    try:
        all_runs = set_runs(lines)
        print(report(all_runs, reference, args.results, name))
    except CaptureError as e:
        raise SystemExit(f"error: {e}")
    print(
        f"\nwrote {args.results}/{name}.{{csv,md,png}} and {capture} "
        f"({time.time() - start:.0f} s, {args.jobs} at a time)"
    )
    wrong = [
        f"{r['label']['set']} ep:{r['label']['ep_threads']} {r['label']['backend']} {r['label']['policy']}: "
        f"instance {k} ({o.get('checksum')})"
        for r in all_runs
        for k, o in r["output"].items()
        if o.get("checksum", (None, None))[1] != reference.get(o.get("checksum", (None, None))[0])
    ]
    unfinished = [
        f"{r['label']['set']} ep:{r['label']['ep_threads']} {r['label']['backend']} {r['label']['policy']}"
        for r in all_runs
        if any(not i["finished"] or i["exit"] != 0 for i in r["instances"])
    ]
    if wrong:
        raise SystemExit("error: wrong results:\n  " + "\n  ".join(wrong))
    if unfinished:
        print("did not finish by the launcher's deadline:\n  " + "\n  ".join(unfinished))
    print(
        f"checksums: every finished instance equals the host build's ({sum(len(r['instances']) for r in all_runs)} instances)"
    )


if __name__ == "__main__":
    main()
