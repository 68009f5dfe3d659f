#!/usr/bin/env python3
"""Producer/consumer synchronization latency: SW-only vs Subutai, beside the paper's Table XI
(make bench).

Runs the `prodcons` firmware linked with the software-only backend and with the Subutai backend on
each SoC size; reads the ``@subutai`` records of the `prodcons` firmware (a simulation log, a saved board
capture or a live serial port), and writes results/prodcons.csv (every latency record of the
unshifted layout), results/prodcons.md (per tile count: median cycles of both backends with their
min and 90th percentile, their ratio and the paper's) and results/prodcons.png. When the capture
holds several layouts of one image (--layouts) or several links of it
(--perturb), results/prodcons_layouts.csv keeps every layout's and link's figures and the
Markdown gives each median's spread across the layouts and across the links.

With --os zephyr, prodcons runs unchanged as a Zephyr application (one kernel per tile) and the
results are results/zephyr_prodcons.*; this needs a Zephyr tree (ZEPHYR_BASE, see boards/zephyr.py).

Usage: python -m scripts.experiments prodcons [--tiles 2 4 8 16] [--backends swonly subutai]
           [--rounds N] [--layouts N] [--perturb] [--os baremetal|zephyr] [--jobs N]
       python -m scripts.experiments report prodcons SOURCE (a board's capture)
"""

import math
import os

from gateware.cpu import SIM_CPU_VARIANT
from soc.firmware import link_perturbations
from soc.mesh import mesh_shape
from scripts.capture import CaptureError, parse_lines
from scripts.experiments.framework import Experiment, ModelConfig, Run
from scripts.results import columns, RESULTS_DIR, console_table, markdown_table, new_figure, save_csv
from scripts.results import save_figure, spread, to_int

PROGRAM = "prodcons"
ROUNDS = 16  # prodcons rounds of a run (results/prodcons.* are of this many)
# Shift between two layouts of --layouts (bytes): two cache lines of the shipped VexRiscv variants.
LAYOUT_STEP = 64
BACKENDS = ("swonly", "subutai")
MISSING = "–"

# (primitive, case): (paper's row label, SW-only ns, Subutai ns) -- average absolute times.
PAPER_TABLE_XI = {
    ("mutex", "lock_free"): ("Lock empty", 1537, 127),
    ("mutex", "lock_queued"): ("Lock queued", 64178, 916),
    ("mutex", "unlock"): ("Unlock", 4400, 60),
    ("barrier", "wait_released"): ("Barrier wait (released)", 102467, 1183),
    ("cond", "broadcast"): ("Broadcast", 25209, 60),
    ("cond", "wait_queued"): ("Condition wait (queued)", 42844, 1022),
}

CSV_FIELDS = "program backend tiles primitive case count min median p90 max mean".split()
LAYOUT_FIELDS = "backend tiles primitive case layout_pad layout_variant min median p90 max".split()
# Goal for the spread of a median across layouts, and across links (percent).
SPREAD_GOAL = 5.0

NOTES = """\
Our figures are cycles of the simulated SoC (or of the board, for a board capture) measured at
application level, so software overhead included; medians over `count` samples after warm-up rounds,
with the smallest sample and the 90th percentile ("min / p90"). The paper's figures are average
absolute times in ns from its own simulator and platform, so only the ratios (SW-only / Subutai)
compare, not the values. "–": no record for that backend.
"""

LAYOUT_NOTES = """\
Spread: (largest − smallest) / smallest of the median over {n} layouts of each image, everything but
the timed code and data shifted by {pads} bytes (`make bench LAYOUTS={n}`): what a change
elsewhere in an image can still do to a figure. Goal: under {goal:g} %.
"""

LINK_NOTES = """\
Link spread: the same over {n} links of each image, the default and {perturbed} perturbed ones
(`make bench PERTURB=1`, `soc.firmware.link_perturbations()`): the library's objects linked
in other orders, and a 1 KiB function of the synchronization paths that nothing calls inserted at
several places of it. What a change to the library does to the timed code's place in the
instruction cache, which the layouts do not move. Goal: under {goal:g} %.
"""


def latency_rows(records):
    """Latency records of the prodcons program (the ones with a primitive, not events)."""
    return [r for r in records if r.get("program") == PROGRAM and "primitive" in r]


def _pad(record):
    """Layout shift of a record's image (captures without one are of the unshifted layout)."""
    return record.get("layout_pad", 0)


def _variant(record):
    """Link perturbation of a record's image (0: the default link)."""
    return record.get("layout_variant", 0)


def _spread_summary(spread, what):
    """The Markdown line that says which medians are within SPREAD_GOAL."""
    over = sorted(
        ((t, key, b, v) for (t, key, b), v in spread.items() if v >= SPREAD_GOAL),
        key=lambda e: (e[0], _case_order(e[1]), e[2]),
    )
    return f"{len(spread) - len(over)} of {len(spread)} medians are within the goal across the {what}" + (
        ": not " + ", ".join(f"{t} tiles {k[0]} `{k[1]}` {b} ({v:.1f} %)" for t, k, b, v in over) + ".\n"
        if over
        else ".\n"
    )


def _case_order(key):
    """Paper order first, then cases the paper lacks, alphabetically."""
    keys = list(PAPER_TABLE_XI)
    return (keys.index(key), key) if key in PAPER_TABLE_XI else (len(keys), key)


def _number(x):
    return str(int(x)) if float(x).is_integer() else f"{x:.1f}"


def _ratio(sw, hw):
    return f"{sw / hw:.1f}×" if sw is not None and hw else MISSING


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
    bad = [
        f
        for f in ("tiles", "count", "min", "median", "p90", "max", "mean")
        if isinstance(record[f], bool) or not isinstance(record[f], (int, float))
    ]
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
    all_rows = latency_rows(records)
    if not all_rows:
        raise CaptureError(f"the capture has no {PROGRAM} latency records")
    for r in all_rows:
        _check(r)
    rows = [r for r in all_rows if _pad(r) == 0 and _variant(r) == 0]
    if not rows:
        raise CaptureError(f"the capture has no {PROGRAM} records of the unshifted layout (layout_pad 0)")
    table = _by_key(rows)
    layout_rows = [r for r in all_rows if _variant(r) == 0]
    link_rows = [r for r in all_rows if _pad(r) == 0]
    pads = sorted({_pad(r) for r in layout_rows})
    variants = sorted({_variant(r) for r in link_rows})
    spread = median_spreads(layout_rows, _pad) if len(pads) > 1 else {}
    link_spread = median_spreads(link_rows, _variant) if len(variants) > 1 else {}
    if spread or link_spread:
        probes = {"layout_pad": _pad, "layout_variant": _variant}
        save_csv(
            f"{name}_layouts",
            LAYOUT_FIELDS,
            sorted(
                ([probes[f](r) if f in probes else r[f] for f in LAYOUT_FIELDS] for r in all_rows),
                key=lambda row: (row[1], row[0], _case_order((row[2], row[3])), row[4], row[5]),
            ),
            results_dir,
        )
    tiles_list = sorted({t for t, _ in table})
    cases = {t: sorted((k for tt, k in table if tt == t), key=_case_order) for t in tiles_list}

    csv_rows = sorted(
        ([r[f] for f in CSV_FIELDS] for by_backend in table.values() for r in by_backend.values()),
        key=lambda row: (row[1], row[2], _case_order((row[3], row[4]))),
    )
    save_csv(name, CSV_FIELDS, csv_rows, results_dir)

    def medians(t, key):
        by_backend = table[(t, key)]
        return [by_backend[b]["median"] if b in by_backend else None for b in BACKENDS]

    def ranges(t, key):
        by_backend = table[(t, key)]
        return [
            f"{_number(by_backend[b]['min'])} / {_number(by_backend[b]['p90'])}"
            if b in by_backend
            else MISSING
            for b in BACKENDS
        ]

    def spreads(t, key):
        cells = []
        for s in (spread, link_spread):
            if s:
                cells += [f"{s[(t, key, b)]:.1f} %" if (t, key, b) in s else MISSING for b in BACKENDS]
        return cells

    md = ["# Producer/consumer synchronization latency (prodcons): SW-only vs Subutai\n"]
    header = columns(
        "primitive | case | SW-only median (cycles) | Subutai median (cycles) | SW/Subutai | "
        "SW-only min / p90 | Subutai min / p90"
    )
    header += ["SW-only spread", "Subutai spread"] if spread else []
    header += ["SW-only link spread", "Subutai link spread"] if link_spread else []
    header += ["paper SW (ns)", "paper Subutai (ns)", "paper SW/Subutai"]
    console_header = ["tiles", "case", "swonly", "subutai", "ratio", "paper ratio"]
    console_header += ["sw spread", "hw spread"] if spread else []
    console_header += ["sw link spread", "hw link spread"] if link_spread else []
    console_rows = []
    for t in tiles_list:
        md_rows = []
        for key in cases[t]:
            sw, hw = medians(t, key)
            label, paper_sw, paper_hw = _paper(key)
            cells = [MISSING if m is None else _number(m) for m in (sw, hw)]
            spread_cells = spreads(t, key)
            case = f"`{key[1]}`" + (f" {label}" if label else "")
            paper = [MISSING, MISSING] if label is None else [paper_sw, paper_hw]
            ours = [*cells, _ratio(sw, hw), *ranges(t, key), *spread_cells]
            md_rows.append([key[0], case, *ours, *paper, _ratio(paper_sw, paper_hw)])
            console_rows.append(
                [t, f"{key[0]} {key[1]}", *cells, _ratio(sw, hw), _ratio(paper_sw, paper_hw), *spread_cells]
            )
        md.append(f"## {t} tiles\n")
        md.append(markdown_table(header, md_rows))
        runs = _run_cycles(records, t)
        if runs:
            md.append("Whole run: " + ", ".join(f"{b} {c} cycles" for b, c in runs) + ".\n")
    md.append(NOTES)
    if spread:
        md.append(LAYOUT_NOTES.format(n=len(pads), pads=", ".join(str(p) for p in pads), goal=SPREAD_GOAL))
        md.append(_spread_summary(spread, "layouts"))
    if link_spread:
        md.append(LINK_NOTES.format(n=len(variants), perturbed=len(variants) - 1, goal=SPREAD_GOAL))
        md.append(_spread_summary(link_spread, "links"))
    with open(os.path.join(results_dir, f"{name}.md"), "w") as f:
        f.write("\n".join(md))

    _plot(table, tiles_list, cases, os.path.join(results_dir, f"{name}.png"))
    return console_table(console_header, console_rows)


def median_spreads(rows, probe=_pad):
    """{(tiles, (primitive, case), backend): spread of the median across the images ``probe``
    tells apart (layouts by default), in percent}, for the keys with more than one image
    (records, or rows of <name>_layouts.csv with numbers)."""
    medians = {}
    for r in rows:
        medians.setdefault((r["tiles"], (r["primitive"], r["case"]), r["backend"]), {})[probe(r)] = r[
            "median"
        ]
    return {k: spread(v.values()) for k, v in medians.items() if len(v) > 1}


def _run_cycles(records, tiles):
    """(backend, cycles) of the prodcons run events of this tile count, for context in the report."""
    return [
        (r.get("backend", "?"), r["cycles"])
        for r in records
        if r.get("program") == PROGRAM
        and r.get("event") == "run"
        and r.get("tiles") == tiles
        and "cycles" in r
        and _pad(r) == 0
        and _variant(r) == 0
    ]


def _plot(table, tiles_list, cases, path):
    """Grouped bars of median cycles, one subplot per tile count; our and the paper's ratio under each case."""
    figsize = (max(6, 1.9 * max(len(c) for c in cases.values())), 3.6 * len(tiles_list))
    fig, axes = new_figure(len(tiles_list), 1, figsize, squeeze=False)
    axes = axes[:, 0]
    width = 0.38
    for ax, t in zip(axes, tiles_list):
        keys = cases[t]
        for i, (backend, name) in enumerate(zip(BACKENDS, ("SW-only", "Subutai"))):
            heights = [
                table[(t, k)][backend]["median"] if backend in table[(t, k)] else math.nan for k in keys
            ]
            heights = [h if h > 0 else math.nan for h in heights]  # log axis: no zero bars
            ax.bar([x + (i - 0.5) * width for x in range(len(keys))], heights, width, label=name)
        ax.set_xticks(range(len(keys)))
        ours = [
            _ratio(*(table[(t, k)][b]["median"] if b in table[(t, k)] else None for b in BACKENDS))
            for k in keys
        ]
        ax.set_xticklabels(
            [f"{p} {c}\nours {r}, paper {_ratio(*_paper((p, c))[1:])}" for (p, c), r in zip(keys, ours)],
            fontsize=8,
        )
        ax.set_yscale("log")
        ax.set_ylabel("median cycles")
        ax.set_title(f"prodcons, {t} tiles")
        ax.legend(fontsize=8)
    save_figure(fig, path)


PRODCONS_CASES = [
    ("mutex", "lock_queued", "lock queued"),
    ("barrier", "wait_released", "barrier release"),
    ("cond", "broadcast", "cond broadcast"),
    ("cond", "wait_queued", "cond wait queued"),
    ("mutex", "lock_free", "uncontended lock"),
    ("mutex", "unlock", "unlock"),
]


def _headline_medians(rows):
    tiles = max(to_int(r["tiles"]) for r in rows)
    med = {
        (r["primitive"], r["case"], r["backend"]): to_int(r["median"])
        for r in rows
        if to_int(r["tiles"]) == tiles
    }
    parts = [
        f"{label} {med[(p, c, 'swonly')]:,} / {med[(p, c, 'subutai')]:,}"
        for p, c, label in PRODCONS_CASES
        if (p, c, "swonly") in med and (p, c, "subutai") in med
    ]
    return tiles, parts


class Prodcons(Experiment):
    name = "prodcons"
    title = "prodcons, SW-only / Subutai median cycles"
    command = "make bench"
    max_cycles = 60_000_000
    tiles = (2, 4, 8, 16)
    min_tiles = 2
    backends = True
    runtimes = True
    results = ("prodcons_layouts", "zephyr_prodcons")

    def add_arguments(self, parser):
        parser.add_argument("--rounds", type=int, default=ROUNDS, help="prodcons rounds per run.")
        parser.add_argument(
            "--layouts",
            type=int,
            default=1,
            help=f"layouts per configuration: shifts of 0, {LAYOUT_STEP}, {2 * LAYOUT_STEP}, ... bytes of "
            "all but the timed code and data (bare metal; firmware/port/baremetal/linker.ld).",
        )
        parser.add_argument(
            "--perturb",
            action="store_true",
            help="also link each configuration the ways of soc.firmware.link_perturbations() (the "
            "library's objects in other orders, a 1 KiB function inserted at several places; "
            "bare metal).",
        )
        parser.add_argument("--cpu-variant", default=SIM_CPU_VARIANT, help="VexRiscv variant of every core.")

    def validate(self, args, error):
        if args.rounds < 1:
            error("--rounds must be >= 1")
        if args.layouts < 1:
            error("--layouts must be >= 1")
        if args.os_name == "zephyr" and (args.layouts > 1 or args.perturb):
            error("--layouts and --perturb: the layouts and links are bare-metal images")

    def result_name(self, args):
        return "prodcons" if args.os_name == "baremetal" else "zephyr_prodcons"

    def runs(self, args):
        def run(n, b, pad, perturbation=None):
            x, y = mesh_shape(n)
            what = f"prodcons, {b}, {n} tiles ({x}x{y}), {args.os_name}"
            what += f", layout +{pad} B" if args.layouts > 1 else ""
            what += f", link {perturbation.variant} ({perturbation.what})" if perturbation else ""
            variant = perturbation.variant if perturbation else 0
            model = ModelConfig.of(n, args.cpu_variant)
            return Run.of(what, model, tiles=n, backend=b, layout_pad=pad, layout_variant=variant)

        runs = [
            run(n, b, k * LAYOUT_STEP) for n in args.tiles for b in args.backends for k in range(args.layouts)
        ]
        if args.perturb:
            runs += [
                run(n, b, 0, p) for n in args.tiles for b in args.backends for p in link_perturbations(b)
            ]
        return runs

    def image(self, run, model, args):
        c = run.config
        rounds = f"-DPRODCONS_ROUNDS={args.rounds}"
        if args.os_name == "zephyr":
            from soc.zephyr import build_app

            out = os.path.join(model.output_dir, "zephyr", f"prodcons-{c['backend']}-r{args.rounds}")
            return build_app(model, "program", c["backend"], "prodcons", extra_cflags=rounds, out_dir=out)
        perturbation = next(
            (p for p in link_perturbations(c["backend"]) if p.variant == c["layout_variant"]), None
        )
        suffix = f"-pad{c['layout_pad']}" if c["layout_pad"] else ""
        suffix += f"-link{c['layout_variant']}" if perturbation else ""
        return model.build_firmware(
            "prodcons",
            backend=c["backend"],
            extra_cflags=rounds,
            out_dir=os.path.join(
                model.output_dir, "firmware", f"prodcons-{c['backend']}-r{args.rounds}{suffix}"
            ),
            layout_pad=c["layout_pad"],
            perturbation=perturbation,
        )

    def report(self, lines, args, results_dir):
        return report(parse_lines(lines), results_dir, self.result_name(args)), []

    def headlines(self, results):
        tiles, parts = _headline_medians(results.rows("prodcons"))
        value = ", ".join(parts)
        layouts = results.rows("prodcons_layouts", required=False)
        if layouts:
            all_rows = [
                {
                    **r,
                    "tiles": to_int(r["tiles"]),
                    "median": to_int(r["median"]),
                    "layout_pad": to_int(r["layout_pad"]),
                    "layout_variant": to_int(r.get("layout_variant") or 0),
                }
                for r in layouts
            ]
            for what, probe, fixed in (
                ("code layouts", "layout_pad", "layout_variant"),
                ("links of the library", "layout_variant", "layout_pad"),
            ):
                rows = [r for r in all_rows if r[fixed] == 0]
                images = len({r[probe] for r in rows})
                if images < 2:
                    continue
                spreads = list(median_spreads(rows, lambda r: r[probe]).values())
                within = sum(s < SPREAD_GOAL for s in spreads)
                value += (
                    f"; across {images} {what} {within} of {len(spreads)} medians move by less than "
                    f"{SPREAD_GOAL:g} % (largest {max(spreads):.1f} %)"
                )
        out = [(f"prodcons, SW-only / Subutai median cycles ({tiles} tiles)", value, self.command)]
        zephyr_rows = results.rows("zephyr_prodcons", required=False)
        if zephyr_rows:
            tiles, parts = _headline_medians(zephyr_rows)
            out.append(
                (
                    f"Zephyr: prodcons, SW-only / Subutai median cycles ({tiles} tiles)",
                    ", ".join(parts) + " (a waiter alone on its core spins for its answer: no interrupt, "
                    "no context switch)",
                    "make zephyr-bench",
                )
            )
        return out


EXPERIMENT = Prodcons()
