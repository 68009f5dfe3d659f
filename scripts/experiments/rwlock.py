#!/usr/bin/env python3
"""Read-write lock benchmark (make bench): firmware/apps/rwbench with both PThreads backends.

One thread per core runs reads and writes of a table behind a pthread_rwlock_t, 10 % and 50 % of
them writes, with a little work of its own between two; the cycles of the whole run per backend
give the speed-up of the Subutai backend (its read-write lock queues in the engines) over
SW-only. Results go to results/rwlock.{csv,md,png}; the whole capture to
results/rwlock_capture.txt.

Usage: python -m scripts.experiments rwlock [--tiles 8 16] [--jobs N]
"""

import os

from scripts.capture import CaptureError, program_records
from scripts.experiments.framework import Experiment, ModelConfig, Run
from scripts.results import columns, RESULTS_DIR, console_table, cycles_text, new_figure, save_figure
from scripts.results import save_table, to_int

BACKENDS = ("swonly", "subutai")


class RwLock(Experiment):
    name = "rwlock"
    title = "read-write locks (`rwbench`), SW-only / Subutai cycles"
    command = "make bench-rwlock"
    max_cycles = 200_000_000
    tiles = (8, 16)
    min_tiles = 2

    def runs(self, args):
        return [
            Run.of(f"rwbench, {b}, {n} tiles", ModelConfig.of(n), tiles=n, backend=b)
            for n in args.tiles
            for b in BACKENDS
        ]

    def image(self, run, model, args):
        return model.build_firmware("rwbench", backend=run.config["backend"])

    def report(self, lines, args, results_dir):
        return report(measurements(lines), results_dir), []

    def headlines(self, results):
        parts = [
            f"{r['tiles']} tiles {r['writes (%)']} % writes {cycles_text(to_int(r['SW-only (cycles)']))} / "
            f"{cycles_text(to_int(r['Subutai (cycles)']))} ({r['SW/Subutai']})"
            for r in results.rows("rwlock")
        ]
        return [("read-write locks (`rwbench`), SW-only / Subutai cycles", "; ".join(parts), self.command)]


def measurements(lines):
    """{(tiles, write_pct): {backend: record}} of a capture."""
    table = {}
    for r in program_records(lines, "rwbench", ("backend", "tiles", "write_pct", "ops", "writes", "cycles")):
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
    header = columns(
        "tiles | writes (%) | operations | SW-only (cycles) | Subutai (cycles) | SW/Subutai | "
        "SW-only (cycles/op) | Subutai (cycles/op)"
    )
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
    title = "Read-write locks, readers and writers (firmware/apps/rwbench)"
    save_table("rwlock", header, rows, title, notes, results_dir)
    plot(table, results_dir)
    return console_table(header, rows)


def plot(table, results_dir):
    fig, ax = new_figure(figsize=(6, 4))
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
    save_figure(fig, os.path.join(results_dir, "rwlock.png"), 100)


EXPERIMENT = RwLock()
