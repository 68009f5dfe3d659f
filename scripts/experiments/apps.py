"""Benchmark programs on both backends: speed-up of Subutai over SW-only, parallel scaling and
synchronization events per program and tile count (TPDS'21 Fig. 12, Tables V and VI).

Reads the output of the benchmark programs (firmware/programs/, run by the benchmark harness):
a simulation log, a saved board capture or a live serial port. Each run prints its checksum line
("<program>: checksum 0x........") and "@subutai" records: the run (total and region-of-interest
time), one per pthread operation (count, time spent in it, longest call) and the objects it set up.
Writes results/apps.csv (one row per run), results/apps.md (the tables) and results/apps.png
(speed-up and scaling versus tiles, one line per program).

Runs every program of firmware/programs/ with both backends on each SoC size (make bench-apps,
make zephyr-bench with --os zephyr); every run's checksum must equal the host build's (gcc and
glibc's pthreads) for the same input.

Usage: python -m scripts.experiments apps [--programs P ...] [--tiles 1 2 4 8 16] [--input simsmall]
           [--seed 1] [--os baremetal|zephyr] [--mem-banks N] [--perturb] [--append] [--jobs N]
       python -m scripts.experiments report apps SOURCE (a board's capture)
"""

import os


from gateware.cpu import SIM_CPU_VARIANT
from soc.firmware import link_perturbations, slug
from soc.mesh import mesh_shape
from soc.simulation import mem_banks_arg
from scripts import host_programs
from scripts.capture import CaptureError, numbered_lines, parse_lines
from scripts.experiments.framework import Experiment, ModelConfig, Run, log, program_args, split_runs
from scripts.experiments.stamp import capture_stamp
from scripts.results import columns, new_figure, save_figure, RESULTS_DIR, console_table, cycles_text
from scripts.results import markdown_table, range_text, save_csv, spread, to_int

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
CHECKSUM_RE = host_programs.CHECKSUM_RE
RUN_FIELDS = ("program", "backend", "tiles", "threads", "args", "exit", "unit", "time", "roi")
SYNC_FIELDS = ("primitive", "op", "count", "time", "max")
OBJECTS = ("mutex", "cond", "barrier")
# Operations that synchronize (thread create and join are counted, but not as synchronization).
SYNC_PRIMITIVES = OBJECTS

CSV_FIELDS = (
    "program input backend tiles threads exit checksum unit time roi sync_time mutex_events cond_events "
    "barrier_events mutexes conds barriers"
).split()

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
    configurations first appear (a capture extended by a rerun, apps --append)."""
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

    # The run's own fields, then what the harness's records add up to.
    own = CSV_FIELDS[: CSV_FIELDS.index("roi") + 1]
    counts = lambda r: [
        sync_time(r),
        *(events(r, k) for k in OBJECTS),
        *(r["objects"].get(k, 0) for k in OBJECTS),
    ]
    save_csv(name, CSV_FIELDS, [[r[f] for f in own] + counts(r) for r in runs], results_dir)

    header = columns(
        "program | tiles | SW-only ROI | Subutai ROI | speed-up | paper (Fig. 12) | SW-only scaling | "
        "Subutai scaling | SW-only sync share | Subutai sync share | checksum"
    )
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
    fig, (speedup_ax, scaling_ax) = new_figure(1, 2, (11, 4.2))
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
    save_figure(fig, path)


#: Goal for the spread of a program's ROI across the perturbed links (percent).
LINK_SPREAD_GOAL = 2.0


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
        "that nothing calls inserted at several places; `python -m scripts.experiments apps "
        f"--perturb`): what a change to the library does to a program's figure. Goal: under "
        f"{LINK_SPREAD_GOAL:g} %. {len(table) - len(over)} of {len(table)} are within it"
        + (": not " + ", ".join(f"{p} {b} {t} tiles ({s})" for p, b, t, _, _, s in over) if over else "")
        + ".\n"
    )
    with open(os.path.join(results_dir, "apps_links.md"), "w") as f:
        f.write("# Benchmark programs: ROI across links of the library\n\n")
        f.write(markdown_table(header, table) + "\n" + notes)
    return console_table(header, table)


def _headline(rows, largest=16, one_tile=True):
    """(tiles, text) of the largest size up to ``largest`` tiles that was run (and the speed-ups
    on 1 tile, with ``one_tile``)."""
    tiles = max(t for t in (to_int(r["tiles"]) for r in rows) if t <= largest)
    roi = {(r["program"], to_int(r["tiles"]), r["backend"]): to_int(r["roi"]) for r in rows}
    programs = sorted({r["program"] for r in rows}, key=lambda p: -roi.get((p, tiles, "swonly"), 0))
    parts = [
        f"{p} {cycles_text(roi[(p, tiles, 'swonly')])} / {cycles_text(roi[(p, tiles, 'subutai')])} "
        f"({roi[(p, tiles, 'swonly')] / roi[(p, tiles, 'subutai')]:.2f}×)"
        for p in programs
        if (p, tiles, "swonly") in roi and (p, tiles, "subutai") in roi
    ]
    one = [
        roi[(p, 1, "swonly")] / roi[(p, 1, "subutai")]
        for p in programs
        if (p, 1, "swonly") in roi and (p, 1, "subutai") in roi
    ]
    tail = f"; {range_text(one, lambda x: f'{x:.2f}')}× on 1 tile" if one and one_tile else ""
    return tiles, ", ".join(parts) + tail


class Apps(Experiment):
    name = "apps"
    title = "benchmark programs, SW-only / Subutai ROI cycles, speed-up"
    command = "make bench-apps"
    max_cycles = 200_000_000
    tiles = (1, 2, 4, 8, 16)
    backends = True
    runtimes = True
    inputs = True
    results = ("apps_links", "apps_mem0", "zephyr_apps")

    def add_arguments(self, parser):
        available = host_programs.programs()
        parser.add_argument(
            "--programs",
            nargs="+",
            default=available,
            metavar="PROGRAM",
            help=f"programs of firmware/programs/ (default: all: {', '.join(available)})",
        )
        parser.add_argument(
            "--mem-banks",
            type=mem_banks_arg,
            default=None,
            help="main RAM banks of the simulated SoCs (default: one per tile; 0: one RAM on the shared "
            "bus, the memory system before banking); results of a given value are results/apps_mem<N>.*",
        )
        parser.add_argument("--cpu-variant", default=SIM_CPU_VARIANT, help="VexRiscv variant of every core.")
        parser.add_argument(
            "--perturb",
            action="store_true",
            help="instead of the benchmark, each program linked the default way and the perturbed ways "
            "of soc.firmware.link_perturbations() (bare metal): results/apps_links.{csv,md}.",
        )
        parser.add_argument(
            "--threads",
            type=int,
            default=1,
            help="host threads of each model (Verilator --threads): for 32 tiles and more on a machine "
            "with cores to spare (give the cluster fewer workers in proportion)",
        )
        parser.add_argument(
            "--append",
            action="store_true",
            help="extend the saved capture (<results>/apps_capture.txt, of the same sources) with these "
            "runs, replacing its runs of the same program, backend and size, and report them all (e.g. "
            "--tiles 32 64 beside make bench-apps' 1 to 16)",
        )

    def validate(self, args, error):
        available = host_programs.programs()
        unknown = sorted(set(args.programs) - set(available))
        if unknown:
            error(f"--programs: no such program {', '.join(unknown)} (have: {', '.join(available)})")
        if args.threads < 1 or (args.threads > 1 and (args.perturb or args.os_name != "baremetal")):
            error("--threads: a positive count; more than 1 for the bare-metal benchmark only")
        previous = os.path.join(args.results, f"{self.result_name(args)}_capture.txt")
        if args.append and (args.perturb or not os.path.exists(previous)):
            error(f"--append: {'not with --perturb' if args.perturb else f'no capture {previous} to extend'}")
        if args.perturb and (args.os_name != "baremetal" or args.mem_banks is not None):
            error("--perturb: bare metal on the default memory system only")

    def result_name(self, args):
        if args.perturb:
            return "apps_links"
        name = "apps" if args.os_name == "baremetal" else "zephyr_apps"
        return name + (f"_mem{args.mem_banks}" if args.mem_banks is not None else "")

    def prepare(self, args):
        arguments = program_args(args.input, args.seed)
        log(f"[bench-apps] host reference (gcc, glibc pthreads): {', '.join(args.programs)}")
        self.reference = {
            (p, input_args(arguments)): c
            for p, c in host_programs.checksums(args.programs, arguments).items()
        }

    def runs(self, args):
        arguments = program_args(args.input, args.seed)
        variants = (
            (lambda b: [0] + [p.variant for p in link_perturbations(b)]) if args.perturb else (lambda b: [0])
        )
        runs = []
        for n in args.tiles:
            model = ModelConfig.of(n, args.cpu_variant, args.mem_banks, args.threads)
            x, y = mesh_shape(n)
            for p in args.programs:
                for b in args.backends:
                    for v in variants(b):
                        what = f"{p} {arguments}, {b}, {n} tiles ({x}x{y}), {args.os_name}"
                        what += f", link {v}" if args.perturb else ""
                        runs.append(Run.of(what, model, program=p, backend=b, tiles=n, layout_variant=v))
        return runs

    def image(self, run, model, args):
        c, arguments = run.config, program_args(args.input, args.seed)
        if args.os_name == "zephyr":
            from soc.zephyr import build_app

            return build_app(model, "program", c["backend"], c["program"], arguments)
        if not args.perturb:
            return model.build_firmware(c["program"], backend=c["backend"], program_args=arguments)
        perturbation = next(
            (p for p in link_perturbations(c["backend"]) if p.variant == c["layout_variant"]), None
        )
        out = f"{c['program']}-{c['backend']}-{slug(arguments)}-link{c['layout_variant']}"
        return model.build_firmware(
            c["program"],
            backend=c["backend"],
            program_args=arguments,
            out_dir=os.path.join(model.output_dir, "firmware", out),
            perturbation=perturbation,
        )

    def combine(self, lines, args):
        if not args.append:
            return lines
        previous = os.path.join(args.results, f"{self.result_name(args)}_capture.txt")
        with open(previous) as f:
            earlier = f.read().splitlines()
        before, now = capture_stamp(parse_lines(earlier)), capture_stamp(parse_lines(lines))
        if before is None or before.get("sources") != now.get("sources"):
            raise CaptureError(
                f"--append: {previous} was made at other sources than these runs: rerun it all"
            )
        # The saved capture first: its runs of the configurations rerun here are replaced.
        return lines[:1] + earlier[1:] + lines[1:]

    def report(self, lines, args, results_dir):
        reference = getattr(self, "reference", None)
        if getattr(args, "perturb", False):
            rows, runs = [], []
            for label, run_lines in split_runs(lines):
                (record,) = app_runs(run_lines)
                what = "default" if not label["layout_variant"] else f"link {label['layout_variant']}"
                config = [record[k] for k in ("program", "backend", "tiles")] + [
                    label["layout_variant"],
                    what,
                ]
                rows.append(config + [record["roi"], record["checksum"]])
                runs.append(dict(record, args=f"{record['args']}, {what}"))
            return links_report(rows, results_dir), checksum_problems(runs, reference)
        name = self.result_name(args)
        title = "Benchmark programs: Subutai vs SW-only" + (
            ", Zephyr on every tile" if args.os_name == "zephyr" else ""
        )
        if args.mem_banks is not None:
            title += (
                ", main RAM on the shared bus"
                if args.mem_banks == 0
                else f", main RAM in {args.mem_banks} banks"
            )
        runs = app_runs(lines)
        return report(runs, results_dir, name, title), checksum_problems(runs, reference)

    def headlines(self, results):
        rows = results.rows("apps")
        tiles, value = _headline(rows)
        out = [
            (
                f"benchmark programs, SW-only / Subutai ROI cycles, speed-up ({tiles} tiles, simsmall)",
                value,
                self.command,
            )
        ]
        for size in (32, 64):
            if any(to_int(r["tiles"]) == size for r in rows):
                tiles, value = _headline(rows, size, one_tile=False)
                paper = ", ".join(f"{p} {f[tiles]:.2f}×" for p, f in PAPER_FIG12.items() if tiles in f)
                out.append(
                    (
                        f"benchmark programs, SW-only / Subutai ROI cycles, speed-up ({tiles} tiles, simsmall)",
                        f"{value}; TPDS'21 Fig. 12: {paper}" if paper else value,
                        "make bench-apps-64",
                    )
                )
        links = results.rows("apps_links", required=False)
        if links:
            by = {}
            for r in links:
                by.setdefault((r["program"], r["backend"], to_int(r["tiles"])), []).append(to_int(r["roi"]))
            spreads = {k: spread(v) for k, v in by.items()}
            within = sum(s < LINK_SPREAD_GOAL for s in spreads.values())
            worst = max(spreads, key=spreads.get)
            out.append(
                (
                    f"benchmark programs' ROI across {max(len(v) for v in by.values())} links of the library "
                    f"({', '.join(map(str, sorted({t for _, _, t in by})))} tiles)",
                    f"{within} of {len(spreads)} within {LINK_SPREAD_GOAL:g} % (largest {spreads[worst]:.1f} %, "
                    f"{worst[0]} {worst[1]})",
                    self.command,
                )
            )
        zephyr = results.rows("zephyr_apps", required=False)
        if zephyr:
            tiles, value = _headline(zephyr)
            bare = {(r["program"], r["input"]): r["checksum"] for r in rows}
            same = all(bare.get((r["program"], r["input"])) == r["checksum"] for r in zephyr)
            value += "; same checksums as bare metal" if same else "; CHECKSUMS DIFFER from bare metal"
            out.append(
                (
                    "Zephyr on every tile: benchmark programs, SW-only / Subutai ROI cycles, speed-up "
                    f"({tiles} tiles, simsmall)",
                    value,
                    "make zephyr-bench",
                )
            )
        return out


EXPERIMENT = Apps()
