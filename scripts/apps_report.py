#!/usr/bin/env python3
"""Benchmark programs on both backends: speed-up of Subutai over SW-only, parallel scaling and
synchronization events per program and tile count (TPDS'21 Fig. 12, Tables V and VI).

Reads the output of the benchmark programs (firmware/programs/, run by the benchmark harness):
a simulation log, a saved board capture or a live serial port. Each run prints its checksum line
("<program>: checksum 0x........") and "@subutai" records: the run (total and region-of-interest
time), one per pthread operation (count, time spent in it, longest call) and the objects it set up.
Writes results/apps.csv (one row per run), results/apps.md (the tables) and results/apps.png
(speed-up and scaling versus tiles, one line per program).

Usage: python scripts/apps_report.py SOURCE [--results DIR] [--baud N] [--timeout S]
"""

import os
import re


from scripts.capture import CaptureError, numbered_lines, report_main
from scripts.results import RESULTS_DIR, console_table, markdown_table, save_csv

NAME = "apps"
BACKENDS = ("swonly", "subutai")
# The paper's programs first, in its order; any other program after them, alphabetically.
PAPER_ORDER = ("streamcluster", "bodytrack", "x264", "radix")
MISSING = "–"
# Subutai's speed-up over SW-only in the paper (TPDS'21 §VIII-C, Fig. 12: the master thread's
# time, 32 and 64 cores, simsmall inputs from traces). Its "1.77x on average" is the mean of the
# six figures.
PAPER_FIG12 = {
    "streamcluster": {32: 2.71, 64: 2.20},
    "bodytrack": {32: 1.78, 64: 1.77},
    "x264": {32: 1.11, 64: 1.05},
}
CHECKSUM_RE = re.compile(r"^\s*([A-Za-z0-9_.-]+): checksum (0x[0-9a-f]{8})\s*$")
RUN_FIELDS = ("program", "backend", "tiles", "threads", "args", "exit", "unit", "time", "roi")
SYNC_FIELDS = ("primitive", "op", "count", "time", "max")
OBJECTS = ("mutex", "cond", "barrier")
# Operations that synchronize (thread create and join are counted, but not as synchronization).
SYNC_PRIMITIVES = OBJECTS

CSV_FIELDS = [
    "program",
    "input",
    "backend",
    "tiles",
    "threads",
    "exit",
    "checksum",
    "unit",
    "time",
    "roi",
    "sync_time",
    "mutex_events",
    "cond_events",
    "barrier_events",
    "mutexes",
    "conds",
    "barriers",
]

NOTES = """\
Times are cycles of the simulated SoC (or of the board, for a board capture). ROI: the program's
region of interest (threads created, parallel work, threads joined), without input generation and
checking. Speed-up: SW-only ROI cycles / Subutai ROI cycles on the same tile count. Scaling: ROI
cycles on 1 tile / ROI cycles on N tiles, same backend. Sync share: time all threads spent inside
mutex, condition and barrier calls (blocked time included) / (threads × ROI). Events are pthread
calls counted by the harness (mutex: lock, trylock and unlock; cond: wait, signal and broadcast;
barrier: waits) in the Subutai runs; the paper's Table VI counts packets instead, so only the
shape compares. Objects: successful init calls (TPDS'21 Table V).
"""


def _program_order(name):
    return (PAPER_ORDER.index(name), name) if name in PAPER_ORDER else (len(PAPER_ORDER), name)


def input_args(args):
    """The run's arguments without "-t N": what must be equal for runs to give equal checksums."""
    words = str(args).split()
    out, i = [], 0
    while i < len(words):
        if words[i] == "-t":
            i += 2
            continue
        out.append(words[i])
        i += 1
    return " ".join(out)


def _check_fields(record, fields, number):
    missing = [f for f in fields if f not in record]
    if missing:
        raise CaptureError(f"line {number}: record lacks {', '.join(missing)}: {record}")
    for f in fields:
        if f in ("tiles", "threads", "exit", "time", "roi", "count", "max") and (
            isinstance(record[f], bool) or not isinstance(record[f], int)
        ):
            raise CaptureError(f"line {number}: {f} is not an integer: {record}")


def app_runs(lines):
    """The benchmark program runs of a capture, in order.

    Each run is its run record plus "input" (arguments but the thread count), "checksum" (the
    program's checksum line before it, None when missing), "ops" {(primitive, op): record} and
    "objects" {kind: count}. A record that cannot belong to a run is an error, so a truncated or
    interleaved capture is reported instead of being half counted.
    """
    runs, checksums, current = [], {}, {}
    for number, line, record in numbered_lines(lines):
        m = CHECKSUM_RE.match(line)
        if m:
            checksums[m.group(1)] = m.group(2)
            continue
        if record is None:
            continue
        event = record.get("event")
        if event == "run" and "roi" in record:
            _check_fields(record, RUN_FIELDS, number)
            run = dict(
                record,
                input=input_args(record["args"]),
                checksum=checksums.pop(record["program"], None),
                ops={},
                objects={},
            )
            runs.append(run)
            current[record["program"]] = run
        elif event in ("sync", "objects") and "threads" in record:
            run = current.get(record.get("program"))
            if run is None or any(run[k] != record.get(k) for k in ("backend", "tiles", "threads")):
                raise CaptureError(f"line {number}: {event} record without its run record: {record}")
            if event == "sync":
                _check_fields(record, SYNC_FIELDS, number)
                run["ops"][(record["primitive"], record["op"])] = record
            else:
                run["objects"] = {k: record.get(k, 0) for k in OBJECTS}
    return runs


def events(run, primitive):
    """Calls of a primitive's operations in a run."""
    return sum(r["count"] for (p, _), r in run["ops"].items() if p == primitive)


def sync_time(run):
    """Time all threads spent in mutex, cond and barrier calls."""
    return sum(r["time"] for (p, _), r in run["ops"].items() if p in SYNC_PRIMITIVES)


def checksum_problems(runs, reference=None):
    """Runs whose checksum is missing, differs from another run of the same program and input, or
    differs from the reference ({(program, input): checksum}, e.g. the host build's)."""
    problems, seen = [], {}
    for run in runs:
        key = (run["program"], run["input"])
        where = f"{run['program']} ({run['backend']}, {run['tiles']} tiles, {run['args']})"
        if run["exit"] != 0:
            problems.append(f"{where}: exit code {run['exit']}")
        if run["checksum"] is None:
            problems.append(f"{where}: no checksum line")
            continue
        if reference and key in reference:
            expected, against = reference[key], "the host reference"
        else:
            expected, against = seen.setdefault(key, (run["checksum"], where))
        if run["checksum"] != expected:
            problems.append(f"{where}: checksum {run['checksum']}, {against}: {expected}")
    return problems


def _ratio(a, b):
    return f"{a / b:.2f}×" if a is not None and b else MISSING


def _share(run):
    return f"{100 * sync_time(run) / (run['threads'] * run['roi']):.0f} %" if run and run["roi"] else MISSING


def latest_runs(runs):
    """One run per configuration (program, input, backend, tiles): the last one, in the order the
    configurations first appear (a capture extended by a rerun, bench_apps.py --append)."""
    latest = {}
    for run in runs:
        key = (run["program"], run["input"], run["backend"], run["tiles"])
        latest[key] = run  # a dict keeps the key where it first came
    return list(latest.values())


def _index(runs):
    """{(program, input): {(backend, tiles): run}}; a later run of the same configuration wins."""
    table = {}
    for run in runs:
        table.setdefault((run["program"], run["input"]), {})[(run["backend"], run["tiles"])] = run
    return table


def report(runs, results_dir=RESULTS_DIR, name=NAME, title="Benchmark programs: Subutai vs SW-only"):
    """Write <name>.{csv,md,png} under results_dir; return the console table text."""
    runs = latest_runs([r for r in runs if r["backend"] in BACKENDS])
    if not runs:
        raise CaptureError("the capture has no benchmark program runs of the swonly or subutai backend")
    table = _index(runs)
    keys = sorted(table, key=lambda k: (_program_order(k[0]), k[1]))
    several_inputs = len({k[1] for k in keys}) > 1

    def label(key):
        return f"{key[0]} ({key[1]})" if several_inputs else key[0]

    save_csv(
        name,
        CSV_FIELDS,
        [
            [
                r["program"],
                r["input"],
                r["backend"],
                r["tiles"],
                r["threads"],
                r["exit"],
                r["checksum"],
                r["unit"],
                r["time"],
                r["roi"],
                sync_time(r),
                events(r, "mutex"),
                events(r, "cond"),
                events(r, "barrier"),
                r["objects"].get("mutex", 0),
                r["objects"].get("cond", 0),
                r["objects"].get("barrier", 0),
            ]
            for r in runs
        ],
        results_dir,
    )

    header = [
        "program",
        "tiles",
        "SW-only ROI",
        "Subutai ROI",
        "speed-up",
        "paper (Fig. 12)",
        "SW-only scaling",
        "Subutai scaling",
        "SW-only sync share",
        "Subutai sync share",
        "checksum",
    ]
    md_rows, console_rows = [], []
    for key in keys:
        by = table[key]
        for tiles in sorted({t for _, t in by}):
            sw, hw = by.get(("swonly", tiles)), by.get(("subutai", tiles))
            sw1, hw1 = by.get(("swonly", 1)), by.get(("subutai", 1))
            cells = [
                label(key),
                tiles,
                sw["roi"] if sw else MISSING,
                hw["roi"] if hw else MISSING,
                _ratio(sw and sw["roi"], hw and hw["roi"]),
                _paper(key[0], tiles),
                _ratio(sw1 and sw and sw1["roi"], sw and sw["roi"]),
                _ratio(hw1 and hw and hw1["roi"], hw and hw["roi"]),
                _share(sw),
                _share(hw),
                ", ".join(sorted({r["checksum"] or MISSING for r in (sw, hw) if r})),
            ]
            md_rows.append(cells)
            console_rows.append(cells[:6] + cells[8:10])

    tiles_all = sorted({t for by in table.values() for _, t in by})
    ev_header = ["program", "type", "objects"] + [
        f"events, {t} tile{'s' if t != 1 else ''}" for t in tiles_all
    ]
    ev_rows = []
    for key in keys:
        by = table[key]
        for kind, kind_name in zip(OBJECTS, ("Mutex", "Condition", "Barrier")):
            runs_at = {t: by.get(("subutai", t)) or by.get(("swonly", t)) for t in tiles_all}
            any_run = next(r for r in runs_at.values() if r)
            ev_rows.append(
                [label(key), kind_name, any_run["objects"].get(kind, 0)]
                + [events(runs_at[t], kind) if runs_at[t] else MISSING for t in tiles_all]
            )

    unit = {r["unit"] for r in runs}
    md = [
        f"# {title}\n",
        f"ROI times in {', '.join(sorted(unit))}.\n",
        "## Speed-up and scaling\n",
        markdown_table(header, md_rows),
        *_against_paper(table, keys),
        "## Synchronization objects and events (like TPDS'21 Tables V and VI)\n",
        markdown_table(ev_header, ev_rows),
        NOTES,
    ]
    with open(os.path.join(results_dir, f"{name}.md"), "w") as f:
        f.write("\n".join(md))
    _plot(table, keys, label, os.path.join(results_dir, f"{name}.png"))
    return console_table(
        ["program", "tiles", "swonly ROI", "subutai ROI", "speed-up", "paper", "swonly sync", "subutai sync"],
        console_rows,
    )


def _paper(program, tiles):
    figure = PAPER_FIG12.get(program, {}).get(tiles)
    return f"{figure:.2f}×" if figure else MISSING


def _against_paper(table, keys):
    """Markdown lines: at each tile count of the paper's Fig. 12 that was run, every program's
    speed-up beside the paper's and the mean over the paper's three programs."""
    programs = list(PAPER_FIG12)
    header = ["tiles"] + [f"{p} (paper)" for p in programs] + ["mean of the three (paper)"]
    rows = []
    for tiles in sorted({t for figures in PAPER_FIG12.values() for t in figures}):
        ours = {}
        for key in keys:
            sw, hw = table[key].get(("swonly", tiles)), table[key].get(("subutai", tiles))
            if key[0] in programs and sw and hw and hw["roi"]:
                ours[key[0]] = sw["roi"] / hw["roi"]
        if not ours:
            continue
        paper = [PAPER_FIG12[p][tiles] for p in programs]
        mean = f"{sum(ours.values()) / len(ours):.2f}×" if len(ours) == len(programs) else MISSING
        rows.append(
            [tiles]
            + [
                f"{ours[p]:.2f}× ({f:.2f}×)" if p in ours else f"{MISSING} ({f:.2f}×)"
                for p, f in zip(programs, paper)
            ]
            + [f"{mean} ({sum(paper) / len(paper):.2f}×)"]
        )
    if not rows:
        return []
    return [
        "## Against the paper (TPDS'21 Fig. 12)\n",
        markdown_table(header, rows),
        "The paper's figures are its master thread's time from traces of the programs in a SystemC "
        'model; its "1.77× on average" is the mean of its six figures (32 and 64 cores).\n',
    ]


def _plot(table, keys, label, path):
    """Left: Subutai's speed-up over SW-only versus tiles; right: each backend's scaling."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 4.2))
    FigureCanvasAgg(fig)
    speedup_ax, scaling_ax = fig.subplots(1, 2)
    colors = {key: f"C{i}" for i, key in enumerate(keys)}
    for key in keys:
        by = table[key]
        tiles = sorted({t for _, t in by})
        sp = [
            (t, by[("swonly", t)]["roi"] / by[("subutai", t)]["roi"])
            for t in tiles
            if ("swonly", t) in by and ("subutai", t) in by
        ]
        if sp:
            speedup_ax.plot(*zip(*sp), marker="o", color=colors[key], label=label(key))
        for backend, style in (("subutai", "-"), ("swonly", "--")):
            base = by.get((backend, 1))
            sc = [(t, base["roi"] / by[(backend, t)]["roi"]) for t in tiles if base and (backend, t) in by]
            if sc:
                scaling_ax.plot(
                    *zip(*sc),
                    style,
                    marker="o",
                    color=colors[key],
                    label=f"{label(key)}, {'Subutai' if backend == 'subutai' else 'SW-only'}",
                )
    tiles_all = sorted({t for by in table.values() for _, t in by})
    for ax in (speedup_ax, scaling_ax):
        ax.set_xscale("log", base=2)
        ax.set_xticks(tiles_all)
        ax.set_xticklabels([str(t) for t in tiles_all])
        ax.set_xlabel("tiles (threads)")
        ax.grid(True, alpha=0.3)
    speedup_ax.axhline(1.0, color="grey", linewidth=0.8)
    speedup_ax.set_ylabel("speed-up, SW-only / Subutai (ROI cycles)")
    speedup_ax.set_title("Subutai over SW-only")
    speedup_ax.legend(fontsize=8)
    if tiles_all:
        scaling_ax.plot(tiles_all, tiles_all, ":", color="grey", linewidth=0.8, label="linear")
    scaling_ax.set_ylabel("scaling, 1-tile / N-tile ROI cycles")
    scaling_ax.set_title("Parallel scaling (solid: Subutai, dashed: SW-only)")
    scaling_ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main():
    def make_report(lines, results_dir):
        runs = app_runs(lines)
        return report(runs, results_dir), checksum_problems(runs)

    report_main(__doc__, NAME, make_report, RESULTS_DIR)


if __name__ == "__main__":
    main()
