#!/usr/bin/env python3
"""Producer/consumer synchronization latency: SW-only vs Subutai, beside the paper's Table XI.

Reads the ``@subutai`` records of the `prodcons` firmware (a simulation log, a saved board
capture or a live serial port), and writes results/prodcons.csv (every latency record),
results/prodcons.md (per tile count: median cycles of both backends, their ratio and the
paper's) and results/prodcons.png.

Usage: python scripts/prodcons_report.py SOURCE [--results DIR] [--baud N] [--timeout S]
"""

import math
import os


from scripts.capture import CaptureError, parse_lines, report_main
from scripts.results import RESULTS_DIR, console_table, markdown_table, save_csv

PROGRAM = "prodcons"
BACKENDS = ("swonly", "subutai")
MISSING = "–"

# (primitive, case): (paper's row label, SW-only ns, Subutai ns) -- average absolute times.
PAPER_TABLE_XI = {
    ("mutex", "lock_free"):       ("Lock empty",              1537,   127),
    ("mutex", "lock_queued"):     ("Lock queued",             64178,  916),
    ("mutex", "unlock"):          ("Unlock",                  4400,   60),
    ("barrier", "wait_released"): ("Barrier wait (released)", 102467, 1183),
    ("cond", "broadcast"):        ("Broadcast",               25209,  60),
    ("cond", "wait_queued"):      ("Condition wait (queued)", 42844,  1022),
}

CSV_FIELDS = ["program", "backend", "tiles", "primitive", "case", "count", "min", "median", "max", "mean"]

NOTES = """\
Our figures are cycles of the simulated SoC (or of the board, for a board capture) measured at
application level, so software overhead included; medians over `count` samples. The paper's figures
are average absolute times in ns from its own simulator and platform, so only the ratios
(SW-only / Subutai) compare, not the values. "–": no record for that backend.
"""


def latency_rows(records):
    """Latency records of the prodcons program (the ones with a primitive, not events)."""
    return [r for r in records if r.get("program") == PROGRAM and "primitive" in r]


def _case_order(key):
    """Paper order first, then cases the paper lacks, alphabetically."""
    keys = list(PAPER_TABLE_XI)
    return (keys.index(key), key) if key in PAPER_TABLE_XI else (len(keys), key)


def _number(x):
    return str(int(x)) if float(x).is_integer() else f"{x:.1f}"


def _ratio(sw, hw):
    return f"{sw/hw:.1f}×" if sw is not None and hw else MISSING


def _paper(key):
    """(label, SW ns, Subutai ns) of the paper's row, Nones for a case the paper lacks."""
    return PAPER_TABLE_XI.get(key, (None, None, None))


def _check(record):
    """A record missing a field or with a non-numeric figure is a firmware bug worth naming, not a KeyError."""
    missing = [f for f in CSV_FIELDS if f not in record]
    if missing:
        raise CaptureError(f"{PROGRAM} record lacks {', '.join(missing)}: {record}")
    if record["backend"] not in BACKENDS:
        raise CaptureError(f"{PROGRAM} record has unknown backend {record['backend']!r}: {record}")
    bad = [f for f in ("tiles", "count", "min", "median", "max", "mean")
           if isinstance(record[f], bool) or not isinstance(record[f], (int, float))]
    if bad:
        raise CaptureError(f"{PROGRAM} record has non-numeric {', '.join(bad)}: {record}")


def _by_key(rows):
    """{(tiles, (primitive, case)): {backend: record}}; a later record of the same key wins."""
    table = {}
    for r in rows:
        table.setdefault((r["tiles"], (r["primitive"], r["case"])), {})[r["backend"]] = r
    return table


def report(records, results_dir=RESULTS_DIR, name=PROGRAM):
    """Write <name>.{csv,md,png} (default prodcons) under results_dir; return the console table text."""
    rows = latency_rows(records)
    if not rows:
        raise CaptureError(f"the capture has no {PROGRAM} latency records")
    for r in rows:
        _check(r)
    table = _by_key(rows)
    tiles_list = sorted({t for t, _ in table})
    cases = {t: sorted((k for tt, k in table if tt == t), key=_case_order) for t in tiles_list}

    csv_rows = sorted(([r[f] for f in CSV_FIELDS] for by_backend in table.values() for r in by_backend.values()),
        key=lambda row: (row[1], row[2], _case_order((row[3], row[4]))))
    save_csv(name, CSV_FIELDS, csv_rows, results_dir)

    def medians(t, key):
        by_backend = table[(t, key)]
        return [by_backend[b]["median"] if b in by_backend else None for b in BACKENDS]

    md = ["# Producer/consumer synchronization latency (prodcons): SW-only vs Subutai\n"]
    header = ["primitive", "case", "SW-only median (cycles)", "Subutai median (cycles)", "SW/Subutai",
              "paper SW (ns)", "paper Subutai (ns)", "paper SW/Subutai"]
    console_header = ["tiles", "case", "swonly", "subutai", "ratio", "paper ratio"]
    console_rows = []
    for t in tiles_list:
        md_rows = []
        for key in cases[t]:
            sw, hw = medians(t, key)
            label, paper_sw, paper_hw = _paper(key)
            cells = [MISSING if m is None else _number(m) for m in (sw, hw)]
            md_rows.append([key[0], f"`{key[1]}`" + (f" {label}" if label else ""), *cells, _ratio(sw, hw),
                MISSING if label is None else paper_sw, MISSING if label is None else paper_hw,
                _ratio(paper_sw, paper_hw)])
            console_rows.append([t, f"{key[0]} {key[1]}", *cells, _ratio(sw, hw), _ratio(paper_sw, paper_hw)])
        md.append(f"## {t} tiles\n")
        md.append(markdown_table(header, md_rows))
        runs = _run_cycles(records, t)
        if runs:
            md.append("Whole run: " + ", ".join(f"{b} {c} cycles" for b, c in runs) + ".\n")
    md.append(NOTES)
    with open(os.path.join(results_dir, f"{name}.md"), "w") as f:
        f.write("\n".join(md))

    _plot(table, tiles_list, cases, os.path.join(results_dir, f"{name}.png"))
    return console_table(console_header, console_rows)


def _run_cycles(records, tiles):
    """(backend, cycles) of the prodcons run events of this tile count, for context in the report."""
    return [(r.get("backend", "?"), r["cycles"]) for r in records
            if r.get("program") == PROGRAM and r.get("event") == "run" and r.get("tiles") == tiles
            and "cycles" in r]


def _plot(table, tiles_list, cases, path):
    """Grouped bars of median cycles, one subplot per tile count; our and the paper's ratio under each case."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(max(6, 1.9*max(len(c) for c in cases.values())), 3.6*len(tiles_list)))
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(tiles_list), 1, squeeze=False)[:, 0]
    width = 0.38
    for ax, t in zip(axes, tiles_list):
        keys = cases[t]
        for i, (backend, name) in enumerate(zip(BACKENDS, ("SW-only", "Subutai"))):
            heights = [table[(t, k)][backend]["median"] if backend in table[(t, k)] else math.nan for k in keys]
            heights = [h if h > 0 else math.nan for h in heights]    # log axis: no zero bars
            ax.bar([x + (i - 0.5)*width for x in range(len(keys))], heights, width, label=name)
        ax.set_xticks(range(len(keys)))
        ours = [_ratio(*(table[(t, k)][b]["median"] if b in table[(t, k)] else None for b in BACKENDS)) for k in keys]
        ax.set_xticklabels([f"{p} {c}\nours {r}, paper {_ratio(*_paper((p, c))[1:])}"
            for (p, c), r in zip(keys, ours)], fontsize=8)
        ax.set_yscale("log")
        ax.set_ylabel("median cycles")
        ax.set_title(f"prodcons, {t} tiles")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main():
    report_main(__doc__, PROGRAM, lambda lines, results: (report(parse_lines(lines), results), []),
        RESULTS_DIR)


if __name__ == "__main__":
    main()
