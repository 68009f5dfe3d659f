"""Simulation speed benchmark: simulated cycles per wall-clock second of the SoC model.

Builds the Verilator model of 1 to 64 tiles with several build configurations, from what LiteX's
own flow does to this project's defaults (those up to 8 tiles, --compare-up-to), the flattened and
the tile-module models (up to 32 tiles, --tile-modules-up-to) and the model on two host threads
(from 32 tiles, --threads-from), the model cut into partitions in processes of their own (from 16
tiles, --partitions-from; --partitions counts), runs the `busy` firmware (every core computing) for a fixed
number of cycles and prints cycles/s, the fastest of --repeat runs; with --rebuild, the time and
peak memory of building each default model. A cut model's speed with a host core for each of its
partitions, which this machine may not have, is modelled from what its partitions' evaluations
cost and what the exchange costs where they had a core each. Results go to
results/simspeed.{csv,md,png}.

It measures the host: its runs go one at a time (one worker) and are never kept for a later sweep.

Usage: python -m scripts.experiments simspeed [--tiles 1 2 4 8 16 32 64] [--configs ...] [--rebuild]
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time


from soc.simulation import EXIT_TIMEOUT, build_model
from soc.mesh import mesh_shape
from scripts.capture import parse_lines
from scripts.experiments.framework import Experiment, Run
from scripts.results import console_table, markdown_table, new_figure, save_figure, save_table, to_int
from gateware.build import ROOT

XFAST = "-O3 --x-assign fast --x-initial fast --noassert"

# name: (description, build options). Up to `default`, each adds one change to the previous one.
CONFIGS = {
    "litex": (
        "LiteX flow from a script: verilator -O3, tracing compiled in, C++ -O0",
        dict(opt="-O3", trace="1", cxxopt="-O0"),
    ),
    "cxx-O3": ("C++ -O3 (what litex_sim passes)", dict(opt="-O3", trace="1", cxxopt="-O3")),
    "no-trace": ("tracing not compiled in", dict(opt="-O3", cxxopt="-O3")),
    "x-fast": ("--x-assign/--x-initial fast, --noassert", dict(opt=XFAST, cxxopt="-O3")),
    # The harness's defaults (the model every benchmark runs): x-fast, C++ -O2, and from
    # TILE_BLOCKS_FROM tiles one tile module for all (soc/tile_block.py).
    "default": (
        "project default: x-fast with C++ -O2; from 16 tiles one tile module verilated for every "
        "tile but tile 0",
        {},
    ),
    "flat": ("the default's build, every tile flattened into the SoC's one module", dict(tile_blocks=False)),
    "blocks": (
        "the default's build, one tile module verilated for every tile but tile 0 (soc/tile_block.py)",
        dict(tile_blocks=True),
    ),
    "pgo": ("default + gcc profile-guided compile (trained on busy)", dict(opt=XFAST, cxxopt="-O2")),
    "threads": ("default on several host threads (Verilator --threads)", {}),
    "partitions": (
        "the model cut into partitions of tiles, each in a process of its own (soc/partition.py): "
        "the same cycles",
        {},
    ),
}


#: A cut model's report of a partition (soc/sim_harness/partition.cpp): its evaluation's CPU time.
PARTITION_REPORT = re.compile(r"\[sim\] partition (\d+): .* evaluating ([0-9.]+) us/cycle \(CPU\)")


def measure(model, image, cycles, repeat):
    """The speeds of `repeat` runs, of which the fastest is kept: the same model measured 0.52 and
    0.91 M cycles/s in two single runs of one benchmark here, and a run is only ever slowed down by
    the host (as Python's timeit takes the minimum time); and, of a cut model, the CPU time each
    partition's evaluation took per cycle in that fastest run (microseconds, by partition)."""
    speeds, evaluating = [], []
    for _ in range(repeat):
        r = model.run(image, max_cycles=cycles)
        if r.exit_code != EXIT_TIMEOUT or r.cycles != cycles:
            raise RuntimeError(f"busy run ended early (exit {r.exit_code}):\n{r.output}\n{r.stderr}")
        speeds.append(r.speed)
        reports = {int(k): float(us) for k, us in PARTITION_REPORT.findall(r.stderr)}
        if model.partitions > 1 and sorted(reports) != list(range(model.partitions)):
            raise RuntimeError(f"a cut model's run without every partition's report:\n{r.stderr}")
        evaluating.append([reports[k] for k in sorted(reports)])
    return speeds, evaluating[speeds.index(max(speeds))]


def modelled_speed(tiles, evaluating, exchange):
    """M tile-cycles/s of a cut model with a host core for each partition: a cycle takes its
    slowest partition's evaluation and the exchange (microseconds)."""
    return tiles / (max(evaluating) + exchange)


def measured_build(n, threads, jobs):
    """Build the model of ``n`` tiles anew as its own process (``boards/sim.py --build --force``):
    (wall seconds, CPU seconds, peak memory in bytes of the largest process: Python's elaboration
    and Verilog generation, Verilator or a C++ compile)."""
    cmd = [sys.executable, os.path.join(ROOT, "boards", "sim.py"), "--tiles", str(n), "--build", "--force"]
    cmd += ["--threads", str(threads)] + (["--jobs", str(jobs)] if jobs else [])
    t0 = time.time()
    # A cold build, what a fresh clone pays: no C++ objects from the compiler cache.
    proc = subprocess.Popen(cmd, env=dict(os.environ, CCACHE_DISABLE="1"))
    # wait4: the rusage of the child and of every descendant it waited for (make, verilator, g++).
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed (exit {proc.returncode})")
    return time.time() - t0, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


def text_bytes(binary):
    """Bytes of machine code in a model's binary (binutils ``size``): Verilator evaluates all of
    it on every simulated cycle, so once it outgrows the host's caches a tile-cycle costs more."""
    if shutil.which("size") is None:
        raise RuntimeError(
            "size not found: install the Debian package binutils (make setup installs gcc with it)"
        )
    out = subprocess.run(["size", binary], capture_output=True, text=True, check=True).stdout
    return int(out.splitlines()[1].split()[0])


def l2_cache_size():
    """The host's per-core L2 cache as Linux describes it (e.g. "512K"), or None."""
    try:
        with open("/sys/devices/system/cpu/cpu0/cache/index2/size") as f:
            return f.read().strip()
    except OSError:
        return None


def cut_arg(text):
    """``argparse`` type of ``--partitions``: ``N`` or ``N:L`` (N >= 2 partitions, a leader of L tiles)."""
    if not re.fullmatch(r"\d+(:\d+)?", text) or cut_parts(text)[0] < 2 or cut_parts(text)[1] == 0:
        raise argparse.ArgumentTypeError(f"{text!r}: N or N:L, N >= 2 partitions, a leader of L >= 1 tiles")
    return text


def cut_parts(text):
    """(partitions, the leader's tiles or None) of a ``--partitions`` value."""
    n, _, leader = text.partition(":")
    return int(n), int(leader) if leader else None


def cut_label(text):
    n, leader = cut_parts(text)
    return f"{n} partitions" + (f" (leader {leader} tile{'s' if leader > 1 else ''})" if leader else "")


def cut_fits(text, tiles):
    """Whether the cut ``text`` fits a mesh of ``tiles`` (each partition a tile at least)."""
    n, leader = cut_parts(text)
    return n <= tiles and (leader is None or leader <= tiles - (n - 1))


def default_cycles(n):
    """Simulated cycles of a run: 400,000 up to 16 tiles, then fewer in proportion (a 64-tile
    model runs a few thousand cycles per second)."""
    return 400_000 * 16 // max(16, n)


class SimSpeed(Experiment):
    name = "simspeed"
    title = "simulation speed (`busy` on every core)"
    command = "make simspeed"
    # The model: the gateware, the SoC generator and its harness (busy is a fixed workload).
    measures = ("gateware", "soc", "firmware")
    tiles = (1, 2, 4, 8, 16, 32, 64)
    exclusive = True
    cacheable = False

    def add_arguments(self, parser):
        parser.add_argument(
            "--configs",
            default="litex,default,flat,blocks,threads,partitions",
            help="Comma-separated configurations (default: LiteX's flow, the project's, flattened or one "
            f"tile module, on host threads; all: {', '.join(CONFIGS)}).",
        )
        parser.add_argument(
            "--compare-up-to",
            type=int,
            default=8,
            help="Largest mesh the configurations of LiteX's flow and `pgo` are built for (each is a "
            "build of its own: minutes at 8 tiles, most of an hour at 64).",
        )
        parser.add_argument(
            "--tile-modules-up-to",
            type=int,
            default=32,
            help="Largest mesh `flat` and `blocks` are built for (where either is not the default model, "
            "a build of its own: the flattened 64-tile model takes about 40 minutes).",
        )
        parser.add_argument(
            "--threads-from",
            type=int,
            default=32,
            help="Smallest mesh the `threads` configuration is built for (below 32 tiles two threads were "
            "slower than one on a 2-core machine).",
        )
        parser.add_argument(
            "--partitions",
            type=cut_arg,
            nargs="+",
            default=["2", "3:1", "16:1"],
            metavar="N[:L]",
            help="Cuts of the `partitions` configuration: N partitions (processes a model runs in), "
            "the leader's L tiles (default: all alike); default 2 (a process a core of this "
            "machine), 3:1 (the leader with tile 0 alone) and 16:1 (a 16-core host's, modelled "
            "from its partitions' evaluation times).",
        )
        parser.add_argument(
            "--partitions-from",
            type=int,
            default=16,
            help="Smallest mesh the `partitions` configuration is built for.",
        )
        parser.add_argument(
            "--cycles", type=int, default=None, help="Simulated cycles per measurement (default: by size)."
        )
        parser.add_argument(
            "--threads",
            type=int,
            default=2,
            help="Host threads of the `threads` configuration's model (Verilator --threads).",
        )
        parser.add_argument(
            "--rebuild",
            action="store_true",
            help="Build the `default` models anew and record their build time and peak memory.",
        )
        parser.add_argument(
            "--repeat", type=int, default=3, help="Runs per measurement, the fastest kept (default: 3)."
        )
        parser.add_argument("--compile-jobs", type=int, default=None, help="Parallel C++ compile jobs.")

    def validate(self, args, error):
        for c in args.configs.split(","):
            if c not in CONFIGS:
                error(f"--configs: unknown configuration {c!r} (have: {', '.join(CONFIGS)})")
        if args.cycles is not None and args.cycles <= 0:
            error("--cycles must be positive")
        if args.repeat < 1:
            error("--repeat must be 1 or more")
        if args.threads < 2:
            error("--threads: 2 or more (1 is the default configuration)")

    def runs(self, args):
        runs = []
        for n in args.tiles:
            for c in args.configs.split(","):
                too_small = c == "threads" and n < args.threads_from
                limit = args.tile_modules_up_to if c in ("flat", "blocks") else args.compare_up_to
                too_large = c not in ("default", "threads") and n > limit
                if c == "partitions":
                    runs += [
                        Run.of(f"{n} tiles in {cut_label(p)}", tiles=n, config=c, partitions=p)
                        for p in args.partitions
                        if n >= args.partitions_from and cut_fits(p, n)
                    ]
                elif not (too_small or too_large):
                    runs.append(Run.of(f"{n} tiles, {c}: {CONFIGS[c][0]}", tiles=n, config=c))
        return runs

    def priority(self, run):
        return -len(run.label)  # in the order given: the measurements do not overlap

    def execute(self, run, model, image, args):
        n, c = run.config["tiles"], run.config["config"]
        x, y = mesh_shape(n)
        cycles = args.cycles or default_cycles(n)
        jobs = args.compile_jobs
        opts = CONFIGS[c][1]
        out = {"program": "simspeed", "tiles": n, "config": c}
        obj_dir = f"obj_dir_speed_{c}"
        if c == "default":
            # The model every benchmark runs (the harness's defaults), not one of its own.
            if args.rebuild:
                out["build"] = measured_build(n, 1, jobs)
            model = build_model(x, y, jobs=jobs)
        elif c == "threads":
            model = build_model(x, y, jobs=jobs, threads=args.threads)
        elif c == "partitions":
            partitions, leader_tiles = cut_parts(run.config["partitions"])
            model = build_model(x, y, jobs=jobs, partitions=partitions, leader_tiles=leader_tiles)
            out["config"] = f"p{run.config['partitions']}"
        elif c in ("flat", "blocks"):
            # The model of boards/sim.py --no-tile-blocks or --tile-blocks: the default one
            # where that is the default, else a model of its own beside it.
            model = build_model(x, y, jobs=jobs, **opts)
        else:
            model = build_model(
                x, y, obj_dir=obj_dir, jobs=jobs, **opts, **({"pgo": "gen"} if c == "pgo" else {})
            )
        image = model.build_firmware("busy")
        if c == "pgo":
            model.run(image, max_cycles=cycles)  # the training run writes the profile
            model = build_model(x, y, obj_dir=obj_dir, pgo="use", jobs=jobs, force=True, **opts)
        if c in ("default", "flat", "blocks"):
            out["text"] = text_bytes(model.binary)
        out["runs"], evaluating = measure(model, image, cycles, args.repeat)
        if c == "partitions":
            out["evaluating"] = evaluating
        return ["@subutai " + json.dumps(out)]

    def report(self, lines, args, results_dir):
        # The cut models are a column each: p<N>, the model in N partitions.
        configs = [
            col
            for c in args.configs.split(",")
            for col in ([f"p{p}" for p in args.partitions] if c == "partitions" else [c])
        ]
        cut = [c for c in configs if re.fullmatch(r"p\d+(:\d+)?", c)]
        tiles = args.tiles
        speeds, builds, texts, evaluating = {}, {}, {}, {}
        for r in parse_lines(lines):
            if r.get("program") != "simspeed":
                continue
            n, c = r["tiles"], r["config"]
            speeds[(n, c)] = max(r["runs"])
            if "evaluating" in r:
                evaluating[(n, c)] = r["evaluating"]
            if "text" in r:
                texts[(n, c)] = r["text"]
            if "build" in r:
                builds[n] = r["build"]
        # A cut with a host core for each partition: a cycle is its slowest partition's evaluation
        # and the exchange, whose cost is measured here on the cuts of each mesh that had a core
        # for every partition (the wall time of a cycle less the slowest evaluation).
        cores = os.cpu_count() or 1
        exchange = {}
        for (n, c), ev in evaluating.items():
            if len(ev) <= cores:
                cost = 1e6 / speeds[(n, c)] - max(ev)
                exchange[n] = min(exchange.get(n, cost), cost)

        def cell(n, c):
            return f"{speeds[(n, c)] / 1e6:.4f}" if (n, c) in speeds else "–"

        header = ["tiles", "cycles"] + [f"{c} (Mc/s)" for c in configs]
        if "litex" in configs and len(configs) > 1:
            header.append("best/litex")
        # What a many-tile model costs: tile-cycles per second of the default build, and the cost of a
        # tile-cycle relative to the 1-tile model (1.00: the model scales linearly with its tiles).
        per_tile = "default" in configs and 1 in tiles
        if per_tile:
            header += ["default (M tile-cycles/s)", "cost per tile-cycle vs 1 tile"]
        coded = [c for c in ("default", "flat", "blocks") if c in configs and any(k[1] == c for k in texts)]
        header += [f"{c} code (MB)" for c in coded]
        if "flat" in configs and "blocks" in configs:
            # What verilating one tile module for all the tiles gives (soc/tile_block.py).
            header.append("blocks/flat")
        if "threads" in configs:
            header.append(f"{args.threads} threads (M tile-cycles/s)")
        for c in cut:
            header += [f"{cut_label(c[1:])} (M tile-cycles/s)", f"{cut_label(c[1:])}/default"]
            header += [f"{cut_label(c[1:])}, a core each (M tile-cycles/s, modelled)"]
        if builds:
            header += ["build (s)", "build CPU (s)", "build peak (GB)"]
        rows = []
        for n in sorted(tiles):
            row = [n, args.cycles or default_cycles(n)] + [cell(n, c) for c in configs]
            if "litex" in configs and len(configs) > 1:
                row.append(
                    f"{max(v for (m, c), v in speeds.items() if m == n) / speeds[(n, 'litex')]:.2f}x"
                    if (n, "litex") in speeds
                    else "–"
                )
            if per_tile:
                row += [
                    f"{n * speeds[(n, 'default')] / 1e6:.3f}",
                    f"{speeds[(1, 'default')] / (n * speeds[(n, 'default')]):.2f}",
                ]
            row += [f"{texts[(n, c)] / 1e6:.2f}" if (n, c) in texts else "–" for c in coded]
            if "flat" in configs and "blocks" in configs:
                both = (n, "flat") in speeds and (n, "blocks") in speeds
                row.append(f"{speeds[(n, 'blocks')] / speeds[(n, 'flat')]:.2f}x" if both else "–")
            if "threads" in configs:
                row.append(f"{n * speeds[(n, 'threads')] / 1e6:.3f}" if (n, "threads") in speeds else "–")
            for c in cut:
                both = (n, c) in speeds and (n, "default") in speeds
                row.append(f"{n * speeds[(n, c)] / 1e6:.3f}" if (n, c) in speeds else "–")
                row.append(f"{speeds[(n, c)] / speeds[(n, 'default')]:.2f}x" if both else "–")
                modelled = (n, c) in evaluating and n in exchange
                row.append(f"{modelled_speed(n, evaluating[(n, c)], exchange[n]):.3f}" if modelled else "–")
            if builds:
                wall, cpu, peak = builds[n]
                row += [f"{wall:.0f}", f"{cpu:.0f}", f"{peak / 2**30:.2f}"]
            rows.append(row)
        notes = (
            "Configurations (from `litex` to `default` each adds one change to the previous; `flat` and "
            "`blocks` are the default's build with every tile flattened or one tile module for all, up "
            f"to {args.tile_modules_up_to} tiles; the others but `default` and `threads` up to "
            f"{args.compare_up_to} tiles, `threads` from {args.threads_from}):\n\n"
            + "\n".join(
                f"- `{c}`: {CONFIGS[c][0]}"
                + (f" ({args.threads})" if c == "threads" else "")
                + (
                    f" (p<N>[:<L>]: N partitions, the leader's L tiles, from {args.partitions_from} tiles)"
                    if c == "partitions"
                    else ""
                )
                for c in args.configs.split(",")
            )
            + "\n\nWorkload: firmware `busy` on every core for the `cycles` of the row; speed from the harness "
            f"(model run only, not start-up), the fastest of {args.repeat} run{'s' if args.repeat > 1 else ''}."
            + (
                " Code: the machine code of the model (`size`'s text), all of which Verilator "
                f"evaluates on every cycle (the host's L2 cache: {l2_cache_size() or 'unknown'} a core)."
                if texts
                else ""
            )
            + (
                " Build: `boards/sim.py --tiles N --build --force` as a process of its own (generation, "
                "Verilator, C++ compile on the machine's cores), wall and CPU time, peak memory of its "
                "largest process."
                if builds
                else ""
            )
        )
        if evaluating:
            notes += (
                "\n\nA cut model with a host core for each partition (modelled, where this machine has "
                f"{cores} cores): a cycle takes the slowest partition's evaluation, in CPU time (the "
                "harness times it on every 16th cycle, so a partition that shares a core is timed "
                "as if it had one, but for the cache it shares), and the exchange, measured here on "
                "the cuts of the same mesh that had a core for each partition (a cycle's wall time "
                "less the slowest evaluation): "
                + ", ".join(f"{exchange[n]:.2f} µs at {n} tiles" for n in sorted(exchange))
                + ". It leaves out that the leader waits for more partitions as they grow in number "
                "(one more cache line a partition and a cycle). Each partition's evaluation, in µs "
                "a cycle (the leader first):\n\n"
                + markdown_table(
                    ["tiles", "cut", "evaluating (µs/cycle, by partition)", "slowest"],
                    [
                        [n, cut_label(c[1:]), " / ".join(f"{v:.1f}" for v in ev), f"{max(ev):.1f}"]
                        for (n, c), ev in sorted(evaluating.items())
                    ],
                )
            )
        title = "Simulation speed (million simulated cycles per second)"
        save_table("simspeed", header, rows, title, notes, results_dir)
        plot(sorted(tiles), configs, speeds, results_dir)
        return console_table(header, rows), []

    def headlines(self, results):
        rows = results.rows("simspeed")
        col = "default (Mc/s)"
        if col not in rows[0]:
            raise ValueError(f"results/simspeed.csv has no {col!r} column: run `{self.command}`")
        tiles = [to_int(r["tiles"]) for r in rows]
        speeds = [float(r[col]) for r in rows]
        value = (
            f"{' / '.join(f'{s:.3g}' for s in speeds)} M cycles/s for {' / '.join(map(str, tiles))} tiles, "
            f"{' / '.join(f'{s * t:.3g}' for s, t in zip(speeds, tiles))} M tile-cycles/s"
        )
        # The model on several host threads (simspeed's `threads` configuration, its large meshes).
        threads_col = next((c for c in rows[0] if re.fullmatch(r"\d+ threads \(M tile-cycles/s\)", c)), None)
        threaded = [
            (t, float(r[threads_col]))
            for t, r in zip(tiles, rows)
            if threads_col and r[threads_col] not in ("", "–")
        ]
        if threaded:
            value += "; " + ", ".join(
                f"{t} tiles on {threads_col.split()[0]} host threads {v:.3g} M tile-cycles/s"
                for t, v in threaded
            )
        # The cut models: the fastest measured here, and the fastest with a core for each partition.
        for kind, pattern in (
            ("here", r"(\d+ partitions.*) \(M tile-cycles/s\)"),
            (
                "with a host core for each partition (modelled)",
                r"(\d+ partitions.*), a core each \(M tile-cycles/s, modelled\)",
            ),
        ):
            cols = [(c, re.fullmatch(pattern, c)) for c in rows[0]]
            cells = [
                (float(r[c]), t, m.group(1))
                for c, m in cols
                if m
                for t, r in zip(tiles, rows)
                if r[c] not in ("", "–")
            ]
            largest = [x for x in cells if x[1] == max((x[1] for x in cells), default=0)]
            if largest:
                v, t, cut = max(largest)
                value += f"; {t} tiles in {cut}, {kind}: {v:.3g} M tile-cycles/s"
        # What the largest model costs to build (simspeed --rebuild: a cold build of the default model).
        built = [(t, r) for t, r in zip(tiles, rows) if r.get("build (s)", "–") not in ("", "–")]
        if built:
            t, r = built[-1]
            value += f"; the {t}-tile model builds in {r['build (s)']} s, {r['build peak (GB)']} GB peak"
        return [("simulation speed (`busy` on every core)", value, self.command)]


def plot(tiles, configs, speeds, results_dir):
    fig, ax = new_figure(figsize=(7, 4))
    width = 0.8 / len(configs)
    for i, c in enumerate(configs):
        ax.bar(
            [k + i * width for k in range(len(tiles))],
            [n * speeds[(n, c)] / 1e6 if (n, c) in speeds else 0 for n in tiles],
            width,
            label=c,
        )
    ax.set_xticks([k + width * (len(configs) - 1) / 2 for k in range(len(tiles))])
    ax.set_xticklabels([str(n) for n in tiles])
    ax.set_xlabel("tiles")
    ax.set_ylabel("M simulated tile-cycles / s")
    ax.set_title("Verilator simulation speed of the Subutai SoC")
    ax.legend(fontsize=8)
    save_figure(fig, os.path.join(results_dir, "simspeed.png"), 100)


EXPERIMENT = SimSpeed()
