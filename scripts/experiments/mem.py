#!/usr/bin/env python3
"""Memory-system benchmark (make bench-mem): firmware/apps/membw on 1, 2, 4, 8 and 16 tiles, with
main RAM on the shared SoC bus (--mem-banks 0, the memory system before the interleaved banks)
and in N line-interleaved banks behind the tiles' crossbar.

Per configuration: aggregate bytes per cycle of every core streaming over its own slice of main
RAM and over one shared slice (reads: one refill burst per line; writes: write-through stores),
and the latency of a cache refill, alone and while the other cores stream. Results go to
results/membw.{csv,md,png}; the whole capture to results/membw_capture.txt.

Usage: python -m scripts.experiments mem [--tiles 1 2 4 8 16] [--mem-banks 0 tiles 4 8 ...] [--jobs N]
"""

import os

from soc.simulation import default_mem_banks, mem_banks_arg
from scripts.capture import CaptureError, program_records
from scripts.experiments.framework import Experiment, ModelConfig, Run
from scripts.results import RESULTS_DIR, console_table, new_figure, save_figure, save_table, to_int

STREAMS = ("read_private", "write_private", "read_shared", "write_shared")
LATENCIES = ("refill_latency", "refill_latency_loaded")


class Memory(Experiment):
    name = "mem"
    title = "memory: aggregate private read bandwidth"
    command = "make bench-mem"
    max_cycles = 50_000_000
    tiles = (1, 2, 4, 8, 16)
    results = ("membw",)

    def add_arguments(self, parser):
        parser.add_argument(
            "--mem-banks",
            type=lambda t: None if t == "tiles" else mem_banks_arg(t),
            nargs="+",
            default=[0, None],
            metavar="N|tiles",
            help="main RAM banks (0: one RAM on the shared bus; tiles: one per tile, the default of the "
            "simulated SoC; default: 0 tiles).",
        )

    def result_name(self, args):
        return "membw"

    def runs(self, args):
        configs = dict.fromkeys(
            (n, default_mem_banks(n) if b is None else b) for n in args.tiles for b in args.mem_banks
        )
        return [
            Run.of(
                f"membw, {n} tiles, {b or 'no'} banks", ModelConfig.of(n, mem_banks=b), tiles=n, mem_banks=b
            )
            for n, b in configs
        ]

    def image(self, run, model, args):
        return model.build_firmware("membw")

    def report(self, lines, args, results_dir):
        return report(measurements(lines), results_dir), []

    def headlines(self, results):
        rows = results.rows("membw")
        bpc = {(to_int(r["tiles"]), to_int(r["mem banks"])): float(r["read_private (B/cycle)"]) for r in rows}
        refill = {(to_int(r["tiles"]), to_int(r["mem banks"])): r["refill (cycles)"] for r in rows}
        tiles = max(n for n, _ in bpc)
        parts = []
        for name, banked in [("shared bus", False), ("banks", True)]:
            one = [k for k in bpc if k[0] == 1 and bool(k[1]) == banked]
            top = [k for k in bpc if k[0] == tiles and bool(k[1]) == banked]
            if one and top:
                (one,), (top,) = one[:1], top[:1]
                label = f"{top[1]} banks" if banked else name
                parts.append(
                    f"{label}: {bpc[one]:.2f} → {bpc[top]:.2f} B/cycle ({bpc[top] / bpc[one]:.1f}×), "
                    f"refill {refill[one]} cycles on 1 tile"
                )
        return [
            (f"memory: aggregate private read bandwidth, 1 → {tiles} tiles", "; ".join(parts), self.command)
        ]


def measurements(lines):
    """{(tiles, mem_banks): {test: record}} of a capture."""
    table = {}
    for r in program_records(lines, "membw", ("test", "tiles", "mem_banks", "bytes", "cycles")):
        table.setdefault((r["tiles"], r["mem_banks"]), {})[r["test"]] = r
    for config, tests in table.items():
        missing = set(STREAMS + LATENCIES) - set(tests)
        if missing:
            raise CaptureError(
                f"{config[0]} tiles, {config[1]} banks: no result for {', '.join(sorted(missing))}"
            )
    return table


def report(table, results_dir=RESULTS_DIR):
    """Write results/membw.{csv,md,png}; return the console table."""
    bpc = lambda r: r["bytes"] / r["cycles"]
    header = (
        ["tiles", "mem banks"]
        + [f"{t} (B/cycle)" for t in STREAMS]
        + ["read_private vs 1 tile", "refill (cycles)", "refill, others streaming (cycles)"]
    )
    rows = []
    for (n, b), tests in sorted(table.items()):
        # The 1-tile row of the same memory system (banked rows have as many banks as tiles).
        one = table.get((1, b)) or next((t for (m, bb), t in table.items() if m == 1 and bb and b), None)
        scale = f"{bpc(tests['read_private']) / bpc(one['read_private']):.2f}x" if one else "-"
        rows.append(
            [n, b]
            + [f"{bpc(tests[t]):.3f}" for t in STREAMS]
            + [scale]
            + [f"{tests[t]['cycles'] / tests[t]['lines']:.1f}" for t in LATENCIES]
        )
    notes = (
        "Aggregate bytes per cycle: all cores start at the same cycle; bytes of all cores over the "
        "cycles from the first start to the last end. Each core streams 8 KiB (twice its data "
        "cache). Refill: cycles per dependent load that misses (one line refill each), on core 0. "
        "Mem banks 0: main RAM on the shared SoC bus (the memory system before banking); N: "
        "N line-interleaved banks behind the tiles' crossbar, with refill bursts."
    )
    title = "Memory bandwidth and refill latency (firmware/apps/membw)"
    save_table("membw", header, rows, title, notes, results_dir)
    plot(table, results_dir)
    return console_table(header, rows)


def plot(table, results_dir):
    fig, axes = new_figure(1, 2, figsize=(10, 4))
    for ax, test in zip(axes, ("read_private", "write_private")):
        for b in sorted({b for _, b in table}):
            points = sorted(
                (n, r[test]["bytes"] / r[test]["cycles"]) for (n, bb), r in table.items() if bb == b
            )
            ax.plot(
                [p[0] for p in points],
                [p[1] for p in points],
                marker="o",
                label="shared bus" if b == 0 else f"{b} banks",
            )
        ax.set_xscale("log", base=2)
        ax.set_xlabel("tiles")
        ax.set_ylabel("aggregate bytes / cycle")
        ax.set_title(test.replace("_", ", "))
        ax.legend(fontsize=8)
    save_figure(fig, os.path.join(results_dir, "membw.png"), 100)


EXPERIMENT = Memory()
