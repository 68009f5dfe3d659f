#!/usr/bin/env python3
"""Several applications sharing the cores under OAT, RR and CSA scheduling, with both backends
(make bench-multi): TPDS'21 (Subutai) section VII, its Fig. 13, Table VII and Table X.

Builds zephyr-app/apps/multi for each set of applications (bodytrack, streamcluster and x264
sets, and a mix; scripts/multi_report.py SETS), backend, scheduling policy and timeslot, runs it
on the simulated SoC (Zephyr on every tile, main RAM of 4 MiB for the sets' threads and data) and
writes results/multi.{csv,md,png}, results/multi_apps.csv (every application of every run) and the
capture. Every instance's checksum must equal the host build's.

Policies: oat (one application at a time; the times alone come from it), rr at each timeslot,
csa at each timeslot, csa-nolimit at the middle one (what CSALimit is for).

Usage: python scripts/bench_multi.py [--tiles 8] [--sets bodytrack streamcluster x264 mix]
                                     [--backends swonly subutai] [--ts 0.1 0.5 2] [--jobs N]
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
from scripts.multi_report import SETS, label_record, report, set_runs
from scripts.results import RESULTS_DIR, save_capture

MAX_CYCLES = 400_000_000
#: The launcher's deadline (ms of simulated time): several times the longest makespan.
DEADLINE_MS = {8: 300, 16: 1000}
DEFAULT_TS_MS = (0.1, 0.5, 2.0)
PROGRAM_ARGS = "-i simsmall -s 1"


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def configurations(ts_ms):
    """(policy, ts_us) of a set and backend, in the order of the report."""
    ts_us = [round(t * 1000) for t in ts_ms]
    middle = ts_us[len(ts_us) // 2]
    return (
        [("oat", middle)]
        + [("rr", t) for t in ts_us]
        + [("csa", t) for t in ts_us]
        + [("csa-nolimit", middle)]
    )


def run_sets(tiles, sets, backends, ts_ms, jobs):
    """Run every set with every backend and configuration; return the capture's lines."""
    from soc.zephyr import MULTI_SOC, build_multi

    model = build_model(*mesh_shape(tiles), SIM_CPU_VARIANT, log=log, **MULTI_SOC)

    def run(set_name, backend, policy, ts_us):
        programs = SETS[tiles][set_name]
        deadline = [f"CONFIG_SUBUTAI_MULTI_DEADLINE_MS={DEADLINE_MS[tiles]}"]
        image = build_multi(model, programs, backend, policy, ts_us, PROGRAM_ARGS, deadline, log=log)
        what = f"{set_name} x{len(programs)}, {backend}, {policy} TS {ts_us / 1000:g} ms, {tiles} tiles"
        # Without CSALimit a thread that keeps its critical section may keep its core: such a
        # run ends at the launcher's deadline, its unfinished applications reported (exit 3).
        exit_codes = (0, 3) if policy == "csa-nolimit" else (0,)
        lines = run_checked(model, image, what, MAX_CYCLES, "bench-multi", exit_codes)
        return [label_record(set_name, tiles, backend, policy, ts_us)] + lines

    order = [(s, b, p, t) for s in sets for b in backends for p, t in configurations(ts_ms)]
    return [line for lines in run_all([lambda o=o: run(*o) for o in order], jobs) for line in lines]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiles", type=int, default=8, choices=sorted(SETS), help="SoC size (tiles).")
    parser.add_argument(
        "--sets", nargs="+", default=list(SETS[8]), choices=list(SETS[8]), help="application sets."
    )
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=["swonly", "subutai"])
    parser.add_argument(
        "--ts",
        type=float,
        nargs="+",
        default=list(DEFAULT_TS_MS),
        metavar="MS",
        help="timeslots of rr and csa (ms of simulated time, 0.001 to 1000).",
    )
    parser.add_argument("--results", default=RESULTS_DIR, help="Output directory.")
    add_jobs_argument(parser)
    args = parser.parse_args()
    stop_runs_on_sigterm()
    try:
        mesh_shape(args.tiles)
    except MeshShapeError as e:
        parser.error(str(e))
    for t in args.ts:
        if not 0.001 <= t <= 1000 or 1_000_000 % round(t * 1000):
            parser.error(f"--ts {t:g}: a timeslot of 1 us to 1 s that divides a second in microseconds")
    from soc.zephyr import require_zephyr

    require_zephyr()
    name = "multi" if args.tiles == 8 else f"multi_{args.tiles}"
    start = time.time()
    programs = sorted({p for s in args.sets for p in SETS[args.tiles][s]})
    try:
        reference = host_programs.checksums(programs, PROGRAM_ARGS)
        lines = run_sets(args.tiles, args.sets, args.backends, sorted(args.ts), args.jobs)
    except (RuntimeError, host_programs.HostProgramError) as e:
        raise SystemExit(f"error: {e}")
    capture = save_capture(name, lines, args.results)
    try:
        runs = set_runs(lines)
        print(report(runs, reference, args.results, name))
    except CaptureError as e:
        raise SystemExit(f"error: {e}")
    print(
        f"\nwrote {args.results}/{name}.{{csv,md,png}}, {name}_apps.csv and {capture} "
        f"({time.time() - start:.0f} s, {args.jobs} at a time)"
    )
    # csa-nolimit may leave applications unfinished (reported as such); no other policy may.
    bad = [
        r
        for r in runs
        for i in r["instances"]
        if r["label"]["policy"] != "csa-nolimit" and (not i["finished"] or i["exit"] != 0)
    ]
    wrong = [
        f"{r['label']['set']} {r['label']['backend']} {r['label']['policy']}: instance {k} ({o.get('checksum')})"
        for r in runs
        for k, o in r["output"].items()
        if o.get("checksum", (None, None))[1] != reference.get(o.get("checksum", (None, None))[0])
    ]
    if bad or wrong:
        raise SystemExit("error: wrong results:\n  " + "\n  ".join(wrong or ["an instance did not finish"]))
    print(
        f"checksums: every instance equals the host build's ({sum(len(r['instances']) for r in runs)} instances)"
    )


if __name__ == "__main__":
    main()
