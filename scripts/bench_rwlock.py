#!/usr/bin/env python3
"""Read-write lock benchmark (make bench): firmware/apps/rwbench with both PThreads backends.

One thread per core runs reads and writes of a table behind a pthread_rwlock_t, 10 % and 50 % of
them writes, with a little work of its own between two; the cycles of the whole run per backend
give the speed-up of the Subutai backend (its read-write lock queues in the engines) over
SW-only. Results go to results/rwlock.{csv,md,png}; the whole capture to
results/rwlock_capture.txt.

Usage: python scripts/bench_rwlock.py [--tiles 8 16] [--jobs N]
"""

import argparse
import os
import sys
import time

from soc.mesh import MeshShapeError, mesh_shape
from soc.simulation import build_model, stop_runs_on_sigterm
from scripts.bench import run_checked
from scripts.capture import CaptureError, parse_lines
from scripts.jobs import add_jobs_argument, run_all
from scripts.results import RESULTS_DIR, console_table, save_capture, save_table

BACKENDS = ("swonly", "subutai")
MAX_CYCLES = 200_000_000


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def run_rwbench(tiles, jobs=1):
    """Capture lines of rwbench for every (tiles, backend), in that order."""
    models = {n: build_model(*mesh_shape(n), log=log) for n in tiles}

    def run(n, backend):
        image = models[n].build_firmware("rwbench", backend=backend)
        return run_checked(models[n], image, f"rwbench, {backend}, {n} tiles", MAX_CYCLES, "bench-rwlock")

    configs = [(n, b) for n in tiles for b in BACKENDS]
    order = sorted(configs, reverse=True)
    results = dict(zip(order, run_all([lambda c=c: run(*c) for c in order], jobs)))
    return [line for c in configs for line in results[c]]


def measurements(lines):
    """{(tiles, write_pct): {backend: record}} of a capture."""
    table = {}
    for r in parse_lines(lines):
        if r.get("program") != "rwbench":
            continue
        for key in ("backend", "tiles", "write_pct", "ops", "writes", "cycles"):
            if key not in r:
                raise CaptureError(f"rwbench record without {key!r}: {r}")
        table.setdefault((r["tiles"], r["write_pct"]), {})[r["backend"]] = r
    for (n, w), runs in table.items():
        missing = set(BACKENDS) - set(runs)
        if missing:
            raise CaptureError(f"{n} tiles, {w} % writes: no run of {', '.join(sorted(missing))}")
        if runs["swonly"]["writes"] != runs["subutai"]["writes"]:
            raise CaptureError(f"{n} tiles, {w} % writes: the backends ran different operations")
    return table


def report(table, results_dir=RESULTS_DIR):
    """Write results/rwlock.{csv,md,png}; return the console table."""
    header = [
        "tiles",
        "writes (%)",
        "operations",
        "SW-only (cycles)",
        "Subutai (cycles)",
        "SW/Subutai",
        "SW-only (cycles/op)",
        "Subutai (cycles/op)",
    ]
    rows = []
    for (n, w), runs in sorted(table.items()):
        sw, hw = runs["swonly"], runs["subutai"]
        rows.append(
            [
                n,
                w,
                sw["ops"],
                sw["cycles"],
                hw["cycles"],
                f"{sw['cycles'] / hw['cycles']:.2f}x",
                f"{sw['cycles'] / sw['ops']:.0f}",
                f"{hw['cycles'] / hw['ops']:.0f}",
            ]
        )
    notes = (
        "firmware/apps/rwbench: one thread per core, 64 operations each on a table of 8 words "
        "behind a pthread_rwlock_t (readers sum it, writers increment every word), the given share "
        "of them writes, 50 iterations of the thread's own work between two. Cycles from the start "
        "barrier's release to the end barrier. The read-write lock is the library's: in an engine "
        "with Subutai (one request per lock, a posted unlock), a mutex and two conditions of the "
        "atomic unit SW-only."
    )
    save_table(
        "rwlock",
        header,
        rows,
        title="Read-write locks, readers and writers (firmware/apps/rwbench)",
        notes=notes,
        results_dir=results_dir,
    )
    plot(table, results_dir)
    return console_table(header, rows)


def plot(table, results_dir):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    keys = sorted(table)
    x = range(len(keys))
    for i, backend in enumerate(BACKENDS):
        ax.bar(
            [k + (i - 0.5) * 0.4 for k in x],
            [table[k][backend]["cycles"] / table[k][backend]["ops"] for k in keys],
            width=0.4,
            label="SW-only" if backend == "swonly" else "Subutai",
        )
    ax.set_xticks(list(x))
    ax.set_xticklabels([f"{n} tiles\n{w} % writes" for n, w in keys])
    ax.set_ylabel("cycles per operation")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(results_dir, "rwlock.png"), dpi=100)
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiles", type=int, nargs="+", default=[8, 16], help="SoC sizes (tiles, 2 to 16).")
    parser.add_argument("--results", default=RESULTS_DIR, help="Output directory.")
    add_jobs_argument(parser)
    args = parser.parse_args()
    stop_runs_on_sigterm()
    for n in args.tiles:
        try:
            mesh_shape(n)
        except MeshShapeError as e:
            parser.error(str(e))
        if n < 2:
            parser.error(f"--tiles {n}: rwbench needs 2 tiles or more")
    start = time.time()
    lines = run_rwbench(args.tiles, args.jobs)
    capture = save_capture("rwlock", lines, args.results)
    try:
        table = report(measurements(lines), args.results)
    except CaptureError as e:
        raise SystemExit(f"error: {e}")
    print(table)
    print(f"\nwrote {args.results}/rwlock.{{csv,md,png}} and {capture} ({time.time() - start:.0f} s)")


if __name__ == "__main__":
    main()
